//! A plan verdict for a `claude` teammate still in the turn that asked for it waits until
//! that turn has ended (2.1.332 can find a verdict while its turn ends, apply its mode and
//! never take the verdict's turn: PROTOCOL.md 3). The lead runs on temporary files; the test
//! plays the teammate.

use crate::lead::contract::{LeadCommand, LeadEvent, PlanDecision};
use crate::protocol::frames::Frame;
use crate::protocol::time::now_iso;
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::{self, Home};

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_waits_for_the_end_of_the_turn_that_asked_for_it() {
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("verdict", SESSION, |_| {});
    let mut alpha = alpha_in_a_pane(&team, "/");
    alpha.mode = Some("plan".to_string());
    alpha.is_active = Some(true);
    store::add_member(&home, &team, alpha).expect("member");

    // In its turn, alpha asks for its plan to be approved.
    from_alpha(
        &home,
        &team,
        serde_json::json!({"type": "plan_approval_request", "from": "alpha",
            "timestamp": now_iso(), "planFilePath": "/p.md", "planContent": "# Plan",
            "requestId": "plan_approval-1@alpha"}),
    );
    next_matching(
        &mut events,
        "the plan queued",
        |e| matches!(e, LeadEvent::Plans(p) if p.len() == 1),
    )
    .await;
    commands
        .send(LeadCommand::AnswerPlan {
            request_id: "plan_approval-1@alpha".to_string(),
            decision: PlanDecision::Approve {
                mode: crate::protocol::PermissionMode::Default,
            },
        })
        .await
        .expect("lead runs");
    // Its turn has not ended: the verdict waits (a marker message from alpha shows the lead
    // went on with its business meanwhile).
    store::inbox::append(
        &home,
        &team,
        LEAD_NAME,
        &InboxEntry::new("alpha", "still at it"),
    )
    .expect("append");
    next_matching(&mut events, "the marker", |e| {
        matches!(e, LeadEvent::Transcript(crate::lead::contract::TranscriptItem::Teammate { text, .. }) if text == "still at it")
    })
    .await;
    assert_eq!(
        verdicts(&home, &team),
        0,
        "the verdict went during the turn"
    );

    // The turn ends: the verdict follows.
    from_alpha(
        &home,
        &team,
        serde_json::json!({"type": "idle_notification", "from": "alpha",
            "timestamp": now_iso(), "idleReason": "available"}),
    );
    next_matching(&mut events, "the approval told", |e| {
        note_with(e, "Approved alpha's plan")
    })
    .await;
    assert_eq!(verdicts(&home, &team), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verdict_waits_for_the_turn_that_asked_before_the_lead_read_its_member() {
    // The lead has not read alpha's member entry yet (on a loaded machine the team file's
    // re-read can come after the request and the answer): the request itself says a turn runs.
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("verdict2", SESSION, |_| {});
    from_alpha(
        &home,
        &team,
        serde_json::json!({"type": "plan_approval_request", "from": "alpha",
            "timestamp": now_iso(), "planFilePath": "/p.md", "planContent": "# Plan",
            "requestId": "plan_approval-2@alpha"}),
    );
    next_matching(
        &mut events,
        "the plan queued",
        |e| matches!(e, LeadEvent::Plans(p) if p.len() == 1),
    )
    .await;
    commands
        .send(LeadCommand::AnswerPlan {
            request_id: "plan_approval-2@alpha".to_string(),
            decision: PlanDecision::Approve {
                mode: crate::protocol::PermissionMode::Default,
            },
        })
        .await
        .expect("lead runs");
    store::inbox::append(
        &home,
        &team,
        LEAD_NAME,
        &InboxEntry::new("alpha", "still at it"),
    )
    .expect("append");
    next_matching(&mut events, "the marker", |e| {
        matches!(e, LeadEvent::Transcript(crate::lead::contract::TranscriptItem::Teammate { text, .. }) if text == "still at it")
    })
    .await;
    assert_eq!(
        verdicts(&home, &team),
        0,
        "the verdict went during the turn that asked"
    );

    // Its member is read, then that turn ends: the verdict follows.
    let mut alpha = alpha_in_a_pane(&team, "/");
    alpha.mode = Some("plan".to_string());
    alpha.is_active = Some(true);
    store::add_member(&home, &team, alpha).expect("member");
    from_alpha(
        &home,
        &team,
        serde_json::json!({"type": "idle_notification", "from": "alpha",
            "timestamp": now_iso(), "idleReason": "available"}),
    );
    next_matching(&mut events, "the approval told", |e| {
        note_with(e, "Approved alpha's plan")
    })
    .await;
    assert_eq!(verdicts(&home, &team), 1);
}
