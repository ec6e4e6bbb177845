//! The `shell` teammate at work: it claims tasks, asks the lead for Bash per its mode, runs
//! the commands in its working directory, completes or keeps the tasks, reports to the lead,
//! and ends each turn with an idle notification. Real files in a temporary home, real `sh`.

use crate::agent_common;

use std::time::{Duration, Instant};

use agent_common::{Policy, RecordingAsker, TestTeam, idles, spawn, wait_for};
use teamlead::agent::{LogKind, TeammateEventKind};
use teamlead::protocol::frames::IdleReason;
use teamlead::protocol::permission::PermissionUpdate;
use teamlead::protocol::{InboxEntry, LEAD_NAME, PermissionMode, TaskStatus};

#[tokio::test]
async fn default_mode_asks_runs_completes_and_reports() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("write the marker", "echo hello > marker.txt");
    let asker = RecordingAsker::new(Policy::Approve);
    let mut builder = spawn(
        team.config("builder", PermissionMode::Default),
        asker.shared(),
    );

    team.wait_completed("the task to be completed", &task.id)
        .await;
    assert_eq!(team.file("marker.txt").as_deref(), Some("hello\n"));
    let task_now = team.task(&task.id);
    assert_eq!(task_now.owner.as_deref(), Some("builder"));

    // It asked once, for exactly this command, with a rule suggestion.
    let asked = asker.requests();
    assert_eq!(asked.len(), 1);
    let req = &asked[0].request;
    assert_eq!(asked[0].worker, "builder");
    assert_eq!(asked[0].color.as_deref(), Some("blue"));
    assert_eq!(req.agent_id, "builder");
    assert_eq!(req.tool_name, "Bash");
    assert_eq!(req.input["command"], "echo hello > marker.txt");
    assert!(req.request_id.starts_with("perm-"));
    assert!(
        req.tool_use_id
            .as_deref()
            .unwrap_or("")
            .starts_with("toolu_")
    );
    match &req.suggestions()[..] {
        [PermissionUpdate::AddRules { rules, .. }] => {
            assert_eq!(rules[0].tool_name, "Bash");
            // A redirection: the exact command, never `echo:*` (which would allow
            // `echo pwned > anywhere`).
            assert_eq!(
                rules[0].rule_content.as_deref(),
                Some("echo hello > marker.txt")
            );
        }
        other => panic!("unexpected suggestions {other:?}"),
    }

    // The lead got the result and an idle notification naming the task.
    let idle = wait_for("the idle notification", 10, || {
        idles(&team)
            .into_iter()
            .find(|n| n.completed_task_id.is_some())
    })
    .await;
    assert_eq!(idle.from, "builder");
    assert_eq!(idle.completed_task_id.as_deref(), Some(task.id.as_str()));
    assert_eq!(idle.completed_status.as_deref(), Some("resolved"));
    assert_eq!(idle.idle_reason, Some(IdleReason::Available));
    let result = team
        .lead_messages()
        .into_iter()
        .find(|m| m.from == "builder")
        .expect("a result message");
    assert_eq!(
        result.summary.as_deref(),
        Some(format!("task {} done: exit 0", task.id).as_str())
    );
    assert!(result.text.contains("echo hello > marker.txt"));
    assert!(result.text.contains("exit 0"));
    assert_eq!(result.color.as_deref(), Some("blue"));

    // Idle in config.json, and the UI heard it wait for approval, then go idle.
    wait_for("isActive false", 5, || {
        (team.member("builder").is_active == Some(false)).then_some(())
    })
    .await;
    builder
        .wait_event("idle", |e| matches!(e, TeammateEventKind::Idle { .. }))
        .await;
    let events = builder.collect();
    assert!(events
        .iter()
        .any(|e| matches!(e, TeammateEventKind::WaitingForApproval { what } if what.contains("echo hello"))));
    assert!(events.iter().any(
        |e| matches!(e, TeammateEventKind::Working { task: Some((id, _)) } if *id == task.id)
    ));
}

