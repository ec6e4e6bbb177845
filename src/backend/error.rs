//! Errors of the pane backends: a program that could not start, or a command that failed.

/// What went wrong talking to tmux, `it2` or a teammate process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackendError {
    #[error("could not run {program}: {detail}")]
    Spawn { program: String, detail: String },
    #[error("`{command}` failed: {detail}")]
    Command { command: String, detail: String },
    #[error("{0}")]
    Unavailable(String),
}
