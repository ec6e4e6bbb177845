//! The lead controller: [`Lead::start`] creates the team (or adopts the one a dead lead left),
//! takes the lead liveness lock, and runs one tokio task that owns all lead state. Read it as
//! a table of contents:
//!
//! - `state`: what the controller owns, its start, and its loop — `next_input` (`input`: the
//!   one `select!`, each arm only makes an [`input::Input`]) → `apply` (never awaits) →
//!   publish (`publisher`: events, snapshots when they changed, problems told once) → the end
//!   (`quit`) after the loop.
//! - `store_worker`: the one way to slow work (files, git, panes, processes) as jobs in lanes,
//!   whose continuations come back as `Input::Done`; `order` keeps commands in order across
//!   a teammate's runtime jobs; `barriers` answers `ctl`'s barriers.
//! - What each input does: `team_ops` (the UI's commands), `submit` (composer text), `spawn`,
//!   `incoming` and `drain` (the lead's inbox), `liveness`, `model` (the lead model),
//!   `hosts` (links to other hosts), `panes`, `mode_keys`/`mode_sync`, `task_ops`, `shutdown_timer`, `review`, `resume`,
//!   `claude_facts` (what `claude` teammates' transcripts say), `files` (the copies of the
//!   team's files).
//!
//! It reports everything as [`LeadEvent`]s and never renders.

mod assign;
mod barriers;
mod budget;
mod claude_facts;
mod client_prompts;
mod drain;
mod executor;
mod files;
mod given_worktrees;
mod givens;
mod hosts;
mod incoming;
mod input;
#[cfg(test)]
mod limit_tests;
mod liveness;
mod merge_words;
#[cfg(test)]
mod mode_hold_tests;
mod mode_keys;
mod mode_sync;
mod model;
mod next_lead;
mod order;
pub mod outcome;
mod panes;
mod park;
#[cfg(test)]
mod park_tests;
#[cfg(test)]
mod plan_verdict_tests;
mod publisher;
mod quit;
mod receipts;
#[cfg(test)]
mod record_tests;
mod resume;
mod review;
mod review_target;
mod roster;
mod settings;
mod shutdown_timer;
mod spawn;
mod state;
mod steer;
mod store_worker;
mod submit;
mod task_ops;
mod team_cache;
mod team_ops;
#[cfg(test)]
mod test_events;
#[cfg(test)]
mod timer_tests;

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::mpsc;

use super::bridge::LeaderBridge;
use super::contract::{LeadCommand, LeadEvent};
use super::demo::DemoPlan;
use crate::protocol::PermissionMode;
use crate::protocol::names::{NameError, sanitize};
use crate::store::{Home, StoreError};

pub use liveness::LIVENESS_EVERY;
pub use spawn::SpawnFlags;
pub use state::QUIT_TIMEOUT;

/// How often the controller looks at the files when it has no file watcher.
pub const SAFETY_POLL: Duration = Duration::from_secs(2);
/// How often it looks anyway while the watcher runs (a net for a missed event).
pub const SAFETY_POLL_WATCHED: Duration = Duration::from_secs(10);

/// How a lead session starts.
#[derive(Debug)]
pub struct LeadOptions {
    pub home: Home,
    /// The team name as asked for (sanitized); `None` → the name of `cwd`'s directory.
    pub team: Option<String>,
    /// Where the lead (and its teammates) work.
    pub cwd: PathBuf,
    /// The lead's permission mode at start.
    pub lead_mode: PermissionMode,
    /// Where teammates run: chosen once per session (backend::detect).
    pub backend_choice: crate::backend::detect::BackendChoice,
    /// Pane teammates are real `claude` processes unless `/spawn --agent builtin`.
    pub claude_by_default: bool,
    /// Every teammate gets its own git worktree unless told otherwise.
    pub worktree_by_default: bool,
    /// A demo to run: its tasks are created and its teammates spawned at start; its temporary
    /// directory is removed at quit.
    pub demo: Option<DemoPlan>,
    /// How long quitting waits for teammates to approve their shutdown before killing them.
    pub quit_timeout: Duration,
    /// The lead model (`--lead-model`): plain composer text and teammates' messages go to it.
    pub lead_model: Option<crate::agent::llm::LlmConfig>,
    /// Teammates are llm coding agents with this configuration (`--engine llm`); shell otherwise.
    pub teammate_llm: Option<crate::agent::llm::LlmConfig>,
    /// The teammates' model (`--model`), passed to pane teammates too.
    pub teammate_model: Option<String>,
    /// The program pane teammates run as `<it> teammate …` (this executable unless set: tests
    /// and benches, whose executable is not teamlead, point it at the binary).
    pub teammate_binary: Option<PathBuf>,
    /// What model tokens cost (built in, plus the config file's `[prices]`).
    pub prices: crate::protocol::pricing::PriceTable,
    /// How long a `/shutdown` waits before the lead says how to force it (or, with
    /// `shutdown_force`, kills the teammate).
    pub shutdown_timeout: Duration,
    /// Every shutdown that outlasts the timeout becomes a kill (`shutdown-force`).
    pub shutdown_force: bool,
    /// A task reported failed goes back to pending with no owner for others to try
    /// (`retry-failed-tasks`); otherwise the lead holds it until a person assigns it.
    pub retry_failed_tasks: bool,
    /// What each teammate, and the whole team, may cost (micro-dollars; `budget-teammate`,
    /// `budget-team`).
    pub budget_teammate: Option<u64>,
    pub budget_team: Option<u64>,
    /// Park the team at a usage limit and resume it at the reset (`resume-after-limit`), and
    /// the clock time no resume starts past (`resume-until`): `lead::park`.
    pub park: crate::lead::park::ParkSettings,
    /// The hosts teammates may run on (`[hosts.NAME]`), and where teamlead keeps its ssh
    /// masters' control sockets (`None`: no teammates on other hosts).
    pub hosts: Vec<crate::config::HostConfig>,
    pub ssh_dir: Option<PathBuf>,
}

