//! A plan verdict for a `claude` teammate still in the turn that asked for it waits until
//! that turn has ended (2.1.332 can find a verdict while its turn ends, apply its mode and
//! never take the verdict's turn: PROTOCOL.md 3). The lead runs on temporary files; the test
//! plays the teammate.

use crate::lead::contract::{LeadCommand, LeadEvent, PlanDecision};
use crate::protocol::frames::Frame;
use crate::protocol::time::now_iso;
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::{self, Home};

use tokio::sync::mpsc;

use super::test_events::{TestLead, alpha_in_a_pane, next_matching, note_with};

const SESSION: &str = "2d3e4f50-1111-4222-8333-944455556666";

fn verdicts(home: &Home, team: &str) -> usize {
    store::inbox::read(home, team, "alpha")
        .map(|r| {
            r.entries
                .iter()
                .filter(|e| matches!(e.parse_frame(), Some(Frame::PlanApprovalResponse(_))))
                .count()
        })
        .unwrap_or(0)
}

fn from_alpha(home: &Home, team: &str, json: serde_json::Value) {
    store::inbox::append(
        home,
        team,
        LEAD_NAME,
        &InboxEntry::new("alpha", json.to_string()),
    )
    .expect("append");
}

/// `alpha` in plan mode, in a turn (`isActive: true`), added to the team file.
fn add_alpha_in_a_turn(home: &Home, team: &str) {
    let mut alpha = alpha_in_a_pane(team, "/");
    alpha.mode = Some("plan".to_string());
    alpha.is_active = Some(true);
    store::add_member(home, team, alpha).expect("member");
}

/// In its turn, alpha asks for plan `request_id` to be approved and the lead approves it; a
/// marker message from alpha then shows the lead went on with its business. No verdict may
/// have gone meanwhile: the turn has not ended.
async fn asked_and_approved_in_the_turn(lead: &mut TestLead, request_id: &str) {
    let (home, team) = (&lead.home, &lead.team);
    from_alpha(
        home,
        team,
        serde_json::json!({"type": "plan_approval_request", "from": "alpha",
            "timestamp": now_iso(), "planFilePath": "/p.md", "planContent": "# Plan",
            "requestId": request_id}),
    );
    next_matching(
        &mut lead.events,
        "the plan queued",
        |e| matches!(e, LeadEvent::Plans(p) if p.len() == 1),
    )
    .await;
    lead.commands
        .send(LeadCommand::AnswerPlan {
            request_id: request_id.to_string(),
            decision: PlanDecision::Approve {
                mode: crate::protocol::PermissionMode::Default,
            },
        })
        .await
        .expect("lead runs");
    store::inbox::append(
        home,
        team,
        LEAD_NAME,
        &InboxEntry::new("alpha", "still at it"),
    )
    .expect("append");
    next_matching(&mut lead.events, "the marker", |e| {
        matches!(e, LeadEvent::Transcript(crate::lead::contract::TranscriptItem::Teammate { text, .. }) if text == "still at it")
    })
    .await;
    assert_eq!(
        verdicts(home, team),
        0,
        "the verdict went during the turn that asked"
    );
}

/// Alpha's turn ends: the verdict follows.
async fn turn_ends_and_the_verdict_follows(
    home: &Home,
    team: &str,
    events: &mut mpsc::Receiver<LeadEvent>,
) {
    from_alpha(
        home,
        team,
        serde_json::json!({"type": "idle_notification", "from": "alpha",
            "timestamp": now_iso(), "idleReason": "available"}),
    );
    next_matching(events, "the approval told", |e| {
        note_with(e, "Approved alpha's plan")
    })
    .await;
    assert_eq!(verdicts(home, team), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_waits_for_the_end_of_the_turn_that_asked_for_it() {
    let mut lead = TestLead::start("verdict", SESSION, |_| {});
    add_alpha_in_a_turn(&lead.home, &lead.team);
    asked_and_approved_in_the_turn(&mut lead, "plan_approval-1@alpha").await;
    turn_ends_and_the_verdict_follows(&lead.home, &lead.team, &mut lead.events).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_waits_for_the_turn_that_asked_before_the_lead_read_its_member() {
    // The lead has not read alpha's member entry yet (on a loaded machine the team file's
    // re-read can come after the request and the answer): the request itself says a turn runs.
    let mut lead = TestLead::start("verdict2", SESSION, |_| {});
    asked_and_approved_in_the_turn(&mut lead, "plan_approval-2@alpha").await;
    // Its member is read, then that turn ends.
    add_alpha_in_a_turn(&lead.home, &lead.team);
    turn_ends_and_the_verdict_follows(&lead.home, &lead.team, &mut lead.events).await;
}
