//! The `TeammateExecutor` seam: everything the lead does to a teammate's runtime, without
//! knowing where it runs. The lead holds one executor per session, chosen once
//! ([`super::pane_executor::PaneExecutor`] over a [`super::PaneBackend`] of a terminal,
//! `agent::in_process::InProcessExecutor` for in-process: it runs the agent runtime, so it lives
//! one layer up). Every operation has one code path in the lead: spawn, wake, the shutdown
//! request ([`shutdown_request`], built only here, written by the lead), kill, release after a shutdown, interrupt,
//! hide/show/focus, liveness, adoption of a teammate a previous lead left running, usage, and
//! the end of the session (quit, detach, emergency stop). Outcomes are typed
//! ([`Spawned`], [`Focus`], [`Liveness`], [`Adopted`]); the lead renders them.
//!
//! Contract: the lead adds the member to `config.json` (name, color, mode, prompt, cwd) first;
//! `spawn` does the rest of PROTOCOL.md 6: create the pane (if any), record `tmuxPaneId` and
//! `backendType`, clear the teammate's inbox and write its prompt there as the first message
//! from `team-lead`, then start it. Messages always travel through the inbox files.

use std::path::PathBuf;

use futures::FutureExt;
use futures::future::BoxFuture;

use crate::protocol::frames::{Frame, ReportedUsage, ShutdownRequest};
use crate::protocol::time::now_iso;
use crate::protocol::{BackendKind, InboxEntry, LEAD_NAME, PermissionMode};
use crate::store::StoreError;
use crate::watch::ChangeEvent;

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
    /// The session id a `claude` teammate starts with (`--session-id`; its transcript's name).
    pub session_id: Option<String>,
    /// The host it runs on (a `[hosts.NAME]` of the config); `None`: the lead's host.
    pub host: Option<String>,
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
            session_id: None,
            host: None,
        }
    }
}

/// Where a started teammate lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spawned {
    /// Its `tmuxPaneId`: a tmux `%N`, an iTerm2 session id, or `in-process`.
    pub pane_id: String,
    pub kind: BackendKind,
}

/// A teammate a previous lead left running, to be bound to this session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdoptRequest {
    pub name: String,
    /// Its recorded `tmuxPaneId`.
    pub pane_id: String,
    /// The host it runs on (its member's `teamleadHost`); `None`: the lead's host.
    pub host: Option<String>,
}

/// A teammate this session now runs again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adopted {
    pub name: String,
    pub pane_id: String,
}

/// What "go to the teammate" did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Focus {
    /// The pane has the focus (inside the user's terminal).
    Focused,
    /// The pane lives on a server the user sees by running `argv` (a private tmux server):
    /// the UI hands the terminal over until it ends; `hint` is the same as a command line.
    /// `detach` is the keys that end it and give the terminal back (`ctrl+b d`).
    Attach {
        argv: Vec<String>,
        hint: String,
        detach: String,
    },
    /// The teammate has no pane: its inline view is the place.
    InlineView,
}

/// Is a teammate's runtime still there, as its executor sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Liveness {
    Running,
    /// Its program ended with this exit status; `why` reads the status (`claude not found`).
    /// (`None`: the terminal did not say.)
    Exited {
        code: Option<i32>,
        why: Option<String>,
    },
    /// Its program was killed by a signal, or its task failed.
    Crashed {
        why: String,
    },
    /// Its pane is gone (closed by the user, or by the program ending cleanly).
    Closed,
}

impl Liveness {
    pub fn is_running(&self) -> bool {
        matches!(self, Liveness::Running)
    }
}

impl std::fmt::Display for Liveness {
    /// `running`, `exited (127: claude not found)`, `crashed (killed by signal 9)`, `closed`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Liveness::Running => f.write_str("running"),
            Liveness::Exited {
                code: Some(code),
                why: Some(why),
            } => write!(f, "exited ({code}: {why})"),
            Liveness::Exited {
                code: Some(code),
                why: None,
            } => write!(f, "exited ({code})"),
            Liveness::Exited { code: None, .. } => f.write_str("exited"),
            Liveness::Crashed { why } => write!(f, "crashed ({why})"),
            Liveness::Closed => f.write_str("closed"),
        }
    }
}

/// One teammate's liveness with the last lines its pane showed (empty without a pane).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LivenessReport {
    pub name: String,
    pub liveness: Liveness,
    pub tail: Vec<String>,
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
    #[error("{kind} teammates cannot {what}")]
    Unsupported {
        kind: BackendKind,
        what: &'static str,
    },
    #[error("{0}")]
    Failed(String),
}

