//! Errors of the pane backends: a program that could not start, a command that failed or did
//! not answer in time.

use std::time::Duration;

/// What went wrong talking to a terminal's CLI or a teammate process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("could not run {program}: {detail}")]
    Spawn { program: String, detail: String },
    #[error("`{command}` failed: {detail}")]
    Command { command: String, detail: String },
    /// It was killed at its time limit (`backend::terminals::cli`).
    #[error("`{command}` gave no answer within {} s", .limit.as_secs_f32())]
    NoAnswer { command: String, limit: Duration },
    #[error("{0}")]
    Unavailable(String),
}
