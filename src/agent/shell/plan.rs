//! Plan mode for a `shell` teammate: before it runs anything it writes the plan (the commands
//! it will run, for the tasks it claimed and the commands the lead sent) to a plan file, sends a
//! `plan_approval_request` to the lead, and waits for the `plan_approval_response` from
//! `team-lead` with the same `requestId` (and, when the answer carries `planDigest`, the same
//! digest). Meanwhile a `mode_set_request` from the lead is applied (leaving plan mode ends the
//! wait: nothing needs approving any more) and a `shutdown_request` ends the turn. Answers from
//! anyone else stay unread for the loop, which logs them as refused.

use tokio_util::sync::CancellationToken;

use super::{Job, JobSource};
use crate::agent::events::{LogKind, TeammateEventKind};
use crate::agent::runtime::incoming::wait_for;
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::frames::{
    Frame, PlanApprovalRequest, PlanApprovalResponse, ShutdownRequest, plan_digest,
};
use crate::protocol::time::{now_iso, now_ms};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

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

enum Picked {
    Answer(PlanApprovalResponse),
    /// An answer to this plan from someone other than `team-lead`: taken out and logged.
    Refused(String),
    SetMode(PermissionMode),
    Shutdown(ShutdownRequest),
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

/// Writes the plan file under `<home>/plans/` (where Claude Code keeps plans); its path, or
/// an empty string when it cannot be written (the plan still travels in the request).
async fn write_plan_file(tm: &Teammate, request_ms: u64, content: &str) -> String {
    let home = tm.config.home.clone();
    let dir = home.root.join("plans");
    let path = dir.join(format!(
        "{}-{}-{request_ms}.md",
        tm.config.team, tm.config.name
    ));
    let bytes = content.as_bytes().to_vec();
    let target = path.clone();
    let written = tokio::task::spawn_blocking(move || {
        home.ensure_dir(&dir)?;
        crate::store::atomic::write_atomic(&target, &bytes)
    })
    .await;
    match written {
        Ok(Ok(())) => path.to_string_lossy().into_owned(),
        Ok(Err(e)) => {
            tracing::warn!("writing the plan file: {e}");
            String::new()
        }
        Err(e) => {
            tracing::warn!("writing the plan file: {e}");
            String::new()
        }
    }
}

fn pick(entry: &InboxEntry, request_id: &str, digest: &str) -> Option<Picked> {
    let frame = entry.parse_frame()?;
    if entry.from != LEAD_NAME {
        return match frame {
            Frame::PlanApprovalResponse(r) if r.request_id == request_id => {
                Some(Picked::Refused(format!(
                    "ignored plan_approval_response from {}: only {LEAD_NAME} may answer",
                    entry.from
                )))
            }
            _ => None,
        };
    }
    match frame {
        Frame::PlanApprovalResponse(r) if r.request_id == request_id => {
            if r.plan_digest.as_deref().is_none_or(|d| d == digest) {
                Some(Picked::Answer(r))
            } else {
                Some(Picked::Refused(
                    "ignored a plan_approval_response for another version of the plan".into(),
                ))
            }
        }
        Frame::ModeSetRequest(m) => Some(Picked::SetMode(m.mode)),
        Frame::ShutdownRequest(r) => Some(Picked::Shutdown(r)),
        _ => None,
    }
}

/// Sends the plan for `jobs` and waits for the lead's answer.
pub(crate) async fn seek_approval(
    tm: &mut Teammate,
    jobs: &[Job],
    cancel: &CancellationToken,
) -> PlanOutcome {
    let content = plan_content(&tm.config.name, &tm.config.cwd.to_string_lossy(), jobs);
    let ms = now_ms();
    let request_id = format!("plan_approval-{ms}@{}@{}", tm.config.name, tm.config.team);
    let plan_file_path = write_plan_file(tm, ms, &content).await;
    let frame = Frame::PlanApprovalRequest(PlanApprovalRequest {
        from: tm.config.name.clone(),
        timestamp: now_iso(),
        plan_file_path,
        plan_content: content.clone(),
        request_id: request_id.clone(),
    });
    if let Err(e) = tm.mailroom.send_frame(LEAD_NAME, &frame).await {
        return PlanOutcome::Failed(format!("cannot send my plan: {e}"));
    }
    tm.events
        .log(LogKind::Note, "plan sent to team-lead for approval");
    tm.events.send(TeammateEventKind::WaitingForApproval {
        what: "plan approval".to_string(),
    });
    let digest = plan_digest(&content);
    loop {
        let waited = tokio::select! {
            biased;
            _ = cancel.cancelled() => return PlanOutcome::Interrupted,
            w = wait_for(&tm.mailroom, &tm.controls.wake, tm.config.poll_interval, |e| {
                pick(e, &request_id, &digest)
            }) => w,
        };
        match waited {
            Err(e) => return PlanOutcome::Failed(format!("cannot read my inbox: {e}")),
            Ok(Picked::Shutdown(r)) => return PlanOutcome::Shutdown(r),
            Ok(Picked::Refused(why)) => tm.events.log(LogKind::Warning, why),
            Ok(Picked::SetMode(mode)) => {
                tm.change_mode(mode, "team-lead").await;
                if mode != PermissionMode::Plan {
                    tm.events.log(
                        LogKind::Note,
                        format!("left plan mode ({mode}): no approval needed any more"),
                    );
                    return PlanOutcome::Approved;
                }
            }
            Ok(Picked::Answer(answer)) if answer.approved => {
                let mode = match answer.permission_mode {
                    None | Some(PermissionMode::Plan) => PermissionMode::Default,
                    Some(m) => m,
                };
                tm.events.log(LogKind::Note, "plan approved by team-lead");
                tm.change_mode(mode, "the plan approval").await;
                return PlanOutcome::Approved;
            }
            Ok(Picked::Answer(answer)) => {
                let feedback = answer
                    .feedback
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .unwrap_or_else(|| "no feedback given".to_string());
                tm.events
                    .log(LogKind::Note, format!("plan rejected: {feedback}"));
                return PlanOutcome::Rejected(feedback);
            }
        }
    }
}