/// Types a key into one teammate's pane; blocking (a terminal CLI call), so it runs off the
/// lead's loop. The error says why it could not.
pub type KeyTyper =
    std::sync::Arc<dyn Fn(super::PaneKey) -> Result<(), super::BackendError> + Send + Sync>;

/// Reads the last lines of one teammate's pane; blocking (a terminal CLI call).
pub type PaneReader = std::sync::Arc<dyn Fn(usize) -> Vec<String> + Send + Sync>;

/// Reads the last `lines` of a pane every 50 ms until `shows` holds for them (`true`), or
/// `within` has passed (`false`). Blocking: for the store worker's lanes, never the loop.
pub fn pane_shows_within(
    read: &PaneReader,
    lines: usize,
    within: std::time::Duration,
    shows: impl Fn(&[String]) -> bool,
) -> bool {
    let deadline = std::time::Instant::now() + within;
    loop {
        if shows(&read(lines)) {
            return true;
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Tells one of teamlead's own teammates to stop its current turn (keep running); blocking (a
/// call to its host). How many of its processes were told, or why none could be.
pub type TurnStopper = std::sync::Arc<dyn Fn() -> Result<usize, super::BackendError> + Send + Sync>;

/// Starts, messages, watches, stops and re-binds the teammates of one team.
pub trait TeammateExecutor: Send + Sync {
    /// Where its teammates run (written as their `backendType`).
    fn kind(&self) -> BackendKind;

    /// Whether the program a teammate would run (`claude` when `claude`) is there and
    /// executable, checked before anything is made for it; in-process teammates need none.
    fn check_program(
        &self,
        _claude: bool,
    ) -> BoxFuture<'_, Result<(), super::program::ProgramError>> {
        async { Ok(()) }.boxed()
    }

    /// A handle that types keys into `name`'s pane, as the person would (Claude Code's
    /// Shift+Tab cycles its mode: the one way to tighten a client that ignores
    /// `mode_set_request`); `None` when it has no pane or its terminal cannot type into one.
    fn key_typer(&self, _name: &str) -> Option<KeyTyper> {
        None
    }

    /// A handle that reads the last lines of `name`'s pane (what the person would see there);
    /// `None` when it has no pane.
    fn pane_reader(&self, _name: &str) -> Option<PaneReader> {
        None
    }

    /// Starts a teammate whose member entry already exists (see the module contract).
    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>>;

    /// Nudges the teammate to read its inbox now (after someone else wrote it). A no-op where
    /// the teammate watches its inbox itself.
    fn wake(&self, name: &str);

    /// `entry` is about to be appended to `name`'s inbox in the lead's home: an executor that
    /// carries that inbox elsewhere (a teammate on another host, over its link) sends it now,
    /// and the copy appended after is not sent again. Never blocks.
    fn hand_off(&self, _name: &str, _entry: &InboxEntry) {}

    /// Where an executor that carries inboxes from elsewhere (teammates on other hosts) hands
    /// the entries for the lead's own inbox as they arrive, before they are appended to it
    /// (the lead's drain: it notes them delivered, and the file's take passes them by).
    fn set_lead_entries(&self, _sink: LeadEntrySink) {}

    /// A file of the team changed (the lead's watcher): wake whom it concerns.
    fn on_change(&self, _event: &ChangeEvent) {}

    /// Forced stop: its process (or task) ends now, with no handshake; its pane closes.
    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>>;

    /// The teammate approved its shutdown and is leaving: forget it, and make sure its pane
    /// closes (killing it if it lingers a few seconds).
    fn release(&self, name: &str) -> BoxFuture<'_, ()>;

    /// Stops only its current turn; false when nothing was stopped (idle, or not supported).
    fn interrupt(&self, _name: &str) -> bool {
        false
    }

    /// A handle that stops the current turn of `name`, one of teamlead's own teammates whose
    /// process this machine cannot signal (it runs on another host); `None`: the lead signals
    /// it itself (`backend::turn_signal`), or it runs in this process.
    fn turn_stopper(&self, _name: &str) -> Option<TurnStopper> {
        None
    }

    /// Moves its pane out of sight.
    fn hide(&self, _name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let kind = self.kind();
        async move {
            Err(ExecutorError::Unsupported {
                kind,
                what: "be hidden",
            })
        }
        .boxed()
    }

    /// Brings a hidden pane back.
    fn show(&self, _name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let kind = self.kind();
        async move {
            Err(ExecutorError::Unsupported {
                kind,
                what: "be shown",
            })
        }
        .boxed()
    }

    /// Goes to the teammate.
    fn focus(&self, name: &str) -> BoxFuture<'_, Result<Focus, ExecutorError>>;

    /// The liveness of every teammate it runs. May call the terminal: the lead polls it off its
    /// loop.
    fn liveness(&self) -> BoxFuture<'_, Vec<LivenessReport>>;

    /// Binds a teammate a previous lead of the team left running to this session: its pane
    /// must still be there, running, and titled with its name.
    fn adopt(&self, request: AdoptRequest) -> BoxFuture<'_, Result<Adopted, ExecutorError>> {
        let kind = self.kind();
        let _ = request;
        async move {
            Err(ExecutorError::Unsupported {
                kind,
                what: "outlive their lead",
            })
        }
        .boxed()
    }

    /// What its model has used (when the executor can see it; pane teammates report it in
    /// their idle notifications instead).
    fn usage(&self, _name: &str) -> Option<ReportedUsage> {
        None
    }

    /// How the user sees the teammates' panes outside the lead's terminal, if they must.
    fn attach_hint(&self) -> Option<String> {
        None
    }

    /// The end of the session (`/quit`): kills every teammate still running and whatever the
    /// executor opened for them (a private tmux server).
    fn quit(&self) -> BoxFuture<'_, ()>;

    /// The lead leaves with the team kept (`/quit --keep`): teammates keep running and wait
    /// for the next lead; the executor lets go of them.
    fn detach(&self) {}

    /// Last resort when the lead panics: kill what it runs, synchronously.
    fn emergency_stop(&self);

    /// Takes over what the previous lead of the team left (its [`session_record`]) before
    /// adopting its teammates: true when there was something to take over.
    ///
    /// [`session_record`]: TeammateExecutor::session_record
    fn take_over(&self, _record: &str) -> BoxFuture<'_, Result<bool, ExecutorError>> {
        async { Ok(false) }.boxed()
    }

    /// What the next lead needs to find this session's panes again (a private tmux server's
    /// socket), kept in the team's `.teamlead/` directory; `None` when nothing.
    fn session_record(&self) -> Option<String> {
        None
    }

    /// What a [`session_record`] names, for a person (`tmux server -L teamlead-42`).
    ///
    /// [`session_record`]: TeammateExecutor::session_record
    fn session_label(&self, record: &str) -> String {
        record.to_string()
    }
}

