//! The lock's retry backoff ([`super::next_wait`]), decided from the time already waited (the
//! lock is taken on blocking threads, on the real clock, so the decision is tested without
//! waiting): it doubles from 5 ms, is capped at 100 ms (10 ms while a live teamlead process
//! holds the lock), is jittered by half either way, and after a second of waiting polls every
//! 1–10 ms.

use std::time::Duration;

use super::{
    AGED_POLL_MAX, AGED_POLL_MIN, FIRST_BACKOFF, MAX_BACKOFF, PATIENT_FOR, TEAMLEAD_MAX_BACKOFF,
    next_wait,
};

/// The waits of `n` looks in a row, all `waited` into the wait.
fn waits(n: usize, waited: Duration, teamlead: bool) -> Vec<Duration> {
    let mut backoff = FIRST_BACKOFF;
    (0..n)
        .map(|_| next_wait(waited, &mut backoff, teamlead))
        .collect()
}

fn within_jitter(wait: Duration, full: Duration) -> bool {
    wait >= full.mul_f64(0.5) && wait <= full.mul_f64(1.5)
}

#[test]
fn the_backoff_doubles_from_five_ms_and_is_capped() {
    let full = [5, 10, 20, 40, 80, 100, 100, 100].map(Duration::from_millis);
    assert_eq!((full[0], full[7]), (FIRST_BACKOFF, MAX_BACKOFF));
    for _ in 0..50 {
        let got = waits(8, Duration::ZERO, false);
        for (wait, full) in got.iter().zip(full) {
            assert!(within_jitter(*wait, full), "waits {got:?}");
        }
    }
}

#[test]
fn a_live_teamlead_holder_is_looked_at_every_ten_ms_at_most() {
    for _ in 0..50 {
        let got = waits(8, Duration::ZERO, true);
        for (i, wait) in got.iter().enumerate() {
            let full = if i == 0 {
                FIRST_BACKOFF
            } else {
                TEAMLEAD_MAX_BACKOFF
            };
            assert!(within_jitter(*wait, full), "waits {got:?}");
        }
    }
}

#[test]
fn a_long_waiter_polls_often() {
    for teamlead in [false, true] {
        for wait in waits(50, PATIENT_FOR, teamlead) {
            assert!((AGED_POLL_MIN..AGED_POLL_MAX).contains(&wait), "{wait:?}");
        }
    }
}

/// A lock directory's identity, as a waiter sees it.
fn lock(ino: u64, mtime: i64) -> super::Identity {
    super::Identity {
        dev: 1,
        ino,
        mtime: (mtime, 0),
    }
}

/// The lock in the way, just taken (its mtime is now).
fn in_the_way(id: super::Identity) -> Option<(bool, super::Identity, std::time::SystemTime)> {
    Some((false, id, std::time::SystemTime::now()))
}

#[test]
fn a_lock_that_changes_hands_keeps_a_waiter_waiting() {
    use super::{PastDeadline, past_deadline};
    let first = lock(10, 100);
    // The first deadline: wait on until the lock in the way would be stale.
    assert!(matches!(
        past_deadline(
            None,
            in_the_way(first),
            false,
            false,
            Duration::from_secs(10)
        ),
        PastDeadline::WaitOn { .. }
    ));
    // At the pushed-back deadline another writer holds it: others made progress, wait on
    // (this used to fail the append: 32 writers on a loaded machine lost messages).
    let second = lock(11, 120);
    assert!(matches!(
        past_deadline(
            Some(Some(first)),
            in_the_way(second),
            false,
            false,
            Duration::from_secs(21)
        ),
        PastDeadline::WaitOn { .. }
    ));
    // The same lock still there: kept by its holder, give up.
    assert_eq!(
        past_deadline(
            Some(Some(second)),
            in_the_way(second),
            false,
            false,
            Duration::from_secs(32)
        ),
        PastDeadline::GiveUp
    );
    // Refreshed by a holder that is alive: give up at once.
    assert_eq!(
        past_deadline(
            Some(Some(first)),
            in_the_way(second),
            true,
            false,
            Duration::from_secs(15)
        ),
        PastDeadline::GiveUp
    );
    // The same lock in the way again, but a look in between saw it change hands (a new lock
    // of a reused inode): others made progress, wait on.
    assert!(matches!(
        past_deadline(
            Some(Some(second)),
            in_the_way(second),
            false,
            true,
            Duration::from_secs(32)
        ),
        PastDeadline::WaitOn { .. }
    ));
    // Never forever: past GIVE_UP_AFTER even a lock that changes hands ends the wait.
    assert_eq!(
        past_deadline(
            Some(Some(first)),
            in_the_way(second),
            false,
            false,
            super::GIVE_UP_AFTER
        ),
        PastDeadline::GiveUp
    );
}
