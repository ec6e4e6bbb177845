//! The lead's permission queue as a user meets it: requests written into the lead's inbox by
//! another process, and asks of in-process teammates through the leader bridge, wait in one
//! FIFO; every answer is delivered once, bound to the request.

use crate::lead_common;

use lead_common::{DEADLINE, Session, eventually};
use serde_json::json;
use teamlead::agent::asker::{AskError, Asking, PermissionAsker};
use teamlead::lead::contract::{LeadCommand, PermissionDecision, PermissionSource};
use teamlead::protocol::InboxEntry;
use teamlead::protocol::frames::{
    Frame, HostPattern, PermissionRequest, ResponseSubtype, SandboxPermissionRequest, input_digest,
};

fn request(id: &str, worker: &str, command: &str) -> PermissionRequest {
    PermissionRequest {
        request_id: id.to_string(),
        agent_id: worker.to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: Some(format!("toolu_{id}")),
        description: "run it".to_string(),
        input: json!({"command": command, "description": "run it"}),
        permission_suggestions: vec![json!({
            "type": "addRules",
            "rules": [{"toolName": "Bash", "ruleContent": "make:*"}],
            "behavior": "allow",
            "destination": "session"
        })],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_from_another_process_is_queued_and_answered_bound() {
    let mut s = Session::start("perm-proc").await;
    s.add_pane_member("worker", "%3", "default").await;
    let req = request("perm-1-aaaaaaa", "worker", "make test");
    let text = Frame::PermissionRequest(req.clone()).to_text();
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_teamlead"))
        .arg("--home")
        .arg(s.home_dir.path())
        .args([
            "send",
            "--team",
            &s.team,
            "--to",
            "team-lead",
            "--from",
            "worker",
        ])
        .arg(&text)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TEAMLEAD_HOME")
        .output()
        .expect("run teamlead send");
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );

    let queue = s
        .wait_permissions("the request in the queue", |p| p.len() == 1)
        .await;
    let pending = &queue[0];
    assert_eq!(pending.worker, "worker");
    assert_eq!(pending.tool_name, "Bash");
    assert_eq!(pending.source, PermissionSource::Inbox);
    assert_eq!(pending.color.as_deref(), Some("green"));
    assert_eq!(pending.suggestions.len(), 1);

    let always = pending.suggestions.clone();
    s.send(LeadCommand::AnswerPermission {
        key: pending.key,
        decision: PermissionDecision::AllowAlways(always.clone()),
    })
    .await;
    s.wait_permissions("an empty queue", |p| p.is_empty()).await;
    // The answer is written off the lead's loop, just after the queue shows it answered.
    lead_common::eventually("the answer in worker's inbox", || {
        !s.frames_in("worker").is_empty()
    })
    .await;

    let frames = s.frames_in("worker");
    assert_eq!(frames.len(), 1, "{frames:?}");
    let (entry, Frame::PermissionResponse(resp)) = &frames[0] else {
        panic!("not a permission_response: {frames:?}")
    };
    assert_eq!(entry.from, "team-lead");
    assert_eq!(resp.request_id, "perm-1-aaaaaaa");
    assert_eq!(resp.subtype, ResponseSubtype::Success);
    let bound = resp.approved_request.as_ref().expect("bound answer");
    assert_eq!(bound.tool_use_id, "toolu_perm-1-aaaaaaa");
    assert_eq!(bound.input_digest, input_digest("Bash", &req.input));
    assert!(resp.matches(&req));
    assert_eq!(
        resp.response
            .as_ref()
            .and_then(|r| r.permission_updates.clone()),
        Some(always)
    );
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_feeds_share_one_fifo_and_each_request_gets_one_answer() {
    let mut s = Session::start("perm-fifo").await;
    s.add_pane_member("pane-mate", "%4", "default").await;
    let bridge = s.handle.bridge.clone();
    let ask = |id: &str| Asking {
        worker: "inproc".to_string(),
        color: Some("red".to_string()),
        request: request(id, "inproc", "cargo build"),
    };

    let first = tokio::spawn(bridge.ask(ask("perm-2-bbbbbbb")));
    s.wait_permissions("the first bridge ask", |p| p.len() == 1)
        .await;
    s.to_lead(&InboxEntry::frame(
        "pane-mate",
        &Frame::PermissionRequest(request("perm-3-ccccccc", "pane-mate", "ls")),
    ));
    s.wait_permissions("the inbox request", |p| p.len() == 2)
        .await;
    let third = tokio::spawn(bridge.ask(ask("perm-4-ddddddd")));
    let queue = s.wait_permissions("three requests", |p| p.len() == 3).await;

    let order: Vec<&str> = queue.iter().map(|p| p.request_id.as_str()).collect();
    assert_eq!(
        order,
        ["perm-2-bbbbbbb", "perm-3-ccccccc", "perm-4-ddddddd"]
    );
    assert_eq!(queue[0].source, PermissionSource::Bridge);
    assert_eq!(queue[1].source, PermissionSource::Inbox);

    // Answer the head twice: the first answer counts, the second does nothing.
    for decision in [
        PermissionDecision::AllowOnce,
        PermissionDecision::Deny { feedback: None },
    ] {
        s.send(LeadCommand::AnswerPermission {
            key: queue[0].key,
            decision,
        })
        .await;
    }
    let answer = tokio::time::timeout(DEADLINE, first)
        .await
        .expect("answered")
        .expect("task")
        .expect("approved");
    assert!(answer.approved());
    assert!(answer.approved_request.is_some());

    // The inbox request, answered twice with a refusal: exactly one response lands.
    for _ in 0..2 {
        s.send(LeadCommand::AnswerPermission {
            key: queue[1].key,
            decision: PermissionDecision::Deny {
                feedback: Some("use make check".to_string()),
            },
        })
        .await;
    }
    s.wait_permissions("one left", |p| p.len() == 1).await;
    s.send(LeadCommand::AnswerPermission {
        key: queue[2].key,
        decision: PermissionDecision::AllowAlways(vec![]),
    })
    .await;
    let third = tokio::time::timeout(DEADLINE, third)
        .await
        .expect("answered")
        .expect("task")
        .expect("approved");
    let updates = third
        .response
        .and_then(|r| r.permission_updates)
        .expect("rules");
    assert_eq!(updates.len(), 1, "always allow adds a session rule");
    s.wait_permissions("an empty queue", |p| p.is_empty()).await;
    // The answer is written off the lead's loop, just after the queue shows it answered.
    lead_common::eventually("the answer in pane-mate's inbox", || {
        !s.frames_in("pane-mate").is_empty()
    })
    .await;

    let frames = s.frames_in("pane-mate");
    assert_eq!(frames.len(), 1, "{frames:?}");
    let Frame::PermissionResponse(resp) = &frames[0].1 else {
        panic!("{frames:?}")
    };
    assert_eq!(resp.error.as_deref(), Some("use make check"));
    assert_eq!(resp.tool_use_id.as_deref(), Some("toolu_perm-3-ccccccc"));
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spoofed_requests_are_dropped_and_sandbox_requests_answered() {
    let mut s = Session::start("perm-spoof").await;
    s.add_pane_member("worker", "%5", "default").await;
    // agent_id says "boss", the envelope says "worker": dropped.
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::PermissionRequest(request("perm-5-eeeeeee", "boss", "rm -rf /")),
    ));
    s.wait_note("claims to come from boss").await;
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::SandboxPermissionRequest(SandboxPermissionRequest {
            request_id: "sandbox-1-fffffff".to_string(),
            worker_id: format!("worker@{}", s.team),
            worker_name: "worker".to_string(),
            worker_color: Some("green".to_string()),
            host_pattern: HostPattern {
                host: "crates.io".to_string(),
            },
            created_at: 1,
        }),
    ));
    let queue = s
        .wait_permissions("the sandbox request", |p| p.len() == 1)
        .await;
    assert_eq!(queue[0].request_id, "sandbox-1-fffffff");
    assert!(queue[0].description.contains("crates.io"));
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::Deny { feedback: None },
    })
    .await;
    let home = s.home.clone();
    let team = s.team.clone();
    eventually("the sandbox answer", move || {
        teamlead::store::inbox::read(&home, &team, "worker")
            .map(|r| !r.entries.is_empty())
            .unwrap_or(false)
    })
    .await;
    let frames = s.frames_in("worker");
    let Frame::SandboxPermissionResponse(resp) = &frames[0].1 else {
        panic!("{frames:?}")
    };
    assert!(!resp.allow);
    assert_eq!(resp.host, "crates.io");
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_after_the_lead_is_gone_fail_with_lead_gone() {
    let mut s = Session::start("perm-gone").await;
    let bridge = s.handle.bridge.clone();
    s.quit().await;
    let asking = Asking {
        worker: "late".to_string(),
        color: None,
        request: request("perm-6-ggggggg", "late", "ls"),
    };
    let got = tokio::time::timeout(DEADLINE, bridge.ask(asking))
        .await
        .expect("answered");
    assert_eq!(got, Err(AskError::LeadGone));
}

