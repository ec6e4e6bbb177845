//! The shutdown the lead asked of one teammate, while it waits for the answer: the request's
//! id, since when, until when the lead waits (`shutdown-timeout`), and whether it then kills
//! the teammate (`--force`).

/// A teammate's shutdown wait (empty: none asked, or its answer came).
#[derive(Debug, Clone, Default)]
pub struct ShutdownWait {
    /// The `requestId` of the shutdown the lead sent.
    request: Option<String>,
    /// When it was asked (epoch ms, for the elapsed time shown).
    since_ms: Option<u64>,
    /// When the lead stops waiting: it then says how to force the shutdown, or kills the
    /// teammate when `force` is set.
    deadline: Option<tokio::time::Instant>,
    /// `/shutdown NAME --force` (or the config's `shutdown-force`).
    force: bool,
}

impl ShutdownWait {
    /// The lead sent shutdown `request` at `since_ms`, and waits until `deadline`.
    pub fn begin(
        &mut self,
        request: String,
        since_ms: u64,
        deadline: tokio::time::Instant,
        force: bool,
    ) {
        *self = Self {
            request: Some(request),
            since_ms: Some(since_ms),
            deadline: Some(deadline),
            force,
        };
    }

    /// Is a shutdown asked and unanswered?
    pub fn is_waiting(&self) -> bool {
        self.request.is_some()
    }

    /// The id of the shutdown asked, while it waits.
    pub fn request(&self) -> Option<&str> {
        self.request.as_deref()
    }

    /// Since when it waits (epoch ms).
    pub fn since_ms(&self) -> Option<u64> {
        self.request.as_ref().and(self.since_ms)
    }

    /// The wait for `request` ends (it was refused, or could not be sent): whether it was
    /// that one (another asked since stays).
    pub fn end(&mut self, request: &str) -> bool {
        if self.request.as_deref() != Some(request) {
            return false;
        }
        self.request = None;
        true
    }

    /// When the lead stops waiting, while it waits.
    pub fn deadline(&self) -> Option<tokio::time::Instant> {
        self.request.as_ref().and(self.deadline)
    }

    /// Kill at the deadline (`/shutdown NAME --force` after the request went): whether a
    /// shutdown waits.
    pub fn force(&mut self) -> bool {
        self.force |= self.is_waiting();
        self.is_waiting()
    }

    /// The deadline passed at `now`: taken (the lead says so once), with whether to kill.
    pub fn take_due(&mut self, now: tokio::time::Instant) -> Option<bool> {
        self.deadline().filter(|d| *d <= now)?;
        self.deadline = None;
        Some(self.force)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_wait_ends_only_for_its_own_request_and_is_due_once() {
        let now = tokio::time::Instant::now();
        let mut wait = ShutdownWait::default();
        assert!(!wait.force(), "nothing asked: nothing to force");
        wait.begin(
            "shutdown-1@a".into(),
            5,
            now + Duration::from_secs(1),
            false,
        );
        assert!(wait.is_waiting() && wait.since_ms() == Some(5));
        assert_eq!(wait.take_due(now), None, "not yet");
        assert!(wait.force());
        assert_eq!(wait.take_due(now + Duration::from_secs(2)), Some(true));
        assert_eq!(
            wait.take_due(now + Duration::from_secs(3)),
            None,
            "said once"
        );
        assert!(!wait.end("shutdown-2@a"), "another request");
        assert!(wait.is_waiting());
        assert!(wait.end("shutdown-1@a"));
        assert!(!wait.is_waiting() && wait.since_ms().is_none());
    }
}
