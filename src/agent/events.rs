//! What a running teammate tells whoever watches it (the lead maps these onto its own view
//! types; agent sits below lead and knows nothing of them): lines of its inline transcript and
//! changes of its status.

use tokio::sync::mpsc;

use crate::protocol::PermissionMode;
use crate::protocol::frames::IdleReason;

/// One event from teammate `name`.
#[derive(Debug, Clone, PartialEq)]
pub struct TeammateEvent {
    pub name: String,
    pub kind: TeammateEventKind,
}

/// The kind of a line in a teammate's inline transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogKind {
    /// Something the teammate notes about its own work.
    Note,
    /// A command it is about to run.
    Command,
    /// A line of a command's output.
    Output,
    /// The outcome of a command or task.
    Result,
    /// Something went wrong (not fatal to the teammate).
    Warning,
}

/// Why a teammate's loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It approved a `shutdown_request` from the lead.
    Shutdown,
    /// It was killed (its token cancelled).
    Killed,
    /// It could not go on.
    Failed(String),
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum TeammateEventKind {
    /// A message it received, as its synthetic turn shows it (`<teammate-message …>`).
    Received {
        from: String,
        color: Option<String>,
        summary: Option<String>,
        /// The message body.
        text: String,
        /// The `<teammate-message>` rendering.
        rendered: String,
    },
    /// A line of its inline transcript.
    Log { kind: LogKind, text: String },
    /// A turn started; `task` is the task it works on (id, subject), if any.
    Working { task: Option<(String, String)> },
    /// It waits for the lead to answer a permission request or a plan.
    WaitingForApproval { what: String },
    /// The turn ended and the idle notification was sent.
    Idle {
        reason: IdleReason,
        summary: Option<String>,
    },
    /// Its permission mode changed.
    ModeChanged(PermissionMode),
    /// Its loop ended.
    Stopped(StopReason),
}

/// A sender bound to one teammate's name. Sending never fails: a dropped receiver only means
/// nobody watches.
#[derive(Debug, Clone)]
pub struct EventSink {
    name: String,
    tx: Option<mpsc::UnboundedSender<TeammateEvent>>,
}

impl EventSink {
    pub fn new(name: &str, tx: mpsc::UnboundedSender<TeammateEvent>) -> EventSink {
        EventSink {
            name: name.to_string(),
            tx: Some(tx),
        }
    }

    /// A sink that drops everything (a teammate process with no watcher).
    pub fn none(name: &str) -> EventSink {
        EventSink {
            name: name.to_string(),
            tx: None,
        }
    }

    pub fn send(&self, kind: TeammateEventKind) {
        tracing::debug!(teammate = %self.name, event = ?kind);
        if let Some(tx) = &self.tx {
            let _ = tx.send(TeammateEvent {
                name: self.name.clone(),
                kind,
            });
        }
    }

    pub fn log(&self, kind: LogKind, text: impl Into<String>) {
        self.send(TeammateEventKind::Log {
            kind,
            text: text.into(),
        });
    }
}
