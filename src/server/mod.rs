//! The lead server: the lead controller behind a Unix socket private to the user, so a team
//! runs without a terminal and any number of screens (`teamlead`, `teamlead attach`) and
//! scripts (`teamlead ctl`) come and go. The socket carries the controller's own contract
//! ([`crate::lead::contract`]: `LeadCommand` in, `LeadEvent` out) as JSON lines ([`wire`]); a
//! client that attaches first gets a snapshot ([`replay`]: transcript so far, team, tasks,
//! waiting approvals) and then the live events. The [`hub`] owns the clients and the story
//! of the team ([`story`], what `ctl events` prints); [`wait`] holds the conditions of
//! `ctl wait`. Nothing here renders or touches the team's files; the controller's loop never
//! waits for a socket.

pub mod client;
pub mod hub;
pub mod listener;
pub mod paths;
pub mod policy;
pub mod push;
pub mod replay;
pub mod story;
pub mod wait;
pub mod wire;

#[cfg(test)]
mod hub_idle_tests;
#[cfg(test)]
mod push_tests;

/// Why talking to a lead server failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No server listens for this team (no socket, or nobody accepts on it).
    #[error("no lead server is running for team `{team}` in this home")]
    NotRunning { team: String },
    #[error("the runtime directory {path} {why}")]
    RuntimeDir { path: String, why: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the lead server sent something unreadable: {0}")]
    Protocol(String),
    /// A line longer than the wire's limit (never read whole).
    #[error("the lead server sent a line longer than the {} MiB a client reads (refused after {read} bytes)", limit / (1024 * 1024))]
    LineTooLong { read: usize, limit: usize },
}

impl ServerError {
    fn io(what: impl Into<String>, source: std::io::Error) -> ServerError {
        ServerError::Io {
            what: what.into(),
            source,
        }
    }
}
