//! Tasks the lead takes back stay where a person put them, with in-process `shell` teammates
//! on a real task list: a denied task is held by the lead (no other idle teammate claims it
//! and asks again) until it is assigned, and every sentence said about it is true when shown
//! (`retry-failed-tasks` lets others try instead); a reassignment answers the previous
//! owner's request for the task as no longer needed, and an assignment to the current owner
//! sends nothing; an interrupt (and a steer) stops the task for good: it is held by the
//! lead, the teammate does not resume it on the next message, and an assignment gives it out
//! again.

use crate::lead_common::Session;
use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PermissionDecision, TeammateStatus, TranscriptItem,
};
use teamlead::lead::ledger::Receipt;
use teamlead::protocol::frames::Frame;
use teamlead::protocol::{LEAD_NAME, PermissionMode, TaskStatus};
use teamlead::store::tasks::TaskList;

async fn spawn(s: &mut Session, names: &[&str]) {
    for name in names {
        s.submit(&format!("/spawn {name} \"wait for tasks\"")).await;
        s.wait_note(&format!("Spawned {name}")).await;
    }
}

/// The requests in the queue once it satisfies `pred`.
async fn requests(
    s: &mut Session,
    what: &str,
    pred: impl Fn(&[PendingPermission]) -> bool,
) -> Vec<PendingPermission> {
    s.wait_permissions(what, pred).await
}

