//! The task commands of the cockpit as a user meets them: `/task add` with a description,
//! `/task done|reset|unassign|edit`, unknown flags refused with a clear error, and a task a
//! teammate reports failed (or not run) going back to pending with no owner and a note, so
//! that teammate is no longer `agent_busy`.

use crate::lead_common;

use lead_common::{Session, eventually};
use teamlead::lead::contract::{LeadEvent, TranscriptItem};
use teamlead::protocol::frames::{Frame, IdleNotification, IdleReason};
use teamlead::protocol::time::now_iso;
use teamlead::protocol::{InboxEntry, TaskStatus};
use teamlead::store::tasks::{ClaimError, FAILURE_NOTE_KEY};
use teamlead::store::{self, TaskList};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_done_reset_unassign_and_edit_a_task() {
    let mut s = Session::start("task-edits").await;
    s.add_pane_member("alpha", "%1", "default").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();

    s.submit("/task add sub --description d").await;
    s.wait_note("Added task #1 \"sub\"").await;
    let one = tasks.get("1").unwrap();
    assert_eq!(
        (one.subject.as_str(), one.description.as_str()),
        ("sub", "d")
    );

    // An unknown flag is refused, and nothing is added.
    s.submit("/task add other --descripton d").await;
    s.wait_note("unknown option `--descripton` for /task add")
        .await;
    assert!(tasks.get("2").is_err());

    // Claimed by alpha, then unassigned: pending, no owner.
    tasks.claim("1", "alpha", false).unwrap();
    s.submit("/task unassign 1").await;
    s.wait_note("Task #1 \"sub\" is unassigned.").await;
    let one = tasks.get("1").unwrap();
    assert_eq!(
        (one.owner.as_deref(), one.status),
        (None, TaskStatus::Pending)
    );

    // Done, then reset: pending again with no owner.
    tasks.claim("1", "alpha", false).unwrap();
    s.submit("/task done 1").await;
    s.wait_note("Task #1 \"sub\" is completed.").await;
    assert_eq!(tasks.get("1").unwrap().status, TaskStatus::Completed);
    s.submit("/task reset #1").await;
    s.wait_note("Task #1 \"sub\" is pending, with no owner.")
        .await;
    let one = tasks.get("1").unwrap();
    assert_eq!(
        (one.owner.as_deref(), one.status),
        (None, TaskStatus::Pending)
    );

    s.submit("/task edit 1 --subject \"new subject\" --description \"\"")
        .await;
    s.wait_note("Task #1 \"new subject\" is edited.").await;
    let one = tasks.get("1").unwrap();
    assert_eq!(
        (one.subject.as_str(), one.description.as_str()),
        ("new subject", "")
    );
    s.wait_tasks("the edit in the snapshot", |t| {
        t.iter().any(|v| v.subject == "new subject")
    })
    .await;

    // Refusals name what is wrong.
    s.submit("/task edit 1 --owner alpha").await;
    s.wait_note("unknown option `--owner` for /task edit").await;
    s.submit("/task reset 9").await;
    s.wait_note("Cannot change task #9").await;
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_reported_failed_is_held_by_the_lead_and_its_teammate_is_free() {
    let mut s = Session::start("task-failed").await;
    s.add_pane_member("alpha", "%1", "default").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let failing = tasks.create("flaky", "", vec![], None).unwrap();
    let other = tasks.create("other", "", vec![], None).unwrap();
    tasks.claim(&failing.id, "alpha", false).unwrap();
    // While it holds the failed task, alpha is busy.
    assert!(matches!(
        tasks.claim(&other.id, "alpha", true),
        Err(ClaimError::AgentBusy { .. })
    ));

    // What a `shell` teammate sends when its command was refused.
    let idle = IdleNotification {
        from: "alpha".into(),
        timestamp: now_iso(),
        idle_reason: Some(IdleReason::Failed),
        summary: Some(format!("task {} not run: denied by the lead", failing.id)),
        completed_task_id: Some(failing.id.clone()),
        completed_status: Some("failed".into()),
        failure_reason: Some(format!("task {} not run: denied by the lead", failing.id)),
        result: None,
        usage: None,
        limit_until_ms: None,
    };
    s.to_lead(&InboxEntry::frame("alpha", &Frame::IdleNotification(idle)));
    let note = s.wait_note("is held by the lead").await;
    assert_eq!(
        note,
        format!(
            "Task #{0} \"flaky\" is held by the lead: alpha reported task {0} not run: denied by the lead. No teammate takes it until you assign it: /task assign {0} NAME.",
            failing.id
        )
    );
    let task = tasks.get(&failing.id).unwrap();
    assert_eq!(
        (task.owner.as_deref(), task.status),
        (Some("team-lead"), TaskStatus::Pending)
    );
    // Held, it is available to nobody.
    assert!(matches!(
        tasks.claim(&failing.id, "beta", true),
        Err(ClaimError::AlreadyClaimed { .. })
    ));
    let kept = task.metadata.as_ref().and_then(|m| m.get(FAILURE_NOTE_KEY));
    assert_eq!(
        kept.and_then(|v| v.as_str()),
        Some(format!("alpha: task {} not run: denied by the lead", failing.id).as_str())
    );
    // alpha is no longer busy: it can take other work.
    tasks.claim(&other.id, "alpha", true).unwrap();

    // A late report about a task that has moved on changes nothing.
    tasks.complete(&other.id).unwrap();
    let late = IdleNotification {
        from: "alpha".into(),
        timestamp: now_iso(),
        idle_reason: Some(IdleReason::Failed),
        summary: Some("late".into()),
        completed_task_id: Some(other.id.clone()),
        completed_status: Some("failed".into()),
        failure_reason: None,
        result: None,
        usage: None,
        limit_until_ms: None,
    };
    s.to_lead(&InboxEntry::frame("alpha", &Frame::IdleNotification(late)));
    // The reset of the first task is cleared by `/task reset`.
    s.submit(&format!("/task reset {}", failing.id)).await;
    s.wait_note(&format!(
        "Task #{} \"flaky\" is pending, with no owner.",
        failing.id
    ))
    .await;
    assert!(tasks.get(&failing.id).unwrap().metadata.is_none());
    assert_eq!(tasks.get(&other.id).unwrap().status, TaskStatus::Completed);
    s.quit().await;
}

/// An idle notification as a teammate sends it after its turn.
fn idle(from: &str, completed: Option<&str>) -> InboxEntry {
    let idle = IdleNotification {
        from: from.into(),
        timestamp: now_iso(),
        idle_reason: Some(IdleReason::Available),
        summary: completed.map(|id| format!("completed task #{id}")),
        completed_task_id: completed.map(str::to_string),
        completed_status: completed.map(|_| "completed".into()),
        failure_reason: None,
        result: None,
        usage: None,
        limit_until_ms: None,
    };
    InboxEntry::frame(from, &Frame::IdleNotification(idle))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wave_of_finished_tasks_is_one_digest_line_and_bare_idles_say_nothing() {
    let mut s = Session::start("task-wave").await;
    s.add_pane_member("alpha", "%1", "default").await;
    s.add_pane_member("beta", "%2", "default").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let one = tasks.create("one", "", vec![], None).unwrap();
    let two = tasks.create("two", "", vec![], None).unwrap();
    let three = tasks
        .create("three", "", vec![one.id.clone(), two.id.clone()], None)
        .unwrap();
    tasks.claim(&one.id, "alpha", false).unwrap();
    tasks.claim(&two.id, "beta", false).unwrap();
    tasks
        .update(&three.id, |t| {
            t.owner = Some("beta".into());
            Ok(())
        })
        .unwrap();
    tasks.complete(&one.id).unwrap();
    tasks.complete(&two.id).unwrap();
    // Two reports of completed work and two idle reports with nothing to say.
    s.to_lead(&idle("alpha", Some(&one.id)));
    s.to_lead(&idle("alpha", None));
    s.to_lead(&idle("beta", Some(&two.id)));
    s.to_lead(&idle("beta", None));
    let digest = s.wait_note(" done in ").await;
    assert_eq!(
        digest.split(" done in ").next(),
        Some("2"),
        "one line for the wave: {digest}"
    );
    assert!(
        digest.contains(&format!("(#{} #{})", one.id, two.id)),
        "{digest}"
    );
    assert!(
        digest.ends_with(&format!("· #{} unblocked, assigned to beta", three.id)),
        "{digest}"
    );
    // Nothing else was said about the idle reports: no per-turn line, no second digest.
    let idle_lines: Vec<String> = s
        .seen
        .iter()
        .filter_map(|e| match e {
            LeadEvent::Transcript(TranscriptItem::Frame { line, .. }) => Some(line.clone()),
            LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains("idle") => {
                Some(text.clone())
            }
            _ => None,
        })
        .collect();
    assert!(idle_lines.is_empty(), "{idle_lines:?}");
    s.quit().await;
    let digests = s
        .seen
        .iter()
        .filter(|e| {
            matches!(e, LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains(" done in "))
        })
        .count();
    assert_eq!(digests, 1);
}

/// A teammate over its budget is paused: what the lead sends it and assigns to it waits (is
/// refused, with how to raise the budget) until `/budget` raises it; 80 % is warned once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_teammate_over_its_budget_is_paused_until_the_budget_is_raised() {
    let mut s = Session::start_with("budgets", |mut opts| {
        opts.budget_teammate = Some(40_000); // $0.04
        opts
    })
    .await;
    s.add_pane_member("alpha", "%1", "default").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let task = tasks.create("more work", "", vec![], None).unwrap();
    // alpha runs Sonnet ($3 per million input tokens): 11,000 tokens is $0.033, 82 %.
    let report = |input: u64| {
        let idle = IdleNotification {
            from: "alpha".into(),
            timestamp: now_iso(),
            idle_reason: Some(IdleReason::Available),
            summary: None,
            completed_task_id: None,
            completed_status: None,
            failure_reason: None,
            result: None,
            usage: Some(teamlead::protocol::frames::ReportedUsage {
                input_tokens: input,
                ..Default::default()
            }),
            limit_until_ms: None,
        };
        InboxEntry::frame("alpha", &Frame::IdleNotification(idle))
    };
    store::team::edit_team(&s.home, &s.team, |file| {
        if let Some(m) = file.member_mut("alpha") {
            m.model = Some("claude-sonnet-4-5".into());
        }
        Ok(())
    })
    .unwrap();
    s.to_lead(&report(11_000));
    s.wait_note("alpha has used $0.03 of its $0.04 budget (80 %)")
        .await;
    s.to_lead(&report(14_000));
    let paused = s.wait_note("alpha is paused").await;
    assert!(
        paused.contains("over its budget ($0.04 of $0.04)"),
        "{paused}"
    );
    s.submit("@alpha keep going").await;
    s.wait_note("alpha is paused: over its budget").await;
    s.submit(&format!("/task assign {} alpha", task.id)).await;
    s.wait_note("was not assigned; /budget alpha DOLLARS raises it")
        .await;
    assert!(
        s.frames_in("alpha").is_empty(),
        "nothing reached alpha while it was paused"
    );
    s.submit("/budget alpha 1").await;
    s.wait_note("alpha is within its budget again").await;
    s.submit("@alpha keep going").await;
    eventually("the message in alpha's inbox", || {
        store::inbox::read(&s.home, &s.team, "alpha")
            .is_ok_and(|r| r.entries.iter().any(|e| e.text == "keep going"))
    })
    .await;
    s.quit().await;
}
