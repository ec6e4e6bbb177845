//! The controller's state and its loop: what it owns (the team file and task list as last read,
//! the queues, the teammates' runtimes and tracking, the delivery log), the `select!` over its
//! inputs, and publishing: after every step the snapshots the UI shows are rebuilt and sent
//! only when they changed.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::drain::{After, Drained, InboxDrain};
use super::input::Sources;
use super::store_worker::{Host, Reload, StoreWorker};
use super::{LeadError, LeadOptions, SAFETY_POLL, SAFETY_POLL_WATCHED};
use crate::agent::events::TeammateEvent;
use crate::lead::bridge::{BridgeMessage, LeaderBridge};
use crate::lead::contract::{LeadCommand, LeadEvent, TranscriptItem};
use crate::lead::demo::DemoPlan;
use crate::lead::permission_queue::PermissionQueue;
use crate::lead::plan_queue::PlanQueue;
use crate::lead::poller::Poller;
use crate::lead::turns::TurnQueue;
use crate::lead::view_builder::{task_views, team_views};
use crate::protocol::{LEAD_NAME, PermissionMode};
use crate::store::tasks::TaskList;
use crate::store::{self, Home, LeadLiveness};
use crate::watch::{ChangeEvent, WatchOptions, WatchScope, Watcher};

/// The lead reacts to a quiet file this soon: bursts of its own writes are short, and a drain
/// that finds nothing new costs little, so a short window keeps message latency low.
const WATCH_COALESCE: Duration = Duration::from_millis(2);

/// How long `/quit` waits for teammates to approve their shutdown before killing them.
pub const QUIT_TIMEOUT: Duration = Duration::from_secs(5);

/// The controller's inputs.
pub(crate) struct Channels {
    pub commands: mpsc::Receiver<LeadCommand>,
    pub bridge: mpsc::UnboundedReceiver<BridgeMessage>,
    pub teammates: mpsc::UnboundedReceiver<TeammateEvent>,
    pub changes: Option<mpsc::UnboundedReceiver<ChangeEvent>>,
    pub hosts: mpsc::UnboundedReceiver<crate::backend::hosts::link::HostState>,
}

/// Where the session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Running,
    /// Shutdown requests sent; waiting for the answers until the deadline.
    Quitting {
        deadline: Instant,
    },
    /// The loop ends: the team is being removed (`/quit`) or left (`/detach`), outside the
    /// loop, since that waits for what is still running.
    Ending(Ending),
    /// Cleaned up; the loop ends.
    Done,
}

/// How the session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Everything left is killed and the team deleted.
    Quit,
    /// The team stays for the next lead.
    Detach,
}

/// A continuation the loop runs with the controller (a job's result, a read before a
/// decision).
pub(crate) type Then = super::store_worker::Then<Controller>;

