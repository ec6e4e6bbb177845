//! The mailbox [`PermissionAsker`] for teammates that are not in the lead's process: the
//! request goes to the lead's inbox as a `permission_request` frame, and the answer is the
//! `permission_response` from `team-lead` with the same `request_id` that appears in the
//! teammate's own inbox and matches the request (`PermissionResponse::matches`: a bound answer
//! must name the same tool call). An answer to the request from anyone else, or bound to
//! another tool call, is taken out of the inbox and logged, and the wait goes on.

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::Notify;

use super::asker::{AskError, Asking, PermissionAsker};
use super::runtime::incoming::wait_for;
use super::runtime::mailroom::Mailroom;
use crate::protocol::frames::{Frame, PermissionRequest, PermissionResponse};
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

/// What an inbox entry is to a waiting request.
enum Answer {
    /// The lead's answer.
    Lead(Box<PermissionResponse>),
    /// An answer to it that may not be applied (another sender, another tool call): taken out
    /// of the inbox and logged.
    Refused(String),
}

/// Is this entry an answer to `request`?
fn answer_to(entry: &InboxEntry, request: &PermissionRequest) -> Option<Answer> {
    let Frame::PermissionResponse(r) = entry.parse_frame()? else {
        return None;
    };
    if r.request_id != request.request_id {
        return None;
    }
    if entry.from != LEAD_NAME {
        return Some(Answer::Refused(format!(
            "ignored permission_response {} from {}: only {LEAD_NAME} may answer",
            r.request_id, entry.from
        )));
    }
    if !r.matches(request) {
        return Some(Answer::Refused(format!(
            "refused permission_response {}: it is bound to another tool call",
            r.request_id
        )));
    }
    Some(Answer::Lead(Box::new(r)))
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
            loop {
                let answer = wait_for(&this.mailroom, &this.wake, this.poll, |entry| {
                    answer_to(entry, &request)
                })
                .await
                .map_err(|e| AskError::Failed(e.to_string()))?;
                match answer {
                    Answer::Lead(response) => return Ok(*response),
                    Answer::Refused(why) => {
                        tracing::warn!(teammate = this.mailroom.name(), "{why}")
                    }
                }
            }
        }
        .boxed()
    }
}
