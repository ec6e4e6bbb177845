//! A `claude` teammate's mode the lead recorded survives the client's own stale write of the
//! mode it left (2.1.45 writes its member entry at a turn's end, unlocked, from a copy read
//! before its mode changed): the lead keeps showing the mode, and cycles on from it, and
//! `config.json` gets it again. A change the client makes itself (one step of its cycle) is
//! followed. The lead runs on temporary files; the test plays the teammate.

use serde_json::json;

use crate::lead::contract::{LeadCommand, LeadEvent, PermissionDecision};
use crate::protocol::frames::{Frame, PermissionRequest};
use crate::protocol::permission::Destination;
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode, PermissionUpdate};
use crate::store::{self, Home};

use super::test_events::{TestLead, alpha_in_a_pane, next_matching};

const SESSION: &str = "1c2d3e4f-1111-4222-8333-944455556666";

fn written_mode(home: &Home, team: &str) -> String {
    let file = store::read_team(home, team).expect("team file");
    file.member("alpha")
        .and_then(|m| m.mode.clone())
        .unwrap_or_default()
}

/// What the client writes itself, in place and unlocked: at a turn's end its member entry as
/// it read it before, or the mode one press of its Shift+Tab moved to.
fn stale_turn_end_write(home: &Home, team: &str, mode: &str) {
    let path = home.team_dir(team).expect("team dir").join("config.json");
    let mut value: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("json");
    for m in value["members"].as_array_mut().expect("members") {
        if m["name"] == "alpha" {
            m["mode"] = json!(mode);
            m["isActive"] = json!(false);
        }
    }
    std::fs::write(&path, serde_json::to_vec(&value).expect("json")).expect("write");
}

async fn mode_shown(
    events: &mut tokio::sync::mpsc::Receiver<LeadEvent>,
    what: &str,
    mode: PermissionMode,
) {
    next_matching(events, what, |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "alpha" && v.mode == mode))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_write_of_the_mode_it_left_is_put_right_and_a_step_of_its_own_is_followed() {
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("held-mode", SESSION, |_| {});
    let cwd = _dirs.1.path().to_string_lossy().into_owned();
    let mut alpha = alpha_in_a_pane(&team, &cwd);
    alpha.mode = Some("default".to_string());
    store::add_member(&home, &team, alpha).expect("member");
    mode_shown(&mut events, "alpha in default", PermissionMode::Default).await;

    // alpha asks to write a file; the lead's answer switches it to acceptEdits.
    let request = PermissionRequest {
        request_id: "perm-1-abcdef".to_string(),
        agent_id: "alpha".to_string(),
        tool_name: "Write".to_string(),
        tool_use_id: Some("toolu_1".to_string()),
        description: "write it".to_string(),
        input: json!({"file_path": format!("{cwd}/a.txt"), "content": "a"}),
        permission_suggestions: Vec::new(),
    };
    store::inbox::append(
        &home,
        &team,
        LEAD_NAME,
        &InboxEntry::frame("alpha", &Frame::PermissionRequest(request)),
    )
    .expect("request");
    let key = match next_matching(
        &mut events,
        "the request queued",
        |e| matches!(e, LeadEvent::Permissions(p) if p.len() == 1),
    )
    .await
    {
        LeadEvent::Permissions(p) => p[0].key,
        _ => unreachable!(),
    };
    commands
        .send(LeadCommand::AnswerPermission {
            key,
            decision: PermissionDecision::AllowAlways(vec![PermissionUpdate::SetMode {
                mode: PermissionMode::AcceptEdits,
                destination: Destination::Session,
            }]),
        })
        .await
        .expect("lead runs");
    mode_shown(
        &mut events,
        "alpha in acceptEdits",
        PermissionMode::AcceptEdits,
    )
    .await;
    written(&home, &team, "acceptEdits").await;

    // Its turn ends with the copy it read before: default again in config.json.
    stale_turn_end_write(&home, &team, "default");
    written(&home, &team, "acceptEdits").await;

    // One step of its own cycle (Shift+Tab in its pane) is its change: followed, kept.
    stale_turn_end_write(&home, &team, "plan");
    mode_shown(&mut events, "alpha in plan", PermissionMode::Plan).await;
    written(&home, &team, "plan").await;
    // Shift+Tab in the teams dialog moves on from there.
    commands
        .send(LeadCommand::CycleTeammateMode {
            name: "alpha".to_string(),
        })
        .await
        .expect("lead runs");
    next_matching(&mut events, "bypassPermissions requested", |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "alpha"
            && v.mode == PermissionMode::Plan
            && v.mode_requested == Some(PermissionMode::BypassPermissions)))
    })
    .await;
}

/// Waits (30 s at most) until `config.json` gives alpha `mode`.
async fn written(home: &Home, team: &str, mode: &str) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    while written_mode(home, team) != mode {
        assert!(
            tokio::time::Instant::now() < deadline,
            "config.json never gave alpha {mode}: it says {}",
            written_mode(home, team)
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