/// All lead state; owned by the controller task.
pub(crate) struct Controller {
    /// The home, team, working directory and executor the session was given.
    pub(super) given: super::givens::Givens,
    pub(super) lead_mode: PermissionMode,
    /// The team file and the task list as last read.
    pub(super) cache: super::team_cache::TeamCache,
    pub(super) task_list: TaskList,
    pub(super) permissions: PermissionQueue,
    pub(super) plans: PlanQueue,
    /// What the lead tracks about each teammate, the starts under way, the palette.
    pub(super) roster: super::roster::Roster,
    /// What the next lead of the team will need (`.teamlead/session.json`).
    pub(super) record: super::next_lead::NextLead,
    /// The team was adopted from a dead lead: what it left, until [`Controller::resume`].
    pub(super) previous: Option<super::resume::Previous>,
    /// What the session was started with (read-only).
    pub(super) settings: super::settings::Settings,
    /// The worktrees given to teammates (retired at quit), with their owners.
    pub(super) worktrees: super::given_worktrees::GivenWorktrees,
    /// Git on the config's hosts (worktrees there, their branches fetched): `None` without
    /// hosts.
    pub(super) hosts_git: Option<crate::backend::hosts::worktree::HostsGit>,
    /// Wakes the liveness poller from its idle sleep (a teammate started).
    pub(super) liveness_wake: Arc<tokio::sync::Notify>,
    /// The lead's inbox, drained off the loop.
    pub(super) drain: InboxDrain,
    /// Every other read and write of the store, off the loop.
    pub(super) store: StoreWorker<Controller>,
    /// Re-reads of `config.json` and of the task list, coalesced.
    pub(super) team_reload: Reload,
    pub(super) task_reload: Reload,
    /// Writes of the session record, coalesced (a burst of spawns writes it a few times, not
    /// once per teammate: each write is a file and a folder fsync).
    pub(super) record_write: Reload,
    pub(super) turns: TurnQueue,
    /// The optional lead model (`--lead-model`).
    pub(super) lead_model: Option<super::model::LeadModel>,
    pub(super) phase: Phase,
    pub(super) demo: Option<DemoPlan>,
    /// What the UI is told (events, snapshots when they changed, problems once).
    publisher: super::publisher::Publisher,
    pub(super) liveness: Option<LeadLiveness>,
    _watcher: Option<Watcher>,
    /// `ctl`'s barriers and the generations in which a command was refused.
    barriers: super::barriers::Barriers,
    /// Merges under way (worktrees merged but kept).
    pub(super) review: super::review::ReviewState,
    /// Runtime jobs under way and the commands held behind them (`order`).
    pub(super) order: super::order::CommandOrder,
    /// Completed tasks gathered into the next digest line (`lead::wave`).
    pub(super) wave: crate::lead::wave::Wave,
    /// Assignments kept for teammates whose rate or usage limit holds, sent when it resets.
    pub(super) held_assignments: super::assign::HeldAssignments,
    /// Every message sent to a teammate, and how far it got.
    pub(super) ledger: crate::lead::ledger::Ledger,
    /// Budgets and who is paused by them.
    pub(super) budgets: super::budget::Budgets,
    /// Park and resume at a usage limit (`controller::park`) and what it holds.
    pub(super) park: super::park::ParkRoom,
    /// Reads of `claude` teammates' panes for their client's own prompts
    /// (`controller::client_prompts`).
    pub(super) prompt_checks: super::client_prompts::PromptChecks,
    /// Tasks whose completion by a `claude` teammate was said (`claude_facts`).
    pub(super) said_done: super::claude_facts::SaidDone,
    /// The hosts whose link is down, and since when (epoch ms): their teammates are shown
    /// `unreachable`.
    pub(super) hosts_down: super::hosts::HostsDown,
}

