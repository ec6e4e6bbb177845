//! Spawning through the session's executor: `/spawn` (and the lead model's SpawnTeammate, and
//! the demo) checks first (the lead is not quitting, a Claude Code teammate has a pane backend,
//! the executor has the program a teammate runs, the name is free), then picks the color, mode
//! and worktree (a new one, or a clean leftover reused, never one holding work), adds the
//! member to `config.json`, then the executor starts it (in-process task or pane: one code
//! path). Nothing is made before the checks pass; what was made is undone when the start fails.
//! The checks that need only the controller's copies (phase, pane backend, a free name)
//! run on the loop; the rest — the program check, the worktree (git), the member entry and
//! the pane — is one job in the teammate's runtime lane (`Lane::Runtime`), so starts of
//! different teammates overlap and the loop goes on meanwhile. A name is taken from the moment
//! its start is planned (`Controller::starting`) until its job is done. `/respawn NAME` starts a
//! teammate that stopped (or did not survive its lead) again under the same name, with the
//! same prompt, mode, agent, model and worktree. How each teammate was started is kept in the
//! session record for the next lead.

use std::path::PathBuf;
use std::sync::Arc;

use super::outcome::{Done, OpError, Outcome, Started};
use super::review_target::BranchFrom;
use super::state::{Controller, Phase};
use crate::backend::executor::{SpawnRequest, Spawned, TeammateExecutor};
use crate::backend::worktree::{self, How, Prepared, Retired, Worktree};
use crate::protocol::names::unique_member_name;
use crate::protocol::time::now_ms;
use crate::protocol::{BackendKind, Color, Member, PermissionMode};
use crate::store::Home;
use crate::store::TeammateRecord;

/// The options of one `/spawn`; `None` takes the session's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnFlags {
    pub plan_mode_required: bool,
    pub mode: Option<PermissionMode>,
    /// A real `claude` process.
    pub claude: Option<bool>,
    /// Its own git worktree.
    pub worktree: Option<bool>,
    /// The host it runs on (`/spawn --host`); `None`: the lead's host.
    pub host: Option<String>,
}

/// Everything decided about one teammate before it starts.
#[derive(Clone)]
struct Plan {
    name: String,
    requested: String,
    cwd: PathBuf,
    worktree_path: Option<String>,
    color: Color,
    mode: PermissionMode,
    plan_mode_required: bool,
    prompt: String,
    claude: bool,
    model: Option<String>,
    /// The commit its worktree started from.
    base: Option<String>,
    /// The host it runs on (`None`: the lead's).
    host: Option<String>,
}

impl Controller {
    /// `/spawn` with only the common options; `done` hears how it went.
    pub fn spawn_teammate(
        &mut self,
        requested: &str,
        plan_mode_required: bool,
        mode: Option<PermissionMode>,
        prompt: &str,
        done: Done,
    ) {
        let flags = SpawnFlags {
            plan_mode_required,
            mode,
            ..SpawnFlags::default()
        };
        self.spawn_teammate_with(requested, flags, prompt, done)
    }

    /// `/spawn`: a free name, the next palette color, the mode, a worktree when asked; then
    /// the start runs as a job and `done` hears how it went.
    pub fn spawn_teammate_with(
        &mut self,
        requested: &str,
        flags: SpawnFlags,
        prompt: &str,
        done: Done,
    ) {
        if self.phase != Phase::Running {
            return done(self, Err(OpError::NoNewTeammates));
        }
        let claude = flags.claude.unwrap_or(self.settings.claude_by_default());
        // A Claude Code teammate on a host runs in the host's tmux, whatever runs here.
        if claude && flags.host.is_none() && !self.given.kind().is_pane() {
            return done(self, Err(OpError::ClaudeNeedsPanes { respawn: None }));
        }
        let taken: Vec<&str> = self
            .cache
            .file()
            .members
            .iter()
            .map(|m| m.name.as_str())
            .chain(self.roster.starting())
            .collect();
        let name = match unique_member_name(requested, &taken) {
            Ok(name) => name,
            Err(e) => {
                let e = OpError::BadName {
                    requested: requested.to_string(),
                    why: e.to_string(),
                };
                return done(self, Err(e));
            }
        };
        let color = self.roster.take_color();
        let mode = if flags.plan_mode_required {
            PermissionMode::Plan
        } else {
            flags.mode.unwrap_or(self.lead_mode.for_teammate())
        };
        let worktree = if flags
            .worktree
            .unwrap_or(self.settings.worktree_by_default())
        {
            match self.worktree_ask(flags.host.as_deref()) {
                Ok(ask) => Some(ask),
                Err(e) => {
                    let why = e.to_string();
                    return done(self, Err(OpError::NoWorktree { name, why }));
                }
            }
        } else {
            None
        };
        let plan = Plan {
            name,
            requested: requested.to_string(),
            // On a host: its `dir` there (the host's executor knows it), unless a worktree.
            cwd: if flags.host.is_some() {
                PathBuf::new()
            } else {
                self.given.cwd().to_path_buf()
            },
            worktree_path: None,
            color,
            mode,
            plan_mode_required: flags.plan_mode_required,
            prompt: prompt.to_string(),
            claude,
            model: self.settings.teammate_model().map(str::to_string),
            base: None,
            host: flags.host.clone(),
        };
        self.start_planned(plan, Before::Spawn { worktree }, Outcome::Spawned, done);
    }

