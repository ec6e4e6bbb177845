//! The teammate runtime's error type: file operations of the store, task claims, and
//! background file operations that could not finish.

use crate::store::{ClaimError, StoreError};

/// What can go wrong inside a teammate (none of it stops the teammate: it is reported to the
/// lead or logged, and the loop goes on).
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Claim(#[from] ClaimError),
    #[error("a background file operation did not finish: {0}")]
    Background(String),
    #[error("no in-process teammate named `{0}`")]
    NoSuchTeammate(String),
}

/// Runs a blocking store operation (it may wait for a lock directory) off the async workers.
pub(crate) async fn blocking<T, E>(
    f: impl FnOnce() -> Result<T, E> + Send + 'static,
) -> Result<T, AgentError>
where
    T: Send + 'static,
    E: Into<AgentError> + Send + 'static,
{
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result.map_err(Into::into),
        Err(e) => Err(AgentError::Background(e.to_string())),
    }
}
