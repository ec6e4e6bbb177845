//! What a model session keeps between turns, for a teammate and the lead model alike: its
//! client (with the rate-limit governor it shares with the team), its conversation, and the
//! context size the service last reported (which the compaction budget compares against).

use super::client::LlmClient;
use super::config::LlmConfig;
use super::conversation::Message;
use super::error::LlmError;
use crate::store::Home;

/// One model session.
#[derive(Debug)]
pub struct Session {
    pub client: LlmClient,
    pub history: Vec<Message>,
    /// Input + output tokens of the last answer (the context size the service saw).
    pub reported_context: usize,
}

impl Session {
    pub fn new(config: &LlmConfig) -> Result<Session, LlmError> {
        Ok(Session {
            client: LlmClient::new(config.clone())?,
            history: Vec::new(),
            reported_context: 0,
        })
    }

    /// Shares its rate-limit pauses with the other processes of `team` (teammates in panes)
    /// through the team's files, besides the sessions of this process.
    pub fn share_rate_limits(&mut self, home: &Home, team: &str) {
        self.client.share_rate_limits(home, team);
    }

    pub fn config(&self) -> &LlmConfig {
        self.client.config()
    }

    /// The conversation so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }
}