/// Every line of the lead's transcript seen so far: notes, teammates' messages, one-liners.
fn transcript(s: &Session) -> Vec<String> {
    s.seen
        .iter()
        .filter_map(|e| match e {
            LeadEvent::Transcript(TranscriptItem::System { text }) => Some(format!("note: {text}")),
            LeadEvent::Transcript(TranscriptItem::Teammate { from, text, .. }) => {
                Some(format!("{from}: {text}"))
            }
            LeadEvent::Transcript(TranscriptItem::Frame { line, .. }) => {
                Some(format!("frame: {line}"))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_task_is_held_until_a_person_assigns_it_and_every_sentence_is_true() {
    let mut s = Session::start("held").await;
    spawn(&mut s, &["alice", "bob"]).await;
    s.submit("/task add build --command \"echo built > built.txt\"")
        .await;
    let asked = requests(&mut s, "the first request", |p| p.len() == 1).await;
    let first = asked[0].worker.clone();
    let other = if first == "alice" { "bob" } else { "alice" };
    s.send(LeadCommand::AnswerPermission {
        key: asked[0].key,
        decision: PermissionDecision::Deny { feedback: None },
    })
    .await;
    let held = s.wait_note("is held by the lead").await;
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let task = tasks.get("1").unwrap();
    assert_eq!(
        (task.owner.as_deref(), task.status),
        (Some(LEAD_NAME), TaskStatus::Pending),
        "held by the lead"
    );
    // The report and the one-liner came before the note; nobody else asked meanwhile.
    s.wait_turn("not run").await;
    s.seen_or_wait("the failed turn's one-liner", |e| {
        matches!(e, LeadEvent::Transcript(TranscriptItem::Frame { line, .. }) if line.contains("turn failed"))
    })
    .await;
    // The other teammate is idle and free, and still did not take it (the assignment below
    // would say it is already its own): it is given out only on purpose, then asked for again.
    s.submit(&format!("/task assign 1 {other}")).await;
    s.wait_note(&format!("Assigned task #1 \"build\" to {other}."))
        .await;
    let again = requests(&mut s, "the new owner's request", |p| {
        p.iter().any(|r| r.worker == other)
    })
    .await;
    assert_eq!(again.len(), 1, "{again:?}");
    let lines: Vec<String> = transcript(&s)
        .into_iter()
        .filter(|l| l.contains("#1") || l.contains("task 1"))
        .map(|l| l.replace(&first, "FIRST").replace(other, "OTHER"))
        .collect();
    insta::assert_snapshot!("denied_task_held", lines.join("\n"));
    assert!(held.contains("/task assign 1 NAME"), "{held}");
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_retry_failed_tasks_a_denied_task_goes_to_another_teammate() {
    let mut s = Session::start_with("retry", |o| o.with_retry_failed_tasks(true)).await;
    spawn(&mut s, &["alice", "bob"]).await;
    s.submit("/task add build --command \"echo built > built.txt\"")
        .await;
    let asked = requests(&mut s, "the first request", |p| p.len() == 1).await;
    let first = asked[0].worker.clone();
    s.send(LeadCommand::AnswerPermission {
        key: asked[0].key,
        decision: PermissionDecision::Deny { feedback: None },
    })
    .await;
    let note = s.wait_note("is pending again, with no owner").await;
    assert!(note.contains("retry-failed-tasks is on"), "{note}");
    let again = requests(&mut s, "another teammate's request", |p| {
        p.iter().any(|r| r.worker != first)
    })
    .await;
    assert!(again.iter().all(|r| r.worker != first), "{again:?}");
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reassignment_answers_the_previous_owners_request_and_assigning_the_owner_is_nothing() {
    let mut s = Session::start("reassign").await;
    spawn(&mut s, &["alice", "bob"]).await;
    s.submit("/task add build --command \"echo built > built.txt\"")
        .await;
    let asked = requests(&mut s, "the first request", |p| p.len() == 1).await;
    let first = asked[0].worker.clone();
    let other = if first == "alice" { "bob" } else { "alice" };
    s.submit(&format!("/task assign 1 {other}")).await;
    let note = s.wait_note("answered as no longer needed").await;
    assert_eq!(
        note,
        format!(
            "Task #1 was {first}'s: its request for it (Bash `echo built > built.txt`) was answered as no longer needed."
        )
    );
    // Only the new owner's request waits.
    let queue = requests(&mut s, "only the new owner's request", |p| {
        p.len() == 1 && p[0].worker == other
    })
    .await;
    assert_eq!(queue.len(), 1);
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    assert_eq!(tasks.get("1").unwrap().owner.as_deref(), Some(other));

    // Assigning it to its owner again sends nothing.
    let assignments = |s: &Session| {
        s.frames_in(other)
            .into_iter()
            .filter(|(_, f)| matches!(f, Frame::TaskAssignment(a) if a.task_id == "1"))
            .count()
    };
    // The new owner may see its task in the task list (and ask) before the lead's assignment
    // frame lands in its inbox: both are written off the lead's loop.
    crate::lead_common::eventually("the assignment in the new owner's inbox", || {
        assignments(&s) >= 1
    })
    .await;
    assert_eq!(assignments(&s), 1);
    s.submit(&format!("/task assign 1 {other}")).await;
    let note = s.wait_note("is already").await;
    assert_eq!(
        note,
        format!(
            "Task #1 \"build\" is already {other}'s: nothing was sent (another assignment would only make it start the task over)."
        )
    );
    assert_eq!(assignments(&s), 1, "a second assignment was sent");
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_and_a_steer_stop_the_task_until_it_is_assigned_again() {
    let mut s = Session::start_with("stop", |mut o| {
        o.lead_mode = PermissionMode::BypassPermissions;
        o
    })
    .await;
    spawn(&mut s, &["alice"]).await;
    s.submit("/task add nap --command \"sleep 30\"").await;
    let started = |e: &LeadEvent| {
        matches!(e, LeadEvent::TeammateTranscript { name, item: TranscriptItem::Lead { text } }
            if name == "alice" && text == "$ sleep 30")
    };
    let runs = |s: &Session| s.seen.iter().filter(|e| started(e)).count();
    s.wait_for("the command to start", started).await;

    s.submit("/steer @alice stop that and tell me what you did")
        .await;
    let held = s.wait_note("is held by the lead").await;
    assert_eq!(
        held,
        "Task #1 \"nap\" is held by the lead: alice stopped working on it and does not resume it. /task assign 1 NAME gives it out again (alice included)."
    );
    let tasks = TaskList::new(&s.home, &s.team).unwrap();
    let task = tasks.get("1").unwrap();
    assert_eq!(
        (task.owner.as_deref(), task.status),
        (Some(LEAD_NAME), TaskStatus::Pending)
    );
    // The steer's message is read in a turn of its own, and the command is not run again.
    s.wait_for("the steer's turn to end", |e| {
        matches!(e, LeadEvent::Team(team) if team.iter().any(|t| t.name == "alice"
            && matches!(t.status, TeammateStatus::Idle { .. })
            && t.messages.first().is_some_and(|m| m.state == Receipt::TurnStarted)))
    })
    .await;
    assert_eq!(runs(&s), 1, "the steer restarted the command");
    assert_eq!(tasks.get("1").unwrap().owner.as_deref(), Some(LEAD_NAME));

    // Given out again on purpose, it runs again.
    s.submit("/task assign 1 alice").await;
    s.wait_for("the command to start again", started).await;
    assert_eq!(runs(&s), 2);
    s.submit("/interrupt alice").await;
    s.wait_note("Interrupted alice's turn.").await;
    s.wait_note("is held by the lead").await;
    s.quit().await;
}