#[tokio::test]
async fn an_always_answer_is_not_asked_again() {
    let team = TestTeam::new(&["builder"]);
    let first = team.add_task("first", "echo one > one.txt");
    let asker = RecordingAsker::new(Policy::ApproveAlways);
    let _builder = spawn(
        team.config("builder", PermissionMode::Default),
        asker.shared(),
    );
    team.wait_completed("the first task", &first.id).await;
    // The rule is the exact command (it has a redirection): the same command again is not
    // asked, another one writing elsewhere is.
    let second = team.add_task("second", "echo one > one.txt");
    team.wait_completed("the second task", &second.id).await;
    assert_eq!(team.file("one.txt").as_deref(), Some("one\n"));
    assert_eq!(
        asker.count(),
        1,
        "`echo one > one.txt` was allowed for the session"
    );
    let third = team.add_task("third", "echo two > two.txt");
    team.wait_completed("the third task", &third.id).await;
    assert_eq!(team.file("two.txt").as_deref(), Some("two\n"));
    assert_eq!(asker.count(), 2, "another redirection is asked again");
}

#[tokio::test]
async fn a_denied_command_is_not_run_and_the_failure_is_reported() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("write the marker", "echo hello > marker.txt");
    let other = team.add_task("another", "echo other > other.txt");
    let asker = RecordingAsker::new(Policy::Deny("not on this branch".into()));
    let _builder = spawn(
        team.config("builder", PermissionMode::Default),
        asker.shared(),
    );

    let idle = wait_for("a failed idle notification", 10, || {
        idles(&team)
            .into_iter()
            .find(|n| n.idle_reason == Some(IdleReason::Failed))
    })
    .await;
    assert_eq!(idle.completed_task_id.as_deref(), Some(task.id.as_str()));
    assert_eq!(idle.completed_status.as_deref(), Some("failed"));
    assert!(
        idle.failure_reason
            .as_deref()
            .is_some_and(|r| r.contains("not on this branch"))
    );
    assert_eq!(team.file("marker.txt"), None);
    let report = team
        .lead_messages()
        .into_iter()
        .find(|m| m.from == "builder")
        .expect("a report");
    assert!(report.text.contains("not on this branch"));
    // The task stays with it, in progress, so the lead sees it; it claims nothing else.
    let kept = team.task(&task.id);
    assert_eq!(kept.status, TaskStatus::InProgress);
    assert_eq!(kept.owner.as_deref(), Some("builder"));
    assert_eq!(team.task(&other.id).owner, None);
    assert_eq!(asker.count(), 1);
}

#[tokio::test]
async fn bypass_permissions_runs_without_asking() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("write", "printf bypass > b.txt");
    let asker = RecordingAsker::new(Policy::Deny("should not be asked".into()));
    let _builder = spawn(
        team.config("builder", PermissionMode::BypassPermissions),
        asker.shared(),
    );
    team.wait_completed("the task", &task.id).await;
    assert_eq!(team.file("b.txt").as_deref(), Some("bypass"));
    assert_eq!(asker.count(), 0);
}

#[tokio::test]
async fn accept_edits_still_asks_for_bash() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("write", "printf edits > e.txt");
    let asker = RecordingAsker::new(Policy::Approve);
    let _builder = spawn(
        team.config("builder", PermissionMode::AcceptEdits),
        asker.shared(),
    );
    team.wait_completed("the task", &task.id).await;
    assert_eq!(asker.count(), 1);
    assert_eq!(asker.requests()[0].request.tool_name, "Bash");
}

#[tokio::test]
async fn a_failing_command_keeps_the_task_and_reports_the_exit_code() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("fail", "echo about to fail; exit 7");
    let asker = RecordingAsker::new(Policy::Approve);
    let _builder = spawn(
        team.config("builder", PermissionMode::BypassPermissions),
        asker.shared(),
    );
    let idle = wait_for("a failed idle notification", 10, || {
        idles(&team)
            .into_iter()
            .find(|n| n.idle_reason == Some(IdleReason::Failed))
    })
    .await;
    assert_eq!(
        idle.failure_reason.as_deref(),
        Some(format!("task {} failed: exit 7", task.id).as_str())
    );
    let report = team
        .lead_messages()
        .into_iter()
        .find(|m| m.from == "builder")
        .expect("a report");
    assert!(report.text.contains("about to fail"));
    assert_eq!(team.task(&task.id).status, TaskStatus::InProgress);
}

