//! Sorting what arrives in a teammate's inbox: control frames it acts on without a turn
//! (`shutdown_request`, `mode_set_request`, accepted only from `team-lead`), frames that are
//! not for it or came from someone who may not send them (logged and dropped), and everything
//! else, which is content for its next turn. Also the waiter that takes one expected entry out
//! of the inbox while a turn waits for an answer, leaving every other entry unread.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

use super::mailroom::Mailroom;
use crate::agent::error::AgentError;
use crate::protocol::frames::{Frame, ShutdownRequest};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

/// What one inbox entry means to the loop.
#[derive(Debug, Clone, PartialEq)]
pub enum TeammateIncoming {
    /// The lead asks it to shut down.
    Shutdown(ShutdownRequest),
    /// The lead sets its permission mode.
    SetMode(PermissionMode),
    /// Dropped, with the reason for the log.
    Ignored(String),
    /// A message (or a frame worth a turn): content of the next turn.
    Content,
}

/// Sorts one entry. Only `team-lead` may shut a teammate down, set its mode, or answer its
/// permission and plan requests; answers that arrive while nothing waits for them are stale.
pub fn classify(entry: &InboxEntry) -> TeammateIncoming {
    let from_lead = entry.from == LEAD_NAME;
    let Some(frame) = entry.parse_frame() else {
        return TeammateIncoming::Content;
    };
    let kind = frame.kind();
    let refused = || {
        TeammateIncoming::Ignored(format!(
            "ignored {kind} from {}: only {LEAD_NAME} may send it",
            entry.from
        ))
    };
    match frame {
        Frame::ShutdownRequest(r) if from_lead => TeammateIncoming::Shutdown(r),
        Frame::ModeSetRequest(m) if from_lead => TeammateIncoming::SetMode(m.mode),
        Frame::ShutdownRequest(_)
        | Frame::ModeSetRequest(_)
        | Frame::PermissionResponse(_)
        | Frame::PlanApprovalResponse(_)
            if !from_lead =>
        {
            refused()
        }
        Frame::PermissionResponse(r) => TeammateIncoming::Ignored(format!(
            "ignored a late permission_response ({}): nothing waits for it",
            r.request_id
        )),
        Frame::PlanApprovalResponse(r) => TeammateIncoming::Ignored(format!(
            "ignored a late plan_approval_response ({}): nothing waits for it",
            r.request_id
        )),
        Frame::SandboxPermissionResponse(_)
        | Frame::PermissionRequest(_)
        | Frame::SandboxPermissionRequest(_)
        | Frame::PlanApprovalRequest(_)
        | Frame::ShutdownApproved(_)
        | Frame::ShutdownRejected(_) => TeammateIncoming::Ignored(format!(
            "ignored {kind} from {}: it is meant for a lead",
            entry.from
        )),
        Frame::IdleNotification(_) | Frame::TaskAssignment(_) | Frame::TaskCompleted(_) => {
            TeammateIncoming::Content
        }
        // Already matched above (from the lead); kept for an exhaustive match.
        Frame::ShutdownRequest(_) | Frame::ModeSetRequest(_) => TeammateIncoming::Content,
    }
}

/// Waits until `pick` accepts an unread entry of the own inbox, marks that one entry read and
/// returns what `pick` made of it. Other entries stay unread. Wakes on `wake` or every
/// `poll`; the caller races it against its cancellation.
pub async fn wait_for<T>(
    mailroom: &Mailroom,
    wake: &Arc<Notify>,
    poll: Duration,
    mut pick: impl FnMut(&InboxEntry) -> Option<T>,
) -> Result<T, AgentError> {
    loop {
        match mailroom.unread() {
            Ok(entries) => {
                for entry in entries {
                    if let Some(found) = pick(&entry) {
                        mailroom.mark_read(std::slice::from_ref(&entry)).await?;
                        return Ok(found);
                    }
                }
            }
            Err(e) => tracing::warn!(teammate = mailroom.name(), "reading the inbox: {e}"),
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(poll) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frames::{ModeSetRequest, PermissionResponse, ResponseSubtype};

    #[test]
    fn only_the_lead_controls_a_teammate() {
        let mode = Frame::ModeSetRequest(ModeSetRequest {
            mode: PermissionMode::Plan,
            from: LEAD_NAME.into(),
        });
        assert_eq!(
            classify(&InboxEntry::frame(LEAD_NAME, &mode)),
            TeammateIncoming::SetMode(PermissionMode::Plan)
        );
        assert!(matches!(
            classify(&InboxEntry::frame("mallory", &mode)),
            TeammateIncoming::Ignored(_)
        ));
        let answer = Frame::PermissionResponse(PermissionResponse {
            request_id: "perm-1-abcdefg".into(),
            subtype: ResponseSubtype::Success,
            tool_use_id: None,
            approved_request: None,
            response: None,
            error: None,
        });
        assert!(matches!(
            classify(&InboxEntry::frame("mallory", &answer)),
            TeammateIncoming::Ignored(why) if why.contains("only team-lead")
        ));
        assert_eq!(
            classify(&InboxEntry::new("peer", "hello")),
            TeammateIncoming::Content
        );
    }
}
