//! Where teammates run: the [`executor::TeammateExecutor`] seam the lead holds one of per
//! session, the [`PaneBackend`] seam below the pane executor (create pane, run command, style,
//! kill, hide, show, focus, pane states, take over a previous session's panes), the terminals
//! that implement it as plug-ins ([`terminals`]: tmux, iTerm2, Zellij, kitty, WezTerm, one
//! registry in `auto`'s order), backend detection once per lead session, and the command line
//! that starts a pane teammate. A new terminal is one file under `terminals/` (its `Terminal`
//! and its `impl PaneBackend`), one line of `terminals::TERMINALS` and one line of
//! [`BackendKind`]'s list.

pub mod detect;
pub mod error;
pub mod executor;
pub mod git;
pub mod hosts;
pub mod launch;
pub mod lead_probe;
pub mod orphans;
pub mod pane_executor;
pub mod program;
pub mod reap;
pub mod terminals;
pub mod turn_signal;
pub mod worktree;

pub use crate::protocol::BackendKind;
pub use error::BackendError;

use crate::protocol::Color;

/// The last `lines` non-empty lines of a pane's text, without trailing blanks.
pub fn last_lines(text: &str, lines: usize) -> Vec<String> {
    let all: Vec<String> = text
        .lines()
        .map(|l| l.trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    all[all.len().saturating_sub(lines)..].to_vec()
}

/// A pane as its terminal shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneState {
    Running,
    /// Its program ended and the pane stays (tmux `remain-on-exit`): the exit status, or the
    /// signal that killed it, when the terminal says.
    Dead {
        status: Option<i32>,
        signal: Option<i32>,
    },
    /// No such pane.
    Gone,
}

/// A key the lead types into a teammate's pane (as the person would).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaneKey {
    /// Shift+Tab: Claude Code cycles its permission mode with it.
    BackTab,
    /// Esc: Claude Code stops its current turn.
    Escape,
}

impl PaneKey {
    /// The bytes a terminal sends for the key.
    pub fn bytes(self) -> &'static str {
        match self {
            PaneKey::BackTab => "\u{1b}[Z",
            PaneKey::Escape => "\u{1b}",
        }
    }
}

/// A terminal that can host teammate panes, as one lead session drives it (each terminal's
/// own file under [`terminals`] implements it).
pub trait PaneBackend: Send + Sync {
    /// Written as the member's `backendType`.
    fn kind(&self) -> BackendKind;
    /// Creates a pane running a placeholder and returns its id (serialized by the backend).
    fn create_pane(&self) -> Result<String, BackendError>;
    /// Starts the teammate's command line in the pane.
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError>;
    /// Colors the pane and titles it with the teammate's name.
    fn style(&self, pane: &str, name: &str, color: Option<Color>) -> Result<(), BackendError>;
    /// A new pane ([`PaneBackend::create_pane`]) styled for `name` ([`PaneBackend::style`]) by
    /// the time its command starts ([`PaneBackend::run_command`]); a backend that can do it in
    /// fewer round trips overrides it (tmux sends the style with the start).
    fn create_styled_pane(&self, name: &str, color: Option<Color>) -> Result<String, BackendError> {
        let pane = self.create_pane()?;
        self.style(&pane, name, color)?;
        Ok(pane)
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError>;
    fn hide(&self, pane: &str) -> Result<(), BackendError>;
    fn show(&self, pane: &str) -> Result<(), BackendError>;
    fn focus(&self, pane: &str) -> Result<(), BackendError>;
    /// Types `key` into the pane's program. Terminals whose CLI cannot address a pane's input
    /// say so (the lead then falls back to what the protocol offers).
    fn send_key(&self, _pane: &str, _key: PaneKey) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(format!(
            "{} cannot type into a pane",
            self.kind().as_str()
        )))
    }
    /// True while the pane exists.
    fn pane_alive(&self, pane: &str) -> bool;
    /// True while the pane's program runs (a pane may outlive it, e.g. tmux's `remain-on-exit`).
    fn pane_running(&self, pane: &str) -> bool {
        self.pane_alive(pane)
    }
    /// The state of each of `panes`, in order (one call to the terminal where it can).
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        panes
            .iter()
            .map(|p| match (self.pane_alive(p), self.pane_running(p)) {
                (true, true) => PaneState::Running,
                (true, false) => PaneState::Dead {
                    status: None,
                    signal: None,
                },
                (false, _) => PaneState::Gone,
            })
            .collect()
    }
    /// The last `lines` non-empty lines the pane shows (empty when it cannot be read).
    fn tail(&self, _pane: &str, _lines: usize) -> Vec<String> {
        Vec::new()
    }
    /// The pane's title (tmux: the teammate's name, set when it was styled).
    fn title(&self, _pane: &str) -> Option<String> {
        None
    }
    /// Counts a pane a previous lead created as one of this session's (for layout and clean-up).
    fn adopt_pane(&self, _pane: &str) {}
    /// The pid of the program the pane runs, when the terminal tells it (tmux does): a
    /// teammate is known by the processes below it (`backend::reap`), not by a title.
    fn pane_pid(&self, _pane: &str) -> Option<u32> {
        None
    }
    /// Takes over what a previous session of the team left (its [`PaneBackend::session_record`]):
    /// true when there was something to take over.
    fn take_over(&self, _record: &str) -> Result<bool, BackendError> {
        Ok(false)
    }
    /// What the next lead needs to find this session's panes (a private server's socket).
    fn session_record(&self) -> Option<String> {
        None
    }
    /// What a [`PaneBackend::session_record`] names, for a person: `tmux server -L
    /// teamlead-42`, `zellij session teamlead-42`.
    fn session_label(&self, record: &str) -> String {
        terminals::terminal(self.kind())
            .map(|t| t.private_label(record))
            .unwrap_or_else(|| record.to_string())
    }
    /// The program a user runs to see the panes outside the lead's terminal (a private tmux
    /// server), focused on `pane`: argv and the same as one command line.
    fn attach(&self) -> Option<(Vec<String>, String)> {
        None
    }
    /// The keys that detach from what [`PaneBackend::attach`] runs (tmux's by default).
    fn detach_keys(&self) -> &'static str {
        "ctrl+b d"
    }
    /// Ends what the backend opened for the session (a private server and its socket file).
    fn shutdown(&self) {}
}
