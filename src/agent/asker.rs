//! How a teammate asks its lead for permission. Two implementations exist: the in-memory leader
//! permission bridge (in-process teammates; `lead::bridge`) and the mailbox (pane teammates write a
//! `permission_request` frame to the lead's inbox and await the `permission_response`).

use futures::future::BoxFuture;

use crate::protocol::frames::{PermissionRequest, PermissionResponse};

/// Who is asking, for the lead's dialog.
#[derive(Debug, Clone, PartialEq)]
pub struct Asking {
    /// The teammate's member name (equals `request.agent_id`).
    pub worker: String,
    /// Its palette color name, if any.
    pub color: Option<String>,
    pub request: PermissionRequest,
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AskError {
    #[error("the lead is gone")]
    LeadGone,
    #[error("the request was cancelled")]
    Cancelled,
    #[error("could not ask the lead: {0}")]
    Failed(String),
}

/// Something a teammate can ask for a permission decision. The future resolves when the human
/// answers (or with an error when the lead goes away or the turn is cancelled).
pub trait PermissionAsker: Send + Sync {
    fn ask(&self, asking: Asking) -> BoxFuture<'static, Result<PermissionResponse, AskError>>;
}
