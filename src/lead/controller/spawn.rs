//! Spawning through the session's executor: `/spawn` (and the lead model's SpawnTeammate, and
//! the demo) checks first (the lead is not quitting, a Claude Code teammate has a pane backend,
//! the executor has the program a teammate runs, the name is free), then picks the color, mode
//! and worktree (a new one, or a clean leftover reused, never one holding work), adds the
//! member to `config.json`, then the executor starts it (in-process task or pane: one code
//! path). Nothing is made before the checks pass; what was made is undone when the start fails.
//! Git and file checks run on the blocking pool, never on the controller's loop. `/respawn NAME` starts a
//! teammate that stopped (or did not survive its lead) again under the same name, with the
//! same prompt, mode, agent, model and worktree. How each teammate was started is kept in the
//! session record for the next lead.

use std::path::PathBuf;

use super::outcome::{OpError, OpResult, Outcome, Started};
use super::state::{Controller, Phase};
use super::store_worker::{Lane, worker_gone};
use crate::backend::executor::SpawnRequest;
use crate::backend::worktree::{self, How, Prepared, Retired, Worktree};
use crate::protocol::names::unique_member_name;
use crate::protocol::{BackendKind, Color, Member, PermissionMode};
use crate::store::TeammateRecord;

/// The options of one `/spawn`; `None` takes the session's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpawnFlags {
    pub plan_mode_required: bool,
    pub mode: Option<PermissionMode>,
    /// A real `claude` process.
    pub claude: Option<bool>,
    /// Its own git worktree.
    pub worktree: Option<bool>,
}

/// Everything decided about one teammate before it starts.
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
}

impl Controller {
    /// `/spawn` with only the common options.
    pub async fn spawn_teammate(
        &mut self,
        requested: &str,
        plan_mode_required: bool,
        mode: Option<PermissionMode>,
        prompt: &str,
    ) -> OpResult {
        let flags = SpawnFlags {
            plan_mode_required,
            mode,
            ..SpawnFlags::default()
        };
        self.spawn_teammate_with(requested, flags, prompt).await
    }

    /// `/spawn`: a free name, the next palette color, the mode, a worktree when asked; then
    /// [`Controller::start_planned`].
    pub async fn spawn_teammate_with(
        &mut self,
        requested: &str,
        flags: SpawnFlags,
        prompt: &str,
    ) -> OpResult {
        if self.phase != Phase::Running {
            return Err(OpError::Refused(
                "The lead is shutting down: no new teammates.".into(),
            ));
        }
        let claude = flags.claude.unwrap_or(self.claude_by_default);
        if claude && !self.kind.is_pane() {
            return Err(OpError::Refused(format!(
                "Claude Code teammates need a pane backend ({}); this session runs teammates in-process.",
                BackendKind::pane_terminals()
            )));
        }
        if let Err(e) = self.executor.check_program(claude).await {
            return Err(OpError::Refused(format!("Cannot spawn {requested}: {e}")));
        }
        self.fresh_team().await;
        let taken: Vec<&str> = self
            .team_file
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        let name = unique_member_name(requested, &taken)
            .map_err(|e| OpError::Refused(format!("Cannot spawn `{requested}`: {e}")))?;
        let mut cwd = self.cwd.clone();
        let mut worktree = None;
        let mut base = None;
        if flags.worktree.unwrap_or(self.worktree_by_default) {
            match self.prepare_worktree(&name).await {
                Ok(prepared) => {
                    self.note(worktree_note(&name, &prepared));
                    cwd = prepared.worktree.path.clone();
                    self.worktrees
                        .retain(|(_, w)| w.path != prepared.worktree.path);
                    self.worktrees
                        .push((name.clone(), prepared.worktree.clone()));
                    base = Some(prepared.base.clone());
                    worktree = Some(prepared.worktree);
                }
                Err(e) => {
                    return Err(OpError::Refused(format!(
                        "Cannot give {name} a worktree: {e}"
                    )));
                }
            }
        }
        let color = Color::nth(self.spawned);
        self.spawned += 1;
        let mode = if flags.plan_mode_required {
            PermissionMode::Plan
        } else {
            flags.mode.unwrap_or(self.lead_mode.for_teammate())
        };
        let plan = Plan {
            name,
            requested: requested.to_string(),
            cwd,
            worktree_path: worktree
                .as_ref()
                .map(|w| w.path.to_string_lossy().into_owned()),
            color,
            mode,
            plan_mode_required: flags.plan_mode_required,
            prompt: prompt.to_string(),
            claude,
            model: self.teammate_model.clone(),
            base,
        };
        let started = self.start_planned(plan).await;
        if started.is_err() {
            self.undo_worktree(worktree).await;
        }
        started.map(Outcome::Spawned)
    }

