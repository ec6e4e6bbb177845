//! The plan handshake any engine can run: write the plan to `<home>/plans/`, send a
//! `plan_approval_request` to the lead, and wait for the `plan_approval_response` from
//! `team-lead` with the same `requestId` (and, when the answer carries `planDigest`, the same
//! digest). While it waits, a `mode_set_request` from the lead is applied (leaving plan mode
//! ends the wait: nothing needs approving any more) and a `shutdown_request` ends it. Answers
//! from anyone else are taken out and logged. An approval switches the mode to the answer's
//! `permissionMode` (`default` when absent or `plan`).

use tokio_util::sync::CancellationToken;

use super::incoming::wait_for;
use super::teammate::Teammate;
use crate::agent::events::{LogKind, TeammateEventKind};
use crate::protocol::frames::{
    Frame, PlanApprovalRequest, PlanApprovalResponse, ShutdownRequest, plan_digest,
};
use crate::protocol::time::{now_iso, now_ms};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

/// How the handshake ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PlanDecision {
    /// Approved; the teammate is now in this mode.
    Approved(PermissionMode),
    /// The lead took the teammate out of plan mode while it waited.
    LeftPlanMode(PermissionMode),
    /// Rejected, with the lead's feedback.
    Rejected(String),
    Interrupted,
    Shutdown(ShutdownRequest),
    /// The request could not be sent, or the inbox not read.
    Failed(String),
}

enum Picked {
    Answer(PlanApprovalResponse),
    Refused(String),
    SetMode(PermissionMode),
    Shutdown(ShutdownRequest),
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

/// Writes the plan file; its path, or an empty string when it cannot be written (the plan
/// still travels in the request).
async fn write_plan_file(tm: &Teammate, request_ms: u64, content: &str) -> String {
    let home = tm.config.home.clone();
    let (team, name) = (tm.config.team.clone(), tm.config.name.clone());
    let bytes = content.as_bytes().to_vec();
    // Through the store: a private file (0600) in a private directory (0700), never through
    // a symbolic link.
    let written = tokio::task::spawn_blocking(move || {
        let path = home.plan_path(&team, &name, request_ms)?;
        home.write_file(&path, &bytes).map(|()| path)
    })
    .await;
    match written {
        Ok(Ok(path)) => path.to_string_lossy().into_owned(),
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

/// Sends `content` as the plan and waits for the lead's decision.
pub(crate) async fn seek_plan_approval(
    tm: &mut Teammate,
    content: &str,
    cancel: &CancellationToken,
) -> PlanDecision {
    let ms = now_ms();
    let request_id = format!("plan_approval-{ms}@{}@{}", tm.config.name, tm.config.team);
    let plan_file_path = write_plan_file(tm, ms, content).await;
    let frame = Frame::PlanApprovalRequest(PlanApprovalRequest {
        from: tm.config.name.clone(),
        timestamp: now_iso(),
        plan_file_path,
        plan_content: content.to_string(),
        request_id: request_id.clone(),
    });
    if let Err(e) = tm.mailroom.send_frame(LEAD_NAME, &frame).await {
        return PlanDecision::Failed(format!("cannot send my plan: {e}"));
    }
    tm.events
        .log(LogKind::Note, "plan sent to team-lead for approval");
    tm.events.send(TeammateEventKind::WaitingForApproval {
        what: "plan approval".to_string(),
    });
    let digest = plan_digest(content);
    loop {
        let waited = tokio::select! {
            biased;
            _ = cancel.cancelled() => return PlanDecision::Interrupted,
            w = wait_for(&tm.mailroom, &tm.controls.wake, tm.config.poll_interval, |e| {
                pick(e, &request_id, &digest)
            }) => w,
        };
        match waited {
            Err(e) => return PlanDecision::Failed(format!("cannot read my inbox: {e}")),
            Ok(Picked::Shutdown(r)) => return PlanDecision::Shutdown(r),
            Ok(Picked::Refused(why)) => tm.events.log(LogKind::Warning, why),
            Ok(Picked::SetMode(mode)) => {
                tm.change_mode(mode, "team-lead").await;
                if mode != PermissionMode::Plan {
                    tm.events.log(
                        LogKind::Note,
                        format!("left plan mode ({mode}): no approval needed any more"),
                    );
                    return PlanDecision::LeftPlanMode(mode);
                }
            }
            Ok(Picked::Answer(answer)) if answer.approved => {
                let mode = match answer.permission_mode {
                    None | Some(PermissionMode::Plan) => PermissionMode::Default,
                    Some(m) => m,
                };
                tm.events.log(LogKind::Note, "plan approved by team-lead");
                tm.change_mode(mode, "the plan approval").await;
                return PlanDecision::Approved(mode);
            }
            Ok(Picked::Answer(answer)) => {
                let feedback = answer
                    .feedback
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .unwrap_or_else(|| "no feedback given".to_string());
                tm.events
                    .log(LogKind::Note, format!("plan rejected: {feedback}"));
                return PlanDecision::Rejected(feedback);
            }
        }
    }
}
