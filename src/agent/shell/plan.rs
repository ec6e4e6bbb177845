//! Plan mode for a `shell` teammate: before it runs anything it writes the plan (the commands
//! it will run, for the tasks it claimed and the commands the lead sent) to a plan file, sends a
//! `plan_approval_request` to the lead, and waits for the `plan_approval_response` from
//! `team-lead` with the same `requestId` (and, when the answer carries `planDigest`, the same
//! digest). Meanwhile a `mode_set_request` from the lead is applied (leaving plan mode ends the
//! wait: nothing needs approving any more) and a `shutdown_request` ends the turn. Answers from
//! anyone else are taken out and logged. The handshake itself is the shared one of
//! `runtime::plan_approval`; this file writes the shell plan.

use tokio_util::sync::CancellationToken;

use super::{Job, JobSource};
use crate::agent::runtime::plan_approval::{PlanDecision, seek_plan_approval};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::frames::ShutdownRequest;

/// How the plan handshake ended.
pub(crate) enum PlanOutcome {
    /// Go ahead (the mode has been switched).
    Approved,
    /// Rejected, with the lead's feedback.
    Rejected(String),
    Interrupted,
    Shutdown(ShutdownRequest),
    /// The request could not be sent.
    Failed(String),
}

/// The plan: what it will run, task by task.
pub(crate) fn plan_content(name: &str, cwd: &str, jobs: &[Job]) -> String {
    let mut text = format!(
        "# Plan of {name}\n\nI will run these commands with `sh -c` in `{cwd}`, in this order:\n"
    );
    for (i, job) in jobs.iter().enumerate() {
        let what = match &job.source {
            JobSource::Task(task) => format!("Task #{}: {}", task.id, task.subject),
            JobSource::Message { reply_to } => format!("The command {reply_to} sent me"),
        };
        let command = job
            .command
            .as_deref()
            .unwrap_or("(no command: I will report that)");
        text.push_str(&format!("\n{}. {what}\n\n```sh\n{command}\n```\n", i + 1));
    }
    text
}

/// Sends the plan for `jobs` and waits for the lead's answer (the shared handshake of
/// [`crate::agent::runtime::plan_approval`]).
pub(crate) async fn seek_approval(
    tm: &mut Teammate,
    jobs: &[Job],
    cancel: &CancellationToken,
) -> PlanOutcome {
    let content = plan_content(&tm.config.name, &tm.config.cwd.to_string_lossy(), jobs);
    match seek_plan_approval(tm, &content, cancel).await {
        PlanDecision::Approved(_) | PlanDecision::LeftPlanMode(_) => PlanOutcome::Approved,
        PlanDecision::Rejected(feedback) => PlanOutcome::Rejected(feedback),
        PlanDecision::Interrupted => PlanOutcome::Interrupted,
        PlanDecision::Shutdown(request) => PlanOutcome::Shutdown(request),
        PlanDecision::Failed(why) => PlanOutcome::Failed(why),
    }
}
