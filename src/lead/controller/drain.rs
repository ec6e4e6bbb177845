//! The lead's inbox, drained off the controller's loop. A thread of its own owns the
//! [`Poller`] and runs each drain; the loop only asks ([`InboxDrain::request`]) and later
//! receives what was drained ([`Drained`]) as one of its inputs. A lock on the inbox left by a
//! writer that died (up to Claude Code's 10 s staleness rule) or a slow disk therefore delays
//! the messages, never a command the user types. Requests made while a drain runs are merged
//! into the next one. Work that must follow a drain (a teammate that exited wrote its
//! `shutdown_approved` first) rides along with the request ([`After`]) and comes back with
//! the result, after the entries it drained.
//!
//! A request only takes the new entries (recorded in the delivery log, no lock, nothing
//! written to the inbox); the taken entries are removed from the inbox once it has been quiet
//! for [`QUIET_BEFORE_REMOVAL`] (by the requests, and by a look at the file just before:
//! events can reach the loop late), so the lead holds its inbox's lock between a teammate's
//! bursts of frames, not in the middle of one.
//!
//! A thread rather than a task that hands each drain to the blocking pool: a message's way
//! from the loop's request to its entries back on the loop is then two wake-ups (this thread,
//! the loop), not four (the task, a pool thread, the task again, the loop), which is most of
//! a message's time on the lead's side (`benches/lead_latency.rs`, `BENCH_PROBE=1`).

use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::store::StoreError;
use crate::store::inbox::Taken;

use crate::backend::executor::LivenessReport;
use crate::lead::poller::{Polled, Poller};

/// What the loop does once a drain is done, after acting on its entries.
#[derive(Debug)]
pub(crate) enum After {
    /// Nothing more (a file change, the safety poll).
    Nothing,
    /// Liveness reports held back until the inbox was read.
    Liveness(Vec<LivenessReport>),
}

/// One finished drain: what it found and what was waiting for it.
#[derive(Debug)]
pub(crate) struct Drained {
    pub polled: Polled,
    pub after: Vec<After>,
}

/// The handle the controller keeps; dropping it ends the thread after its current drain.
pub(crate) struct InboxDrain {
    requests: std_mpsc::Sender<After>,
    done: mpsc::UnboundedReceiver<Drained>,
}

impl InboxDrain {
    /// Starts the drain thread for `poller`. A thread that cannot be started leaves the
    /// drain deaf, which the lead cannot work without: the error says so.
    pub fn start(poller: Poller) -> InboxDrain {
        let (requests, requests_rx) = std_mpsc::channel();
        let (done_tx, done) = mpsc::unbounded_channel();
        let started = std::thread::Builder::new()
            .name("teamlead-inbox".into())
            .spawn(move || work(poller, &requests_rx, &done_tx));
        if let Err(e) = started {
            tracing::error!("cannot start the lead's inbox thread: {e}");
        }
        InboxDrain { requests, done }
    }

    /// Asks for a drain; `after` comes back with its result.
    pub fn request(&self, after: After) {
        let _ = self.requests.send(after);
    }

    /// The next finished drain (pending forever once the thread is gone).
    pub async fn next(&mut self) -> Option<Drained> {
        self.done.recv().await
    }
}

/// How long the lead's inbox must stay unchanged before the entries already taken are removed
/// from it (the only moment the lead holds its lock): a teammate's frames come in bursts (a
/// message, then a permission request ~0.1 s later), and Claude Code 2.1.45 loses a frame at
/// once when it finds the lock busy (docs/PROTOCOL.md §4).
const QUIET_BEFORE_REMOVAL: Duration = Duration::from_secs(1);

/// The longest taken entries stay in an inbox that never goes quiet.
const LONGEST_PENDING: Duration = Duration::from_secs(10);

