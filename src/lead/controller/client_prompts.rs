//! A `claude` teammate stuck on its client's own prompt (`lead::client_prompt`: the
//! bypass-permissions warning, the folder-trust dialog, the API-key question, a notice that
//! waits for Enter) is shown as waiting there, never as working. While a `claude` teammate
//! has not started its first turn, or while its pane shows such a prompt, the lead reads its
//! pane every [`PROMPT_CHECK_EVERY`] (off the loop, in the `Panes` lane); a prompt that
//! appears is said once in the transcript with what the person must do, and the teammate's
//! status is [`TeammateStatus::OnClientPrompt`](crate::lead::contract::TeammateStatus) until
//! the pane shows it no more. Its first-turn deadline (`claude_facts`) waits meanwhile and
//! starts again once the prompt is answered: one report per cause.

use std::time::Duration;

use tokio::time::Instant;

use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::client_prompt::{ClientPrompt, PROMPT_LINES, client_prompt, prompt_note};

/// How often the panes are read while a teammate is a candidate.
pub const PROMPT_CHECK_EVERY: Duration = Duration::from_secs(1);

/// When the panes were last read, and how many reads are under way.
#[derive(Debug, Default)]
pub struct PromptChecks {
    last: Option<Instant>,
    reading: usize,
}

impl Controller {
    /// The `claude` teammates whose panes are read: not stopped, and not started yet or on a
    /// prompt.
    fn prompt_candidates(&self) -> Vec<String> {
        self.roster
            .iter()
            .filter(|(name, t)| {
                self.is_claude(name)
                    && t.stopped().is_none()
                    && !t.shutdown().is_waiting()
                    && (t.client().prompt().is_some() || t.not_turned())
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// When the panes are to be read next (`None`: nobody to read, or reads under way).
    pub(super) fn prompt_check_due(&self) -> Option<Instant> {
        if self.prompt_checks.reading > 0 || self.prompt_candidates().is_empty() {
            return None;
        }
        Some(
            self.prompt_checks
                .last
                .map_or_else(Instant::now, |last| last + PROMPT_CHECK_EVERY),
        )
    }

    /// Reads each candidate's pane (off the loop); also looks at the first-turn deadlines.
    pub(super) fn check_client_prompts(&mut self) {
        self.prompt_checks.last = Some(Instant::now());
        self.check_first_turns(&[]);
        for name in self.prompt_candidates() {
            let Some(reader) = self.given.executor().pane_reader(&name) else {
                continue;
            };
            self.prompt_checks.reading += 1;
            self.store.submit(
                Lane::Panes,
                move |_| client_prompt(&reader(PROMPT_LINES)),
                move |c, prompt| {
                    c.prompt_checks.reading = c.prompt_checks.reading.saturating_sub(1);
                    c.on_client_prompt(&name, prompt);
                },
            );
        }
    }

    /// What `name`'s pane showed: a prompt (said when it is new) or none.
    fn on_client_prompt(&mut self, name: &str, prompt: Option<ClientPrompt>) {
        let Some(t) = self.roster.get_mut(name) else {
            return;
        };
        if t.stopped().is_some() {
            t.client_mut().clear();
            return;
        }
        match prompt {
            Some(prompt) => {
                if t.client_mut().prompt_shown(prompt.clone()) {
                    tracing::info!("{name} waits on its client's prompt: {}", prompt.title);
                    self.note(prompt_note(name, &prompt));
                }
            }
            // Answered: its first turn has its whole time from now.
            None => t.client_mut().prompt_gone(),
        }
        self.publish();
    }
}
