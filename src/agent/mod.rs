//! The teammate runtime: its loop (wait for inbox or tasks, run a turn, idle notification,
//! shutdown handshake), its permission gate (modes, rules, asking the lead through the bridge
//! or the mailbox), its engines (`shell`: runs task commands, no model; `llm`: a language model
//! with tools), its events and usage for the lead, and the in-process
//! [`TeammateExecutor`](crate::backend::executor::TeammateExecutor).

pub mod asker;
pub mod engines;
pub mod error;
pub mod events;
pub mod gate;
pub mod in_process;
pub mod llm;
pub mod mailbox_asker;
pub mod metrics;
#[cfg(test)]
mod poll_tests;
pub mod process;
pub mod runtime;
pub mod shell;

pub use asker::{AskError, Asking, PermissionAsker};
pub use engines::EngineKind;
pub use error::AgentError;
pub use events::{LogKind, StopReason, TeammateEvent, TeammateEventKind, Usage, UsageMeter};
pub use mailbox_asker::MailboxAsker;
pub use runtime::{
    Controls, Engine, TeammateConfig, TeammateHandle, run_teammate, spawn_in_process,
};