impl Controller {
    /// Sets the team up on disk (a new team, or the one a dead lead left: see
    /// [`super::resume`]) and builds the state (no task started yet).
    pub fn create(
        mut opts: LeadOptions,
        bridge: LeaderBridge,
        bridge_rx: mpsc::UnboundedReceiver<BridgeMessage>,
        commands: mpsc::Receiver<LeadCommand>,
        events: mpsc::Sender<LeadEvent>,
    ) -> Result<(Controller, Channels), LeadError> {
        let team = opts.team_name()?;
        let home = opts.home.clone();
        let cwd = opts.cwd.clone();
        let mut notes = Vec::new();
        let (file, liveness, previous) =
            super::resume::open_team(&home, &team, &cwd.to_string_lossy(), opts.lead_mode)?;
        if let crate::backend::detect::BackendChoice::InProcess { notice: Some(n) } =
            &opts.backend_choice
        {
            notes.push(format!("{n}."));
        }
        // Unlocked in-place writers (2.1.45 teammates) can empty the file or drop a member:
        // the lead repairs it from its last good copy (store::team_guard).
        store::team_guard::guard(&home, &team)?;
        let task_list = TaskList::new(&home, &team)?;
        home.ensure_dir(task_list.dir())?;
        let poller = Poller::open(&home, &team)?;
        let (changes, watcher) = match start_watcher(&home, &team) {
            Ok(Some((watcher, rx))) => (Some(rx), Some(watcher)),
            Ok(None) => (None, None),
            Err(e) => {
                notes.push(format!(
                    "No file watcher ({e}); checking the files every {} s.",
                    SAFETY_POLL.as_secs()
                ));
                (None, None)
            }
        };
        let (teammate_tx, teammate_rx) = mpsc::unbounded_channel();
        let (hosts_tx, hosts_rx) = mpsc::unbounded_channel();
        let executor = super::executor::open_executor(
            &opts,
            &home,
            &team,
            &file,
            &bridge,
            teammate_tx,
            hosts_tx,
        );
        crate::lead::emergency::register(&home, &team, executor.clone());
        if let Some(hint) = executor.attach_hint() {
            notes.push(format!(
                "Teammates run in panes of a private session in the background: watch them with `{hint}`."
            ));
        }
        let mut controller = Controller {
            given: super::givens::Givens::new(home.clone(), team, cwd, executor),
            lead_mode: opts.lead_mode,
            cache: super::team_cache::TeamCache::new(file),
            task_list,
            permissions: PermissionQueue::new(),
            plans: PlanQueue::new(),
            roster: super::roster::Roster::default(),
            record: super::next_lead::NextLead::default(),
            previous,
            settings: super::settings::Settings::from_options(&opts),
            worktrees: super::given_worktrees::GivenWorktrees::default(),
            hosts_git: opts
                .ssh_dir
                .clone()
                .filter(|_| !opts.hosts.is_empty())
                .map(|dir| crate::backend::hosts::worktree::HostsGit {
                    connector: crate::backend::hosts::Connector::new(dir),
                    hosts: opts.hosts.clone(),
                }),
            review: Default::default(),
            order: Default::default(),
            wave: Default::default(),
            held_assignments: Default::default(),
            ledger: Default::default(),
            budgets: super::budget::Budgets::new(opts.budget_teammate, opts.budget_team),
            park: super::park::ParkRoom::new(opts.park),
            prompt_checks: Default::default(),
            said_done: Default::default(),
            hosts_down: Default::default(),
            liveness_wake: Arc::new(tokio::sync::Notify::new()),
            drain: InboxDrain::start(poller),
            store: StoreWorker::new(home.clone()),
            team_reload: Reload::default(),
            task_reload: Reload::default(),
            record_write: Reload::default(),
            turns: TurnQueue::new(),
            lead_model: super::model::LeadModel::open(opts.lead_model.take(), &mut notes),
            phase: Phase::Running,
            demo: opts.demo.take(),
            publisher: super::publisher::Publisher::new(events),
            liveness: Some(liveness),
            _watcher: watcher,
            barriers: Default::default(),
        };
        // Teammates on other hosts: their links hand the lead's entries to the drain as they
        // arrive, before any link starts (adoption and spawns come later).
        controller
            .given
            .executor()
            .set_lead_entries(controller.drain.hand_in());
        controller.record = super::next_lead::NextLead::new(
            controller.given.kind().as_str(),
            controller.given.executor().session_record(),
        );
        if controller.previous.is_none() {
            controller.save_record();
        }
        controller.emit(LeadEvent::Started {
            team: controller.given.team().to_string(),
            backend: controller.given.kind(),
            lead_mode: controller.lead_mode,
        });
        controller.emit(LeadEvent::LeadMode(controller.lead_mode));
        for note in notes {
            controller.note(note);
        }
        let channels = Channels {
            commands,
            bridge: bridge_rx,
            teammates: teammate_rx,
            changes,
            hosts: hosts_rx,
        };
        Ok((controller, channels))
    }

    pub fn team_name(&self) -> &str {
        self.given.team()
    }

