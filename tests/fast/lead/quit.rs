//! `/quit` with teammates of this process: an idle one is stopped with the session (no
//! shutdown handshake through inboxes of a team about to be deleted), a busy one is still
//! asked to shut down and gets the quit's patience.

use std::time::Duration;

use crate::lead_common::Session;
use teamlead::lead::contract::{LeadEvent, TeammateStatus, TranscriptItem};
use teamlead::protocol::PermissionMode;
use teamlead::store;

/// Whether `name`'s inbox holds a shutdown request (an inbox already gone holds none).
fn asked_to_shut_down(s: &Session, name: &str) -> bool {
    store::inbox::read(&s.home, &s.team, name)
        .map(|read| {
            read.entries
                .iter()
                .any(|e| e.text.contains("shutdown_request"))
        })
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quit_stops_idle_teammates_at_once_and_asks_a_busy_one() {
    let mut s = Session::start_with("quit-idle", |mut o| {
        o.lead_mode = PermissionMode::BypassPermissions;
        o.with_quit_timeout(Duration::from_secs(2))
    })
    .await;
    s.submit("/spawn busy \"wait for tasks\"").await;
    s.wait_note("Spawned busy").await;
    s.submit("/task add nap --command \"sleep 30\"").await;
    s.wait_for("busy's command to start", |e| {
        matches!(e, LeadEvent::TeammateTranscript { name, item: TranscriptItem::Lead { text } }
            if name == "busy" && text == "$ sleep 30")
    })
    .await;
    for name in ["idle1", "idle2"] {
        s.submit(&format!("/spawn {name} \"wait\"")).await;
        s.wait_note(&format!("Spawned {name}")).await;
    }
    s.wait_team("both idle", |t| {
        ["idle1", "idle2"].iter().all(|n| {
            t.iter()
                .any(|v| v.name == *n && matches!(v.status, TeammateStatus::Idle { .. }))
        })
    })
    .await;

    s.send(teamlead::lead::contract::LeadCommand::Quit).await;
    s.wait_note("2 idle teammate(s) of this process shut down with the lead.")
        .await;
    s.wait_note("Asking 1 teammate(s) to shut down").await;
    s.wait_team("the idle ones stopped", |t| {
        ["idle1", "idle2"].iter().all(|n| {
            t.iter()
                .any(|v| v.name == *n && matches!(v.status, TeammateStatus::Stopped { .. }))
        })
    })
    .await;
    assert!(
        !asked_to_shut_down(&s, "idle1") && !asked_to_shut_down(&s, "idle2"),
        "an idle teammate was asked to shut down"
    );
    s.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
        .await;
    assert!(
        store::read_team(&s.home, &s.team).is_err(),
        "the team was not deleted"
    );
}
