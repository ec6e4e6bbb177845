//! Whether this terminal window has the keyboard focus, as the terminal reports it (focus
//! reporting, `CSI ? 1004 h`). The UI writes it on `FocusGained`/`FocusLost`; a screen's
//! notifications read it (a person looking at the window sees the request: no bell).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A shared view of the terminal's focus; clones see the same value. Not focused until the
/// terminal says it is (a terminal that never reports counts as not focused).
#[derive(Debug, Clone, Default)]
pub struct TerminalFocus(Arc<AtomicBool>);

impl TerminalFocus {
    /// The terminal reported a change.
    pub fn set(&self, focused: bool) {
        self.0.store(focused, Ordering::Relaxed);
    }

    /// The terminal last said it has the focus.
    pub fn is_focused(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_until_told_and_shared_by_clones() {
        let focus = TerminalFocus::default();
        let seen = focus.clone();
        assert!(!seen.is_focused(), "unknown counts as unfocused");
        focus.set(true);
        assert!(seen.is_focused());
        focus.set(false);
        assert!(!seen.is_focused());
    }
}
