//! The lead's inbox, drained off the controller's loop. A task owns the [`Poller`] and runs
//! each drain on the blocking pool; the loop only asks ([`InboxDrain::request`]) and later
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
//! A task and the blocking pool rather than a thread of its own (tried: two wake-ups fewer per
//! message, about 0.1 ms): tokio's paused test clock moves on when no task runs, and a
//! thread's work does not hold it the way a blocking-pool job does, so the timer tests of the
//! lead could see a message a whole period late.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::protocol::InboxEntry;
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

/// The handle the controller keeps.
pub(crate) struct InboxDrain {
    requests: mpsc::UnboundedSender<After>,
    handed: mpsc::UnboundedSender<InboxEntry>,
    done: mpsc::UnboundedReceiver<Drained>,
}

impl InboxDrain {
    /// Starts the drain task for `poller` (on the current tokio runtime).
    pub fn start(poller: Poller) -> InboxDrain {
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (handed, handed_rx) = mpsc::unbounded_channel();
        let (done_tx, done) = mpsc::unbounded_channel();
        tokio::spawn(work(poller, requests_rx, handed_rx, done_tx));
        InboxDrain {
            requests,
            handed,
            done,
        }
    }

    /// Where entries for the lead's inbox are handed over before they are in it (a host's
    /// link, as it reads them: [`crate::backend::executor::LeadEntrySink`]); callable from
    /// any thread, never blocks. Each comes back as a drain of its own, noted in the delivery
    /// log, and the file's take passes it by.
    pub fn hand_in(&self) -> crate::backend::executor::LeadEntrySink {
        let handed = self.handed.clone();
        std::sync::Arc::new(move |entry: InboxEntry| {
            let _ = handed.send(entry);
        })
    }

    /// Asks for a drain; `after` comes back with its result.
    pub fn request(&self, after: After) {
        let _ = self.requests.send(after);
    }

    /// The next finished drain (pending forever once the task is gone).
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

async fn work(
    mut poller: Poller,
    mut requests: mpsc::UnboundedReceiver<After>,
    mut handed: mpsc::UnboundedReceiver<InboxEntry>,
    done: mpsc::UnboundedSender<Drained>,
) {
    // Since when taken entries wait in the file, and when it last changed.
    let mut pending: Option<(Instant, Instant)> = None;
    loop {
        let removal = pending
            .map(|(since, changed)| (changed + QUIET_BEFORE_REMOVAL).min(since + LONGEST_PENDING));
        let first = tokio::select! {
            biased;
            Some(entry) = handed.recv() => {
                let mut entries = vec![entry];
                while let Ok(more) = handed.try_recv() {
                    entries.push(more);
                }
                let Some((back, polled)) = on_pool(poller, |p| p.take_handed(entries)).await
                else {
                    return;
                };
                poller = back;
                if !polled.incoming.is_empty()
                    && done.send(Drained { polled, after: Vec::new() }).is_err()
                {
                    return;
                }
                continue;
            }
            request = requests.recv() => match request {
                Some(after) => Some(after),
                None => return,
            },
            () = sleep_until(removal), if removal.is_some() => None,
        };
        let mut after: Vec<After> = first.into_iter().collect();
        while let Ok(more) = requests.try_recv() {
            after.push(more);
        }
        let remove = after.is_empty();
        // Taken entries that waited their longest go even from an inbox that never goes quiet.
        let overdue = pending.is_some_and(|(since, _)| since.elapsed() >= LONGEST_PENDING);
        let drained = on_pool(poller, move |p| {
            tracing::trace!(target: "teamlead::probe", "drain.woken");
            if remove {
                remove_taken(p, overdue)
            } else {
                let taken = p.take();
                tracing::trace!(target: "teamlead::probe", "drain.taken");
                taken
            }
        });
        let Some((back, (polled, taken))) = drained.await else {
            return;
        };
        poller = back;
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

/// `f` run on the poller on the blocking pool; the poller comes back with its result (`None`:
/// the job could not run, which ends the drain).
async fn on_pool<T: Send + 'static>(
    mut poller: Poller,
    f: impl FnOnce(&mut Poller) -> T + Send + 'static,
) -> Option<(Poller, T)> {
    tokio::task::spawn_blocking(move || {
        let out = f(&mut poller);
        (poller, out)
    })
    .await
    .ok()
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

/// Sleeps until `at` (forever when `None`; the caller guards that branch).
async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{InboxEntry, LEAD_NAME, Member, TeamFile};
    use crate::store::{self, Home};

    /// Team `t` on temporary files with `member`, `before` run on its home, then the lead's
    /// drain started on it (keep the folder bound).
    fn team_with(
        member: &str,
        before: impl FnOnce(&Home),
    ) -> (tempfile::TempDir, Home, InboxDrain) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        let mut file = TeamFile::new("t", None, "/w");
        file.members.push(Member::new(member, "t", "/w"));
        store::create_team(&home, &file).unwrap();
        before(&home);
        let drain = InboxDrain::start(Poller::open(&home, "t").unwrap());
        (dir, home, drain)
    }

    /// A teammate keeps writing to the lead's inbox but the loop hears of none of it (its
    /// change events are late): the removal, due a second after the one take it was asked
    /// for, must not take the inbox's lock in the middle of that burst.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_removal_waits_while_the_file_still_changes_though_no_request_says_so() {
        let (_dir, home, mut drain) = team_with("worker", |home| {
            store::inbox::append(home, "t", LEAD_NAME, &InboxEntry::new("worker", "first"))
                .unwrap();
        });
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

    /// A host's link hands the lead a teammate's entry as it reads it, then appends it to the
    /// lead's inbox: the lead has it once, from the hand-over, and its take of the file (and
    /// a hand-over of the same entry again, a frame sent again) passes it by.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_entry_handed_over_is_delivered_once_though_the_file_has_it_too() {
        let (_dir, home, mut drain) = team_with("remote", |_| {});
        let mut entry = InboxEntry::new("remote", "from another host");
        entry.relay_id = Some("6a1d1c52-93c8-8b1e-a1b0-000000000001".into());
        let hand_in = drain.hand_in();
        hand_in(entry.clone());
        let handed = drain.next().await.unwrap();
        let texts: Vec<&str> = handed
            .polled
            .incoming
            .iter()
            .map(|i| i.entry().text.as_str())
            .collect();
        assert_eq!(texts, vec!["from another host"]);
        store::inbox::append(&home, "t", LEAD_NAME, &entry).unwrap();
        hand_in(entry.clone());
        drain.request(After::Nothing);
        let looked = drain.next().await.unwrap();
        assert!(
            looked.polled.incoming.is_empty(),
            "delivered again: {:?}",
            looked.polled.incoming
        );
        assert_eq!(looked.after.len(), 1);
    }
}
