//! The mailbox [`PermissionAsker`] for teammates that are not in the lead's process: the
//! request goes to the lead's inbox as a `permission_request` frame, and the answer is the
//! `permission_response` from `team-lead` with the same `request_id` that appears in the
//! teammate's own inbox and matches the request (`PermissionResponse::matches`: a bound answer
//! must name the same tool call). Answers from anyone else are left alone (the loop logs them
//! as refused).

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::Notify;

use super::asker::{AskError, Asking, PermissionAsker};
use super::runtime::incoming::wait_for;
use super::runtime::mailroom::Mailroom;
use crate::protocol::frames::{Frame, PermissionResponse};
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::Home;

/// Asks through the files. Cheap to clone.
#[derive(Debug, Clone)]
pub struct MailboxAsker {
    mailroom: Mailroom,
    wake: Arc<Notify>,
    poll: Duration,
}

impl MailboxAsker {
    /// An asker for teammate `name` of `team`, polling its inbox every 500 ms unless woken.
    pub fn new(home: &Home, team: &str, name: &str, color: Option<&str>) -> MailboxAsker {
        MailboxAsker {
            mailroom: Mailroom::new(home, team, name, color),
            wake: Arc::new(Notify::new()),
            poll: Duration::from_millis(500),
        }
    }

    /// Wakes on this notifier too (share the teammate's, so a file watcher wakes both).
    pub fn with_wake(mut self, wake: Arc<Notify>) -> MailboxAsker {
        self.wake = wake;
        self
    }

    /// Polls this often.
    pub fn with_poll(mut self, poll: Duration) -> MailboxAsker {
        self.poll = poll;
        self
    }
}

/// Is this entry the lead's answer to `request`?
fn answer_to(
    entry: &InboxEntry,
    request: &crate::protocol::frames::PermissionRequest,
) -> Option<PermissionResponse> {
    if entry.from != LEAD_NAME {
        return None;
    }
    match entry.parse_frame()? {
        Frame::PermissionResponse(r) if r.request_id == request.request_id => {
            if r.matches(request) {
                Some(r)
            } else {
                tracing::warn!(
                    request_id = %r.request_id,
                    "refused a permission_response bound to another tool call"
                );
                None
            }
        }
        _ => None,
    }
}

impl PermissionAsker for MailboxAsker {
    fn ask(&self, asking: Asking) -> BoxFuture<'static, Result<PermissionResponse, AskError>> {
        let this = self.clone();
        async move {
            let request = asking.request;
            let frame = Frame::PermissionRequest(request.clone());
            this.mailroom
                .send_frame(LEAD_NAME, &frame)
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
            wait_for(&this.mailroom, &this.wake, this.poll, |entry| {
                answer_to(entry, &request)
            })
            .await
            .map_err(|e| AskError::Failed(e.to_string()))
        }
        .boxed()
    }
}
