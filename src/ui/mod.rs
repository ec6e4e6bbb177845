//! The terminal UI (ratatui): the app loop, transcript, composer with completion, footer and
//! team badge, the modal stack (permission queue, plan approval, teams dialog, confirmation,
//! help), teammate inline views and the keymap. It renders state and sends
//! [`crate::lead::contract::LeadCommand`]s; it never touches files or processes.

pub mod app;
pub mod colors;
pub mod composer;
pub mod error;
pub mod focus;
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
pub mod usage;

pub use app::{AppIo, run};
pub use error::UiError;
pub use state::AppState;
pub use terminal::{UiSetup, run_tui};

/// `/` commands with their one-line help, for the composer's completion (the lead's list).
pub fn slash_commands() -> &'static [(&'static str, &'static str)] {
    crate::lead::commands::slash_commands()
}
