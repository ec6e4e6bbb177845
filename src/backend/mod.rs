//! Where teammates run: the `PaneBackend` seam (create pane, run command, style, kill, hide, show,
//! focus) with its tmux and iTerm2 implementations, backend detection once per lead session, and
//! the command line that starts a pane teammate. A new backend is one file implementing
//! [`PaneBackend`].

pub mod detect;
pub mod error;
pub mod executor;
pub mod iterm2;
pub mod launch;
pub mod lead_probe;
pub mod orphans;
pub mod pane_executor;
pub mod program;
pub mod tmux;
pub mod worktree;

pub use error::BackendError;

use crate::protocol::Color;

/// A terminal that can host teammate panes.
pub trait PaneBackend: Send + Sync {
    /// `tmux` or `iterm2`: written as the member's `backendType`.
    fn label(&self) -> &'static str;
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
    /// True while the pane exists.
    fn pane_alive(&self, pane: &str) -> bool;
    /// True while the pane's program runs (a pane may outlive it, e.g. tmux's `remain-on-exit`).
    fn pane_running(&self, pane: &str) -> bool {
        self.pane_alive(pane)
    }
}

impl PaneBackend for tmux::TmuxBackend {
    fn label(&self) -> &'static str {
        "tmux"
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
    fn pane_alive(&self, pane: &str) -> bool {
        tmux::TmuxBackend::pane_alive(self, pane)
    }
    fn pane_running(&self, pane: &str) -> bool {
        tmux::TmuxBackend::pane_running(self, pane)
    }
}

impl PaneBackend for iterm2::Iterm2Backend {
    fn label(&self) -> &'static str {
        "iterm2"
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
        self.sessions().iter().any(|s| s == pane)
    }
}
