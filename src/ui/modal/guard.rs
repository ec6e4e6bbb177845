//! What keeps a dialog from taking keys that were typed before the person could see it. Two
//! rules, both measured on the app loop's clock (`AppState::now_ms`, scripted in tests):
//!
//! - **Arrival.** A permission or plan request that arrives does not take the keyboard at once:
//!   it waits (a banner above the composer says so, with the key that opens it) until the person
//!   opens it on purpose (Ctrl+P) or until typing has stopped: the composer is empty, no dialog
//!   is open, and [`TYPING_PAUSE_MS`] have passed since the last key or paste.
//! - **Grace.** Every approval or confirmation dialog ignores keys for [`GRACE_MS`] after it is
//!   first drawn with the keyboard, after its content changes under the person's eyes (the next
//!   request of the queue, the "always" confirmation) and after it is brought up again. A key in
//!   that window is not an answer. When the dialog took the keyboard by itself (after a pause),
//!   such a key was meant for the composer: the dialog steps back to waiting and the key goes to
//!   the composer, so nothing typed is lost. When the person opened it on purpose (or was
//!   already answering), the key is dropped, unless it is text the dialog has no use for (the
//!   rule below, which holds in the grace period too).
//! - **Text.** After the grace period, text a permission or plan dialog has no use for (a
//!   character that is none of its keys) steps the dialog back to waiting and goes to the
//!   composer ([`super::DialogOutcome::Decline`]).

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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard {
    /// When the dialog got the keyboard or last changed (epoch ms).
    pub since_ms: u64,
    pub focused: Focused,
}

impl Guard {
    pub fn new(now_ms: u64, focused: Focused) -> Guard {
        Guard {
            since_ms: now_ms,
            focused,
        }
    }

    /// Starts the grace period again (the content changed), keeping how focus came.
    pub fn restart(&mut self, now_ms: u64) {
        self.since_ms = now_ms;
    }

    /// Whether keys are still ignored at `now_ms`.
    pub fn in_grace(&self, now_ms: u64) -> bool {
        now_ms.saturating_sub(self.since_ms) < GRACE_MS
    }

    /// The person has used the dialog: from now on it counts as opened on purpose.
    pub fn used(&mut self) {
        self.focused = Focused::OnPurpose;
    }
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
        g.used();
        assert_eq!(g.focused, Focused::OnPurpose);
    }

    #[test]
    fn typing_pause_needs_the_whole_second() {
        assert!(typing_paused(None, 0));
        assert!(!typing_paused(Some(10_000), 10_000 + TYPING_PAUSE_MS - 1));
        assert!(typing_paused(Some(10_000), 10_000 + TYPING_PAUSE_MS));
    }
}