    /// The controller task: the start (the team read, a resume, the demo), then the loop
    /// (`next_input` → `apply` → publish), then the end (`/quit` or `/detach`).
    pub async fn run(mut self, ch: Channels) {
        self.fresh_team().await;
        self.fresh_tasks().await;
        if let Some(previous) = self.previous.take() {
            self.resume(previous).await;
        }
        self.note_orphans().await;
        self.start_demo().await;
        let liveness = super::liveness::spawn_poller(
            self.given.executor().clone(),
            self.liveness_wake.clone(),
        );
        // With a file watcher the safety poll is only a net for a missed event; without one it
        // is how changes are seen.
        let every = if ch.changes.is_some() {
            SAFETY_POLL_WATCHED
        } else {
            SAFETY_POLL
        };
        let mut safety = tokio::time::interval(every);
        safety.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut sources = Sources {
            commands: ch.commands,
            commands_open: true,
            bridge: ch.bridge,
            teammates: ch.teammates,
            changes: ch.changes,
            hosts: ch.hosts,
            liveness,
            safety,
        };
        loop {
            self.publish();
            self.flush().await;
            if let Phase::Ending(how) = self.phase {
                self.end(how).await;
            }
            if self.phase == Phase::Done {
                break;
            }
            let input = self.next_input(&mut sources).await;
            self.apply(input);
        }
    }

    /// The command being carried out (or the continuation running) was refused or failed:
    /// its barrier says so.
    pub fn refuse(&mut self) {
        self.barriers
            .refuse(self.store.generation(), self.store.origin());
    }

    /// A barrier: answered once every command before it, and every continuation they
    /// chained, has run.
    pub fn barrier(&mut self, token: u64) {
        let generation = self.store.close_generation();
        self.barriers.wait(token, generation);
        self.release_barriers();
    }

    /// Answers the barriers whose generation is settled, in order.
    pub fn release_barriers(&mut self) {
        let store = &self.store;
        for (token, refused) in self.barriers.release(|g| store.settled(g)) {
            self.emit(LeadEvent::Barrier { token, refused });
        }
    }

    /// Queues an event for the UI.
    pub fn emit(&mut self, event: LeadEvent) {
        self.publisher.emit(event);
    }

    /// A system note in the main transcript.
    pub fn note(&mut self, text: impl Into<String>) {
        self.emit(LeadEvent::Transcript(TranscriptItem::System {
            text: text.into(),
        }));
    }

    /// A note about a problem, told once.
    pub fn note_once(&mut self, text: impl Into<String>) {
        let text = text.into();
        if self.publisher.first_time(&text) {
            tracing::warn!("{text}");
            self.note(text);
        }
    }

    /// Sends what is queued; a UI that stopped listening starts a graceful quit.
    pub async fn flush(&mut self) {
        if self.publisher.flush().await.is_err() {
            self.begin_quit("the user interface is gone");
        }
    }

    /// Rebuilds the snapshots and queues those that changed.
    pub fn publish(&mut self) {
        if self.phase == Phase::Done {
            return;
        }
        let waiting = self.permissions.waiting_by_worker();
        let plans = &self.plans;
        let mut team = team_views(
            self.cache.file(),
            self.cache.tasks(),
            self.roster.records(),
            &|name| waiting.contains_key(name) || plans.has_worker(name),
        );
        self.publish_usage(&mut team);
        self.publish_receipts(&mut team);
        self.apply_budgets(&mut team);
        self.apply_park(&mut team);
        let tasks = task_views(self.cache.tasks());
        let permissions = self.permissions.views();
        let plans = self.plans.views();
        self.publisher.snapshots(team, tasks, permissions, plans);
    }

    /// Asks for a drain of the lead's inbox (off the loop: its entries arrive as [`Drained`]).
    pub fn poll_inbox(&mut self) {
        self.drain.request(After::Nothing);
    }