    /// Where a new teammate's worktree is made: in the lead's checkout, or in the repository
    /// at `host`'s `dir` (over its ssh master); the worktrees of the members there are taken.
    fn worktree_ask(
        &self,
        host: Option<&str>,
    ) -> Result<WorktreeAsk, crate::backend::BackendError> {
        let from = self.branch_from(host)?;
        let repo = match (host, &self.hosts_git) {
            (Some(host), Some(hosts)) => {
                PathBuf::from(hosts.config(host)?.dir.as_deref().unwrap_or("~"))
            }
            _ => self.given.cwd().to_path_buf(),
        };
        let in_use = self
            .cache
            .file()
            .members
            .iter()
            .filter(|m| crate::backend::hosts::remote::member_host(m) == host)
            .filter_map(|m| m.worktree_path.as_deref().map(PathBuf::from))
            .collect();
        Ok(WorktreeAsk { repo, in_use, from })
    }

    /// `/respawn NAME`: a teammate that stopped, or did not survive its lead, starts again
    /// with the same name, prompt, mode, agent, model, color and worktree.
    pub fn respawn(&mut self, name: &str, done: Done) {
        if self.phase != Phase::Running {
            return done(self, Err(OpError::ShuttingDown));
        }
        let name = name.to_string();
        self.with_fresh_team(move |c| c.respawn_now(&name, done));
    }

    fn respawn_now(&mut self, name: &str, done: Done) {
        let Some(member) = self
            .cache
            .file()
            .member(name)
            .filter(|m| !m.is_lead())
            .cloned()
        else {
            let e = self.no_such_teammate_error(name);
            return done(self, Err(e));
        };
        let running = self.roster.get(name).is_none_or(|t| t.stopped().is_none());
        if running || self.roster.is_starting(name) {
            let e = OpError::StillRuns {
                name: name.to_string(),
                how: None,
            };
            return done(self, Err(e));
        }
        let claude = self.record.is_claude(name);
        if claude && !self.given.kind().is_pane() {
            let e = OpError::ClaudeNeedsPanes {
                respawn: Some(name.to_string()),
            };
            return done(self, Err(e));
        }
        let plan = Plan {
            name: member.name.clone(),
            requested: member.name.clone(),
            cwd: PathBuf::from(&member.cwd),
            worktree_path: member.worktree_path.clone(),
            color: member
                .palette_color()
                .unwrap_or_else(|| self.roster.next_color()),
            mode: member.permission_mode(),
            plan_mode_required: member.plan_mode_required == Some(true),
            prompt: member.prompt.clone().unwrap_or_default(),
            claude,
            model: (member.model.clone())
                .or_else(|| self.settings.teammate_model().map(str::to_string)),
            base: self.record.base_of(name).map(str::to_string),
            host: crate::backend::hosts::remote::member_host(&member).map(str::to_string),
        };
        self.roster.forget(name);
        let before = Before::Respawn {
            agent: format!("{name}@{}", self.given.team()),
        };
        self.start_planned(plan, before, Outcome::Respawned, done);
    }

