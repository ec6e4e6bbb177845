//! Bringing a `claude` teammate to a permission mode the way the person would: by pressing
//! Claude Code's own mode key (Shift+Tab) in its pane, one press at a time, each confirmed by
//! the mode the client itself then writes into its member entry of `config.json` (every
//! version in the matrix does, on every change). Claude Code 2.1.329 and later ignore
//! `mode_set_request`, and a `setMode` answer can only ride on a request, so this is the one
//! way to *tighten* such a teammate (PROTOCOL.md 7). The cycle differs per version (2.1.45:
//! default → acceptEdits → plan → default; 2.1.332: default → acceptEdits → plan → auto →
//! default; `bypassPermissions` only for a client started with it), so nothing here assumes
//! an order: it presses until the client reports the target, and stops where it started when a
//! whole cycle went by without it. Blocking (terminal CLI calls, file reads, short sleeps): it
//! runs on the blocking pool, never on the controller's loop.

use std::time::{Duration, Instant};

/// How long one press may take to show in `config.json` before the client counts as not
/// answering (a busy machine's node client needs well under a second).
pub const STEP_TIMEOUT: Duration = Duration::from_secs(4);

/// The most presses one drive makes (a cycle is at most five modes long).
pub const MAX_PRESSES: u32 = 8;

/// How often the mode is read while waiting for a press to show.
const POLL: Duration = Duration::from_millis(40);

/// How a drive ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DriveEnd {
    /// The client reports the target mode.
    Reached,
    /// A whole cycle went by without the target (the client does not offer it, e.g.
    /// `bypassPermissions` for a client not started with it); it is back where it was.
    NotInCycle,
    /// A press did not change the mode the client reports within [`STEP_TIMEOUT`].
    NoAnswer,
    /// A key could not be typed, or the mode could not be read.
    Failed(String),
}

/// What a drive did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Drive {
    pub end: DriveEnd,
    /// The mode the client reports now (`None`: it could not be read).
    pub now: Option<String>,
    pub presses: u32,
    pub took: Duration,
}

/// Presses the mode key (`press`) until `read` (the mode the client reports) says `target`.
pub fn drive(
    target: &str,
    mut read: impl FnMut() -> Option<String>,
    mut press: impl FnMut() -> Result<(), String>,
    step_timeout: Duration,
) -> Drive {
    let started = Instant::now();
    let done = |end, now, presses| Drive {
        end,
        now,
        presses,
        took: started.elapsed(),
    };
    let Some(first) = read() else {
        return done(
            DriveEnd::Failed("its mode cannot be read from the team file".into()),
            None,
            0,
        );
    };
    let mut current = first.clone();
    let mut presses = 0;
    loop {
        if current == target {
            return done(DriveEnd::Reached, Some(current), presses);
        }
        if presses > 0 && current == first {
            return done(DriveEnd::NotInCycle, Some(current), presses);
        }
        if presses >= MAX_PRESSES {
            return done(DriveEnd::NotInCycle, Some(current), presses);
        }
        if let Err(e) = press() {
            return done(DriveEnd::Failed(e), Some(current), presses);
        }
        presses += 1;
        let deadline = Instant::now() + step_timeout;
        loop {
            match read() {
                Some(now) if now != current => {
                    current = now;
                    break;
                }
                _ if Instant::now() >= deadline => {
                    return done(DriveEnd::NoAnswer, Some(current), presses);
                }
                _ => std::thread::sleep(POLL),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A client whose mode moves one step along `cycle` per press, showing after `lag` reads.
    struct FakeClient {
        cycle: Vec<&'static str>,
        at: Cell<usize>,
        pending: Cell<Option<usize>>,
        lag: usize,
        reads: Cell<usize>,
        deaf: bool,
    }

    impl FakeClient {
        fn new(cycle: &[&'static str], start: &str, lag: usize) -> FakeClient {
            FakeClient {
                cycle: cycle.to_vec(),
                at: Cell::new(cycle.iter().position(|m| *m == start).unwrap()),
                pending: Cell::new(None),
                lag,
                reads: Cell::new(0),
                deaf: false,
            }
        }
        fn read(&self) -> Option<String> {
            if let Some(next) = self.pending.get() {
                self.reads.set(self.reads.get() + 1);
                if self.reads.get() > self.lag {
                    self.at.set(next);
                    self.pending.set(None);
                }
            }
            Some(self.cycle[self.at.get()].to_string())
        }
        fn press(&self) -> Result<(), String> {
            if !self.deaf {
                self.reads.set(0);
                self.pending
                    .set(Some((self.at.get() + 1) % self.cycle.len()));
            }
            Ok(())
        }
    }

    const NEW: [&str; 4] = ["default", "acceptEdits", "plan", "auto"];
    const OLD: [&str; 3] = ["default", "acceptEdits", "plan"];

    #[test]
    fn tightens_through_the_whole_cycle_of_a_new_client() {
        let c = FakeClient::new(&NEW, "acceptEdits", 2);
        let d = drive("default", || c.read(), || c.press(), STEP_TIMEOUT);
        assert_eq!(d.end, DriveEnd::Reached);
        assert_eq!(d.now.as_deref(), Some("default"));
        assert_eq!(d.presses, 3);
    }

    #[test]
    fn an_old_client_takes_fewer_presses() {
        let c = FakeClient::new(&OLD, "acceptEdits", 1);
        let d = drive("default", || c.read(), || c.press(), STEP_TIMEOUT);
        assert_eq!((d.end, d.presses), (DriveEnd::Reached, 2));
        let c = FakeClient::new(&OLD, "default", 0);
        let d = drive("plan", || c.read(), || c.press(), STEP_TIMEOUT);
        assert_eq!((d.end, d.presses), (DriveEnd::Reached, 2));
    }

    #[test]
    fn already_there_presses_nothing() {
        let c = FakeClient::new(&NEW, "plan", 0);
        let d = drive("plan", || c.read(), || panic!("pressed"), STEP_TIMEOUT);
        assert_eq!((d.end, d.presses), (DriveEnd::Reached, 0));
    }

    #[test]
    fn a_mode_outside_the_cycle_ends_where_it_started() {
        let c = FakeClient::new(&NEW, "acceptEdits", 0);
        let d = drive("bypassPermissions", || c.read(), || c.press(), STEP_TIMEOUT);
        assert_eq!(d.end, DriveEnd::NotInCycle);
        assert_eq!(d.now.as_deref(), Some("acceptEdits"));
        assert_eq!(d.presses, 4);
    }

    #[test]
    fn a_client_that_does_not_answer_is_reported_not_assumed() {
        let mut c = FakeClient::new(&NEW, "acceptEdits", 0);
        c.deaf = true;
        let d = drive(
            "default",
            || c.read(),
            || c.press(),
            Duration::from_millis(100),
        );
        assert_eq!(d.end, DriveEnd::NoAnswer);
        assert_eq!(d.now.as_deref(), Some("acceptEdits"));
    }

    #[test]
    fn a_key_that_cannot_be_typed_fails() {
        let c = FakeClient::new(&NEW, "acceptEdits", 0);
        let d = drive(
            "default",
            || c.read(),
            || Err("no pane".to_string()),
            STEP_TIMEOUT,
        );
        assert_eq!(d.end, DriveEnd::Failed("no pane".into()));
    }
}
