//! A `claude` teammate stuck on its client's own prompt (`lead::client_prompt`: the
//! bypass-permissions warning, the folder-trust dialog, the API-key question, a notice that
//! waits for Enter) is shown as waiting there, never as working. While a `claude` teammate
//! has not started its first turn, or while its pane shows such a prompt, the lead reads its
//! pane every [`PROMPT_CHECK_EVERY`] (off the loop, in the `Panes` lane); a prompt that
//! appears is said once in the transcript with what the person must do, and the teammate's
//! status is [`TeammateStatus::OnClientPrompt`](crate::lead::contract::TeammateStatus) until
//! the pane shows it no more. Its first-turn deadline (`claude_facts`) waits meanwhile and
//! starts again once the prompt is answered: one report per cause.
//!
//! The same reads catch a permission request that never reached the lead: a `claude`
//! teammate with no request in the lead's queues is a candidate too, and a pane that shows
//! its client `Waiting for team lead approval` for [`APPROVAL_UNSEEN_GRACE`] while the lead
//! holds no request of it is said once, with what to do. 2.1.45 never retries a write that
//! finds the lead's inbox lock busy and tells nobody (docs/PROTOCOL.md §4): the person would
//! otherwise wait for a request the lead never shows.
//!
//! [`APPROVAL_UNSEEN_GRACE`]: crate::lead::tracking::client_watch::APPROVAL_UNSEEN_GRACE

use std::time::Duration;

use tokio::time::Instant;

use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::client_prompt::{
    ClientPrompt, PROMPT_LINES, client_prompt, prompt_note, waits_for_lead_approval,
};

/// How often the panes are read while a teammate is a candidate.
pub const PROMPT_CHECK_EVERY: Duration = Duration::from_secs(1);

/// When the panes were last read, and how many reads are under way.
#[derive(Debug, Default)]
pub struct PromptChecks {
    last: Option<Instant>,
    reading: usize,
}

impl Controller {
    /// The `claude` teammates whose panes are read: not stopped or shutting down, and not
    /// started yet or on a prompt, or with no request in the lead's queues (its pane may wait
    /// for an approval whose request never reached the lead).
    fn prompt_candidates(&self) -> Vec<String> {
        self.roster
            .iter()
            .filter(|(name, t)| {
                self.is_claude(name)
                    && t.stopped().is_none()
                    && !t.shutdown().is_waiting()
                    && (t.client().prompt().is_some()
                        || t.not_turned()
                        || !self.has_request_of(name))
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// Does the lead hold a permission or plan request of `name`?
    fn has_request_of(&self, name: &str) -> bool {
        self.permissions.has_worker(name) || self.plans.has_worker(name)
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
                move |_| {
                    let lines = reader(PROMPT_LINES);
                    (client_prompt(&lines), waits_for_lead_approval(&lines))
                },
                move |c, (prompt, waiting)| {
                    c.prompt_checks.reading = c.prompt_checks.reading.saturating_sub(1);
                    c.on_client_prompt(&name, prompt, waiting);
                },
            );
        }
    }

    /// What `name`'s pane showed: a prompt (said when it is new) or none (only while it has
    /// not started or is on one: a dialog of a turn is its own), and whether it waits for an
    /// approval the lead has no request for (said once per wait).
    fn on_client_prompt(&mut self, name: &str, prompt: Option<ClientPrompt>, waiting: bool) {
        let queued = self.has_request_of(name);
        let Some(t) = self.roster.get_mut(name) else {
            return;
        };
        if t.stopped().is_some() {
            t.client_mut().clear();
            return;
        }
        if t.client_mut().approval_seen(waiting, queued) {
            tracing::warn!("{name}'s pane waits for an approval the lead has no request for");
            self.note(format!(
                "{name} waits for your approval of a request that never reached the lead (its \
                 client could not write it to the lead's inbox). Jump to its pane to answer it \
                 there, or /interrupt {name} and ask again."
            ));
            self.publish();
            return;
        }
        if t.client().prompt().is_none() && !t.not_turned() {
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
