//! Slow work off the controller's loop, generic over the state `S` that owns the worker (so
//! it knows nothing of the controller). Every read and write of the team's files the
//! controller makes (config.json, the task list, inboxes, the session record, what other
//! sessions left), every git run and every pane or process operation runs through the one
//! [`StoreWorker`]:
//!
//! - [`StoreWorker::submit`]: a blocking job in a [`Lane`]; [`StoreWorker::job`]: a future in
//!   a lane (a teammate's start, kill, hide/show or focus: [`Lane::Runtime`]). Jobs of one
//!   lane run one after another in the order they were submitted (two commands on the same
//!   file apply in order); lanes run side by side. When the job is done, its continuation
//!   comes back to the loop as one of its inputs ([`StoreWorker::next`]) and runs there with
//!   the state: that is where a command is acknowledged. A lock left by a writer that died
//!   (up to Claude Code's 10 s staleness rule) therefore delays only the jobs of its own lane:
//!   the loop goes on with permission answers, messages and commands on other files.
//! - [`StoreWorker::read_then`]: a lock-free read outside the lanes (never behind a write),
//!   whose continuation makes the decision that needed the file as it is now.
//! - [`StoreWorker::wait`] and [`StoreWorker::read`]: the same, awaited — only at start-up
//!   (before the loop runs) and at the end (after it).
//!
//! Every job is counted in a *generation*: the commands between two barriers
//! ([`LeadCommand::Barrier`](crate::lead::contract::LeadCommand)) are one, and a job submitted by
//! a continuation belongs to the generation of the job it follows. A barrier is answered once
//! no job of its generation or an earlier one is left ([`StoreWorker::settled`]), so `ctl`
//! prints a command's acknowledgement, even one that comes from a chain of continuations.
//! Re-reads in the background ([`Lane::counted`]) belong to no generation: a stream of
//! changes never holds a barrier.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;

use tokio::sync::{mpsc, oneshot};

use crate::store::{Home, StoreError};

/// Which files (or which teammate's pane and process) a job touches.
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
    /// Reads of `claude` teammates' panes for their client's own prompts.
    Panes,
    /// One `claude` teammate's `isActive` mark that waits for its client's own `false`
    /// (`controller::files`): polls, so in a lane of its own, and never holds a barrier.
    Marks(String),
    /// Git reads and merges of teammates' work (`/review`, `/merge`, `/queue`).
    Git,
    /// `gh` questions (a reviewed branch's pull request): slow, so never ahead of git's.
    GitHub,
    /// One teammate's runtime: starting it (its worktree, member entry and pane), killing,
    /// hiding, showing or focusing it. Two teammates' sequences overlap; one teammate's run in
    /// the order they were asked for.
    Runtime(String),
    /// Lock-free reads before a decision: never behind a write, each on its own.
    Reads,
    /// Requests and plans too large to show, kept whole in files (`store::kept_texts`).
    Kept,
}

impl Lane {
    /// Whether the lane's jobs hold a barrier: every lane but the background re-reads.
    fn counted(&self) -> bool {
        !matches!(
            self,
            Lane::TeamReads | Lane::TaskReads | Lane::Transcripts | Lane::Panes | Lane::Marks(_)
        )
    }
}

/// What the loop runs once a job is done, with the state `S` it owns.
pub(crate) type Then<S> = Box<dyn FnOnce(&mut S) + Send>;

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

type Job<S> = Box<dyn FnOnce(Home) -> BoxFuture<Then<S>> + Send>;

/// A finished job: its continuation and the generation it was counted in.
type Done<S> = (Option<u64>, Then<S>);

/// Where a lane's jobs are sent, each with the generation it is counted in.
type LaneSender<S> = mpsc::UnboundedSender<(Option<u64>, Job<S>)>;

/// The state a worker serves: where its worker is, and what to do when a generation settles.
pub(crate) trait Host: Sized + 'static {
    fn worker(&mut self) -> &mut StoreWorker<Self>;
    /// A counted job's continuation ran: barriers waiting for its generation may be answered.
    fn job_finished(&mut self);
}

/// The loop's one way to slow work (the store, git, panes and processes).
pub(crate) struct StoreWorker<S> {
    home: Home,
    lanes: HashMap<Lane, LaneSender<S>>,
    done_tx: mpsc::UnboundedSender<Done<S>>,
    done_rx: mpsc::UnboundedReceiver<Done<S>>,
    /// Jobs submitted whose continuation has not run yet.
    in_flight: usize,
    /// The generation of the commands arriving now (the barriers seen so far).
    current: u64,
    /// The generation a job submitted now is counted in: `current`, or while a continuation
    /// runs, its job's.
    context: u64,
    /// Counted jobs per generation whose continuation has not run yet.
    open: BTreeMap<u64, usize>,
    /// Whose command the work running now is (a `ctl` call's barrier token): a job submitted
    /// now carries it to its continuation, so a refusal there is charged to that caller only.
    origin: Option<u64>,
}