/// A plan approval gives the teammate a mode; Claude Code 2.1.45 does not write it to
/// config.json itself, so the lead does: the team file (and the teams dialog) say the truth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_plan_records_the_teammates_new_mode() {
    use teamlead::lead::contract::{LeadEvent, PlanDecision};
    use teamlead::protocol::PermissionMode;
    use teamlead::protocol::frames::PlanApprovalRequest;
    let mut s = Session::start("plan-mode").await;
    s.add_pane_member("planner", "%3", "plan").await;
    let request = PlanApprovalRequest {
        from: "planner".to_string(),
        timestamp: teamlead::protocol::time::now_iso(),
        plan_file_path: String::new(),
        plan_content: "1. edit the parser".to_string(),
        request_id: "plan_approval-1@planner@plan-mode".to_string(),
    };
    s.to_lead(&InboxEntry::frame(
        "planner",
        &Frame::PlanApprovalRequest(request.clone()),
    ));
    s.wait_for(
        "the plan",
        |e| matches!(e, LeadEvent::Plans(p) if !p.is_empty()),
    )
    .await;
    s.send(LeadCommand::AnswerPlan {
        request_id: request.request_id.clone(),
        decision: PlanDecision::Approve {
            mode: PermissionMode::AcceptEdits,
        },
    })
    .await;
    s.wait_note("Approved planner's plan (acceptEdits mode)")
        .await;
    let team = teamlead::store::read_team(&s.home, &s.team).unwrap();
    assert_eq!(
        team.member("planner").unwrap().permission_mode(),
        PermissionMode::AcceptEdits
    );
    s.wait_team("planner shown in acceptEdits", |t| {
        t.iter()
            .any(|v| v.name == "planner" && v.mode == PermissionMode::AcceptEdits)
    })
    .await;
    s.quit().await;
}

