//! What a waiter has seen of the locks in its way, to tell a lock that is *kept* (one holder,
//! alive, touching it every [`super::REFRESH_EVERY`]) from a lock that keeps changing hands
//! (others making progress). A file system reuses a removed directory's inode at once: under
//! contention each new `<target>.lock` often has the inode of the one before, so "same device
//! and inode, mtime ~5 s later" alone is not a refresh. A 100-teammate spawn met exactly that:
//! a waiter past its deadline took a new lock of the same inode, 4.2 s younger, for the old one
//! refreshed, and gave up (`still locked … after the timeout`) while the lock changed hands
//! every few milliseconds. A refresh is only a refresh when every look since the deadline was
//! pushed back saw that one lock: a gap (the way free) or a change of mtime smaller than a
//! refresh's is a hand-off.

use super::REFRESH_EVERY;
use super::holder::Identity;

/// The smallest mtime step a refresh makes (the refresher touches a lock `REFRESH_EVERY` after
/// its last touch, looking every 500 ms).
const REFRESH_STEP_SECS: i64 = REFRESH_EVERY.as_secs() as i64 - 1;

/// The looks of one waiter since its deadline was last pushed back.
#[derive(Debug, Default)]
pub(super) struct Sightings {
    last: Option<Identity>,
    handed_on: bool,
}

impl Sightings {
    /// One look: `now` the lock in the way (`None`: the way was free, or changed just then).
    pub fn saw(&mut self, now: Option<Identity>) {
        match (self.last, now) {
            (Some(was), Some(now)) if was != now && !refresh_of(&was, &now) => {
                self.handed_on = true
            }
            (Some(_), None) => self.handed_on = true,
            _ => {}
        }
        self.last = now;
    }

    /// The deadline was pushed back: hand-offs are counted afresh from here.
    pub fn restart(&mut self) {
        self.handed_on = false;
    }

    /// The lock changed hands since the last [`Sightings::restart`].
    pub fn handed_on(&self) -> bool {
        self.handed_on
    }

    /// `was` (in the way when the deadline was pushed back) has been kept and refreshed by its
    /// holder since: the lock in the way now is that directory, touched a refresh's step
    /// later, and no look in between saw another lock or none.
    pub fn refreshed(&self, was: &Identity, now: &Identity) -> bool {
        !self.handed_on && refresh_of(was, now)
    }
}

/// `now` is `was` touched by a refresh: the same directory, its mtime a refresh's step on.
fn refresh_of(was: &Identity, now: &Identity) -> bool {
    now.dev == was.dev && now.ino == was.ino && now.mtime.0 - was.mtime.0 >= REFRESH_STEP_SECS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lock(ino: u64, secs: i64, nanos: i64) -> Identity {
        Identity {
            dev: 1,
            ino,
            mtime: (secs, nanos),
        }
    }

    #[test]
    fn a_lock_kept_and_touched_by_its_holder_is_refreshed() {
        let was = lock(7, 100, 5);
        let mut seen = Sightings::default();
        seen.saw(Some(was));
        seen.restart();
        seen.saw(Some(was));
        let touched = lock(7, 105, 900);
        seen.saw(Some(touched));
        assert!(!seen.handed_on());
        assert!(seen.refreshed(&was, &touched));
    }

    /// What the 100-teammate spawn met: every new lock had the inode of the one before.
    #[test]
    fn new_locks_of_a_reused_inode_are_hand_offs_not_a_refresh() {
        let was = lock(7, 100, 5);
        let mut seen = Sightings::default();
        seen.saw(Some(was));
        seen.restart();
        for step in 1..=42 {
            seen.saw(Some(lock(7, 100 + step / 10, step * 1_000_000)));
        }
        let now = lock(7, 104, 558);
        seen.saw(Some(now));
        assert!(seen.handed_on());
        assert!(!seen.refreshed(&was, &now));
    }

    #[test]
    fn a_look_that_found_the_way_free_is_a_hand_off() {
        let was = lock(7, 100, 5);
        let mut seen = Sightings::default();
        seen.saw(Some(was));
        seen.restart();
        seen.saw(None);
        let now = lock(7, 105, 5);
        seen.saw(Some(now));
        assert!(!seen.refreshed(&was, &now));
        seen.restart();
        assert!(!seen.handed_on());
    }
}
