//! The `shell` engine: a teammate without a model. A turn reads the new messages (each shown in
//! its inline transcript as a `<teammate-message>`), takes the first fenced code block of a
//! message from `team-lead` as a command to run when that block is one (`protocol::fence`: a
//! block marked as a quote, like a review comment's, is only read), and takes one task: one it owns and may resume, or an
//! available one it claims (`check_busy`). In plan mode it first gets the plan approved. Each
//! command goes through the permission gate, runs with `sh -c` in its working directory, and is
//! reported to the lead (or to whoever sent the command) with its exit status and the tail of
//! its output. A task whose command succeeded is marked completed; one that failed or was
//! refused stays `in_progress` and owned by the teammate, so the lead sees it (and the teammate
//! claims nothing else until the lead resets or reassigns it); an interrupted one is not
//! resumed until it is assigned again (a message, a steer included, does not resume it). Tasks without a command are left for others.

pub mod exec;
pub mod guard;
mod job;
mod plan;
mod report;

use std::collections::HashSet;

use crate::agent::events::{LogKind, TeammateEventKind};
use crate::agent::runtime::engine::{Engine, TurnFuture, TurnOutcome, TurnReport};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::fence::{Fenced, first_block};
use crate::protocol::frames::IdleReason;
use crate::protocol::render::teammate_message;
use crate::protocol::{Frame, InboxEntry, LEAD_NAME, Task, TaskStatus};
use crate::store::ClaimError;
use crate::store::tasks::{available, unfinished_blockers};
use job::{JobEnd, run_job, send_report};
use plan::PlanOutcome;
use report::task_label;

/// Where a command came from.
pub(crate) enum JobSource {
    Task(Box<Task>),
    /// A fenced code block in a message from `reply_to` (only `team-lead`).
    Message {
        reply_to: String,
    },
}

/// One command to run this turn.
pub(crate) struct Job {
    pub source: JobSource,
    pub command: Option<String>,
}

impl Job {
    fn task(&self) -> Option<&Task> {
        match &self.source {
            JobSource::Task(t) => Some(t),
            JobSource::Message { .. } => None,
        }
    }
}

/// What a message asks the engine to run: the first fenced code block of a plain message from
/// the lead, when that block is a command (`protocol::fence`: no info string, or a shell's
/// name). Messages from other teammates are only read (their reports quote output in fences),
/// and a block the lead marks as a quote (a review comment quotes the diff in ```` ```text ````)
/// is text to read, never a script: nothing of that message runs.
enum MessageAsks {
    Nothing,
    Run(String),
    /// The first block is a quote (its info string).
    Quote(String),
}

fn message_command(entry: &InboxEntry) -> MessageAsks {
    if entry.from != LEAD_NAME || entry.parse_frame().is_some() {
        return MessageAsks::Nothing;
    }
    match first_block(&entry.text) {
        Some(block) if !block.is_command() => MessageAsks::Quote(block.info),
        Some(Fenced { code, .. }) if !code.trim().is_empty() => MessageAsks::Run(code),
        _ => MessageAsks::Nothing,
    }
}

/// The `shell` engine, with what it remembers between turns.
#[derive(Debug, Default)]
pub struct ShellEngine {
    /// Tasks it owns whose command failed or was refused: not resumed by itself.
    failed: HashSet<String>,
    /// Tasks it owns whose turn was interrupted: taken up again only when assigned again.
    interrupted: HashSet<String>,
}

impl Engine for ShellEngine {
    fn name(&self) -> &'static str {
        "shell"
    }

    fn turn<'a>(&'a mut self, tm: &'a mut Teammate, content: Vec<InboxEntry>) -> TurnFuture<'a> {
        Box::pin(turn(self, tm, content))
    }
}

