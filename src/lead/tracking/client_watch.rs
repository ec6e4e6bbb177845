//! A `claude` teammate's start, watched until it shows a first turn
//! (`controller::claude_facts::check_first_turns`), and the prompt of its own client its pane
//! waits on (`controller::client_prompts`): a teammate there is told as that, never as
//! working, and its first-turn deadline starts again once the prompt is answered.

use tokio::time::Instant;

use crate::lead::client_prompt::ClientPrompt;

/// One teammate's first-turn watch and client prompt.
#[derive(Debug, Clone, Default)]
pub struct ClientWatch {
    /// Since when the first turn is awaited (until it is seen, or reported).
    awaiting_first_turn: Option<Instant>,
    /// The prompt its pane waits on, as last read.
    prompt: Option<ClientPrompt>,
}

impl ClientWatch {
    /// Started now: its first turn is awaited.
    pub fn started(&mut self) {
        self.awaiting_first_turn = Some(Instant::now());
    }

    /// Since when its first turn is awaited.
    pub fn awaiting_since(&self) -> Option<Instant> {
        self.awaiting_first_turn
    }

    /// Its first turn is no longer awaited (seen, reported, or it stopped).
    pub fn stop_awaiting(&mut self) {
        self.awaiting_first_turn = None;
    }

    /// The prompt its pane waits on.
    pub fn prompt(&self) -> Option<&ClientPrompt> {
        self.prompt.as_ref()
    }

    /// Its pane shows `prompt`: whether it is a new one (another title than before).
    pub fn prompt_shown(&mut self, prompt: ClientPrompt) -> bool {
        let new = self.prompt.as_ref().map(|p| &p.title) != Some(&prompt.title);
        self.prompt = Some(prompt);
        new
    }

    /// Its pane shows no prompt (any more): an answered prompt gives its first turn its whole
    /// time from now.
    pub fn prompt_gone(&mut self) {
        if self.prompt.take().is_some() && self.awaiting_first_turn.is_some() {
            self.awaiting_first_turn = Some(Instant::now());
        }
    }

    /// It stopped: nothing is awaited, no prompt shown.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}
