//! A `claude` teammate's start, watched until it shows a first turn
//! (`controller::claude_facts::check_first_turns`), the prompt of its own client its pane
//! waits on (`controller::client_prompts`): a teammate there is told as that, never as
//! working, and its first-turn deadline starts again once the prompt is answered; and a pane
//! that waits for the lead's approval of a request the lead never got.

use tokio::time::Instant;

use crate::lead::client_prompt::ClientPrompt;

/// One teammate's first-turn watch and client prompt.
#[derive(Debug, Clone, Default)]
pub struct ClientWatch {
    /// Since when the first turn is awaited (until it is seen, or reported).
    awaiting_first_turn: Option<Instant>,
    /// The prompt its pane waits on, as last read.
    prompt: Option<ClientPrompt>,
    /// Since when its pane waits for the lead's approval while the lead has no request of it.
    approval_unseen: Option<Instant>,
    /// That wait was told (once per wait).
    approval_told: bool,
}

/// How long a pane may wait for an approval the lead has no request for before it is told: a
/// request on its way (written, not yet drained) arrives well within it.
pub const APPROVAL_UNSEEN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

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

    /// A read of its pane: whether it waits for the lead's approval (`waiting`), and whether
    /// the lead has a request of it queued (`queued`). True once per wait, when it has waited
    /// [`APPROVAL_UNSEEN_GRACE`] with nothing queued: the request never reached the lead.
    pub fn approval_seen(&mut self, waiting: bool, queued: bool) -> bool {
        if !waiting || queued {
            self.approval_unseen = None;
            self.approval_told = false;
            return false;
        }
        let since = *self.approval_unseen.get_or_insert_with(Instant::now);
        if self.approval_told || since.elapsed() < APPROVAL_UNSEEN_GRACE {
            return false;
        }
        self.approval_told = true;
        true
    }

    /// It stopped: nothing is awaited, no prompt shown.
    pub fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn an_approval_wait_with_nothing_queued_is_told_once_after_the_grace() {
        let mut watch = ClientWatch::default();
        assert!(!watch.approval_seen(true, false), "just seen");
        tokio::time::advance(APPROVAL_UNSEEN_GRACE / 2).await;
        assert!(!watch.approval_seen(true, false), "within the grace");
        tokio::time::advance(APPROVAL_UNSEEN_GRACE).await;
        assert!(watch.approval_seen(true, false), "past it: told");
        assert!(!watch.approval_seen(true, false), "once");
        // The request arrives (or the wait ends): a later wait is a new one.
        assert!(!watch.approval_seen(true, true));
        assert!(!watch.approval_seen(true, false));
        tokio::time::advance(APPROVAL_UNSEEN_GRACE * 2).await;
        assert!(watch.approval_seen(true, false));
        assert!(!watch.approval_seen(false, false));
    }
}