    /// A drain finished: act on every entry, then on what waited for it.
    pub fn on_drained(&mut self, drained: Drained) {
        tracing::trace!(target: "teamlead::probe", "loop.drained");
        let polled = drained.polled;
        for path in polled.quarantined {
            self.note(format!(
                "Bad input in the lead's inbox was moved aside to {}",
                path.display()
            ));
        }
        for r in &polled.recovered {
            self.note(format!(
                "The lead's inbox could not be read ({}); its {} bytes were moved to {} (a note \
                 beside it says why) and a fresh inbox was started: messages reach the lead again.",
                r.detail,
                r.bytes,
                r.kept.display()
            ));
        }
        for incoming in polled.incoming {
            self.on_incoming(incoming);
        }
        if let Some(e) = polled.problem {
            self.note_once(format!("Cannot read the lead's inbox: {e}"));
        }
        for after in drained.after {
            match after {
                After::Nothing => {}
                After::Liveness(reports) => self.on_liveness_drained(reports),
            }
        }
    }

    /// File changes: the lead's inbox, the team file, the tasks; teammates' inboxes wake them.
    pub(super) fn on_changes(&mut self, batch: &[ChangeEvent]) {
        let inbox = self
            .given
            .home()
            .inbox_path(self.given.team(), LEAD_NAME)
            .ok();
        let config = self.given.home().config_path(self.given.team()).ok();
        let tasks_dir = self.task_list.dir().to_path_buf();
        let (mut lead_inbox, mut team, mut tasks) = (false, false, false);
        let inboxes_dir = inbox
            .as_ref()
            .and_then(|p| p.parent())
            .map(|p| p.to_path_buf());
        let mut teammate_inboxes = std::collections::BTreeSet::new();
        // A remote `claude` teammate's transcript facts, as its relay sent them.
        let remote_facts = store::remote_facts::dir(self.given.home(), self.given.team()).ok();
        let mut transcripts = std::collections::BTreeSet::new();
        for change in batch {
            if change.kind.is_lock() {
                continue;
            }
            self.given.executor().on_change(change);
            if Some(&change.path) == inbox.as_ref() {
                lead_inbox = true;
            } else if Some(&change.path) == config.as_ref() {
                team = true;
            } else if change.path.parent() == Some(tasks_dir.as_path()) {
                tasks = true;
            } else if change.path.parent() == inboxes_dir.as_deref()
                && change.path.extension().is_some_and(|e| e == "json")
                && let Some(name) = change.path.file_stem().and_then(|n| n.to_str())
            {
                teammate_inboxes.insert(name.to_string());
            } else if change.path.parent() == remote_facts.as_deref()
                && let Some(name) = change.path.file_stem().and_then(|n| n.to_str())
            {
                transcripts.insert(name.to_string());
            }
        }
        for name in transcripts {
            self.read_claude_transcript(&name);
        }
        for name in teammate_inboxes {
            self.check_inbox_receipts(&name);
        }
        if team {
            self.reload_team();
        }
        if tasks {
            self.reload_tasks();
        }
        if lead_inbox {
            tracing::trace!(target: "teamlead::probe", "loop.changes");
            self.poll_inbox();
        }
    }

    /// The slow safety net: look at everything.
    pub(super) fn on_safety_poll(&mut self) {
        self.permissions.prune_closed();
        self.reload_team();
        self.reload_tasks();
        self.poll_inbox();
        self.read_claude_transcripts();
        self.check_first_turns(&[]);
        self.check_marked_turns();
        self.release_held_assignments();
        let names: Vec<String> = self.cache.teammate_names();
        for name in names {
            self.check_inbox_receipts(&name);
        }
    }
}

/// One watcher over the team's directories, reacting within [`WATCH_COALESCE`].
fn start_watcher(
    home: &Home,
    team: &str,
) -> Result<Option<(Watcher, mpsc::UnboundedReceiver<ChangeEvent>)>, crate::watch::WatchError> {
    let Ok(scope) = WatchScope::team(home, team) else {
        return Ok(None);
    };
    let options = WatchOptions {
        coalesce: WATCH_COALESCE,
        ..WatchOptions::default()
    };
    crate::watch::watch(&scope, &options).map(Some)
}

impl Host for Controller {
    fn worker(&mut self) -> &mut StoreWorker<Controller> {
        &mut self.store
    }

    fn job_finished(&mut self) {
        self.release_barriers();
    }
}
