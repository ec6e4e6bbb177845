//! Store work off the controller's loop. Every read and write of the team's files the
//! controller makes (config.json, the task list, inboxes, the session record, what other
//! sessions left) runs on the blocking pool through the one [`StoreWorker`], in one of three
//! ways:
//!
//! - [`StoreWorker::submit`]: a background job in a [`Lane`]. Jobs of one lane run one after
//!   another in the order they were submitted (two commands on the same file apply in order);
//!   lanes run side by side. When the job is done, its continuation comes back to the loop as
//!   one of its inputs ([`StoreWorker::next`]) and runs there with the controller: that is
//!   where a command is acknowledged. A lock left by a writer that died (up to Claude Code's
//!   10 s staleness rule) therefore delays only the jobs of its own lane: the loop goes on
//!   with permission answers, messages and commands on other files.
//! - [`StoreWorker::wait`]: the same job in its lane, awaited by the loop (start-up, resume,
//!   spawn, quit: sequences that need the result before their next step).
//! - [`StoreWorker::read`]: a lock-free read awaited by the loop (a fresh team file before a
//!   decision), outside the lanes so it never waits behind a write.

use std::collections::HashMap;

use tokio::sync::{mpsc, oneshot};

use super::state::Controller;
use crate::store::{Home, StoreError};

/// Which files a job touches.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Lane {
    /// `config.json` (members, modes, hidden panes).
    Team,
    /// The task list (every task file, the list lock, the high-water mark).
    Tasks,
    /// One member's inbox.
    Inbox(String),
    /// The session record (`.teamlead/session.json`).
    Record,
    /// Re-reads of `config.json` (a repair takes its lock, so they have their own lane).
    TeamReads,
    /// Re-reads of the task list.
    TaskReads,
    /// What earlier sessions left behind (`/clean`).
    Leftovers,
    /// Keys typed into one teammate's pane (bringing a `claude` teammate to a mode), one
    /// sequence at a time.
    Keys(String),
    /// Reads of `claude` teammates' session transcripts.
    Transcripts,
    /// Git reads and merges of teammates' work (`/review`, `/merge`, `/queue`).
    Git,
}

/// What the loop runs once a job is done.
pub(crate) type Then = Box<dyn FnOnce(&mut Controller) + Send>;

type Job = Box<dyn FnOnce(&Home) -> Then + Send>;

/// The controller's one way to the store.
pub(crate) struct StoreWorker {
    home: Home,
    lanes: HashMap<Lane, mpsc::UnboundedSender<Job>>,
    done_tx: mpsc::UnboundedSender<Then>,
    done_rx: mpsc::UnboundedReceiver<Then>,
    /// Jobs submitted whose continuation has not run yet.
    in_flight: usize,
}

impl StoreWorker {
    /// A worker for `home` (lanes start on the current tokio runtime when first used).
    pub fn new(home: Home) -> StoreWorker {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        StoreWorker {
            home,
            lanes: HashMap::new(),
            done_tx,
            done_rx,
            in_flight: 0,
        }
    }

    /// Runs `work` in `lane` on the blocking pool; `then` runs on the loop with its result.
    pub fn submit<T: Send + 'static>(
        &mut self,
        lane: Lane,
        work: impl FnOnce(&Home) -> T + Send + 'static,
        then: impl FnOnce(&mut Controller, T) + Send + 'static,
    ) {
        let job: Job = Box::new(move |home| {
            let result = work(home);
            Box::new(move |c: &mut Controller| then(c, result))
        });
        self.in_flight += 1;
        if let Err(mpsc::error::SendError(job)) = self.lane(lane.clone()).send(job) {
            // The lane's task is gone (its runtime is shutting down): a new one.
            self.lanes.remove(&lane);
            let _ = self.lane(lane).send(job);
        }
    }

    /// Runs `work` in `lane` (after what was submitted to it before) and awaits its result;
    /// `None` when the runtime is going away.
    pub async fn wait<T: Send + 'static>(
        &mut self,
        lane: Lane,
        work: impl FnOnce(&Home) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        // The result goes back from the blocking pool itself: the loop is the one awaiting,
        // so no continuation of it could run meanwhile.
        self.submit(
            lane,
            move |home| {
                let _ = tx.send(work(home));
            },
            |_, ()| {},
        );
        rx.await.ok()
    }

    /// A lock-free read on the blocking pool, awaited (outside the lanes).
    pub async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Home) -> T + Send + 'static,
    ) -> Option<T> {
        let home = self.home.clone();
        tokio::task::spawn_blocking(move || work(&home)).await.ok()
    }

    /// The next finished job's continuation (pending while none is done).
    pub async fn next(&mut self) -> Option<Then> {
        let then = self.done_rx.recv().await;
        self.in_flight = self.in_flight.saturating_sub(usize::from(then.is_some()));
        then
    }

    /// The next finished continuation when one is ready now.
    pub fn try_next(&mut self) -> Option<Then> {
        let then = self.done_rx.try_recv().ok();
        self.in_flight = self.in_flight.saturating_sub(usize::from(then.is_some()));
        then
    }

    /// Whether every job submitted has had its continuation taken.
    pub fn is_idle(&self) -> bool {
        self.in_flight == 0
    }

    fn lane(&mut self, lane: Lane) -> &mpsc::UnboundedSender<Job> {
        let (home, done) = (self.home.clone(), self.done_tx.clone());
        self.lanes.entry(lane).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run_lane(home, rx, done));
            tx
        })
    }
}

/// One lane: its jobs in order, each on the blocking pool.
async fn run_lane(
    home: Home,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    done: mpsc::UnboundedSender<Then>,
) {
    while let Some(job) = jobs.recv().await {
        let home = home.clone();
        let then = match tokio::task::spawn_blocking(move || job(&home)).await {
            Ok(then) => then,
            Err(e) => {
                tracing::warn!("a store job failed: {e}");
                Box::new(|_: &mut Controller| {})
            }
        };
        if done.send(then).is_err() {
            return;
        }
    }
}

/// The error of an awaited job whose worker went away (the runtime is stopping).
pub(crate) fn worker_gone() -> StoreError {
    StoreError::NotFound {
        what: "the store worker (the lead is stopping)".to_string(),
    }
}

/// Coalesced re-reads of one file set: a request while one runs makes one more after it.
#[derive(Debug, Default)]
pub(crate) struct Reload {
    running: bool,
    again: bool,
}

impl Reload {
    /// True when a read should start now (none runs); else the running one is followed by one.
    pub fn start(&mut self) -> bool {
        if self.running {
            self.again = true;
            return false;
        }
        self.running = true;
        true
    }

    /// The read ended: true when another was asked for meanwhile (the caller starts it).
    pub fn finish(&mut self) -> bool {
        self.running = false;
        std::mem::take(&mut self.again)
    }
}