/// One turn of the shell engine; `NoTurn` when there is neither a message nor a task.
async fn turn(shell: &mut ShellEngine, tm: &mut Teammate, content: Vec<InboxEntry>) -> TurnOutcome {
    // An interrupted task is taken up again only when it is assigned again (a message, a
    // steer included, is no order to resume what the lead stopped).
    for entry in &content {
        if let Some(Frame::TaskAssignment(a)) = entry.parse_frame() {
            shell.interrupted.remove(&a.task_id);
        }
    }
    let mut jobs = Vec::new();
    for entry in &content {
        tm.events.send(TeammateEventKind::Received {
            from: entry.from.clone(),
            color: entry.color.clone(),
            summary: entry.summary.clone(),
            text: entry.text.clone(),
            rendered: teammate_message(entry),
            key: entry.dedup_key(),
        });
        match message_command(entry) {
            MessageAsks::Run(command) => jobs.push(Job {
                source: JobSource::Message {
                    reply_to: entry.from.clone(),
                },
                command: Some(command),
            }),
            MessageAsks::Quote(info) => tm.events.log(
                LogKind::Note,
                format!(
                    "read only: the fenced block of {}'s message is marked `{info}`, a quote, not a command",
                    entry.from
                ),
            ),
            MessageAsks::Nothing => {}
        }
    }
    if let Some(task) = pick_task(shell, tm).await {
        let command = task.command();
        jobs.push(Job {
            source: JobSource::Task(Box::new(task)),
            command,
        });
    }
    if content.is_empty() && jobs.is_empty() {
        return TurnOutcome::NoTurn;
    }
    let working_on = jobs
        .iter()
        .find_map(Job::task)
        .map(|t| (t.id.clone(), t.subject.clone()));
    let cancel = tm.begin_turn(working_on.clone()).await;
    let mut report = TurnReport::available();
    if jobs.is_empty() {
        report.summary = Some(format!("read {} message(s)", content.len()));
        return TurnOutcome::Ended(Box::new(report));
    }

    if tm.gate.mode() == crate::protocol::PermissionMode::Plan {
        match plan::seek_approval(tm, &jobs, &cancel).await {
            PlanOutcome::Approved => tm.events.send(TeammateEventKind::Working {
                task: working_on.clone(),
            }),
            PlanOutcome::Rejected(feedback) => {
                return TurnOutcome::Ended(Box::new(plan_rejected(tm, &jobs, &feedback).await));
            }
            PlanOutcome::Interrupted => {
                park_interrupted(shell, tm, &jobs);
                report.reason = IdleReason::Interrupted;
                report.summary = Some("interrupted while waiting for plan approval".into());
                return TurnOutcome::Ended(Box::new(report));
            }
            PlanOutcome::Shutdown(request) => {
                give_back(tm, &jobs).await;
                report.shutdown = Some(request);
                return TurnOutcome::Ended(Box::new(report));
            }
            PlanOutcome::Failed(why) => {
                give_back(tm, &jobs).await;
                tm.events.log(LogKind::Warning, why.clone());
                report.reason = IdleReason::Failed;
                report.failure = Some(why);
                return TurnOutcome::Ended(Box::new(report));
            }
        }
    }

    for job in &jobs {
        match run_job(tm, job, &cancel, working_on.clone()).await {
            JobEnd::Done {
                summary,
                text,
                task,
            } => {
                report.summary = Some(summary);
                report.result = Some(text);
                if let Some(id) = task {
                    report.completed = Some((id, "resolved"));
                }
            }
            JobEnd::Failed {
                summary,
                text,
                task,
            } => {
                // A task that failed or was refused here is parked: not resumed by itself.
                if let Some(id) = &task {
                    shell.failed.insert(id.clone());
                }
                report.reason = IdleReason::Failed;
                report.failure = Some(summary.clone());
                report.summary = Some(summary);
                report.result = Some(text);
                if let Some(id) = task {
                    report.completed = Some((id, "failed"));
                }
            }
            JobEnd::Interrupted => {
                park_interrupted(shell, tm, std::slice::from_ref(job));
                report.reason = IdleReason::Interrupted;
                report.summary = Some("interrupted".to_string());
                report.failure = None;
                break;
            }
        }
    }
    TurnOutcome::Ended(Box::new(report))
}

