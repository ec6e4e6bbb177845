//! When a host's ssh master is made again although it answers its check: connections through
//! it that never carried the relay's hello. A master can answer `ssh -O check` and open
//! sessions on the host (sshd starts the relay) while no byte of a session reaches the other
//! end: a loaded run of the link's chaos test met one after a partition, and every later
//! connection ended the same way (the relay waited 4 s for the lead's hello and gave up)
//! until the test's deadline. [`EMPTY_STARTS_LIMIT`] such connections in a row, and the lead
//! ends that master ([`super::Connection::close`]); the next connection makes a new one (a
//! new TCP connection and sshd). A refusal, a stop, or a connection that opened resets the
//! count: those say nothing bad of the master.

use std::time::Duration;

use teamlead_relay::{DriveError, End, Ended};

/// Connections in a row that carried nothing before the master is replaced.
pub const EMPTY_STARTS_LIMIT: u32 = 2;

/// How long a connection must have waited for the relay's hello to count as empty: most of the
/// relay's own wait for the lead's ([`teamlead_relay::session::SILENCE_LIMIT`], 4 s). A relay
/// that is missing or fails at once ends its connection within moments; that is the host's
/// fault, told as such, and a new master would not mend it.
pub const EMPTY_AFTER: Duration = Duration::from_secs(3);

/// How one connection through the master ended, as far as the master is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartEnd {
    /// The hellos went through: the master carries data.
    Opened,
    /// It ended before the relay's hello, by silence, a broken pipe or the end of its
    /// output, after waiting [`EMPTY_AFTER`] or more: nothing went through.
    Empty,
    /// Anything else (a refusal, a stop, the lead's own state): says nothing of the master.
    Other,
}

impl StartEnd {
    /// Reads how a connection ended: `opened` when the relay's hello came, `lasted` from its
    /// start to its end.
    pub fn of(opened: bool, lasted: Duration, result: &Result<Ended, DriveError>) -> StartEnd {
        if opened {
            return StartEnd::Opened;
        }
        let waited = lasted >= EMPTY_AFTER;
        match result {
            Ok(Ended::Link(End::Silent) | Ended::Closed) if waited => StartEnd::Empty,
            Err(DriveError::Write(_) | DriveError::Read(_)) if waited => StartEnd::Empty,
            _ => StartEnd::Other,
        }
    }
}

/// Counts connections that carried nothing, in a row.
#[derive(Debug, Default)]
pub struct EmptyStarts {
    in_a_row: u32,
}

impl EmptyStarts {
    /// Records how a connection ended; true when the master is to be ended now (the count
    /// then starts over).
    pub fn record(&mut self, end: StartEnd) -> bool {
        match end {
            StartEnd::Empty => self.in_a_row += 1,
            StartEnd::Opened | StartEnd::Other => self.in_a_row = 0,
        }
        if self.in_a_row >= EMPTY_STARTS_LIMIT {
            self.in_a_row = 0;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broken_pipe() -> Result<Ended, DriveError> {
        Err(DriveError::Write(std::io::Error::from(
            std::io::ErrorKind::BrokenPipe,
        )))
    }

    const LONG: Duration = Duration::from_secs(4);

    #[test]
    fn two_empty_connections_in_a_row_end_the_master_and_anything_between_resets_the_count() {
        let mut starts = EmptyStarts::default();
        assert!(!starts.record(StartEnd::of(false, LONG, &broken_pipe())));
        assert!(starts.record(StartEnd::of(false, LONG, &Ok(Ended::Link(End::Silent)))));
        // Counted afresh after a reset.
        assert!(!starts.record(StartEnd::of(false, LONG, &Ok(Ended::Closed))));
        assert!(!starts.record(StartEnd::of(true, LONG, &broken_pipe())));
        assert!(!starts.record(StartEnd::of(false, LONG, &broken_pipe())));
        assert!(!starts.record(StartEnd::of(false, LONG, &Ok(Ended::Stopped))));
        assert!(!starts.record(StartEnd::of(false, LONG, &broken_pipe())));
        assert!(starts.record(StartEnd::of(false, LONG, &broken_pipe())));
    }

    /// A relay that is missing on the host ends at once, again and again: the master is not
    /// to blame and stays.
    #[test]
    fn connections_that_end_at_once_leave_the_master_alone() {
        let mut starts = EmptyStarts::default();
        let quick = Duration::from_millis(40);
        for _ in 0..5 {
            assert!(!starts.record(StartEnd::of(false, quick, &Ok(Ended::Closed))));
            assert!(!starts.record(StartEnd::of(false, quick, &broken_pipe())));
        }
    }

    #[test]
    fn a_refusal_says_nothing_of_the_master() {
        let refusal = teamlead_relay::Refusal {
            why: "an older relay".into(),
            fix: "install".into(),
        };
        let refused = Ok(Ended::Link(End::RefusedByPeer(refusal)));
        assert_eq!(StartEnd::of(false, LONG, &refused), StartEnd::Other);
    }
}
