//! `/spawn`: checks first (the lead is not quitting, a Claude Code teammate has a pane backend,
//! the program a pane teammate runs is there, the name is free), then the worktree (a new one,
//! or a clean leftover reused, never one holding work), then the member entry, then the
//! runtime or pane (which clears the inbox and writes the prompt as the first message from
//! `team-lead`). Nothing is made before the checks pass; what was made is undone when the start
//! fails. Git and file checks run on the blocking pool, never on the controller's loop.

use std::path::PathBuf;

use super::state::{Controller, Phase};
use crate::backend::executor::{SpawnRequest, TeammateExecutor};
use crate::backend::program;
use crate::backend::worktree::{self, How, Prepared, Retired, Worktree};
use crate::protocol::names::unique_member_name;
use crate::protocol::{Color, Member, PermissionMode};

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

impl Controller {
    /// `/spawn` with only the common options (in a pane when the session has a pane backend).
    pub async fn spawn_teammate(
        &mut self,
        requested: &str,
        plan_mode_required: bool,
        mode: Option<PermissionMode>,
        prompt: &str,
    ) -> Option<String> {
        let flags = SpawnFlags {
            plan_mode_required,
            mode,
            ..SpawnFlags::default()
        };
        self.spawn_teammate_with(requested, flags, prompt).await
    }

    /// `/spawn`: see the module documentation. Returns the teammate's name.
    pub async fn spawn_teammate_with(
        &mut self,
        requested: &str,
        flags: SpawnFlags,
        prompt: &str,
    ) -> Option<String> {
        if self.phase != Phase::Running {
            self.note("The lead is shutting down: no new teammates.");
            return None;
        }
        let in_pane = self.panes.is_some();
        let claude = flags.claude.unwrap_or(self.claude_by_default);
        if claude && !in_pane {
            self.note(
                "Claude Code teammates need a pane backend (tmux or iTerm2); this session runs teammates in-process.",
            );
            return None;
        }
        if let Err(e) = self.check_program(claude).await {
            self.note(format!("Cannot spawn {requested}: {e}"));
            return None;
        }
        self.reload_team();
        let taken: Vec<&str> = self
            .team_file
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        let name = match unique_member_name(requested, &taken) {
            Ok(n) => n,
            Err(e) => {
                self.note(format!("Cannot spawn `{requested}`: {e}"));
                return None;
            }
        };
        let mut cwd = self.cwd.clone();
        let mut worktree = None;
        if flags.worktree.unwrap_or(self.worktree_by_default) {
            match self.prepare_worktree(&name).await {
                Ok(prepared) => {
                    self.note(worktree_note(&name, &prepared));
                    cwd = prepared.worktree.path.clone();
                    self.worktrees
                        .retain(|(_, w)| w.path != prepared.worktree.path);
                    self.worktrees
                        .push((name.clone(), prepared.worktree.clone()));
                    worktree = Some(prepared.worktree);
                }
                Err(e) => {
                    self.note(format!("Cannot give {name} a worktree: {e}"));
                    return None;
                }
            }
        }
        let color = Color::nth(self.spawned);
        self.spawned += 1;
        let plan_mode_required = flags.plan_mode_required;
        let mode = if plan_mode_required {
            PermissionMode::Plan
        } else {
            flags.mode.unwrap_or(self.lead_mode.for_teammate())
        };
        let mut member = Member::new(&name, &self.team, &cwd.to_string_lossy());
        member.prompt = Some(prompt.to_string());
        member.color = Some(color.as_str().to_string());
        member.plan_mode_required = plan_mode_required.then_some(true);
        let where_ = if in_pane {
            let label = self.backend.clone();
            member.backend_type = Some(label.clone());
            member.tmux_pane_id = String::new();
            label
        } else {
            member.backend_type = Some("in-process".to_string());
            member.tmux_pane_id = "in-process".to_string();
            "in-process".to_string()
        };
        member.mode = Some(mode.as_str().to_string());
        member.worktree_path = worktree
            .as_ref()
            .map(|w| w.path.to_string_lossy().into_owned());
        if let Err(e) = crate::store::add_member(&self.home, &self.team, member) {
            self.note(format!("Cannot add {name} to the team: {e}"));
            self.undo_worktree(worktree).await;
            return None;
        }
        let request = SpawnRequest {
            color: Some(color.as_str().to_string()),
            mode,
            plan_mode_required,
            prompt: Some(prompt.to_string()),
            claude,
            model: self.teammate_model.clone(),
            ..SpawnRequest::new(&name, cwd)
        };
        let started = if in_pane {
            self.spawn_in_pane(request)
                .await
                .map(|pane| format!("{where_} pane {pane}"))
        } else {
            self.executor
                .spawn(request)
                .await
                .map(|_| where_)
                .map_err(|e| e.to_string())
        };
        let place = match started {
            Ok(place) => place,
            Err(e) => {
                self.note(format!("Could not start {name}: {e}"));
                let _ = crate::store::remove_member(&self.home, &self.team, &name);
                self.undo_worktree(worktree).await;
                self.reload_team();
                return None;
            }
        };
        self.tracking.entry(name.clone()).or_default();
        self.reload_team();
        let renamed = if name != requested {
            format!(" (as {name})")
        } else {
            String::new()
        };
        self.note(format!(
            "Spawned {name}{renamed}: {color}, {place}{}, {mode} mode{}.",
            if claude { ", Claude Code" } else { "" },
            if plan_mode_required {
                ", plan approval required"
            } else {
                ""
            }
        ));
        Some(name)
    }

    /// A pane teammate's program (`claude`, `$TEAMLEAD_CLAUDE_BIN`, or this `teamlead`) must
    /// be there; in-process teammates need none.
    async fn check_program(&self, claude: bool) -> Result<(), String> {
        let Some(panes) = &self.panes else {
            return Ok(());
        };
        let (program, from_env) =
            program::for_spawn(claude, &panes.program, &|k| std::env::var(k).ok());
        let path = std::env::var("PATH").ok();
        tokio::task::spawn_blocking(move || program::resolve(&program, path.as_deref(), from_env))
            .await
            .map_err(|e| format!("checking the program failed: {e}"))?
            .map(|_| ())
            .map_err(|e| e.to_string())
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
