//! One job of a `shell` turn: ask the gate (and the lead) for the command, run it, and report
//! the outcome to the lead (a task) or to the sender (a command from a message): completed
//! task and exit status on success; on failure or refusal the task is kept and parked.

use tokio_util::sync::CancellationToken;

use super::exec::{self, ExecOutcome};
use super::report::{kept_note, outcome_text, short_command, task_label};
use super::{Job, JobSource};
use crate::agent::events::{LogKind, TeammateEventKind};
use crate::agent::gate::ToolUse;
use crate::agent::gate::ask::{AskContext, Authorization, authorize};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::LEAD_NAME;
use crate::protocol::inbox::sentence;

/// Output lines of one command shown in the inline transcript.
const SHOWN_LINES: usize = 200;

/// How one job ended.
pub(super) enum JobEnd {
    Done {
        summary: String,
        text: String,
        task: Option<String>,
    },
    Failed {
        summary: String,
        text: String,
        task: Option<String>,
    },
    Interrupted,
}

/// Asks, runs and reports one job.
pub(super) async fn run_job(
    tm: &mut Teammate,
    job: &Job,
    cancel: &CancellationToken,
    working_on: Option<(String, String)>,
) -> JobEnd {
    let Some(mut command) = job.command.clone() else {
        let task = job.task();
        let label = task.map(task_label).unwrap_or_default();
        let text = format!(
            "{label} has no command for me to run (a shell teammate runs `metadata.command` or the first fenced code block of the description). {}",
            kept_note(&tm.config.name, owner_now(tm, task).as_deref())
        );
        let summary = format!("{label} not run: no command");
        return fail(tm, job, summary, text).await;
    };
    let description = match &job.source {
        JobSource::Task(t) => format!("{} (task #{})", t.subject, t.id),
        JobSource::Message { reply_to } => format!("A command {reply_to} sent"),
    };
    let tool = ToolUse::Bash {
        command: command.clone(),
        description,
    };
    let authorization = {
        let ctx = AskContext {
            asker: &tm.asker,
            name: &tm.config.name,
            color: tm.config.color.as_deref(),
            events: &tm.events,
            cancel,
        };
        authorize(&mut tm.gate, &tool, &ctx).await
    };
    match authorization {
        Authorization::Allowed {
            asked,
            updated_input,
            mode,
        } => {
            if asked {
                tm.events
                    .log(LogKind::Note, "permission granted by team-lead");
                tm.events
                    .send(TeammateEventKind::Working { task: working_on });
            }
            if let Some(mode) = mode {
                tm.change_mode(mode, "team-lead").await;
            }
            if let Some(updated) = updated_input
                .as_ref()
                .and_then(|v| v.get("command"))
                .and_then(|c| c.as_str())
            {
                command = updated.to_string();
            }
        }
        Authorization::Denied { asked, reason } => {
            if asked {
                tm.events
                    .send(TeammateEventKind::Working { task: working_on });
            }
            return refused(tm, job, &command, &reason).await;
        }
        Authorization::Interrupted => return JobEnd::Interrupted,
    }

    tm.events.log(LogKind::Command, format!("$ {command}"));
    let events = tm.events.clone();
    let mut shown = 0usize;
    let outcome = exec::run(&command, &tm.config.cwd, cancel, |line| {
        if shown < SHOWN_LINES {
            events.log(LogKind::Output, line);
        }
        shown += 1;
    })
    .await;
    if shown > SHOWN_LINES {
        tm.events.log(
            LogKind::Note,
            format!("… {} more output line(s) not shown", shown - SHOWN_LINES),
        );
    }
    if outcome.status == exec::ExecStatus::Interrupted {
        tm.events.log(LogKind::Result, "interrupted");
        return JobEnd::Interrupted;
    }
    if outcome.status.success() {
        succeeded(tm, job, &command, &outcome).await
    } else {
        failed(tm, job, &command, &outcome).await
    }
}