/// Takes an entry for the lead's own inbox from another thread
/// ([`TeammateExecutor::set_lead_entries`]).
pub type LeadEntrySink = std::sync::Arc<dyn Fn(InboxEntry) + Send + Sync>;

/// A `shutdown_request` from `team-lead` to `name`: its request id and the inbox entry. The one
/// place the lead's shutdown message is built.
pub fn shutdown_request(name: &str, reason: Option<&str>) -> (String, InboxEntry) {
    let request_id = shutdown_request_id(name);
    let frame = Frame::ShutdownRequest(ShutdownRequest {
        request_id: request_id.clone(),
        from: LEAD_NAME.to_string(),
        reason: reason.map(str::to_string),
        timestamp: now_iso(),
    });
    (request_id, InboxEntry::frame(LEAD_NAME, &frame))
}

/// `shutdown-<ms>@<name>`: the id of a shutdown request.
pub fn shutdown_request_id(name: &str) -> String {
    format!("shutdown-{}@{name}", crate::protocol::time::now_ms())
}

/// What an exit status means, for a person: `127` → `<program> not found`.
pub fn exit_meaning(code: i32, program: &str) -> Option<String> {
    match code {
        127 => Some(format!("{program} not found")),
        126 => Some(format!("{program} cannot be run")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness_reads_like_a_status() {
        let missing = Liveness::Exited {
            code: Some(127),
            why: exit_meaning(127, "claude"),
        };
        assert_eq!(missing.to_string(), "exited (127: claude not found)");
        assert_eq!(
            Liveness::Exited {
                code: Some(3),
                why: None
            }
            .to_string(),
            "exited (3)"
        );
        assert_eq!(Liveness::Closed.to_string(), "closed");
        let (id, entry) = shutdown_request("alpha", Some("bye"));
        assert!(id.starts_with("shutdown-") && id.ends_with("@alpha"));
        assert!(entry.text.contains("shutdown_request") && entry.text.contains(&id));
    }
}