    /// Takes the name, runs the start as a job in the teammate's runtime lane, and takes its
    /// result on the loop.
    fn start_planned(
        &mut self,
        plan: Plan,
        before: Before,
        outcome: fn(Started) -> Outcome,
        done: Done,
    ) {
        let name = plan.name.clone();
        self.roster.start_began(&name);
        if plan.claude {
            // Its member says `isActive: true` from the start (see `start`): the lead's word,
            // not a turn, until the client shows one.
            // Its first turn is watched by `check_first_turns`, not as a mark.
            self.roster.entry(&name).true_is_the_leads(now_ms());
        }
        let start = Start {
            executor: self.given.executor().clone(),
            team: self.given.team().to_string(),
            kind: self.given.kind(),
            plan,
            before,
        };
        self.runtime_job(
            &name,
            move |home| start.run(home),
            move |c, result| c.on_started(result, outcome, done),
        );
    }

    /// A start's job is done: the name is free again, the teammate tracked and recorded.
    fn on_started(&mut self, result: StartResult, outcome: fn(Started) -> Outcome, done: Done) {
        let StartResult {
            plan,
            prepared,
            started,
            kept,
        } = result;
        self.roster.start_ended(&plan.name);
        if let Some(prepared) = &prepared {
            self.note(worktree_note(&plan.name, prepared));
        }
        if let Some((path, work)) = kept {
            self.note(format!("Kept worktree {}: {work}.", path.display()));
        }
        let spawned = match started {
            Ok(spawned) => spawned,
            Err(e) => {
                if let Some(t) = self.roster.get_mut(&plan.name) {
                    t.drop_mark();
                }
                self.reload_team();
                return done(self, Err(e));
            }
        };
        let name = plan.name.clone();
        if let Some(prepared) = prepared {
            let w = prepared.worktree;
            self.worktrees.give(&name, w);
        }
        let tracking = self.roster.entry(&name);
        if plan.claude {
            tracking.client_mut().started();
        }
        self.liveness_wake.notify_one();
        self.record.started(
            &name,
            TeammateRecord {
                claude: plan.claude,
                session_id: spawned.session_id.clone(),
                base: plan.base.clone(),
            },
        );
        self.save_record();
        if let Some(member) = spawned.member {
            self.cache.add_member(member);
        }
        self.reload_team();
        let started = Started {
            name,
            requested: plan.requested,
            color: plan.color,
            kind: spawned.spawned.kind,
            pane_id: spawned.spawned.pane_id,
            claude: plan.claude,
            mode: plan.mode,
            plan_mode_required: plan.plan_mode_required,
        };
        done(self, Ok(outcome(started)))
    }
}

/// What a start does before the member is added.
enum Before {
    /// A new teammate: a worktree when asked for.
    Spawn { worktree: Option<WorktreeAsk> },
    /// A teammate that stopped: it must not still run anywhere (`agent` is its id), and its
    /// old member entry and whatever is left of its pane go first.
    Respawn { agent: String },
}

/// A worktree to prepare for a new teammate.
#[derive(Clone)]
struct WorktreeAsk {
    /// The checkout it is made from: the lead's, or the host's `dir`.
    repo: PathBuf,
    /// Worktrees of current members there (never handed out again).
    in_use: Vec<PathBuf>,
    /// Where: the lead's machine or the teammate's host.
    from: BranchFrom,
}

/// One teammate's start, off the loop.
struct Start {
    executor: Arc<dyn TeammateExecutor>,
    team: String,
    kind: BackendKind,
    plan: Plan,
    before: Before,
}

/// How a start went.
struct StartResult {
    plan: Plan,
    /// The worktree it was given (kept only when it started).
    prepared: Option<Prepared>,
    started: Result<SpawnedMember, OpError>,
    /// A worktree that was made for it and kept after a failed start (it held work).
    kept: Option<(PathBuf, String)>,
}

/// A teammate that runs: where, its member entry as added, its session id.
struct SpawnedMember {
    spawned: Spawned,
    member: Option<Member>,
    session_id: Option<String>,
}

