//! Whether this terminal window has the keyboard focus, as the terminal reports it (focus
//! reporting, `CSI ? 1004 h`): unknown until the terminal says, then focused or not. The UI
//! writes it on `FocusGained`/`FocusLost`; a screen's notifications read it (a person looking
//! at the window sees the request: no bell).

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

const UNKNOWN: u8 = 0;
const FOCUSED: u8 = 1;
const UNFOCUSED: u8 = 2;

/// A shared view of the terminal's focus; clones see the same value.
#[derive(Debug, Clone, Default)]
pub struct TerminalFocus(Arc<AtomicU8>);

impl TerminalFocus {
    /// The terminal reported a change.
    pub fn set(&self, focused: bool) {
        let value = if focused { FOCUSED } else { UNFOCUSED };
        self.0.store(value, Ordering::Relaxed);
    }

    /// Known to have the focus (a terminal that never reports counts as not focused).
    pub fn is_focused(&self) -> bool {
        self.0.load(Ordering::Relaxed) == FOCUSED
    }

    /// The terminal has said whether it has the focus.
    pub fn is_known(&self) -> bool {
        self.0.load(Ordering::Relaxed) != UNKNOWN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_until_told_and_shared_by_clones() {
        let focus = TerminalFocus::default();
        let seen = focus.clone();
        assert!(!seen.is_known() && !seen.is_focused());
        focus.set(true);
        assert!(seen.is_known() && seen.is_focused());
        focus.set(false);
        assert!(seen.is_known() && !seen.is_focused());
    }
}
