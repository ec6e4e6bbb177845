//! Where teammates run: the [`executor::TeammateExecutor`] seam the lead holds one of per
//! session, the `PaneBackend` seam below the pane executor (create pane, run command, style,
//! kill, hide, show, focus, pane states, take over a previous session's panes) with its tmux,
//! iTerm2, Zellij, kitty and WezTerm implementations, backend detection once per lead session, and the command line
//! that starts a pane teammate. A new pane backend is one file implementing [`PaneBackend`]
//! (its `impl PaneBackend` in that file, as `zellij`, `kitty` and `wezterm` do) plus one arm of
//! [`BackendKind`] and of [`detect::BackendChoice`].

pub mod detect;
pub mod error;
pub mod executor;
pub mod git;
pub mod iterm2;
pub mod kitty;
pub mod kitty_rc;
pub mod launch;
pub mod lead_probe;
pub mod orphans;
pub mod pane_executor;
pub mod program;
pub mod reap;
pub mod terminal_cli;
pub mod tmux;
pub mod wezterm;
pub mod worktree;
pub mod zellij;

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

/// A terminal that can host teammate panes.
pub trait PaneBackend: Send + Sync {
    /// Written as the member's `backendType`.
    fn kind(&self) -> BackendKind;
    /// Creates a pane running a placeholder and returns its id (serialized by the backend).
    fn create_pane(&self) -> Result<String, BackendError>;
    /// Starts the teammate's command line in the pane.
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError>;
    /// Colors the pane and titles it with the teammate's name.
    fn style(&self, pane: &str, name: &str, color: Option<Color>) -> Result<(), BackendError>;
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

impl PaneBackend for tmux::TmuxBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Tmux
    }
    fn create_pane(&self) -> Result<String, BackendError> {
        tmux::TmuxBackend::create_pane(self)
    }
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        tmux::TmuxBackend::run_command(self, pane, command)
    }
    fn style(&self, pane: &str, name: &str, color: Option<Color>) -> Result<(), BackendError> {
        tmux::TmuxBackend::style(self, pane, name, color)
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        tmux::TmuxBackend::kill(self, pane)
    }
    fn hide(&self, pane: &str) -> Result<(), BackendError> {
        tmux::TmuxBackend::hide(self, pane)
    }
    fn show(&self, pane: &str) -> Result<(), BackendError> {
        tmux::TmuxBackend::show(self, pane)
    }
    fn focus(&self, pane: &str) -> Result<(), BackendError> {
        tmux::TmuxBackend::focus(self, pane)
    }
    fn send_key(&self, pane: &str, key: PaneKey) -> Result<(), BackendError> {
        let name = match key {
            PaneKey::BackTab => "BTab",
            PaneKey::Escape => "Escape",
        };
        self.server
            .run(&["send-keys", "-t", pane, name])
            .map(|_| ())
    }
    fn pane_alive(&self, pane: &str) -> bool {
        tmux::TmuxBackend::pane_alive(self, pane)
    }
    fn pane_running(&self, pane: &str) -> bool {
        tmux::TmuxBackend::pane_running(self, pane)
    }
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        tmux::TmuxBackend::pane_states(self, panes)
    }
    fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        tmux::TmuxBackend::tail(self, pane, lines)
    }
    fn title(&self, pane: &str) -> Option<String> {
        tmux::TmuxBackend::title(self, pane)
    }
    fn adopt_pane(&self, pane: &str) {
        tmux::TmuxBackend::adopt_pane(self, pane)
    }
    fn pane_pid(&self, pane: &str) -> Option<u32> {
        tmux::TmuxBackend::pane_pid(self, pane)
    }
    fn take_over(&self, record: &str) -> Result<bool, BackendError> {
        tmux::TmuxBackend::take_over(self, record)
    }
    fn session_record(&self) -> Option<String> {
        self.server.socket.clone()
    }
    fn attach(&self) -> Option<(Vec<String>, String)> {
        let socket = self.server.socket.clone()?;
        let hint = self.attach_hint()?;
        let argv = ["tmux", "-L", &socket, "attach", "-t", tmux::SWARM_SESSION]
            .map(str::to_string)
            .to_vec();
        Some((argv, hint))
    }
    fn shutdown(&self) {
        if self.server.socket.is_some() {
            let _ = self.server.kill_server();
        }
    }
}

impl PaneBackend for iterm2::Iterm2Backend {
    fn kind(&self) -> BackendKind {
        BackendKind::Iterm2
    }
    fn create_pane(&self) -> Result<String, BackendError> {
        iterm2::Iterm2Backend::create_pane(self)
    }
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        iterm2::Iterm2Backend::run_command(self, pane, command)
    }
    fn style(&self, _pane: &str, _name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        // it2 has no pane styling; iTerm2 shows the teammate's own header instead.
        Ok(())
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        iterm2::Iterm2Backend::kill(self, pane)
    }
    fn hide(&self, _pane: &str) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(
            "iTerm2 panes cannot be hidden".into(),
        ))
    }
    fn show(&self, _pane: &str) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(
            "iTerm2 panes cannot be hidden".into(),
        ))
    }
    fn focus(&self, pane: &str) -> Result<(), BackendError> {
        iterm2::Iterm2Backend::focus(self, pane)
    }
    fn pane_alive(&self, pane: &str) -> bool {
        self.listed().is_some_and(|l| l.contains(pane))
    }
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        // A listing that failed proves nothing: everything counts as running.
        let listed = self.listed();
        panes
            .iter()
            .map(|p| match &listed {
                Some(l) if !l.contains(p.as_str()) => PaneState::Gone,
                _ => PaneState::Running,
            })
            .collect()
    }
    fn adopt_pane(&self, pane: &str) {
        iterm2::Iterm2Backend::adopt_session(self, pane)
    }
}
