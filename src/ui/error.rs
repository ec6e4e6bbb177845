//! The UI's errors: the terminal failed (drawing, raw mode, reading input).

/// A terminal failure.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error("terminal: {0}")]
    Terminal(String),
    #[error("terminal input: {0}")]
    Io(#[from] std::io::Error),
}