    /// `/respawn NAME`: a teammate that stopped, or did not survive its lead, starts again
    /// with the same name, prompt, mode, agent, model, color and worktree.
    pub async fn respawn(&mut self, name: &str) -> OpResult {
        if self.phase != Phase::Running {
            return Err(OpError::ShuttingDown);
        }
        self.fresh_team().await;
        let Some(member) = self
            .team_file
            .member(name)
            .filter(|m| !m.is_lead())
            .cloned()
        else {
            return Err(self.no_such_teammate_error(name));
        };
        let running = self.tracking.get(name).is_none_or(|t| t.stopped.is_none());
        if running {
            return Err(OpError::Refused(format!(
                "{name} is running: /kill {name} first to start it again."
            )));
        }
        // Known by process, anywhere (in a pane the lead lost, or none): a second process on
        // the same inbox would answer for it twice.
        let (root, agent) = (self.home.root.clone(), format!("{name}@{}", self.team));
        let still = tokio::task::spawn_blocking(move || {
            use crate::backend::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
            let table = ProcTable::scan(SCAN_DEADLINE);
            crate::backend::reap::agent_processes(&table, &root, &agent, true)
                .first()
                .map(|p| p.describe())
        })
        .await
        .ok()
        .flatten();
        if let Some(who) = still {
            return Err(OpError::Refused(format!(
                "{name} still runs ({who}): /kill {name} first to start it again."
            )));
        }
        let claude = self.record.teammates.get(name).is_some_and(|r| r.claude);
        if claude && !self.kind.is_pane() {
            return Err(OpError::Refused(format!(
                "{name} is a Claude Code teammate and this session runs teammates in-process."
            )));
        }
        if let Err(e) = self.executor.check_program(claude).await {
            return Err(OpError::Refused(format!("Cannot respawn {name}: {e}")));
        }
        // Whatever is left of it (a dead pane) goes first.
        let _ = self.executor.kill(name).await;
        let plan = Plan {
            name: member.name.clone(),
            requested: member.name.clone(),
            cwd: PathBuf::from(&member.cwd),
            worktree_path: member.worktree_path.clone(),
            color: member
                .palette_color()
                .unwrap_or_else(|| Color::nth(self.spawned)),
            mode: member.permission_mode(),
            plan_mode_required: member.plan_mode_required == Some(true),
            prompt: member.prompt.clone().unwrap_or_default(),
            claude,
            model: member.model.clone().or_else(|| self.teammate_model.clone()),
            base: self.record.teammates.get(name).and_then(|r| r.base.clone()),
        };
        let (team, member) = (self.team.clone(), name.to_string());
        let removed = self
            .store
            .wait(Lane::Team, move |home| {
                crate::store::remove_member(home, &team, &member)
            })
            .await
            .unwrap_or_else(|| Err(worker_gone()));
        if let Err(e) = removed {
            return Err(OpError::Refused(format!(
                "Cannot respawn {name}: its member entry cannot be replaced: {e}"
            )));
        }
        self.tracking.remove(name);
        self.start_planned(plan).await.map(Outcome::Respawned)
    }

    /// Adds the member, then starts it through the executor; on failure the member goes.
    async fn start_planned(&mut self, plan: Plan) -> Result<Started, OpError> {
        let kind = self.kind;
        let mut member = Member::new(&plan.name, &self.team, &plan.cwd.to_string_lossy());
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
        member.model = plan.model.clone();
        member.worktree_path = plan.worktree_path.clone();
        let name = plan.name.clone();
        let team = self.team.clone();
        let added = self
            .store
            .wait(Lane::Team, move |home| {
                crate::store::add_member(home, &team, member)
            })
            .await
            .unwrap_or_else(|| Err(worker_gone()));
        if let Err(e) = added {
            return Err(OpError::Refused(format!(
                "Cannot add {name} to the team: {e}"
            )));
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
            ..SpawnRequest::new(&name, plan.cwd.clone())
        };
        let spawned = match self.executor.spawn(request).await {
            Ok(spawned) => spawned,
            Err(e) => {
                let (team, member) = (self.team.clone(), name.clone());
                self.store.submit(
                    Lane::Team,
                    move |home| crate::store::remove_member(home, &team, &member),
                    |c, _| c.reload_team(),
                );
                return Err(OpError::Refused(format!("Could not start {name}: {e}")));
            }
        };
        let tracking = self.tracking.entry(name.clone()).or_default();
        if plan.claude {
            tracking.awaiting_first_turn = Some(tokio::time::Instant::now());
        }
        self.liveness_wake.notify_one();
        self.record.teammates.insert(
            name.clone(),
            TeammateRecord {
                claude: plan.claude,
                session_id,
                base: plan.base.clone(),
            },
        );
        self.save_record();
        self.fresh_team().await;
        Ok(Started {
            name,
            requested: plan.requested,
            color: plan.color,
            kind: spawned.kind,
            pane_id: spawned.pane_id,
            claude: plan.claude,
            mode: plan.mode,
            plan_mode_required: plan.plan_mode_required,
        })
    }

    /// A worktree for `name` (git runs on the blocking pool). Worktrees of current members are
    /// never handed out again.
    async fn prepare_worktree(&self, name: &str) -> Result<Prepared, String> {
        let in_use: Vec<PathBuf> = self
            .team_file
            .members
            .iter()
            .filter_map(|m| m.worktree_path.as_deref().map(PathBuf::from))
            .collect();
        let (cwd, team, name) = (self.cwd.clone(), self.team.clone(), name.to_string());
        tokio::task::spawn_blocking(move || worktree::prepare(&cwd, &team, &name, &in_use))
            .await
            .map_err(|e| format!("preparing the worktree failed: {e}"))?
            .map_err(|e| e.to_string())
    }

    /// The teammate did not start: its worktree goes again (only when it holds no work).
    async fn undo_worktree(&mut self, worktree: Option<Worktree>) {
        let Some(worktree) = worktree else { return };
        self.worktrees.retain(|(_, w)| w.path != worktree.path);
        let path = worktree.path.clone();
        match tokio::task::spawn_blocking(move || worktree::retire(&worktree)).await {
            Ok(Ok(Retired::Removed)) => {}
            Ok(Ok(Retired::Kept(work))) => {
                self.note(format!("Kept worktree {}: {work}.", path.display()))
            }
            Ok(Err(e)) => tracing::warn!("removing the worktree {}: {e}", path.display()),
            Err(e) => tracing::warn!("removing the worktree {}: {e}", path.display()),
        }
    }
}

/// What the transcript says about a teammate's worktree.
fn worktree_note(name: &str, prepared: &Prepared) -> String {
    let w = &prepared.worktree;
    let at = format!("{} (branch {})", w.path.display(), w.branch);
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
