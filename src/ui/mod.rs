//! The terminal UI (ratatui): the app loop, transcript, composer with completion, footer and
//! team badge, the modal stack (permission queue, plan approval, teams dialog, confirmation,
//! help), teammate inline views and the keymap. It renders state and sends
//! [`crate::lead::view::LeadCommand`]s; it never touches files or processes.

pub mod app;
pub mod composer;
pub mod error;
pub mod footer;
pub mod handle;
pub mod keymap;
pub mod modal;
pub mod palette;
pub mod render;
pub mod state;
pub mod tasks;
pub mod terminal;
pub mod transcript;

pub use app::{AppIo, run};
pub use error::UiError;
pub use state::AppState;
pub use terminal::run_tui;

/// `/` commands with their one-line help, for the composer's completion.
pub fn slash_commands() -> &'static [(&'static str, &'static str)] {
    FALLBACK_COMMANDS
}

/// The commands the lead understands, until the lead exports its own list.
const FALLBACK_COMMANDS: &[(&str, &str)] = &[
    ("/spawn", "start a teammate: /spawn NAME \"PROMPT\""),
    ("/msg", "message a teammate: /msg NAME TEXT"),
    ("/broadcast", "message every teammate"),
    ("/task", "add, assign or list tasks"),
    ("/tasks", "show the task list"),
    ("/team", "open the teams dialog"),
    ("/mode", "set a teammate's permission mode"),
    ("/shutdown", "ask a teammate to shut down"),
    ("/kill", "stop a teammate at once"),
    ("/prune", "shut down idle teammates"),
    ("/help", "list the commands"),
    ("/quit", "shut the team down and quit"),
];