/// Issue 18, part 4: a frame and a task carrying control sequences are noted by the lead,
/// naming the teammate, the frame and the fields (the request is still queued, shown escaped).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_sequences_in_a_frame_and_a_task_are_noted() {
    let mut s = Session::start("perm-controls").await;
    s.add_pane_member("worker", "%3", "default").await;
    let req = request("perm-2-hidden1", "worker", "ls\u{1b}[8m; rm -rf ~\u{1b}[0m");
    let mut entry = InboxEntry::new("worker", Frame::PermissionRequest(req).to_text());
    entry.timestamp = "2026-02-18T18:40:00.000Z".to_string();
    s.to_lead(&entry);
    let note = s
        .wait_note("A permission_request from worker (sent 2026-02-18T18:40:00.000Z) carried control sequences in `input`")
        .await;
    assert!(!note.contains('\u{1b}'), "{note}");
    s.wait_permissions("the request still queued", |p| p.len() == 1)
        .await;
    let task = json!({"id": "7", "subject": "map", "description": "", "status": "pending",
        "owner": "worker\u{1b}]0;owned\u{7}", "blocks": [], "blockedBy": []});
    std::fs::create_dir_all(s.tasks_dir()).unwrap();
    std::fs::write(s.tasks_dir().join("7.json"), task.to_string()).unwrap();
    s.wait_note("Task #7 carries control sequences in `owner`")
        .await;
    s.quit().await;
}

/// The lead's answer to a teammate's request is followed in the message ledger like a
/// message: delivered at once (never queued: the teammate waits for it mid-turn), read once
/// the teammate marks it read, shown in its view as what it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_is_followed_in_the_ledger() {
    use teamlead::lead::contract::LeadEvent;
    use teamlead::lead::ledger::Receipt;
    let mut s = Session::start("perm-ledger").await;
    s.add_pane_member("worker", "%3", "default").await;
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::PermissionRequest(request("perm-l-aaaaaaa", "worker", "make test")),
    ));
    let queue = s
        .wait_permissions("the request in the queue", |p| p.len() == 1)
        .await;
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::AllowOnce,
    })
    .await;
    let delivered = s
        .wait_for("the answer's receipt", |e| {
            matches!(e, LeadEvent::Receipt { to, state: Receipt::Delivered, .. } if to == "worker")
        })
        .await;
    let LeadEvent::Receipt { id, .. } = delivered else {
        unreachable!()
    };
    let views = s
        .wait_team("the answer in worker's view", |t| {
            t.iter()
                .any(|v| v.name == "worker" && v.messages.first().is_some_and(|m| m.id == id))
        })
        .await;
    let worker = views.iter().find(|v| v.name == "worker").unwrap();
    assert_eq!(worker.messages[0].preview, "answer: permission granted");
    // The worker takes it as Claude Code does: marks it read.
    let keys: Vec<String> = teamlead::store::inbox::read(&s.home, &s.team, "worker")
        .unwrap()
        .entries
        .iter()
        .map(|e| e.dedup_key())
        .collect();
    teamlead::store::inbox::mark_read(&s.home, &s.team, "worker", &keys).unwrap();
    s.seen_or_wait(
        "read",
        |e| matches!(e, LeadEvent::Receipt { id: i, state: Receipt::Read, .. } if *i == id),
    )
    .await;
    s.quit().await;
}
