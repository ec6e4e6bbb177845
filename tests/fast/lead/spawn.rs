//! End to end with real in-process teammates: `/spawn`, a task with a command, the Bash request
//! in the queue, the work done in the working directory, the report as a turn, a plan to
//! approve, interrupting nothing, and `/quit` removing the team.

use crate::lead_common;

use lead_common::{Session, eventually};
use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PermissionDecision, PermissionSource, PlanDecision, TeammateStatus,
    TranscriptItem,
};
use teamlead::protocol::PermissionMode;
use teamlead::store;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_teammate_asks_works_reports_and_quits() {
    let mut s = Session::start("spawn-e2e").await;
    s.submit("/spawn Builder \"run the tasks\"").await;
    s.wait_note("Spawned builder (as builder)").await;
    let team = store::read_team(&s.home, &s.team).unwrap();
    let member = team.member("builder").expect("member");
    assert_eq!(member.tmux_pane_id, "in-process");
    assert_eq!(member.backend_type.as_deref(), Some("in-process"));
    assert_eq!(member.color.as_deref(), Some("red"));
    assert_eq!(member.prompt.as_deref(), Some("run the tasks"));

    s.submit("/task add make the file --command \"printf hello > made.txt && wc -c made.txt\"")
        .await;
    let queue = s
        .wait_permissions("builder's Bash request", |p| !p.is_empty())
        .await;
    assert_eq!(queue[0].worker, "builder");
    assert_eq!(queue[0].tool_name, "Bash");
    assert_eq!(queue[0].source, PermissionSource::Bridge);
    assert_eq!(queue[0].color.as_deref(), Some("red"));
    s.wait_team("builder waiting", |t| {
        t.iter()
            .any(|v| v.name == "builder" && v.status == TeammateStatus::WaitingForApproval)
    })
    .await;
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::AllowOnce,
    })
    .await;
    s.wait_tasks("the task completed", |t| {
        t.first().is_some_and(|t| t.status == "completed")
    })
    .await;
    let made = s.cwd.path().join("made.txt");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "hello");
    let report = s.wait_turn("made.txt").await;
    let TranscriptItem::Teammate { from, color, .. } = report else {
        unreachable!()
    };
    assert_eq!((from.as_str(), color.as_deref()), ("builder", Some("red")));
    // The inline view got its transcript.
    assert!(
        s.seen
            .iter()
            .any(|e| matches!(e, LeadEvent::TeammateTranscript { name, .. } if name == "builder"))
    );
    s.wait_team("builder idle", |t| {
        t.iter()
            .any(|v| v.name == "builder" && matches!(v.status, TeammateStatus::Idle { .. }))
    })
    .await;

    let team_dir = s.team_dir();
    s.submit("/quit").await;
    // Idle, of this process: stopped with the session, not asked (`lead::quit`).
    s.wait_note("1 idle teammate(s) of this process shut down with the lead.")
        .await;
    s.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
        .await;
    assert!(!team_dir.exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_approval_then_work_then_kill_frees_tasks() {
    let mut s = Session::start("plan-e2e").await;
    s.submit("/spawn planner --plan \"plan first\"").await;
    s.wait_note("plan approval required").await;
    let team = store::read_team(&s.home, &s.team).unwrap();
    let member = team.member("planner").unwrap();
    assert_eq!(member.plan_mode_required, Some(true));
    assert_eq!(member.permission_mode(), PermissionMode::Plan);

    s.submit("/task add write notes --command \"echo noted > notes.txt\"")
        .await;
    let plans = match s
        .wait_for(
            "a plan",
            |e| matches!(e, LeadEvent::Plans(p) if !p.is_empty()),
        )
        .await
    {
        LeadEvent::Plans(p) => p,
        _ => unreachable!(),
    };
    assert_eq!(plans[0].from, "planner");
    assert!(
        plans[0].plan.contains("echo noted > notes.txt"),
        "{}",
        plans[0].plan
    );
    s.send(LeadCommand::AnswerPlan {
        request_id: plans[0].request_id.clone(),
        decision: PlanDecision::Approve {
            mode: PermissionMode::Default,
        },
    })
    .await;
    // The plan leaves the queue at once; the note comes once the answer and the mode are
    // written (off the lead's loop).
    s.wait_for(
        "no plans",
        |e| matches!(e, LeadEvent::Plans(p) if p.is_empty()),
    )
    .await;
    s.wait_note("Approved planner's plan (default mode)").await;
    let queue = s
        .wait_permissions("the Bash request after the plan", |p| !p.is_empty())
        .await;
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::AllowAlways(vec![]),
    })
    .await;
    let notes = s.cwd.path().join("notes.txt");
    eventually("notes.txt", || notes.exists()).await;

    // A second task, left in progress by a kill.
    s.submit("/task add wait --command \"sleep 30\"").await;
    s.wait_tasks("the second task claimed", |t| {
        t.iter().any(|t| t.id == "2" && t.status == "in_progress")
    })
    .await;
    s.send(LeadCommand::Kill {
        name: "planner".into(),
    })
    .await;
    let note = s.wait_note("planner was killed").await;
    assert_eq!(
        note,
        "planner was killed. 1 task(s) were unassigned: #2 \"wait\""
    );
    let tasks = s
        .wait_tasks("task 2 pending again", |t| {
            t.iter()
                .any(|t| t.id == "2" && t.status == "pending" && t.owner.is_none())
        })
        .await;
    assert_eq!(tasks.len(), 2);
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_plan_runs_and_quit_removes_everything() {
    let home_dir = tempfile::tempdir().unwrap();
    let home = store::Home::new(home_dir.path());
    let plan = teamlead::lead::setup_demo(&home).unwrap();
    let workdir = plan.workdir().to_path_buf();
    let opts = teamlead::lead::LeadOptions::new(home.clone(), ".").with_demo(plan);
    let (handle, mut events) = teamlead::lead::Lead::start(opts).unwrap();
    let team = handle.team.clone();
    assert_eq!(team, "demo");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut answered = std::collections::HashSet::new();
    let mut plans_answered = std::collections::HashSet::new();
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .expect("the demo finished in time")
            .expect("lead alive");
        match event {
            LeadEvent::Permissions(p) => {
                for pending in p.into_iter().filter(|p| answered.insert(p.key)) {
                    handle
                        .commands
                        .send(LeadCommand::AnswerPermission {
                            key: pending.key,
                            decision: PermissionDecision::AllowOnce,
                        })
                        .await
                        .unwrap();
                }
            }
            LeadEvent::Plans(p) => {
                for plan in p
                    .into_iter()
                    .filter(|p| plans_answered.insert(p.request_id.clone()))
                {
                    handle
                        .commands
                        .send(LeadCommand::AnswerPlan {
                            request_id: plan.request_id,
                            decision: PlanDecision::Approve {
                                mode: PermissionMode::Default,
                            },
                        })
                        .await
                        .unwrap();
                }
            }
            LeadEvent::Tasks(t) if t.len() == 6 && t.iter().all(|t| t.status == "completed") => {
                break;
            }
            _ => {}
        }
    }
    let report = std::fs::read_to_string(workdir.join("out/REPORT.md")).unwrap();
    assert!(
        report.contains("apple\nbanana\ncherry\nfig\npear"),
        "{report}"
    );
    assert_eq!(answered.len(), 6, "one Bash request per task");
    assert_eq!(plans_answered.len(), 1, "the reviewer's plan");
    handle.commands.send(LeadCommand::Quit).await.unwrap();
    while let Some(e) = events.recv().await {
        if e == LeadEvent::Exited {
            break;
        }
    }
    assert!(!home.team_dir(&team).unwrap().exists());
    assert!(!workdir.exists(), "the demo directory was not removed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_a_teammate_withdraws_its_request() {
    let mut s = Session::start("interrupt").await;
    s.submit("/spawn worker \"wait for work\"").await;
    s.wait_note("Spawned worker").await;
    s.submit("/task add touch it --command \"touch it.txt\"")
        .await;
    let queue = s
        .wait_permissions("worker's Bash request", |p| !p.is_empty())
        .await;
    assert_eq!(queue[0].worker, "worker");
    s.send(LeadCommand::InterruptTeammate {
        name: "worker".into(),
    })
    .await;
    s.wait_permissions("the request withdrawn", |p| p.is_empty())
        .await;
    // Answering the withdrawn request does nothing.
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::AllowOnce,
    })
    .await;
    s.wait_team("worker idle", |t| {
        t.iter()
            .any(|v| v.name == "worker" && matches!(v.status, TeammateStatus::Idle { .. }))
    })
    .await;
    assert!(!s.cwd.path().join("it.txt").exists());
    s.quit().await;
}

