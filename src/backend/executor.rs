//! The `TeammateExecutor` seam: how the lead starts and stops teammates without knowing where
//! they run. Pane backends (tmux, iTerm2) implement it here over [`super::PaneBackend`]; the
//! in-process executor lives in `agent::in_process`, because it runs the agent runtime and
//! `backend` comes before `agent` in the layer order.
//!
//! Contract: the lead adds the member to `config.json` (name, color, mode, prompt, cwd) first;
//! `spawn` does the rest of PROTOCOL.md 6: create the pane (if any), record `tmuxPaneId` and
//! `backendType`, clear the teammate's inbox and write its prompt there as the first message
//! from `team-lead`, then start it. Messages always travel through the inbox files; `send`
//! appends one and wakes the teammate when the executor can.

use std::path::PathBuf;

use futures::future::BoxFuture;

use crate::protocol::{InboxEntry, PermissionMode};
use crate::store::StoreError;

/// One teammate to start.
#[derive(Debug, Clone, PartialEq)]
pub struct SpawnRequest {
    pub name: String,
    pub color: Option<String>,
    pub cwd: PathBuf,
    pub mode: PermissionMode,
    pub plan_mode_required: bool,
    /// Written to its inbox as the first message from `team-lead`.
    pub prompt: Option<String>,
    pub model: Option<String>,
    pub agent_type: String,
    /// Run a real `claude` process (pane executors only).
    pub claude: bool,
}

impl SpawnRequest {
    /// A `general-purpose` teammate in `default` mode.
    pub fn new(name: &str, cwd: impl Into<PathBuf>) -> SpawnRequest {
        SpawnRequest {
            name: name.to_string(),
            color: None,
            cwd: cwd.into(),
            mode: PermissionMode::Default,
            plan_mode_required: false,
            prompt: None,
            model: None,
            agent_type: "general-purpose".to_string(),
            claude: false,
        }
    }
}

/// Where a started teammate lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawned {
    /// Its `tmuxPaneId`: a tmux `%N`, an iTerm2 session id, or `in-process`.
    pub pane_id: String,
    /// Its `backendType`: `tmux`, `iterm2`, `in-process`.
    pub backend_type: String,
}

/// Why an executor could not do something.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Backend(#[from] super::BackendError),
    #[error("no teammate named `{0}` runs here")]
    NoSuchTeammate(String),
    #[error("teammate `{0}` is already running")]
    AlreadyRunning(String),
    #[error("{0}")]
    Failed(String),
}

/// Starts, messages, stops and kills teammates of one team.
pub trait TeammateExecutor: Send + Sync {
    /// `tmux`, `iterm2` or `in-process`.
    fn backend_type(&self) -> &'static str;

    /// Starts a teammate whose member entry already exists (see the module contract).
    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>>;

    /// Appends a message to the teammate's inbox and wakes it.
    fn send(&self, name: &str, entry: InboxEntry) -> BoxFuture<'_, Result<(), ExecutorError>>;

    /// Nudges the teammate to read its inbox now (after someone else wrote it). A no-op where
    /// the teammate watches its inbox itself.
    fn wake(&self, name: &str);

    /// Graceful stop: writes a `shutdown_request` from `team-lead` to its inbox and returns the
    /// request id; the teammate answers `shutdown_approved` and exits.
    fn terminate(
        &self,
        name: &str,
        reason: Option<&str>,
    ) -> BoxFuture<'_, Result<String, ExecutorError>>;

    /// Forced stop: its process (or task) ends now, with no handshake.
    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>>;

    /// True while the teammate runs.
    fn is_active(&self, name: &str) -> bool;
}

/// `shutdown-<ms>@<name>`: the id of a shutdown request.
pub fn shutdown_request_id(name: &str) -> String {
    format!("shutdown-{}@{name}", crate::protocol::time::now_ms())
}