/// Reports a command that exited 0 (and completes its task).
async fn succeeded(tm: &mut Teammate, job: &Job, command: &str, outcome: &ExecOutcome) -> JobEnd {
    let status = outcome.status.label();
    match &job.source {
        JobSource::Task(task) => {
            if let Err(e) = tm.mailroom.complete(&task.id).await {
                let summary = format!("task {} ran ({status}) but is not marked done", task.id);
                let head = format!(
                    "{} ran, but I could not mark it completed: {e}. {}",
                    task_label(task),
                    kept_note(&tm.config.name, owner_now(tm, Some(task)).as_deref())
                );
                return fail(tm, job, summary, outcome_text(&head, command, outcome)).await;
            }
            let summary = format!("task {} done: {status}", task.id);
            let head = task.done_line();
            let text = outcome_text(&head, command, outcome);
            send_report(tm, LEAD_NAME, &text, &summary).await;
            JobEnd::Done {
                summary,
                text,
                task: Some(task.id.clone()),
            }
        }
        JobSource::Message { reply_to } => {
            let summary = format!("ran `{}`: {status}", short_command(command));
            let text = outcome_text("Ran the command you sent.", command, outcome);
            send_report(tm, reply_to, &text, &summary).await;
            JobEnd::Done {
                summary,
                text,
                task: None,
            }
        }
    }
}

/// Reports a command that failed.
async fn failed(tm: &mut Teammate, job: &Job, command: &str, outcome: &ExecOutcome) -> JobEnd {
    let status = outcome.status.label();
    let (summary, head) = match &job.source {
        JobSource::Task(task) => (
            format!("task {} failed: {status}", task.id),
            format!(
                "{} failed. {}",
                task_label(task),
                kept_note(&tm.config.name, owner_now(tm, Some(task)).as_deref())
            ),
        ),
        JobSource::Message { .. } => (
            format!("`{}` failed: {status}", short_command(command)),
            "The command you sent failed.".to_string(),
        ),
    };
    let text = outcome_text(&head, command, outcome);
    fail(tm, job, summary, text).await
}

/// Reports a command the gate or the lead refused.
async fn refused(tm: &mut Teammate, job: &Job, command: &str, reason: &str) -> JobEnd {
    tm.events.log(LogKind::Result, format!("not run: {reason}"));
    let (summary, text) = match &job.source {
        JobSource::Task(task) => (
            format!("task {} not run: {reason}", task.id),
            format!(
                "{} not run: {}\n\n$ {command}\n\n{}",
                task_label(task),
                sentence(reason),
                kept_note(&tm.config.name, owner_now(tm, Some(task)).as_deref())
            ),
        ),
        JobSource::Message { .. } => (
            format!("did not run `{}`: {reason}", short_command(command)),
            format!(
                "I did not run the command you sent: {}\n\n$ {command}",
                sentence(reason)
            ),
        ),
    };
    fail(tm, job, summary, text).await
}

/// Sends a failure report and says so (the engine parks the task: `JobEnd::Failed`).
async fn fail(tm: &mut Teammate, job: &Job, summary: String, text: String) -> JobEnd {
    let to = match &job.source {
        JobSource::Task(_) => LEAD_NAME.to_string(),
        JobSource::Message { reply_to } => reply_to.clone(),
    };
    send_report(tm, &to, &text, &summary).await;
    JobEnd::Failed {
        summary,
        text,
        task: job.task().map(|t| t.id.clone()),
    }
}

/// The owner of `task` as the task list shows it now (its own name when it cannot be read:
/// the teammate claimed it and nothing says otherwise).
fn owner_now(tm: &Teammate, task: Option<&crate::protocol::Task>) -> Option<String> {
    let id = task.map(|t| t.id.as_str())?;
    match tm.mailroom.list_tasks() {
        Ok(listing) => listing
            .tasks
            .into_iter()
            .find(|t| t.id == id)
            .and_then(|t| t.owner),
        Err(_) => Some(tm.config.name.clone()),
    }
}

pub(super) async fn send_report(tm: &Teammate, to: &str, text: &str, summary: &str) {
    tm.events.log(LogKind::Result, summary.to_string());
    let entry = tm.mailroom.entry(text, Some(summary));
    if let Err(e) = tm.mailroom.send(to, entry).await {
        tm.events.log(
            LogKind::Warning,
            format!("cannot send my report to {to}: {e}"),
        );
    }
}
