//! Approvals answered only on purpose, with the real binary in a pseudo-terminal: a lead with
//! an in-process teammate `alpha`; while the person types a message to alpha, another process
//! (`teamlead send`) writes a `permission_request` (then a `plan_approval_request`) from alpha
//! into the lead's inbox. What was typed is sent as the message, the request keeps waiting,
//! Enter / a / y / n typed in the dialog's grace period answer nothing, and answering on
//! purpose still works by key (alpha's inbox gets exactly one response, the right one).

use std::path::{Path, PathBuf};

use crate::pty_harness::{DEADLINE, PtyLead};
use serde_json::json;
use teamlead::protocol::InboxEntry;
use teamlead::protocol::frames::{Frame, PermissionRequest, PlanApprovalRequest, ResponseSubtype};
use teamlead_test_support::keys::Keyboard;

const TEAM: &str = "approvals";

fn inbox_path(home: &Path, member: &str) -> PathBuf {
    home.join("teams")
        .join(TEAM)
        .join("inboxes")
        .join(format!("{member}.json"))
}

/// The entries of a member's inbox (none when it does not exist or does not parse yet).
fn inbox(home: &Path, member: &str) -> Vec<InboxEntry> {
    std::fs::read_to_string(inbox_path(home, member))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn frames_to(home: &Path, member: &str) -> Vec<Frame> {
    inbox(home, member)
        .iter()
        .filter_map(|e| Frame::parse(&e.text))
        .collect()
}

/// Waits until `check` holds for the files, with a deadline.
fn eventually(what: &str, session: &PtyLead, check: impl Fn() -> bool) {
    teamlead_test_support::wait::wait_until(what, DEADLINE, check, || {
        format!("screen:\n{}", session.contents())
    });
}

/// `teamlead send` from alpha to the lead, as another process.
fn send_from_alpha(home: &Path, frame: &Frame) {
    crate::panes_common::teamlead_send(home, TEAM, Some("alpha"), "team-lead", &frame.to_text());
}

fn message_reached_alpha(home: &Path, text: &str) -> bool {
    inbox(home, "alpha")
        .iter()
        .any(|e| e.from == "team-lead" && e.text == text)
}

#[test]
fn typed_text_is_sent_and_only_deliberate_keys_answer() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let h = home.path();
    let session = crate::pty_harness::lead(project.path())
        .home(h)
        .args(["--team", TEAM, "--backend", "in-process"])
        .start();
    session.submit("/spawn alpha \"wait for messages\"");
    session.wait_for("alpha in the team badge", |s| s.contents().contains("● 1 "));

    // 1. A permission request arrives while "@alpha hello" is being typed.
    session.type_keys("@alpha hel");
    let request = PermissionRequest {
        request_id: "perm-1767225600000-rmrfimp".to_string(),
        agent_id: "alpha".to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: Some("toolu_rm".to_string()),
        description: "clean up".to_string(),
        input: json!({"command": "rm -rf ~/important"}),
        permission_suggestions: Vec::new(),
    };
    send_from_alpha(h, &Frame::PermissionRequest(request));
    session.wait_for("the approvals banner", |s| {
        s.contents().contains("1 approval waiting")
    });
    session.send(b"lo\r");
    eventually("the message in alpha's inbox", &session, || {
        message_reached_alpha(h, "hello")
    });
    let screen = session.contents();
    assert!(screen.contains("1 approval"), "still waiting:\n{screen}");
    assert!(
        !frames_to(h, "alpha")
            .iter()
            .any(|f| matches!(f, Frame::PermissionResponse(_))),
        "nothing answered"
    );

    // 2. Opened on purpose; Enter, a, y, n in its grace period answer nothing (text it has no
    // use for, a space, would go to the composer). (The `x` in
    // the composer keeps the request from taking the keyboard by itself meanwhile.)
    session.type_keys("x");
    session.send(b"\x10\rayn");
    session.wait_for("the dialog", |s| s.contents().contains("needs permission"));
    // Waiting out the grace period (a key that changes no answer, until it shows) is the
    // precondition of answering; every key typed before it has been handled by then.
    session.wait_out_grace();
    let screen = session.contents();
    assert!(screen.contains("needs permission"), "{screen}");
    assert!(!screen.contains("Always?"), "`a` did nothing:\n{screen}");
    assert!(
        !screen.contains("empty for no reason"),
        "`n` did nothing:\n{screen}"
    );
    assert!(
        !frames_to(h, "alpha")
            .iter()
            .any(|f| matches!(f, Frame::PermissionResponse(_))),
        "nothing answered in the grace period"
    );
    // 3. On purpose: y approves, once, without rules.
    session.send(b"y");
    eventually("the permission_response", &session, || {
        frames_to(h, "alpha")
            .iter()
            .any(|f| matches!(f, Frame::PermissionResponse(_)))
    });
    let responses: Vec<_> = frames_to(h, "alpha")
        .into_iter()
        .filter_map(|f| match f {
            Frame::PermissionResponse(r) => Some(r),
            _ => None,
        })
        .collect();
    assert_eq!(responses.len(), 1, "{responses:?}");
    assert_eq!(responses[0].request_id, "perm-1767225600000-rmrfimp");
    assert_eq!(responses[0].subtype, ResponseSubtype::Success);
    assert!(
        responses[0]
            .response
            .as_ref()
            .and_then(|r| r.permission_updates.as_ref())
            .is_none_or(|u| u.is_empty()),
        "a plain yes, no rule: {responses:?}"
    );

    // 4. The same for a plan: it arrives while "/task assign 1 builder"-like text is typed.
    session.send(b"\x7f@alpha plan n");
    session.wait_for("the typed text", |s| s.contents().contains("@alpha plan n"));
    let plan = PlanApprovalRequest {
        from: "alpha".to_string(),
        timestamp: "2026-01-01T00:00:00.000Z".to_string(),
        plan_file_path: String::new(),
        plan_content: "1. Remove ~/important".to_string(),
        request_id: format!("plan_approval-1767225600000@alpha@{TEAM}"),
    };
    send_from_alpha(h, &Frame::PlanApprovalRequest(plan));
    session.wait_for("the plan banner", |s| {
        s.contents().contains("@alpha has a plan")
    });
    session.send(b"ow\r");
    eventually("the second message in alpha's inbox", &session, || {
        message_reached_alpha(h, "plan now")
    });
    session.send(b"x\x10\ryn");
    session.wait_for("the plan dialog", |s| {
        s.contents().contains("wants to proceed")
    });
    // Waiting out the grace period (a key that changes no answer, until it shows) is the
    // precondition of answering; every key typed before it has been handled by then.
    session.wait_out_grace();
    let screen = session.contents();
    assert!(screen.contains("wants to proceed"), "{screen}");
    assert!(
        !screen.contains("what to change"),
        "`n` did nothing:\n{screen}"
    );
    assert!(
        !frames_to(h, "alpha")
            .iter()
            .any(|f| matches!(f, Frame::PlanApprovalResponse(_))),
        "no plan answer in the grace period"
    );
    session.send(b"y");
    eventually("the plan_approval_response", &session, || {
        frames_to(h, "alpha")
            .iter()
            .any(|f| matches!(f, Frame::PlanApprovalResponse(r) if r.approved))
    });
    let plan_answers = frames_to(h, "alpha")
        .into_iter()
        .filter(|f| matches!(f, Frame::PlanApprovalResponse(_)))
        .count();
    assert_eq!(plan_answers, 1);
}