fn work(
    mut poller: Poller,
    requests: &std_mpsc::Receiver<After>,
    done: &mpsc::UnboundedSender<Drained>,
) {
    // Since when taken entries wait in the file, and when it last changed.
    let mut pending: Option<(Instant, Instant)> = None;
    loop {
        let removal = pending
            .map(|(since, changed)| (changed + QUIET_BEFORE_REMOVAL).min(since + LONGEST_PENDING));
        let first = match removal {
            None => match requests.recv() {
                Ok(after) => Some(after),
                Err(_) => return,
            },
            Some(at) => match requests.recv_timeout(at.saturating_duration_since(Instant::now())) {
                Ok(after) => Some(after),
                Err(std_mpsc::RecvTimeoutError::Timeout) => None,
                Err(std_mpsc::RecvTimeoutError::Disconnected) => return,
            },
        };
        let mut after: Vec<After> = first.into_iter().collect();
        while let Ok(more) = requests.try_recv() {
            after.push(more);
        }
        let remove = after.is_empty();
        // Taken entries that waited their longest go even from an inbox that never goes quiet.
        let overdue = pending.is_some_and(|(since, _)| since.elapsed() >= LONGEST_PENDING);
        let (polled, taken) = if remove {
            remove_taken(&mut poller, overdue)
        } else {
            tracing::trace!(target: "teamlead::probe", "drain.woken");
            let taken = poller.take();
            tracing::trace!(target: "teamlead::probe", "drain.taken");
            taken
        };
        let now = Instant::now();
        pending = match (taken, pending) {
            (Taken::Pending, Some((since, _))) => Some((since, now)),
            (Taken::Pending, None) => Some((now, now)),
            _ => None,
        };
        let anything = !after.is_empty()
            || !polled.incoming.is_empty()
            || !polled.quarantined.is_empty()
            || !polled.recovered.is_empty()
            || polled.problem.is_some();
        if anything && done.send(Drained { polled, after }).is_err() {
            return;
        }
    }
}

/// The removal of taken entries, due by the loop's requests. Quiet by them; the file says
/// whether it still is. A burst whose change events have not reached the loop yet (a busy
/// loop on a loaded machine) is taken now, without the lock, and the removal waits for quiet
/// again: the lock is taken only right after a look that found nothing new.
fn remove_taken(poller: &mut Poller, overdue: bool) -> (Polled, Taken) {
    if !overdue {
        let (looked, taken) = poller.take();
        if !looked.incoming.is_empty() {
            return (looked, taken);
        }
    }
    let mut polled = poller.poll();
    let left = match &polled.problem {
        None => Taken::Empty,
        // Everything was taken before: a lock in the way only puts the removal off, nothing
        // to tell.
        Some(StoreError::LockTimeout { .. }) => {
            polled.problem = None;
            Taken::Pending
        }
        Some(_) => Taken::Pending,
    };
    (polled, left)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{InboxEntry, LEAD_NAME, Member, TeamFile};
    use crate::store::{self, Home};

    /// A teammate keeps writing to the lead's inbox but the loop hears of none of it (its
    /// change events are late): the removal, due a second after the one take it was asked
    /// for, must not take the inbox's lock in the middle of that burst.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_removal_waits_while_the_file_still_changes_though_no_request_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        let mut file = TeamFile::new("t", None, "/w");
        file.members.push(Member::new("worker", "t", "/w"));
        store::create_team(&home, &file).unwrap();
        store::inbox::append(&home, "t", LEAD_NAME, &InboxEntry::new("worker", "first")).unwrap();
        let mut drain = InboxDrain::start(Poller::open(&home, "t").unwrap());
        drain.request(After::Nothing);
        let first = drain.next().await.unwrap();
        assert_eq!(first.polled.incoming.len(), 1);
        // 1.6 s of writes, 100 ms apart, none of them told to the drain.
        for i in 0..16 {
            store::inbox::append(
                &home,
                "t",
                LEAD_NAME,
                &InboxEntry::new("worker", format!("more {i}")),
            )
            .unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let kept = store::inbox::read(&home, "t", LEAD_NAME)
            .unwrap()
            .entries
            .len();
        assert_eq!(
            kept, 17,
            "the lead removed entries (holding the inbox's lock) while the burst went on"
        );
        // Once the file is quiet, what was taken goes.
        let deadline = Instant::now() + Duration::from_secs(10);
        while !store::inbox::read(&home, "t", LEAD_NAME)
            .unwrap()
            .entries
            .is_empty()
        {
            assert!(Instant::now() < deadline, "never removed once quiet");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}