/// An in-process teammate's first message is written once, already read: the teammate gets it
/// handed at its start (one process), so its spawn makes no second locked rewrite of the inbox
/// to mark it read; and it works on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_in_process_teammates_inbox_is_written_once_at_its_spawn() {
    let mut s = Session::start("spawn-once").await;
    let inboxes = s.home.inboxes_dir(&s.team).unwrap();
    std::fs::create_dir_all(&inboxes).unwrap();
    let mut renames = teamlead_test_support::renames::RenameWatch::new(&inboxes);
    s.submit("/spawn worker \"say hello\"").await;
    // It took the message (its own transcript shows it), and its turn ended.
    s.wait_for("worker took its first message", |e| {
        matches!(e, LeadEvent::TeammateTranscript {
            name,
            item: TranscriptItem::Teammate { text, .. },
        } if name == "worker" && text == "say hello")
    })
    .await;
    s.wait_team("worker idle", |t| {
        t.iter()
            .any(|v| v.name == "worker" && matches!(v.status, TeammateStatus::Idle { .. }))
    })
    .await;
    let inbox = store::inbox::read(&s.home, &s.team, "worker").unwrap();
    assert_eq!(inbox.entries.len(), 1);
    assert_eq!(inbox.entries[0].text, "say hello");
    assert!(!inbox.entries[0].is_unread(), "taken at the spawn");
    assert_eq!(renames.count("worker.json"), 1, "one write of its inbox");
}
