//! The park on the controller: a `claude` teammate's transcript records a usage limit that
//! resets in 3 s (as Claude Code 2.1.332 writes it, with the exact `resetsAt`); with resuming
//! on, the team is parked, a message to another teammate is held (acknowledged, not in its
//! inbox), and after the reset each teammate is resumed once, the limited one first and told
//! to go on, the other given what was held for it. The lead runs on temporary files; the test
//! plays the teammates (their transcript and messages).

use std::io::Write;
use std::time::Duration;

use crate::lead::contract::{LeadCommand, LeadEvent, ViewTarget};
use crate::lead::park::ParkSettings;
use crate::protocol::time::now_ms;
use crate::protocol::{InboxEntry, LEAD_NAME, Member};
use crate::store::{self, Home};

const SESSION: &str = "0b7c5d1e-2222-4222-8333-944455556666";

use super::test_events::{TestLead, next_matching, note_with};

/// The texts in `name`'s inbox.
fn inbox(home: &Home, team: &str, name: &str) -> Vec<String> {
    store::inbox::read(home, team, name)
        .map(|r| r.entries.iter().map(|e| e.text.clone()).collect())
        .unwrap_or_default()
}

/// alpha's transcript, recording a usage limit that resets at `reset_s` (as 2.1.332 writes it).
fn limit_transcript(home: &Home, reset_s: u64) {
    let dir = home.root.join("projects").join("-w");
    std::fs::create_dir_all(&dir).expect("projects");
    let line = serde_json::json!({
        "type": "assistant", "isApiErrorMessage": true, "error": "rate_limit",
        "apiError": "usage_limit_reached",
        "quotaLimits": {"status": "rejected", "resetsAt": reset_s, "rateLimitType": "five_hour"},
        "timestamp": crate::protocol::time::now_iso(),
        "message": {"id": "x", "model": "<synthetic>", "content": [{"type": "text",
            "text": "You've hit your 5-hour limit · resets 4:17pm (UTC)"}],
            "usage": {"input_tokens": 0, "output_tokens": 0}}
    });
    let mut f = std::fs::File::create(dir.join(format!("{SESSION}.jsonl"))).expect("transcript");
    writeln!(f, "{line}").expect("write");
}

