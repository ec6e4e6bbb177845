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
//!
//! Every job is counted in a *generation*: the commands between two barriers
//! ([`LeadCommand::Barrier`](crate::lead::view::LeadCommand)) are one, and a job submitted by
//! a continuation belongs to the generation of the job it follows. A barrier is answered once
//! no job of its generation or an earlier one is left ([`StoreWorker::settled`]), so `ctl`
//! prints a command's acknowledgement, even one that comes from a chain of continuations.
//! Re-reads in the background ([`Lane::counted`]) belong to no generation: a stream of
//! changes never holds a barrier.

use std::collections::{BTreeMap, HashMap};

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
    /// `gh` questions (a reviewed branch's pull request): slow, so never ahead of git's.
    GitHub,
}

impl Lane {
    /// Whether the lane's jobs hold a barrier: every lane but the background re-reads.
    fn counted(&self) -> bool {
        !matches!(self, Lane::TeamReads | Lane::TaskReads | Lane::Transcripts)
    }
}

/// What the loop runs once a job is done.
pub(crate) type Then = Box<dyn FnOnce(&mut Controller) + Send>;

type Job = Box<dyn FnOnce(&Home) -> Then + Send>;

/// A finished job: its continuation and the generation it was counted in.
type Done = (Option<u64>, Then);

/// The controller's one way to the store.
pub(crate) struct StoreWorker {
    home: Home,
    lanes: HashMap<Lane, mpsc::UnboundedSender<(Option<u64>, Job)>>,
    done_tx: mpsc::UnboundedSender<Done>,
    done_rx: mpsc::UnboundedReceiver<Done>,
    /// Jobs submitted whose continuation has not run yet.
    in_flight: usize,
    /// The generation of the commands arriving now (the barriers seen so far).
    current: u64,
    /// The generation a job submitted now is counted in: `current`, or while a continuation
    /// runs, its job's.
    context: u64,
    /// Counted jobs per generation whose continuation has not run yet.
    open: BTreeMap<u64, usize>,
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
            current: 0,
            context: 0,
            open: BTreeMap::new(),
        }
    }

    /// A barrier arrived: the commands so far are one generation (returned), later ones the
    /// next.
    pub fn close_generation(&mut self) -> u64 {
        let closed = self.current;
        self.current += 1;
        self.context = self.current;
        closed
    }

    /// The generation a job submitted now (or a refusal reported now) belongs to.
    pub fn generation(&self) -> u64 {
        self.context
    }

    /// Whether every counted job of generation `generation` or an earlier one has had its
    /// continuation run.
    pub fn settled(&self, generation: u64) -> bool {
        self.open.range(..=generation).next().is_none()
    }

    /// Runs `work` in `lane` on the blocking pool; `then` runs on the loop with its result.
    pub fn submit<T: Send + 'static>(
        &mut self,
        lane: Lane,
        work: impl FnOnce(&Home) -> T + Send + 'static,
        then: impl FnOnce(&mut Controller, T) + Send + 'static,
    ) {
        let generation = lane.counted().then_some(self.context);
        let job: Job = Box::new(move |home| {
            let result = work(home);
            Box::new(move |c: &mut Controller| then(c, result))
        });
        self.in_flight += 1;
        if let Some(g) = generation {
            *self.open.entry(g).or_default() += 1;
        }
        if let Err(mpsc::error::SendError(job)) = self.lane(lane.clone()).send((generation, job)) {
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
        let done = self.done_rx.recv().await;
        self.in_flight = self.in_flight.saturating_sub(usize::from(done.is_some()));
        done.map(in_its_generation)
    }

    /// The next finished continuation when one is ready now.
    pub fn try_next(&mut self) -> Option<Then> {
        let done = self.done_rx.try_recv().ok();
        self.in_flight = self.in_flight.saturating_sub(usize::from(done.is_some()));
        done.map(in_its_generation)
    }

    /// A job of `generation` has had its continuation run.
    fn finish(&mut self, generation: u64) {
        if let Some(n) = self.open.get_mut(&generation) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.open.remove(&generation);
            }
        }
    }

    /// Whether every job submitted has had its continuation taken.
    pub fn is_idle(&self) -> bool {
        self.in_flight == 0
    }

    fn lane(&mut self, lane: Lane) -> &mpsc::UnboundedSender<(Option<u64>, Job)> {
        let (home, done) = (self.home.clone(), self.done_tx.clone());
        self.lanes.entry(lane).or_insert_with(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(run_lane(home, rx, done));
            tx
        })
    }
}

/// A continuation that runs in its job's generation (what it submits is counted there), then
/// marks the job done and answers the barriers that were waiting for it.
fn in_its_generation((generation, then): Done) -> Then {
    Box::new(move |c: &mut Controller| {
        c.store.context = generation.unwrap_or(c.store.current);
        then(c);
        c.store.context = c.store.current;
        if let Some(g) = generation {
            c.store.finish(g);
            c.release_barriers();
        }
    })
}

/// One lane: its jobs in order, each on the blocking pool.
async fn run_lane(
    home: Home,
    mut jobs: mpsc::UnboundedReceiver<(Option<u64>, Job)>,
    done: mpsc::UnboundedSender<Done>,
) {
    while let Some((generation, job)) = jobs.recv().await {
        let home = home.clone();
        let then = match tokio::task::spawn_blocking(move || job(&home)).await {
            Ok(then) => then,
            Err(e) => {
                tracing::warn!("a store job failed: {e}");
                Box::new(|_: &mut Controller| {})
            }
        };
        if done.send((generation, then)).is_err() {
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
