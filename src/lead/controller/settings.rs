//! The controller's settings part: what the session was started with and never changes while
//! it runs (what a `/spawn` defaults to, how long `/quit` and `/shutdown` wait, whether a
//! failed task goes back to others, what tokens cost, which engine teamlead's own teammates
//! run). Its fields are private: the rest of the controller reads them through the methods
//! below and cannot change them.

use std::sync::Arc;
use std::time::Duration;

use super::LeadOptions;
use crate::protocol::pricing::PriceTable;

/// The session's settings, read-only once the lead runs.
pub(crate) struct Settings {
    claude_by_default: bool,
    teammate_model: Option<String>,
    worktree_by_default: bool,
    quit_timeout: Duration,
    shutdown_timeout: Duration,
    shutdown_force: bool,
    retry_failed_tasks: bool,
    shell_engine: bool,
    prices: Arc<PriceTable>,
}

/// What `/shutdown` does: how long it waits for the teammate's answer, and whether it then
/// kills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ShutdownPatience {
    pub wait: Duration,
    pub then_kill: bool,
}

impl Settings {
    pub fn from_options(opts: &LeadOptions) -> Settings {
        Settings {
            claude_by_default: opts.claude_by_default,
            teammate_model: opts.teammate_model.clone(),
            worktree_by_default: opts.worktree_by_default,
            quit_timeout: opts.quit_timeout,
            shutdown_timeout: opts.shutdown_timeout,
            shutdown_force: opts.shutdown_force,
            retry_failed_tasks: opts.retry_failed_tasks,
            shell_engine: opts.teammate_llm.is_none(),
            prices: Arc::new(opts.prices.clone()),
        }
    }

    /// Whether a `/spawn` without `--claude`/`--own` starts a Claude Code teammate.
    pub fn claude_by_default(&self) -> bool {
        self.claude_by_default
    }

    /// Whether a `/spawn` without `--worktree`/`--no-worktree` gives a worktree.
    pub fn worktree_by_default(&self) -> bool {
        self.worktree_by_default
    }

    /// The model a teammate gets when its spawn names none.
    pub fn teammate_model(&self) -> Option<&str> {
        self.teammate_model.as_deref()
    }

    /// How long `/quit` waits for approvals before it kills.
    pub fn quit_timeout(&self) -> Duration {
        self.quit_timeout
    }

    /// `/shutdown`'s patience.
    pub fn shutdown(&self) -> ShutdownPatience {
        ShutdownPatience {
            wait: self.shutdown_timeout,
            then_kill: self.shutdown_force,
        }
    }

    /// `retry-failed-tasks`: a task reported failed goes back to pending for others.
    pub fn retry_failed_tasks(&self) -> bool {
        self.retry_failed_tasks
    }

    /// teamlead's own teammates run the shell engine (no model): their commands may write any
    /// file, and nothing records which.
    pub fn shell_engine(&self) -> bool {
        self.shell_engine
    }

    /// What model tokens cost.
    pub fn prices(&self) -> &Arc<PriceTable> {
        &self.prices
    }
}
