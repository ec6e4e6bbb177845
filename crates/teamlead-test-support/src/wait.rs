//! The one wait of the tests: poll a condition with a deadline, never sleep a fixed time and
//! hope. [`wait_until`] fails the test with what it waited for and what the state was;
//! [`poll_until`] only says whether the condition came.

use std::time::{Duration, Instant};

/// How often a condition is looked at.
const EVERY: Duration = Duration::from_millis(20);

/// Polls `cond` until it holds; panics after `within` with `what` and whatever `explain` says
/// about the state. Returns how long it took.
pub fn wait_until(
    what: &str,
    within: Duration,
    mut cond: impl FnMut() -> bool,
    explain: impl Fn() -> String,
) -> Duration {
    let start = Instant::now();
    loop {
        if cond() {
            return start.elapsed();
        }
        if start.elapsed() > within {
            panic!(
                "timed out after {within:?} waiting for {what}\n{}",
                explain()
            );
        }
        std::thread::sleep(EVERY);
    }
}

/// Polls `cond` until it holds (`true`) or `within` has passed (`false`, after a last look).
pub fn poll_until(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(EVERY);
    }
    cond()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_that_comes_is_waited_for_and_one_that_never_does_fails_with_the_state() {
        let mut n = 0;
        wait_until(
            "the third look",
            Duration::from_secs(5),
            || {
                n += 1;
                n == 3
            },
            String::new,
        );
        assert_eq!(n, 3);
        assert!(!poll_until(Duration::from_millis(60), || false));
        let failed = std::panic::catch_unwind(|| {
            wait_until(
                "never",
                Duration::from_millis(50),
                || false,
                || "the state".into(),
            )
        });
        let message = failed.unwrap_err();
        let text = message.downcast_ref::<String>().unwrap();
        assert!(
            text.contains("waiting for never") && text.contains("the state"),
            "{text}"
        );
    }
}
