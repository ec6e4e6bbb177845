//! What a teammate is started with, and the controls its owner keeps: the teammate's own
//! cancellation token (stopping the lead's turn never touches it), the per-turn token
//! (interrupting stops only the current turn), and the wake-up notifier.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::agent::events::UsageMeter;
use crate::protocol::{InboxEntry, PermissionMode};
use crate::store::Home;

/// Everything a teammate needs to run.
#[derive(Debug, Clone)]
pub struct TeammateConfig {
    pub home: Home,
    pub team: String,
    /// Its member name (its inbox is `inboxes/<name>.json`).
    pub name: String,
    /// Its palette color name.
    pub color: Option<String>,
    /// Where its commands run.
    pub cwd: PathBuf,
    /// Its starting permission mode (`plan` when `plan_mode_required`).
    pub mode: PermissionMode,
    pub plan_mode_required: bool,
    /// Sent in `shutdown_approved`: `in-process`, or the pane id of a pane teammate.
    pub pane_id: String,
    /// Sent in `shutdown_approved`: `in-process`, `tmux`, `iterm2`.
    pub backend_type: String,
    /// The safety poll of an idle teammate (it also wakes on [`Controls::wake`]).
    pub poll_interval: Duration,
    /// Its running totals (tokens, requests, tool uses, turns); keep a clone to read them.
    pub usage: UsageMeter,
    /// Entries handed to it at its start, already in its inbox marked read (an in-process
    /// teammate's first message: its lead and it are one process, so the entry is taken the
    /// moment it is written). Its first turn takes them before anything unread.
    pub handed: Vec<InboxEntry>,
}

impl TeammateConfig {
    /// An in-process teammate in `default` mode, polling every second (its engine is given
    /// beside it: [`run_teammate`](super::run_teammate)).
    pub fn new(home: &Home, team: &str, name: &str, cwd: impl Into<PathBuf>) -> TeammateConfig {
        TeammateConfig {
            home: home.clone(),
            team: team.to_string(),
            name: name.to_string(),
            color: None,
            cwd: cwd.into(),
            mode: PermissionMode::Default,
            plan_mode_required: false,
            pane_id: "in-process".to_string(),
            backend_type: "in-process".to_string(),
            poll_interval: Duration::from_secs(1),
            usage: UsageMeter::new(),
            handed: Vec::new(),
        }
    }

    /// `<name>@<team>`.
    pub fn agent_id(&self) -> String {
        format!("{}@{}", self.name, self.team)
    }

    /// The mode it starts in: `plan` when a plan is required, else `mode`.
    pub fn starting_mode(&self) -> PermissionMode {
        if self.plan_mode_required {
            PermissionMode::Plan
        } else {
            self.mode
        }
    }
}

/// The switches of one running teammate. Cheap to clone; every clone controls the same one.
#[derive(Debug, Clone)]
pub struct Controls {
    /// The teammate's own token: cancelled, it stops (a running command is killed).
    pub stop: CancellationToken,
    /// Nudges an idle teammate to look at its inbox and the task list now.
    pub wake: Arc<Notify>,
    turn: Arc<Mutex<Option<CancellationToken>>>,
}

impl Default for Controls {
    fn default() -> Self {
        Controls::new()
    }
}

impl Controls {
    pub fn new() -> Controls {
        Controls {
            stop: CancellationToken::new(),
            wake: Arc::new(Notify::new()),
            turn: Arc::new(Mutex::new(None)),
        }
    }

    /// Look now (remembered if the teammate is busy: it looks right after its turn).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Stops the current turn only; false when no turn is running.
    pub fn interrupt_turn(&self) -> bool {
        match self.slot().as_ref() {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// Stops the teammate.
    pub fn stop(&self) {
        self.stop.cancel();
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Option<CancellationToken>> {
        match self.turn.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A new turn token (a child of the teammate's token).
    pub(crate) fn begin_turn(&self) -> CancellationToken {
        let token = self.stop.child_token();
        *self.slot() = Some(token.clone());
        token
    }

    pub(crate) fn end_turn(&self) {
        *self.slot() = None;
    }
}
