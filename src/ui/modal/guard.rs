//! What keeps a dialog or box from taking keys that were typed before the person could see it,
//! and keeps those keys from silently turning into message text. The rules, measured on the app
//! loop's clock (`AppState::now_ms`, scripted in tests), hold for every guarded dialog: the
//! permission and plan dialogs and every confirmation box ([`super::confirm`]).
//!
//! - **Arrival.** Nothing that arrives by itself (a permission or plan request, the offer to
//!   retire a merged worktree, a confirmation that stepped back) takes the keyboard at once: it
//!   waits (a banner above the composer says so, with the key that opens it) until the person
//!   opens it on purpose (Ctrl+P) or until typing has stopped: the composer is empty, no dialog
//!   is open, and [`TYPING_PAUSE_MS`] have passed since the last key or paste. So a dialog
//!   never appears under the fingers of someone typing a message.
//! - **Grace.** Every guarded dialog ignores keys for [`GRACE_MS`] after it is first drawn with
//!   the keyboard, after its content changes under the person's eyes (the next request of the
//!   queue, the "always" confirmation) and after it is brought up again. A key of the dialog
//!   (`y`, Enter, an arrow…) in that window is no answer and is not text either: it is dropped,
//!   and the dialog says so in place of its hints (`y ignored: this request just appeared —
//!   press again`, [`Guard::ignored`]) until the next key it takes.
//! - **Text.** Text a dialog has no use for (a character that is none of its keys, while no
//!   feedback line is open) was meant for the composer, in the grace period and after it: the
//!   dialog steps back to waiting (the banner) and the text goes to the composer
//!   ([`super::DialogOutcome::Decline`]), so `/quit` typed at a dialog is a command, never
//!   swallowed and never glued to an answer key. A confirmation the person opened with a key
//!   (kill, prune, cycle all, leaving plan mode) closes instead, with nothing done and a note
//!   saying so, and the dialogs it was opened from close with it: its `y` can never be the
//!   `y` of a word typed a moment later.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::ui::keymap::KeySpec;

/// How long a dialog ignores keys after it is drawn with the keyboard, or its content changes.
pub const GRACE_MS: u64 = 500;

/// How long typing must have stopped (with an empty composer) before a waiting request takes
/// the keyboard by itself.
pub const TYPING_PAUSE_MS: u64 = 1_000;

/// How a dialog got the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focused {
    /// By a key meant for it (Ctrl+P, a key in another dialog, an answer to the previous
    /// request of the queue).
    OnPurpose,
    /// By itself, once typing had stopped.
    ByPause,
}

/// A dialog's grace period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Guard {
    /// When the dialog got the keyboard or last changed (epoch ms).
    pub since_ms: u64,
    pub focused: Focused,
    /// The note about the last key dropped in the grace period, shown until a key is taken.
    pub ignored: Option<String>,
}

impl Guard {
    pub fn new(now_ms: u64, focused: Focused) -> Guard {
        Guard {
            since_ms: now_ms,
            focused,
            ignored: None,
        }
    }

    /// Starts the grace period again (the content changed), keeping how focus came.
    pub fn restart(&mut self, now_ms: u64) {
        self.since_ms = now_ms;
        self.ignored = None;
    }

    /// `key` came in the grace period: it is dropped, and the dialog says so (`what`: what
    /// just appeared, `request` or `question`).
    pub fn ignore(&mut self, key: &KeyEvent, what: &str) {
        self.ignored = Some(format!(
            "{} ignored: this {what} just appeared — press again",
            key_label(key)
        ));
    }

    /// Whether keys are still ignored at `now_ms`.
    pub fn in_grace(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.since_ms) < GRACE_MS
    }

    /// The person has used the dialog: from now on it counts as opened on purpose.
    pub fn used(&mut self) {
        self.focused = Focused::OnPurpose;
        self.ignored = None;
    }
}

/// A key as the hints write it (`y`, `enter`, `→`, `ctrl+u`).
pub fn key_label(key: &KeyEvent) -> String {
    let mods = match key.code {
        KeyCode::Char(_) => key.modifiers - KeyModifiers::SHIFT,
        _ => key.modifiers,
    };
    KeySpec {
        code: key.code,
        mods,
    }
    .label()
}

/// Whether typing has stopped long enough at `now_ms` (never typed counts as stopped).
pub fn typing_paused(last_input_ms: Option<u64>, now_ms: u64) -> bool {
    last_input_ms.is_none_or(|at| now_ms.saturating_sub(at) >= TYPING_PAUSE_MS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grace_ends_after_the_constant_and_restarts() {
        let mut g = Guard::new(1_000, Focused::ByPause);
        assert!(g.in_grace(1_000));
        assert!(g.in_grace(1_000 + GRACE_MS - 1));
        assert!(!g.in_grace(1_000 + GRACE_MS));
        g.restart(5_000);
        assert!(g.in_grace(5_100));
        assert_eq!(g.focused, Focused::ByPause);
        g.ignore(&KeyEvent::from(KeyCode::Char('y')), "request");
        assert_eq!(
            g.ignored.as_deref(),
            Some("y ignored: this request just appeared — press again")
        );
        g.used();
        assert_eq!(g.focused, Focused::OnPurpose);
        assert_eq!(g.ignored, None);
        g.ignore(&KeyEvent::from(KeyCode::Enter), "question");
        g.restart(6_000);
        assert_eq!(g.ignored, None, "new content, no stale note");
    }

    #[test]
    fn typing_pause_needs_the_whole_second() {
        assert!(typing_paused(None, 0));
        assert!(!typing_paused(Some(10_000), 10_000 + TYPING_PAUSE_MS - 1));
        assert!(typing_paused(Some(10_000), 10_000 + TYPING_PAUSE_MS));
    }
}
