//! What a running teammate tells whoever watches it (the lead maps these onto its own view
//! types; agent sits below lead and knows nothing of them): lines of its inline transcript and
//! changes of its status; and its [`UsageMeter`], the running totals of tokens, requests,
//! tool uses and turns that whoever holds the meter can read or watch.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use crate::protocol::PermissionMode;
use crate::protocol::frames::IdleReason;
use crate::store::written_files::WrittenLog;

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
        /// The entry's key (`InboxEntry::dedup_key`): the lead's ledger knows what it sent by
        /// it, so a message taken into a turn is *read* when the teammate took it, in order
        /// with the turn's `Working`.
        key: String,
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
/// nobody watches. It also keeps the log of the files the teammate writes
/// ([`EventSink::wrote`]), when its runtime gave it one.
#[derive(Debug, Clone)]
pub struct EventSink {
    name: String,
    tx: Option<mpsc::UnboundedSender<TeammateEvent>>,
    written: Option<Arc<WrittenLog>>,
}

impl EventSink {
    pub fn new(name: &str, tx: mpsc::UnboundedSender<TeammateEvent>) -> EventSink {
        EventSink {
            name: name.to_string(),
            tx: Some(tx),
            written: None,
        }
    }

    /// A sink that drops everything (a teammate process with no watcher).
    pub fn none(name: &str) -> EventSink {
        EventSink {
            name: name.to_string(),
            tx: None,
            written: None,
        }
    }

    /// The same sink, recording the files written in `log`.
    pub fn with_written_log(mut self, log: Arc<WrittenLog>) -> EventSink {
        self.written = Some(log);
        self
    }

    /// The teammate writes `path` (a Write or Edit it was allowed): recorded in its log for
    /// the lead's review (`store::written_files`); nothing without a log.
    pub fn wrote(&self, path: &std::path::Path) {
        if let Some(log) = &self.written {
            log.record(path);
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

/// What a teammate has used so far (an `llm` teammate fills every field; a `shell` teammate
/// only counts turns and tool uses).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// Input tokens the service reported, over all requests.
    pub input_tokens: u64,
    /// Output tokens the service reported, over all requests.
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    /// Model requests that got an answer.
    pub requests: u64,
    /// Attempts repeated after a rate limit, overload, server or network error.
    pub retries: u64,
    /// Tool calls made (allowed or not).
    pub tool_uses: u64,
    /// Turns started.
    pub turns: u64,
    /// Turns that ended `failed`.
    pub failed_turns: u64,
    /// Times older turns were replaced by a summary.
    pub compactions: u64,
}

impl Usage {
    /// What the teammate reports to its lead (`teamleadUsage`); `None` before any model token
    /// or tool use.
    pub fn reported(&self) -> Option<crate::protocol::frames::ReportedUsage> {
        let input_tokens =
            self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens;
        (input_tokens + self.output_tokens + self.tool_uses > 0).then_some(
            crate::protocol::frames::ReportedUsage {
                input_tokens,
                output_tokens: self.output_tokens,
                tool_uses: self.tool_uses,
                turns: self.turns,
                cache_read_tokens: self.cache_read_input_tokens,
                cache_write_tokens: self.cache_creation_input_tokens,
                // Its breakpoints are 5-minute ones (`wire::anthropic`).
                cache_write_1h_tokens: 0,
            },
        )
    }
}

/// Running [`Usage`] totals shared between a teammate and whoever watches it. Cheap to clone;
/// every clone reads and adds to the same totals.
#[derive(Debug, Clone)]
pub struct UsageMeter {
    tx: Arc<watch::Sender<Usage>>,
}

impl Default for UsageMeter {
    fn default() -> Self {
        UsageMeter::new()
    }
}

impl UsageMeter {
    pub fn new() -> UsageMeter {
        UsageMeter {
            tx: Arc::new(watch::channel(Usage::default()).0),
        }
    }

    /// The totals now.
    pub fn snapshot(&self) -> Usage {
        *self.tx.borrow()
    }

    /// A receiver that sees every change (`changed().await`, then `borrow()`).
    pub fn subscribe(&self) -> watch::Receiver<Usage> {
        self.tx.subscribe()
    }

    /// Changes the totals (watchers are told).
    pub fn update(&self, change: impl FnOnce(&mut Usage)) {
        self.tx.send_modify(change);
    }
}
