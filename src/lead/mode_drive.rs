//! Bringing a `claude` teammate to a permission mode the way the person would: by pressing
//! Claude Code's own mode key (Shift+Tab) in its pane, one press at a time, each confirmed by
//! what the client then shows: the mode in its pane's status line ([`pane_mode`]), or where the
//! pane cannot be read, the mode the client writes into its member entry of `config.json`
//! (2.1.45 can lose that write to its own unlocked `isActive` write at a turn's end, so the
//! screen comes first). Claude Code 2.1.329 and later ignore
//! `mode_set_request`, and a `setMode` answer can only ride on a request, so this is the one
//! way to *tighten* such a teammate (PROTOCOL.md 7). The cycle differs per version (2.1.45:
//! default → acceptEdits → plan → default; 2.1.332: default → acceptEdits → plan → auto →
//! default; `bypassPermissions` only for a client started with it), so nothing here assumes
//! an order: it presses until the client reports the target, and stops where it started when a
//! whole cycle went by without it. Blocking (terminal CLI calls, file reads, short sleeps): it
//! runs on the blocking pool, never on the controller's loop.

use std::time::{Duration, Instant};

/// How long one press may take to show before the client counts as not answering. A quiet
/// machine's node client needs well under a second; on a loaded 2-core machine 2.1.45 was
/// seen to take more than 4 s (the lead said "it did not answer its mode key" and the pane
/// then showed the mode), so the wait is generous: it runs off the loop and only delays the
/// note.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(12);

/// The most presses one drive makes (a cycle is at most five modes long).
pub const MAX_PRESSES: u32 = 8;

/// The modes every client's mode key offers (2.1.45 and 2.1.332 alike).
const IN_EVERY_CYCLE: [&str; 3] = ["default", "acceptEdits", "plan"];

/// How often the mode is read while waiting for a press to show.
const POLL: Duration = Duration::from_millis(40);

/// A new reading counts once it reads the same again this much later: a screen caught while
/// it redraws its status line (2.1.45 shows no mode at all in default) is not a mode.
const SETTLE: Duration = Duration::from_millis(150);

/// The mode a Claude Code pane shows in its status line (the last lines of its screen), as
/// `config.json` names it; `None` when the screen does not say (not Claude Code's, or not
/// drawn yet). Read on 2.1.45 and 2.1.332: `⏵⏵ accept edits on`, `⏸ plan mode on`,
/// `⏵⏵ auto mode on`, `⏵⏵ bypass permissions on`, `⏸ manual mode on` (2.1.332's default);
/// 2.1.45 shows no mode in default, only `? for shortcuts`, and a notice can take its whole
/// status line (`Claude Code has switched from npm to native installer…` in a narrow pane):
/// then the screen does not say.
pub fn pane_mode(lines: &[String]) -> Option<&'static str> {
    let bottom = &lines[lines.len().saturating_sub(3)..];
    const MARKS: [(&str, &str); 5] = [
        ("accept edits on", "acceptEdits"),
        ("plan mode on", "plan"),
        ("auto mode on", "auto"),
        ("bypass permissions on", "bypassPermissions"),
        ("manual mode on", "default"),
    ];
    for line in bottom.iter().rev() {
        if let Some((_, mode)) = MARKS.iter().find(|(mark, _)| line.contains(mark)) {
            return Some(mode);
        }
    }
    bottom
        .iter()
        .any(|l| l.contains("? for shortcuts"))
        .then_some("default")
}

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
    /// Every mode read along the way, in order (for the log).
    pub seen: Vec<String>,
}

