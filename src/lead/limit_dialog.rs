//! Closing Claude Code 2.1.45's own usage-limit dialog (`/rate-limit-options`: `What do you
//! want to do? ❯ 1. Stop and wait for limit to reset 2. Upgrade your plan`) when its teammate
//! is resumed: while it shows, the client reads its inbox but starts no turn (PROTOCOL.md 7).
//! Esc closes it, but not always at the first press: in the conformance suite on a loaded
//! machine one Esc was typed, the very next reading of the pane caught the screen while it
//! redrew (no dialog in it), and the dialog stood there for the rest of the run while the
//! teammate read its held messages and did nothing. So the dialog counts as gone only when two
//! readings [`SETTLE`] apart both lack it, and Esc is pressed again (up to [`MAX_PRESSES`])
//! while it stays. Blocking (terminal CLI calls, short sleeps): off the controller's loop.

use std::time::{Duration, Instant};

/// The line the dialog shows.
pub const LIMIT_DIALOG: &str = "Stop and wait for limit to reset";

/// How long the dialog may take to go after one Esc.
pub const GONE_WITHIN: Duration = Duration::from_secs(3);

/// The most Esc presses: a dialog still there after them is told to the person.
pub const MAX_PRESSES: u32 = 3;

/// A reading without the dialog counts once a second one this much later lacks it too.
const SETTLE: Duration = Duration::from_millis(150);

/// How often the pane is read while waiting.
const POLL: Duration = Duration::from_millis(50);

/// What became of the dialog.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DialogAnswer {
    /// The pane did not show it.
    NotShown,
    /// It closed after this many Esc presses.
    Closed { presses: u32 },
    /// It still shows after [`MAX_PRESSES`] presses.
    StillShown,
    /// A key could not be typed.
    KeyFailed(String),
}

/// Whether `screen` shows the dialog.
pub fn shows_dialog(screen: &[String]) -> bool {
    screen.iter().any(|l| l.contains(LIMIT_DIALOG))
}

/// Closes the dialog if the pane shows it: `read` reads the pane's last lines, `press_escape`
/// types Esc into it.
pub fn close<E: std::fmt::Display>(
    read: impl Fn() -> Vec<String>,
    press_escape: impl Fn() -> Result<(), E>,
    gone_within: Duration,
) -> DialogAnswer {
    if settled_without(&read, SETTLE) {
        return DialogAnswer::NotShown;
    }
    for presses in 1..=MAX_PRESSES {
        if let Err(e) = press_escape() {
            return DialogAnswer::KeyFailed(e.to_string());
        }
        let deadline = Instant::now() + gone_within;
        while Instant::now() < deadline {
            if settled_without(&read, SETTLE) {
                return DialogAnswer::Closed { presses };
            }
            std::thread::sleep(POLL);
        }
    }
    DialogAnswer::StillShown
}

/// Whether the pane lacks the dialog now and still `settle` later.
fn settled_without(read: &impl Fn() -> Vec<String>, settle: Duration) -> bool {
    if shows_dialog(&read()) {
        return false;
    }
    std::thread::sleep(settle);
    !shows_dialog(&read())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A pane whose screen is the next of `screens` at each reading (the last one stays), and
    /// the count of Esc presses.
    struct FakePane {
        screens: Mutex<Vec<Vec<String>>>,
        presses: Mutex<u32>,
        /// The screens after the first press that closes it, by the press count.
        closes_at: u32,
    }

    fn dialog() -> Vec<String> {
        vec![
            " What do you want to do?".to_string(),
            format!(" ❯ 1. {LIMIT_DIALOG}"),
            "   2. Upgrade your plan".to_string(),
        ]
    }

    fn prompt() -> Vec<String> {
        vec!["❯ ".to_string(), "  ? for shortcuts".to_string()]
    }

    impl FakePane {
        fn new(screens: Vec<Vec<String>>, closes_at: u32) -> FakePane {
            FakePane {
                screens: Mutex::new(screens),
                presses: Mutex::new(0),
                closes_at,
            }
        }

        fn read(&self) -> Vec<String> {
            if *self.presses.lock().unwrap() >= self.closes_at {
                return prompt();
            }
            let mut screens = self.screens.lock().unwrap();
            if screens.len() > 1 {
                screens.remove(0)
            } else {
                screens[0].clone()
            }
        }

        fn press(&self) -> Result<(), &'static str> {
            *self.presses.lock().unwrap() += 1;
            Ok(())
        }
    }

    #[test]
    fn a_pane_without_the_dialog_gets_no_key() {
        let pane = FakePane::new(vec![prompt()], u32::MAX);
        let answer = close(|| pane.read(), || pane.press(), Duration::from_millis(300));
        assert_eq!(answer, DialogAnswer::NotShown);
        assert_eq!(*pane.presses.lock().unwrap(), 0);
    }

    #[test]
    fn a_reading_caught_mid_redraw_is_not_taken_for_the_dialog_gone() {
        // The first Esc is lost; right after it one reading has no dialog (a redraw), then it
        // shows again. The second Esc closes it.
        let pane = FakePane::new(vec![dialog(), vec![String::new()], dialog()], 2);
        let answer = close(|| pane.read(), || pane.press(), Duration::from_millis(500));
        assert_eq!(answer, DialogAnswer::Closed { presses: 2 });
    }

    #[test]
    fn a_dialog_that_stays_is_said_after_the_last_press() {
        let pane = FakePane::new(vec![dialog()], u32::MAX);
        let answer = close(|| pane.read(), || pane.press(), Duration::from_millis(200));
        assert_eq!(answer, DialogAnswer::StillShown);
        assert_eq!(*pane.presses.lock().unwrap(), MAX_PRESSES);
    }

    #[test]
    fn a_key_that_cannot_be_typed_is_said() {
        let pane = FakePane::new(vec![dialog()], u32::MAX);
        let answer = close(
            || pane.read(),
            || Err::<(), _>("no such pane"),
            Duration::from_millis(200),
        );
        assert_eq!(answer, DialogAnswer::KeyFailed("no such pane".to_string()));
    }
}
