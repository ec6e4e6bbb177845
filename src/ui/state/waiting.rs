//! Who is waiting on the person, and Ctrl+N (the keymap's `next-waiting`) to go to them.
//!
//! A teammate is *waiting on you* when
//! 0. its pane waits on its client's own prompt (`TeammateStatus::OnClientPrompt`: only a
//!    person at its pane can answer it), or
//! 1. a permission request or a plan of theirs is in your queue, or
//! 2. they sent you a message (a teammate turn in the lead's transcript; protocol notices such
//!    as idle notifications do not count) and since then you have neither opened their view
//!    or pane nor sent them anything (`@name …`, `/msg`, `/broadcast`, or text in their
//!    inline view).
//!
//! The order is: teammates on their client's prompt, queued requests, oldest first, then
//! unanswered messages, oldest first (a
//! teammate appears once, at its first place). Ctrl+N opens the one after the teammate it
//! opened last (wrapping), as its inline view (in-process) or by jumping to its pane; opening
//! a teammate answers its messages. With nobody waiting, a note says so.

use crate::lead::contract::{TeammateStatus, TranscriptItem, ViewTarget};
use crate::ui::state::AppState;

impl AppState {
    /// The teammates waiting on the person, in Ctrl+N's order.
    pub fn waiting_teammates(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .team
            .iter()
            .filter(|t| matches!(t.status, TeammateStatus::OnClientPrompt { .. }))
            .map(|t| t.name.clone())
            .collect();
        let requests = self
            .permissions
            .iter()
            .map(|p| p.worker.clone())
            .chain(self.plans.iter().map(|p| p.from.clone()));
        for name in requests.chain(self.unanswered.iter().cloned()) {
            if self.teammate(&name).is_some() && !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Ctrl+N: opens the next teammate waiting on the person.
    pub fn open_next_waiting(&mut self) {
        let waiting = self.waiting_teammates();
        if waiting.is_empty() {
            let note = TranscriptItem::System {
                text: "Nobody is waiting on you: no request queued, no message unanswered."
                    .to_string(),
            };
            self.transcript.push(&note, |_| None);
            return;
        }
        let after = self
            .last_waiting
            .as_ref()
            .and_then(|last| waiting.iter().position(|n| n == last));
        let next = match after {
            Some(i) => waiting[(i + 1) % waiting.len()].clone(),
            None => waiting[0].clone(),
        };
        self.last_waiting = Some(next.clone());
        self.open_teammate(&next);
    }

    /// A teammate turn arrived in the lead's transcript: its sender waits for an answer.
    pub(crate) fn note_message_from(&mut self, name: &str) {
        if !self.unanswered.iter().any(|n| n == name) {
            self.unanswered.push(name.to_string());
        }
    }

    /// The person opened or addressed `name`.
    pub(crate) fn answered(&mut self, name: &str) {
        self.unanswered.retain(|n| n != name);
    }

    /// Text submitted in `target`: whom it answers.
    pub(crate) fn note_submitted(&mut self, target: &ViewTarget, text: &str) {
        match target {
            ViewTarget::Teammate(name) => {
                let name = name.clone();
                self.answered(&name);
            }
            ViewTarget::Lead => {
                let text = text.trim_start();
                if text.starts_with("/broadcast") {
                    self.unanswered.clear();
                    return;
                }
                let rest = text.strip_prefix("/msg").map_or(text, str::trim_start);
                if let Some(addressed) = rest
                    .strip_prefix('@')
                    .or_else(|| (rest.len() != text.len()).then_some(rest))
                {
                    let name: String = addressed
                        .chars()
                        .take_while(|c| !c.is_whitespace())
                        .collect();
                    self.answered(&name);
                }
            }
        }
    }
}