impl<S: Host> StoreWorker<S> {
    /// A worker for `home` (lanes start on the current tokio runtime when first used).
    pub fn new(home: Home) -> StoreWorker<S> {
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
            origin: None,
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

    /// Whose command the work running now is (see the field).
    pub fn origin(&self) -> Option<u64> {
        self.origin
    }

    /// Runs what follows as `origin`'s command; returns the origin before, to restore.
    pub fn set_origin(&mut self, origin: Option<u64>) -> Option<u64> {
        std::mem::replace(&mut self.origin, origin)
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
        then: impl FnOnce(&mut S, T) + Send + 'static,
    ) {
        self.job(
            lane,
            move |home| async move {
                tokio::task::spawn_blocking(move || work(&home))
                    .await
                    .map_err(|e| e.to_string())
            },
            move |s, result| match result {
                Ok(result) => then(s, result),
                Err(e) => tracing::warn!("a store job failed: {e}"),
            },
        );
    }

    /// Runs the future `work` makes in `lane` (after what was submitted to it before, and
    /// side by side with other lanes); `then` runs on the loop with its result. This is how
    /// the loop starts slow work that is not a file (a pane, a process, git) without waiting.
    pub fn job<T: Send + 'static, F>(
        &mut self,
        lane: Lane,
        work: impl FnOnce(Home) -> F + Send + 'static,
        then: impl FnOnce(&mut S, T) + Send + 'static,
    ) where
        F: Future<Output = T> + Send + 'static,
    {
        let generation = lane.counted().then_some(self.context);
        let origin = self.origin;
        let job: Job<S> = Box::new(move |home| {
            Box::pin(async move {
                let result = work(home).await;
                Box::new(move |s: &mut S| {
                    let before = s.worker().set_origin(origin);
                    then(s, result);
                    s.worker().set_origin(before);
                }) as Then<S>
            })
        });
        self.in_flight += 1;
        if let Some(g) = generation {
            *self.open.entry(g).or_default() += 1;
        }
        if lane == Lane::Reads {
            // Reads wait for nobody: each runs at once.
            let (home, done) = (self.home.clone(), self.done_tx.clone());
            tokio::spawn(async move {
                let then = job(home).await;
                let _ = done.send((generation, then));
            });
            return;
        }
        if let Err(mpsc::error::SendError(job)) = self.lane(lane.clone()).send((generation, job)) {
            // The lane's task is gone (its runtime is shutting down): a new one.
            self.lanes.remove(&lane);
            let _ = self.lane(lane).send(job);
        }
    }

    /// A lock-free read on the blocking pool, outside the lanes (never behind a write); `then`
    /// runs on the loop with it: a decision that needs the file as it is now.
    pub fn read_then<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&Home) -> T + Send + 'static,
        then: impl FnOnce(&mut S, T) + Send + 'static,
    ) {
        self.job(
            Lane::Reads,
            move |home| async move {
                tokio::task::spawn_blocking(move || work(&home))
                    .await
                    .map_err(|e| e.to_string())
            },
            move |s, result| match result {
                Ok(result) => then(s, result),
                Err(e) => tracing::warn!("a read failed: {e}"),
            },
        );
    }

    /// Runs `work` in `lane` (after what was submitted to it before) and awaits its result;
    /// `None` when the runtime is going away. Only for start-up, before the loop runs.
    pub async fn wait<T: Send + 'static>(
        &mut self,
        lane: Lane,
        work: impl FnOnce(&Home) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        // The result goes back from the blocking pool itself: the caller is the one awaiting,
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

    /// A lock-free read on the blocking pool, awaited (outside the lanes). Only for start-up,
    /// before the loop runs.
    pub async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Home) -> T + Send + 'static,
    ) -> Option<T> {
        let home = self.home.clone();
        tokio::task::spawn_blocking(move || work(&home)).await.ok()
    }

    /// The next finished job's continuation (pending while none is done).
    pub async fn next(&mut self) -> Option<Then<S>> {
        let done = self.done_rx.recv().await;
        self.in_flight = self.in_flight.saturating_sub(usize::from(done.is_some()));
        done.map(in_its_generation)
    }

    /// The next finished continuation when one is ready now.
    pub fn try_next(&mut self) -> Option<Then<S>> {
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

    fn lane(&mut self, lane: Lane) -> &LaneSender<S> {
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
fn in_its_generation<S: Host>((generation, then): Done<S>) -> Then<S> {
    Box::new(move |s: &mut S| {
        let w = s.worker();
        w.context = generation.unwrap_or(w.current);
        then(s);
        let w = s.worker();
        w.context = w.current;
        if let Some(g) = generation {
            w.finish(g);
            s.job_finished();
        }
    })
}

/// One lane: its jobs in order.
async fn run_lane<S: 'static>(
    home: Home,
    mut jobs: mpsc::UnboundedReceiver<(Option<u64>, Job<S>)>,
    done: mpsc::UnboundedSender<Done<S>>,
) {
    while let Some((generation, job)) = jobs.recv().await {
        let then = job(home.clone()).await;
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