/// A budget stops a resume: beta goes over its budget while the team is parked; at the reset
/// alpha is resumed, beta is not, and what was held for it is not sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_over_its_budget_is_not_resumed() {
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("budgeted", SESSION, |opts| {
        opts.park = ParkSettings {
            resume: true,
            until: None,
        };
        opts.budget_teammate = Some(1);
    });
    for (name, pane) in [("alpha", "%7"), ("beta", "%8")] {
        let mut member = Member::new(name, &team, "/");
        member.tmux_pane_id = pane.to_string();
        member.backend_type = Some("tmux".to_string());
        member.model = Some("claude-sonnet-4-5".to_string());
        store::add_member(&home, &team, member).expect("member");
    }
    let reset_s = now_ms() / 1000 + 2;
    limit_transcript(&home, reset_s);
    store::inbox::append(
        &home,
        &team,
        LEAD_NAME,
        &InboxEntry::new("alpha", "stopped"),
    )
    .unwrap();
    next_matching(&mut events, "the team parked", |e| {
        note_with(e, "The team is parked")
    })
    .await;
    commands
        .send(LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/msg beta PARK-HELD-OVER".to_string(),
        })
        .await
        .unwrap();
    next_matching(&mut events, "the message held", |e| {
        note_with(e, "beta is parked at the usage limit: this is held")
    })
    .await;
    // beta reports what its model used: over its budget of one millionth of a dollar.
    let idle = crate::protocol::frames::IdleNotification {
        from: "beta".into(),
        timestamp: crate::protocol::time::now_iso(),
        idle_reason: Some(crate::protocol::frames::IdleReason::Available),
        summary: None,
        completed_task_id: None,
        completed_status: None,
        failure_reason: None,
        result: None,
        usage: Some(crate::protocol::frames::ReportedUsage {
            input_tokens: 11_000,
            ..Default::default()
        }),
        limit_until_ms: None,
    };
    let frame = crate::protocol::frames::Frame::IdleNotification(idle);
    store::inbox::append(&home, &team, LEAD_NAME, &InboxEntry::frame("beta", &frame)).unwrap();
    next_matching(&mut events, "alpha resumed", |e| {
        note_with(e, "Resumed alpha (1 of 2)")
    })
    .await;
    next_matching(&mut events, "beta not resumed", |e| {
        note_with(e, "Not resuming beta (2 of 2): it is paused")
    })
    .await;
    assert!(
        !inbox(&home, &team, "beta")
            .iter()
            .any(|t| t.contains("PARK-HELD-OVER")),
        "what was held for beta is not sent"
    );
    commands.send(LeadCommand::Quit).await.unwrap();
    next_matching(&mut events, "Exited", |e| *e == LeadEvent::Exited).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_limit_parks_the_team_and_each_teammate_is_resumed_once_after_the_reset() {
    let TestLead {
        home,
        team,
        commands,
        mut events,
        dirs: _dirs,
    } = TestLead::start("parked", SESSION, |opts| {
        opts.park = ParkSettings {
            resume: true,
            until: None,
        };
    });
    for (name, pane) in [("alpha", "%7"), ("beta", "%8")] {
        let mut member = Member::new(name, &team, "/");
        member.tmux_pane_id = pane.to_string();
        member.backend_type = Some("tmux".to_string());
        store::add_member(&home, &team, member).expect("member");
    }

    // alpha's transcript: the limit, with its exact reset 3 s ahead.
    let reset_s = now_ms() / 1000 + 3;
    limit_transcript(&home, reset_s);
    store::inbox::append(
        &home,
        &team,
        LEAD_NAME,
        &InboxEntry::new("alpha", "stopped"),
    )
    .unwrap();
    next_matching(&mut events, "the team parked", |e| {
        note_with(e, "alpha hit the usage limit") && note_with(e, "The team is parked")
    })
    .await;

    // A message to beta is held: acknowledged, not written; the views say parked.
    commands
        .send(LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/msg beta PARK-HELD-WORK".to_string(),
        })
        .await
        .unwrap();
    next_matching(&mut events, "the message held", |e| {
        note_with(e, "beta is parked at the usage limit: this is held")
    })
    .await;
    next_matching(&mut events, "beta shown parked with one held", |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "beta"
            && v.parked.as_ref().is_some_and(|p| p.held == 1 && p.reset_ms == reset_s * 1000)))
    })
    .await;
    assert!(inbox(&home, &team, "beta").is_empty(), "held, not sent");
    assert!(inbox(&home, &team, "alpha").is_empty());

    // After the reset and its margin: alpha first, told to go on; then beta, with its message.
    next_matching(&mut events, "alpha resumed", |e| {
        note_with(e, "Resumed alpha (1 of 2)")
    })
    .await;
    assert!(
        now_ms() >= reset_s * 1000 + crate::lead::park::MARGIN_MS,
        "not before the reset and its margin"
    );
    assert!(inbox(&home, &team, "beta").is_empty(), "beta still parked");
    next_matching(&mut events, "beta resumed", |e| {
        note_with(e, "Resumed beta (2 of 2)")
    })
    .await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let (a, b) = (inbox(&home, &team, "alpha"), inbox(&home, &team, "beta"));
        if !a.is_empty() && !b.is_empty() {
            assert_eq!(
                a,
                vec![super::park::GO_ON.to_string()],
                "told once to go on"
            );
            assert_eq!(b, vec!["PARK-HELD-WORK".to_string()], "delivered once");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{a:?} {b:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    commands.send(LeadCommand::Quit).await.unwrap();
    next_matching(&mut events, "Exited", |e| *e == LeadEvent::Exited).await;
}
