//! The lead's inbox, drained off the controller's loop. A task owns the [`Poller`] and runs
//! each drain on the blocking pool; the loop only asks ([`InboxDrain::request`]) and later
//! receives what was drained ([`Drained`]) as one of its inputs. A lock on the inbox left by a
//! writer that died (up to Claude Code's 10 s staleness rule) or a slow disk therefore delays
//! the messages, never a command the user types. Requests made while a drain runs are merged
//! into the next one. Work that must follow a drain (a teammate that exited wrote its
//! `shutdown_approved` first) rides along with the request ([`After`]) and comes back with
//! the result, after the entries it drained.

use tokio::sync::mpsc;

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
    done: mpsc::UnboundedReceiver<Drained>,
}

impl InboxDrain {
    /// Starts the drain task for `poller` (on the current tokio runtime).
    pub fn start(poller: Poller) -> InboxDrain {
        let (requests, requests_rx) = mpsc::unbounded_channel();
        let (done_tx, done) = mpsc::unbounded_channel();
        tokio::spawn(work(poller, requests_rx, done_tx));
        InboxDrain { requests, done }
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

async fn work(
    mut poller: Poller,
    mut requests: mpsc::UnboundedReceiver<After>,
    done: mpsc::UnboundedSender<Drained>,
) {
    while let Some(first) = requests.recv().await {
        let mut after = vec![first];
        while let Ok(more) = requests.try_recv() {
            after.push(more);
        }
        let Ok((back, polled)) = tokio::task::spawn_blocking(move || {
            let polled = poller.poll();
            (poller, polled)
        })
        .await
        else {
            return;
        };
        poller = back;
        if done.send(Drained { polled, after }).is_err() {
            return;
        }
    }
}