impl Start {
    async fn run(self, home: Home) -> StartResult {
        let Start {
            executor,
            team,
            kind,
            mut plan,
            before,
        } = self;
        let name = plan.name.clone();
        let mut prepared = None;
        let mut place = None;
        let checked = match before {
            Before::Spawn { worktree } => {
                // A host's own program is found there by the spawn itself.
                let here = plan.claude && plan.host.is_none();
                match check_program(&executor, here, &name).await {
                    Err(e) => Err(e),
                    Ok(()) => match worktree {
                        None => Ok(()),
                        Some(ask) => match prepare_worktree(ask.clone(), &team, &name).await {
                            Ok(p) => {
                                place = Some(ask.from);
                                plan.cwd = p.worktree.path.clone();
                                plan.worktree_path =
                                    Some(p.worktree.path.to_string_lossy().into_owned());
                                plan.base = Some(p.base.clone());
                                prepared = Some(p);
                                Ok(())
                            }
                            Err(e) => Err(OpError::NoWorktree {
                                name: name.clone(),
                                why: e.to_string(),
                            }),
                        },
                    },
                }
            }
            Before::Respawn { agent } => {
                respawn_checks(&executor, &home, &team, &agent, &plan).await
            }
        };
        let started = match checked {
            Ok(()) => start(&executor, &home, &team, kind, &plan).await,
            Err(e) => Err(e),
        };
        let mut kept = None;
        if started.is_err()
            && let Some(p) = prepared.take()
        {
            kept = undo_worktree(p.worktree, place.unwrap_or(BranchFrom::Local)).await;
        }
        StartResult {
            plan,
            prepared,
            started,
            kept,
        }
    }
}

/// The executor has the program the teammate runs.
async fn check_program(
    executor: &Arc<dyn TeammateExecutor>,
    claude: bool,
    name: &str,
) -> Result<(), OpError> {
    executor
        .check_program(claude)
        .await
        .map_err(|why| OpError::NoProgram {
            name: name.to_string(),
            respawn: false,
            why,
        })
}

/// Before a respawn: the teammate runs nowhere (known by process, anywhere — in a pane the
/// lead lost, or none: a second process on the same inbox would answer for it twice), its
/// program is there, what is left of its pane goes, and its old member entry too.
async fn respawn_checks(
    executor: &Arc<dyn TeammateExecutor>,
    home: &Home,
    team: &str,
    agent: &str,
    plan: &Plan,
) -> Result<(), OpError> {
    let name = plan.name.clone();
    let (root, who) = (home.root.clone(), agent.to_string());
    let still = tokio::task::spawn_blocking(move || {
        use crate::backend::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
        let table = ProcTable::scan(SCAN_DEADLINE);
        crate::backend::reap::agent_processes(&table, &root, &who, true)
            .first()
            .map(|p| p.describe())
    })
    .await
    .ok()
    .flatten();
    if let Some(who) = still {
        return Err(OpError::StillRuns {
            name,
            how: Some(who),
        });
    }
    if let Err(why) = executor
        .check_program(plan.claude && plan.host.is_none())
        .await
    {
        return Err(OpError::NoProgram {
            name,
            respawn: true,
            why,
        });
    }
    // Whatever is left of it (a dead pane) goes first.
    let _ = executor.kill(&name).await;
    let (home, team, member) = (home.clone(), team.to_string(), name.clone());
    let removed = tokio::task::spawn_blocking(move || {
        crate::store::remove_member(&home, &team, &member).map(|_| ())
    })
    .await
    .map_err(|e| e.to_string())
    .and_then(|r| r.map_err(|e| e.to_string()));
    removed.map_err(|why| OpError::MemberNotReplaced { name, why })
}