/// A task to work on: one it owns that it may resume (claimed again if only assigned), else
/// the first available task with a command (claimed with `check_busy`). None while it still
/// owns an unfinished task it may not resume (failed, refused, interrupted).
async fn pick_task(shell: &mut ShellEngine, tm: &mut Teammate) -> Option<Task> {
    let all = match tm.mailroom.list_tasks() {
        Ok(listing) => listing.tasks,
        Err(e) => {
            tm.events
                .log(LogKind::Warning, format!("cannot read the task list: {e}"));
            return None;
        }
    };
    let me = tm.config.name.clone();
    let mine: Vec<&Task> = all
        .iter()
        .filter(|t| {
            t.owner.as_deref() == Some(me.as_str())
                && t.status != TaskStatus::Completed
                && !t.is_internal()
        })
        .collect();
    // Forget parked tasks that are no longer mine and unfinished (the lead reset them). One
    // that failed here is not claimed again by itself (it would fail again): the lead can
    // assign it back, or another teammate take it.
    let released: Vec<String> = shell
        .failed
        .iter()
        .filter(|id| !mine.iter().any(|t| &&t.id == id))
        .cloned()
        .collect();
    tm.declined.extend(released);
    shell.failed.retain(|id| mine.iter().any(|t| &t.id == id));
    shell
        .interrupted
        .retain(|id| mine.iter().any(|t| &t.id == id));
    for task in &mine {
        if shell.failed.contains(&task.id)
            || shell.interrupted.contains(&task.id)
            || !unfinished_blockers(task, &all).is_empty()
        {
            continue;
        }
        if task.status == TaskStatus::InProgress {
            return match tm.mailroom.ready_to_work(task).await {
                Ok(t) => Some(t),
                Err(e) => {
                    tm.events.log(
                        LogKind::Note,
                        format!("not starting task #{} yet: {e}", task.id),
                    );
                    None
                }
            };
        }
        match tm.mailroom.claim(&task.id, false).await {
            Ok(t) => return Some(t),
            Err(e) => tm.events.log(
                LogKind::Warning,
                format!("cannot start task #{} assigned to me: {e}", task.id),
            ),
        }
    }
    if !mine.is_empty() {
        return None;
    }
    for task in available(&all) {
        if task.command().is_none() || tm.declined.contains(&task.id) {
            continue;
        }
        match tm.mailroom.claim(&task.id, true).await {
            Ok(claimed) => {
                tm.events
                    .log(LogKind::Note, format!("claimed {}", task_label(&claimed)));
                return Some(claimed);
            }
            Err(ClaimError::AgentBusy { .. }) => return None,
            Err(e) => tracing::debug!(teammate = %me, "claim #{}: {e}", task.id),
        }
    }
    None
}

/// An interrupted task is not resumed by itself: only a new assignment of it takes it up again
/// (a teamlead lead also takes it back at once: `lead::controller::task_ops`).
fn park_interrupted(shell: &mut ShellEngine, tm: &mut Teammate, jobs: &[Job]) {
    for task in jobs.iter().filter_map(Job::task) {
        shell.interrupted.insert(task.id.clone());
        tm.events.log(
            LogKind::Note,
            format!(
                "interrupted: I stopped {} and take it up again only when it is assigned to me again",
                task_label(task)
            ),
        );
    }
}

/// Gives the turn's tasks back: pending, no owner.
async fn give_back(tm: &mut Teammate, jobs: &[Job]) -> Vec<String> {
    let mut ids = Vec::new();
    for task in jobs.iter().filter_map(Job::task) {
        match tm.mailroom.release(&task.id).await {
            Ok(()) => ids.push(task.id.clone()),
            Err(e) => tm.events.log(
                LogKind::Warning,
                format!("cannot give back task #{}: {e}", task.id),
            ),
        }
    }
    ids
}

/// The lead rejected the plan: give the tasks back, do not claim them again until the mode
/// changes, and tell the lead.
async fn plan_rejected(tm: &mut Teammate, jobs: &[Job], feedback: &str) -> TurnReport {
    let ids = give_back(tm, jobs).await;
    tm.declined.extend(ids.iter().cloned());
    let mut text = format!("My plan was rejected: {feedback}\n\nI ran nothing.");
    if !ids.is_empty() {
        let list: Vec<String> = ids.iter().map(|id| format!("#{id}")).collect();
        text.push_str(&format!(
            " I gave back task(s) {} (pending, no owner) and will not claim them again unless my mode changes.",
            list.join(", ")
        ));
    }
    let summary = "plan rejected: nothing run".to_string();
    send_report(tm, LEAD_NAME, &text, &summary).await;
    let mut report = TurnReport::available();
    report.summary = Some(summary);
    report.result = Some(text);
    report
}