/// How long a `/shutdown` waits by default before the lead says how to force it.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(30);

impl LeadOptions {
    /// A lead for the directory `cwd`, team named after it, `default` mode, in-process.
    pub fn new(home: Home, cwd: impl Into<PathBuf>) -> LeadOptions {
        LeadOptions {
            home,
            team: None,
            cwd: cwd.into(),
            lead_mode: PermissionMode::Default,
            backend_choice: crate::backend::detect::BackendChoice::InProcess { notice: None },
            claude_by_default: false,
            worktree_by_default: false,
            demo: None,
            quit_timeout: QUIT_TIMEOUT,
            lead_model: None,
            teammate_llm: None,
            teammate_model: None,
            teammate_binary: None,
            prices: crate::protocol::pricing::PriceTable::built_in(),
            shutdown_timeout: SHUTDOWN_TIMEOUT,
            shutdown_force: false,
            retry_failed_tasks: false,
            budget_teammate: None,
            budget_team: None,
            park: crate::lead::park::ParkSettings::default(),
            hosts: Vec::new(),
            ssh_dir: None,
        }
    }

    /// The same options with this team name.
    pub fn with_team(mut self, team: impl Into<String>) -> LeadOptions {
        self.team = Some(team.into());
        self
    }

    /// The same options running `plan` (team name and working directory come from the plan).
    pub fn with_demo(mut self, plan: DemoPlan) -> LeadOptions {
        self.team = Some(plan.team.clone());
        self.cwd = plan.workdir().to_path_buf();
        self.demo = Some(plan);
        self
    }

    /// The same options with teammates where `choice` says (panes or in-process).
    pub fn with_backend(mut self, choice: crate::backend::detect::BackendChoice) -> LeadOptions {
        self.backend_choice = choice;
        self
    }

    /// The same options with a lead model talking to `config`.
    pub fn with_lead_model(mut self, config: crate::agent::llm::LlmConfig) -> LeadOptions {
        self.lead_model = Some(config);
        self
    }

    /// The same options with another quit timeout.
    pub fn with_quit_timeout(mut self, timeout: Duration) -> LeadOptions {
        self.quit_timeout = timeout;
        self
    }

    /// Whether a task reported failed goes back to pending for others (`retry-failed-tasks`).
    pub fn with_retry_failed_tasks(mut self, retry: bool) -> LeadOptions {
        self.retry_failed_tasks = retry;
        self
    }

    /// The sanitized team name.
    pub fn team_name(&self) -> Result<String, LeadError> {
        let requested = match &self.team {
            Some(t) => t.clone(),
            None => self
                .cwd
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("team")
                .to_string(),
        };
        match sanitize(&requested) {
            Ok(name) => Ok(name),
            Err(NameError::Empty) if self.team.is_none() => Ok("team".to_string()),
            Err(e) => Err(LeadError::TeamName(e)),
        }
    }
}

/// Why a lead could not start.
#[derive(Debug, thiserror::Error)]
pub enum LeadError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("bad team name: {0}")]
    TeamName(NameError),
    #[error(
        "team `{0}` already exists and was not started by teamlead (another lead may own it): pick another name with --team"
    )]
    ForeignTeam(String),
    #[error(
        "team `{team}` already exists and its lead cannot be proven gone ({why}): pick another name with --team, or try again later"
    )]
    TeamInUse { team: String, why: String },
    #[error(
        "team `{team}` was left by a lead that is gone, and its team file cannot be read ({why}); nothing was changed. `teamlead clean` moves the team into quarantine/{team}/ (its files kept as they are, `--dry-run` shows it first), or move teams/{team} aside yourself, or pick another name with --team"
    )]
    BrokenTeam { team: String, why: String },
    #[error("the lead must be started inside a tokio runtime")]
    NoRuntime,
}

/// What the UI keeps of a running lead.
#[derive(Debug, Clone)]
pub struct LeadHandle {
    /// Where the UI sends its commands.
    pub commands: mpsc::Sender<LeadCommand>,
    /// The leader permission bridge (in-process teammates ask through it).
    pub bridge: LeaderBridge,
    /// The team this lead runs.
    pub team: String,
}

/// The lead controller.
pub struct Lead;

impl Lead {
    /// Creates the team and starts the controller task on the current tokio runtime. Events
    /// arrive on the returned receiver, starting with `Started`; the task ends after `Quit`
    /// (with `Exited`), or when both the commands sender and the event receiver are dropped.
    pub fn start(opts: LeadOptions) -> Result<(LeadHandle, mpsc::Receiver<LeadEvent>), LeadError> {
        let runtime = tokio::runtime::Handle::try_current().map_err(|_| LeadError::NoRuntime)?;
        let (commands_tx, commands_rx) = mpsc::channel(256);
        let (events_tx, events_rx) = mpsc::channel(4096);
        let (bridge, bridge_rx) = LeaderBridge::new();
        let (controller, channels) =
            state::Controller::create(opts, bridge.clone(), bridge_rx, commands_rx, events_tx)?;
        let team = controller.team_name().to_string();
        runtime.spawn(async move {
            use futures::FutureExt;
            // A panic of the controller must not leave panes, servers or the team behind.
            let run = std::panic::AssertUnwindSafe(controller.run(channels));
            if run.catch_unwind().await.is_err() {
                super::emergency::run();
            }
        });
        Ok((
            LeadHandle {
                commands: commands_tx,
                bridge,
                team,
            },
            events_rx,
        ))
    }
}