/// Adds the member, then starts it through the executor; on failure the member goes.
async fn start(
    executor: &Arc<dyn TeammateExecutor>,
    home: &Home,
    team: &str,
    kind: BackendKind,
    plan: &Plan,
) -> Result<SpawnedMember, OpError> {
    let mut member = Member::new(&plan.name, team, &plan.cwd.to_string_lossy());
    member.prompt = Some(plan.prompt.clone());
    member.color = Some(plan.color.as_str().to_string());
    member.plan_mode_required = plan.plan_mode_required.then_some(true);
    member.backend_type = Some(kind.as_str().to_string());
    member.tmux_pane_id = if kind.is_pane() {
        String::new()
    } else {
        kind.as_str().to_string()
    };
    member.mode = Some(plan.mode.as_str().to_string());
    // A `claude` client starts its first turn by setting its own `isActive: true` in place,
    // un-awaited, with no lock (2.1.45), which can tear the file under its own next read, or
    // meet its turn-end `false` still on its way (docs/PROTOCOL.md §4). A member that already
    // says `true` is left alone by the client: no write at the first turn's start.
    if plan.claude {
        member.is_active = Some(true);
    }
    member.model = plan.model.clone();
    member.worktree_path = plan.worktree_path.clone();
    if let Some(host) = &plan.host {
        member.extra.insert(
            crate::backend::hosts::remote::HOST_KEY.to_string(),
            serde_json::json!(host),
        );
    }
    let name = plan.name.clone();
    let (h, t, m) = (home.clone(), team.to_string(), member.clone());
    let added = tokio::task::spawn_blocking(move || crate::store::add_member(&h, &t, m))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
    if let Err(e) = added {
        return Err(OpError::MemberNotAdded { name, why: e });
    }
    // A `claude` teammate gets a session id of the lead's choosing: its transcript is then
    // known by name (mode, model, usage, final answers).
    let session_id = plan
        .claude
        .then(|| uuid::Uuid::new_v4().hyphenated().to_string());
    let request = SpawnRequest {
        color: Some(plan.color.as_str().to_string()),
        mode: plan.mode,
        plan_mode_required: plan.plan_mode_required,
        prompt: Some(plan.prompt.clone()),
        claude: plan.claude,
        model: plan.model.clone(),
        session_id: session_id.clone(),
        host: plan.host.clone(),
        ..SpawnRequest::new(&name, plan.cwd.clone())
    };
    match executor.spawn(request).await {
        Ok(spawned) => Ok(SpawnedMember {
            spawned,
            member: Some(member),
            session_id,
        }),
        Err(e) => {
            let (h, t, m) = (home.clone(), team.to_string(), name.clone());
            let _ =
                tokio::task::spawn_blocking(move || crate::store::remove_member(&h, &t, &m)).await;
            Err(OpError::NotStarted {
                name,
                why: e.to_string(),
            })
        }
    }
}

/// A worktree for `name` (git runs on the blocking pool).
async fn prepare_worktree(
    ask: WorktreeAsk,
    team: &str,
    name: &str,
) -> Result<Prepared, crate::backend::BackendError> {
    let (team, name) = (team.to_string(), name.to_string());
    tokio::task::spawn_blocking(move || {
        worktree::prepare_in(ask.from.place(), &ask.repo, &team, &name, &ask.in_use)
    })
    .await
    .map_err(|e| {
        crate::backend::BackendError::Unavailable(format!("preparing the worktree failed: {e}"))
    })?
}

/// The teammate did not start: its worktree goes again (only when it holds no work; then its
/// path and what it holds are returned).
async fn undo_worktree(worktree: Worktree, from: BranchFrom) -> Option<(PathBuf, String)> {
    let path = worktree.path.clone();
    match tokio::task::spawn_blocking(move || worktree::retire_in(from.place(), &worktree)).await {
        Ok(Ok(Retired::Removed)) => None,
        Ok(Ok(Retired::Kept(work))) => Some((path, work.to_string())),
        Ok(Err(e)) => {
            tracing::warn!("removing the worktree {}: {e}", path.display());
            None
        }
        Err(e) => {
            tracing::warn!("removing the worktree {}: {e}", path.display());
            None
        }
    }
}

/// What the transcript says about a teammate's worktree.
fn worktree_note(name: &str, prepared: &Prepared) -> String {
    let w = &prepared.worktree;
    let on = w
        .host
        .as_ref()
        .map(|h| format!(" on {h}"))
        .unwrap_or_default();
    let at = format!("{}{on} (branch {})", w.path.display(), w.branch);
    let how = match prepared.how {
        How::Created => String::new(),
        How::Reused => ", the clean one a previous session left, brought up to date".to_string(),
        How::Replaced => ", on the leftover branch, which had nothing unmerged".to_string(),
    };
    match &prepared.instead_because {
        Some(why) => format!("Not touching {why}: {name} works in {at}{how} instead."),
        None => format!("{name} works in its own worktree {at}{how}."),
    }
}