/// Presses the mode key (`press`) until `read` (the mode the client reports) says `target`.
pub fn drive<E: std::fmt::Display>(
    target: &str,
    mut read: impl FnMut() -> Option<String>,
    mut press: impl FnMut() -> Result<(), E>,
    step_timeout: Duration,
) -> Drive {
    let started = Instant::now();
    let seen = std::cell::RefCell::new(Vec::new());
    let mut read = || {
        let r = read();
        seen.borrow_mut()
            .push(r.clone().unwrap_or_else(|| "?".to_string()));
        r
    };
    let done = |end, now, presses| Drive {
        end,
        now,
        presses,
        took: started.elapsed(),
        seen: seen.borrow().clone(),
    };
    let Some(first) = settled(&mut read, None) else {
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
        // Back where it started without passing the target: the client does not offer it.
        // Not for a mode every client's cycle has: there, the first reading was a screen
        // caught in a passing state (2.1.45 shows `? for shortcuts`, as in default, while it
        // redraws), and stopping would leave the teammate in a mode nobody asked for; the
        // next round passes the target (MAX_PRESSES is more than a cycle).
        if presses > 0 && current == first && !IN_EVERY_CYCLE.contains(&target) {
            return done(DriveEnd::NotInCycle, Some(current), presses);
        }
        if presses >= MAX_PRESSES {
            return done(DriveEnd::NotInCycle, Some(current), presses);
        }
        if let Err(e) = press() {
            return done(DriveEnd::Failed(e.to_string()), Some(current), presses);
        }
        presses += 1;
        let deadline = Instant::now() + step_timeout;
        loop {
            match read() {
                Some(now)
                    if now != current && settled(&mut read, Some(&now)).as_ref() == Some(&now) =>
                {
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

/// A reading that holds: read again after [`SETTLE`] until two readings agree (at most a few
/// times). `first` is a reading just taken.
fn settled(read: &mut impl FnMut() -> Option<String>, first: Option<&String>) -> Option<String> {
    let mut last = match first {
        Some(f) => Some(f.clone()),
        None => read(),
    };
    for _ in 0..5 {
        std::thread::sleep(SETTLE);
        let again = read();
        if again == last {
            return again;
        }
        last = again;
    }
    last
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
        fn press(&self) -> Result<(), std::convert::Infallible> {
            if !self.deaf {
                self.reads.set(0);
                self.pending
                    .set(Some((self.at.get() + 1) % self.cycle.len()));
            }
            Ok(())
        }
    }

    fn screen(text: &str) -> Vec<String> {
        text.lines()
            .map(|l| l.trim_end().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn the_status_line_says_the_mode() {
        // 2.1.332, as captured from a real teammate pane.
        let new = |status: &str| {
            screen(&format!(
                "● ok done\n✻ Crunched for 0s\n{}\n❯ \n{}\n  {status}",
                "─".repeat(40),
                "─".repeat(40)
            ))
        };
        assert_eq!(
            pane_mode(&new(
                "⏵⏵ accept edits on (shift+tab to cycle) · ← for agents"
            )),
            Some("acceptEdits")
        );
        assert_eq!(
            pane_mode(&new("⏸ plan mode on (shift+tab to cycle)")),
            Some("plan")
        );
        assert_eq!(
            pane_mode(&new("⏵⏵ auto mode on (shift+tab to cycle)")),
            Some("auto")
        );
        assert_eq!(
            pane_mode(&new("⏸ manual mode on · ? for shortcuts")),
            Some("default")
        );
        assert_eq!(
            pane_mode(&new("⏵⏵ bypass permissions on (shift+tab to cycle)")),
            Some("bypassPermissions")
        );
        // 2.1.45: a notice shares the status line; default shows no mode at all.
        let old = |status: &str| {
            screen(&format!(
                "@team-lead❯\n● Done.\n{}\n❯ \n{}\n{status}",
                "─".repeat(40),
                "─".repeat(40)
            ))
        };
        assert_eq!(
            pane_mode(&old(
                "  ⏵⏵ accept edits on (shift+tab t… Claude Code has switched from npm"
            )),
            Some("acceptEdits")
        );
        assert_eq!(
            pane_mode(&old(
                "  ? for shortcuts                  Claude Code has switched"
            )),
            Some("default")
        );
        // A notice that took the whole status line: the screen does not say.
        assert_eq!(
            pane_mode(&old(
                "   Claude Code has switched from npm to native installer. Run"
            )),
            None
        );
        assert_eq!(pane_mode(&old("")), None);
        // Not Claude Code's screen (a shell, a starting program).
        assert_eq!(pane_mode(&screen("$ ls\nfile\n$")), None);
        assert_eq!(pane_mode(&[]), None);
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
        let d = drive(
            "plan",
            || c.read(),
            || -> Result<(), std::convert::Infallible> { panic!("pressed") },
            STEP_TIMEOUT,
        );
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
    fn a_screen_caught_mid_redraw_is_not_a_mode() {
        // acceptEdits → plan, with one reading of "default" (no mark) while the status line
        // redraws: the drive must not stop there.
        let readings = std::cell::RefCell::new(vec![
            "acceptEdits",
            "acceptEdits",
            "acceptEdits", // settled start
            "default",
            "plan",
            "plan",
            "plan", // after press 1: a blank status line, then plan
            "plan",
        ]);
        let read = || {
            let mut r = readings.borrow_mut();
            let next = if r.len() > 1 { r.remove(0) } else { r[0] };
            Some(next.to_string())
        };
        let d = drive(
            "default",
            read,
            || Ok::<(), std::convert::Infallible>(()),
            Duration::from_millis(900),
        );
        assert_ne!(d.end, DriveEnd::Reached, "{d:?}");
        assert_eq!(d.now.as_deref(), Some("plan"));
    }

    #[test]
    fn a_first_reading_caught_mid_redraw_does_not_end_the_drive_elsewhere() {
        // 2.1.45 in acceptEdits, its status line caught showing `? for shortcuts` (read as
        // default) while the lead asks for acceptEdits: presses go plan, default — "back where
        // it started" by the readings — and on to acceptEdits, where it was asked to be.
        let c = FakeClient::new(&OLD, "acceptEdits", 0);
        let misread = std::cell::Cell::new(4);
        let read = || {
            let now = c.read();
            if misread.get() > 0 {
                misread.set(misread.get() - 1);
                return Some("default".to_string());
            }
            now
        };
        let d = drive("acceptEdits", read, || c.press(), STEP_TIMEOUT);
        assert_eq!(d.end, DriveEnd::Reached, "{d:?}");
        assert_eq!(c.read().as_deref(), Some("acceptEdits"));
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