#[tokio::test]
async fn a_command_from_the_lead_is_run_and_answered() {
    let team = TestTeam::new(&["builder"]);
    let asker = RecordingAsker::new(Policy::Approve);
    let mut builder = spawn(
        team.config("builder", PermissionMode::Default),
        asker.shared(),
    );
    team.send(
        "builder",
        InboxEntry::new(
            LEAD_NAME,
            "Please run this:\n```sh\necho from-lead > lead.txt\n```",
        ),
    );
    builder.handle.wake();
    let reply = wait_for("the reply", 10, || {
        team.lead_messages()
            .into_iter()
            .find(|m| m.from == "builder")
    })
    .await;
    assert_eq!(team.file("lead.txt").as_deref(), Some("from-lead\n"));
    assert_eq!(
        reply.summary.as_deref(),
        Some("ran `echo from-lead > lead.txt`: exit 0")
    );
    assert_eq!(asker.count(), 1);
    // A peer's message is only read: its fenced block is not run.
    team.send(
        "builder",
        InboxEntry::new("peer", "my output:\n```\ntouch peer.txt\n```"),
    );
    builder.handle.wake();
    builder
        .wait_event("the peer's message", |e| {
            matches!(e, TeammateEventKind::Received { from, rendered, .. }
                if from == "peer" && rendered.starts_with("<teammate-message teammate_id=\"peer\""))
        })
        .await;
    wait_for("the idle after the peer's message", 10, || {
        (idles(&team).len() >= 2).then_some(())
    })
    .await;
    assert_eq!(team.file("peer.txt"), None);
}

#[tokio::test]
async fn interrupt_kills_the_command_and_reports_interrupted() {
    let team = TestTeam::new(&["sleeper"]);
    let task = team.add_task("nap", "sleep 30");
    let asker = RecordingAsker::new(Policy::Approve);
    let mut sleeper = spawn(
        team.config("sleeper", PermissionMode::BypassPermissions),
        asker.shared(),
    );
    sleeper
        .wait_event("the command to start", |e| {
            matches!(e, TeammateEventKind::Log { kind: LogKind::Command, text } if text.contains("sleep 30"))
        })
        .await;
    assert_eq!(team.member("sleeper").is_active, Some(true));
    let started = Instant::now();
    assert!(sleeper.handle.interrupt_turn());
    let idle = wait_for("the interrupted idle notification", 5, || {
        idles(&team)
            .into_iter()
            .find(|n| n.idle_reason == Some(IdleReason::Interrupted))
    })
    .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(idle.from, "sleeper");
    assert_eq!(team.member("sleeper").is_active, Some(false));
    // Only the turn stopped: the teammate runs on, the task stays its own.
    assert!(sleeper.handle.is_running());
    assert_eq!(team.task(&task.id).owner.as_deref(), Some("sleeper"));
    assert_eq!(team.task(&task.id).status, TaskStatus::InProgress);
    assert!(!sleeper.handle.interrupt_turn(), "no turn runs now");
}

#[tokio::test]
async fn waiting_for_approval_shows_in_events_and_is_active() {
    let team = TestTeam::new(&["builder"]);
    let task = team.add_task("write", "echo held > held.txt");
    let asker = RecordingAsker::new(Policy::ApproveWhenReleased);
    let mut builder = spawn(
        team.config("builder", PermissionMode::Default),
        asker.shared(),
    );
    builder
        .wait_event("waiting for approval", |e| {
            matches!(e, TeammateEventKind::WaitingForApproval { .. })
        })
        .await;
    assert_eq!(team.member("builder").is_active, Some(true));
    assert_eq!(team.file("held.txt"), None);
    asker.release();
    team.wait_completed("the task", &task.id).await;
    assert_eq!(team.file("held.txt").as_deref(), Some("held\n"));
}
