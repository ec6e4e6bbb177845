//! What does a teammate's turns: an [`Engine`]. The loop (`teammate`) reads the inbox and acts
//! on control frames; an engine gets the messages meant for it and runs one turn (or says there
//! is nothing to do), and the loop ends every turn with the idle notification its
//! [`TurnReport`] describes. This is the one meaning of "engine" in teamlead: `shell` (runs
//! task commands, no model) and `llm` (a language model with tools) are two implementations,
//! chosen by `agent::EngineKind`; the runtime never names either. A third engine is one file
//! that implements this trait, and one line in `agent::engines`.

use std::future::Future;
use std::pin::Pin;

use super::teammate::Teammate;
use crate::protocol::InboxEntry;
use crate::protocol::frames::{IdleReason, ShutdownRequest};

/// One turn's future, borrowing the engine and the teammate.
pub type TurnFuture<'a> = Pin<Box<dyn Future<Output = TurnOutcome> + Send + 'a>>;

/// What does a teammate's turns (and keeps what it needs between them).
pub trait Engine: Send {
    /// The name `--engine` gives it (`shell`, `llm`).
    fn name(&self) -> &'static str;

    /// What the teammate's first line says of it besides its name (`model claude-…`), if
    /// anything.
    fn describe(&self) -> Option<String> {
        None
    }

    /// One turn over `content` (the new messages that are not control frames), or
    /// [`TurnOutcome::NoTurn`] when there is neither a message nor a task for it. A turn starts
    /// with [`Teammate::begin_turn`].
    fn turn<'a>(&'a mut self, tm: &'a mut Teammate, content: Vec<InboxEntry>) -> TurnFuture<'a>;
}

/// How a turn ended, for the idle notification.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    pub reason: IdleReason,
    pub summary: Option<String>,
    /// (task id, `resolved` | `failed`).
    pub completed: Option<(String, &'static str)>,
    pub failure: Option<String>,
    /// The last report text (≤ 4000 characters in the notification).
    pub result: Option<String>,
    /// The lead asked for a shutdown while the turn waited.
    pub shutdown: Option<ShutdownRequest>,
    /// The turn stopped at the model service's usage limit, which holds until then (epoch ms).
    pub limit_until_ms: Option<u64>,
}

impl TurnReport {
    pub fn available() -> TurnReport {
        TurnReport {
            reason: IdleReason::Available,
            summary: None,
            completed: None,
            failure: None,
            result: None,
            shutdown: None,
            limit_until_ms: None,
        }
    }
}

/// What a call to the engine did.
pub enum TurnOutcome {
    /// Nothing to do: no turn was started.
    NoTurn,
    Ended(Box<TurnReport>),
}
