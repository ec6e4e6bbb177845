//! Quitting: shutdown requests to every teammate still running, waiting (up to the quit
//! timeout) for their `shutdown_approved`, then the executor ends what is left, teammate
//! worktrees are retired (removed when they hold no work, kept and named otherwise; the list
//! of them with what each holds goes to the screens, `LeadEvent::WorktreesAtQuit`, which print
//! it on the terminal once they have closed), the team
//! and its tasks are deleted, the liveness lock is released and `Exited` said. Whatever waits
//! in the queues is refused first, so no teammate stays blocked on an answer that will not
//! come. `/quit --keep` ([`Controller::detach`]) leaves instead: nothing is refused, stopped or
//! deleted; the team waits for the next lead.

use std::path::PathBuf;

use tokio::time::Instant;

use super::state::{Controller, Ending, Phase};
use super::store_worker::Lane;
use crate::backend::worktree::{self, Retired, Worktree};
use crate::lead::contract::{LeadEvent, PermissionDecision, PlanDecision};
use crate::lead::review::{WorktreeFate, WorktreeReport};
use crate::store::{self, StoreError};

/// How long quitting waits for the store jobs still running: past Claude Code's 10 s
/// staleness rule, so a job waiting on a dead writer's lock still completes.
const SETTLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(12);

impl Controller {
    /// Starts the graceful quit (idempotent).
    pub fn begin_quit(&mut self, why: &str) {
        if self.phase != Phase::Running {
            return;
        }
        tracing::info!("lead quitting: {why}");
        self.deny_everything_pending("The lead is shutting down.");
        let names = self.running_teammates();
        // An idle teammate of this process is stopped with the session (`end_quit`): the
        // handshake would write a request into an inbox only it reads and an answer into the
        // lead's, in a team deleted a moment later (100 of them: ~400 directory operations
        // on the team's inbox folder, most of the quit's time).
        let (quiet, names): (Vec<String>, Vec<String>) = names
            .into_iter()
            .partition(|name| self.stops_with_the_session(name));
        for name in &quiet {
            self.roster
                .entry(name)
                .stop("stopped with the lead".to_string());
        }
        if !quiet.is_empty() {
            self.note(format!(
                "{} idle teammate(s) of this process shut down with the lead.",
                quiet.len()
            ));
        }
        let mut asked = 0;
        for name in &names {
            let pending = self
                .roster
                .get(name)
                .is_some_and(|t| t.shutdown().is_waiting());
            if !pending {
                // Written in the background; a request that cannot be written is told, and
                // the teammate is killed at the deadline.
                self.send_shutdown_request(name, Some("the lead is quitting"), |_, _| {});
            }
            asked += 1;
        }
        if asked > 0 {
            self.note(format!(
                "Asking {asked} teammate(s) to shut down (waiting up to {:.1} s)…",
                self.settings.quit_timeout().as_secs_f64()
            ));
        }
        self.phase = Phase::Quitting {
            deadline: Instant::now() + self.settings.quit_timeout(),
        };
    }

    /// An in-process teammate whose turns its runtime reports, idle, with nothing of the
    /// lead's on its way to start a turn on: at `/quit` it is stopped with the session, not
    /// asked.
    fn stops_with_the_session(&self, name: &str) -> bool {
        self.given.kind() == crate::protocol::BackendKind::InProcess
            && self.host_of(name).is_none()
            && !self.ledger.may_start_turn(name)
            && self.roster.get(name).is_some_and(|t| {
                t.events_drive()
                    && !t.shutdown().is_waiting()
                    && matches!(t.activity(), crate::lead::tracking::Activity::Idle { .. })
            })
    }

    /// Ends the quit when every teammate has left.
    pub fn check_quit_progress(&mut self) {
        if matches!(self.phase, Phase::Quitting { .. }) && self.running_teammates().is_empty() {
            self.finish_quit();
        }
    }

    /// The quit's last step: what is left is killed, the team deleted, the liveness lock
    /// released, `Exited` said. It runs after the loop ([`Controller::end`]): it waits for
    /// what is still running.
    pub fn finish_quit(&mut self) {
        if matches!(self.phase, Phase::Done | Phase::Ending(_)) {
            return;
        }
        let left = self.running_teammates();
        if !left.is_empty() {
            self.note(format!(
                "Killing {} teammate(s) that did not shut down in time: {}",
                left.len(),
                left.join(", ")
            ));
        }
        self.phase = Phase::Ending(Ending::Quit);
    }

    /// The end of the session, after the loop: `/quit` kills what is left and deletes the
    /// team; `/detach` leaves it for the next lead.
    pub async fn end(&mut self, how: Ending) {
        match how {
            Ending::Quit => self.end_quit().await,
            Ending::Detach => self.end_detach().await,
        }
    }

    async fn end_quit(&mut self) {
        // A start under way finishes first, so its pane is there for the executor to end.
        self.settle_runtime().await;
        self.given.executor().quit().await;
        tracing::debug!("quit: the executor ended its teammates");
        self.deny_everything_pending("The lead is shutting down.");
        self.settle_store().await;
        tracing::debug!("quit: the store's jobs settled");
        let merged = self.retire_merged_worktrees().await;
        self.retire_worktrees(merged).await;
        tracing::debug!("quit: worktrees retired");
        store::team_guard::unguard(self.given.home(), self.given.team());
        let team = self.given.team().to_string();
        let removed = self
            .store
            .wait(Lane::Team, move |home| store::delete_team(home, &team))
            .await
            .unwrap_or(Ok(()));
        if removed.is_ok() && self.given.kind().is_pane() {
            self.delete_recreated_team().await;
        }
        tracing::debug!("quit: the team removed");
        crate::lead::emergency::unregister();
        match removed {
            Ok(()) | Err(StoreError::NotFound { .. }) => {}
            Err(e) => self.note(format!("Could not delete the team: {e}")),
        }
        if let Some(demo) = self.demo.take() {
            drop(demo);
        }
        self.liveness = None;
        self.emit(LeadEvent::Exited);
        self.phase = Phase::Done;
        self.flush().await;
    }

    /// A 2.1.45 teammate killed at quit may still finish its unlocked `isActive` write, which
    /// makes the team directory again (`mkdir -p`, then config.json): for a short while after
    /// the deletion, a team directory that reappears is deleted again.
    async fn delete_recreated_team(&mut self) {
        let Ok(dir) = self.given.home().team_dir(self.given.team()) else {
            return;
        };
        let deadline = Instant::now() + std::time::Duration::from_millis(1500);
        while Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            let (dir, team) = (dir.clone(), self.given.team().to_string());
            let again = self
                .store
                .read(move |home| dir.exists() && store::delete_team(home, &team).is_ok())
                .await;
            if again == Some(true) {
                tracing::warn!(team = %self.given.team(), "a teammate's late write made the team again");
            }
        }
    }

    /// Waits for the store jobs still running (a shutdown request, a task freed, a mode
    /// written: at most until a dead writer's lock goes stale) and runs what follows each,
    /// before the team is deleted or left.
    pub(super) async fn settle_store(&mut self) {
        let settle = async {
            while !self.store.is_idle() {
                match self.store.next().await {
                    Some(then) => then(self),
                    None => break,
                }
            }
        };
        if tokio::time::timeout(SETTLE_TIMEOUT, settle).await.is_err() {
            tracing::warn!("store jobs still running at quit");
        }
    }

    /// Waits for the runtime jobs still running (a start, a kill), running what follows each.
    async fn settle_runtime(&mut self) {
        let settle = async {
            while self.order.any_busy() {
                match self.store.next().await {
                    Some(then) => then(self),
                    None => break,
                }
            }
        };
        if tokio::time::timeout(SETTLE_TIMEOUT, settle).await.is_err() {
            tracing::warn!("teammate starts still running at quit");
        }
    }

    /// Every teammate worktree of this session and of the sessions before it (the session
    /// record lists them, so a crash forgets none; and any other a member records) is removed
    /// with its branch when it holds no work, and kept and named in the transcript otherwise;
    /// the whole list (with `merged`, those a merge let go) is sent to the screens. Git runs
    /// on the blocking pool.
    async fn retire_worktrees(&mut self, merged: Vec<WorktreeFate>) {
        self.fresh_team().await;
        let mut known: Vec<(String, Worktree)> = self.worktrees.take_all();
        let others: Vec<(String, PathBuf, Option<String>)> = self
            .cache
            .file()
            .teammates()
            .filter_map(|m| {
                let host = crate::backend::hosts::remote::member_host(m).map(str::to_string);
                Some((
                    m.name.clone(),
                    PathBuf::from(m.worktree_path.as_ref()?),
                    host,
                ))
            })
            .filter(|(_, p, _)| !known.iter().any(|(_, w)| &w.path == p))
            .collect();
        known.dedup_by(|a, b| a.1.path == b.1.path);
        if known.is_empty() && others.is_empty() {
            self.report_worktrees(merged, String::new());
            return;
        }
        let repo = self.given.cwd().to_path_buf();
        // Each where it is: a worktree on a host is retired there, by the same rules.
        let known: Vec<_> = known
            .into_iter()
            .map(|(name, w)| {
                let from = self.branch_from(w.host.as_deref());
                (name, w, from)
            })
            .collect();
        let others: Vec<_> = others
            .into_iter()
            .map(|(name, path, host)| (name, path, self.branch_from(host.as_deref())))
            .collect();
        let (results, fates, lead_branch) = tokio::task::spawn_blocking(move || {
            let mut results = Vec::new();
            let mut fates = Vec::new();
            for (name, w, from) in known {
                let from = match from {
                    Ok(from) => from,
                    Err(e) => {
                        let shown = w.path.display().to_string();
                        results.push((name, shown, Some(w.branch), true, Err(e)));
                        continue;
                    }
                };
                let place = from.place();
                // One an earlier session listed may be gone already (merged and retired).
                // Unknown (its host does not answer): listed, with the error retiring gives.
                let there = place.exists(&w.path).unwrap_or(true);
                let survey = worktree::survey_in(place, &w);
                let r = worktree::retire_in(place, &w);
                if there {
                    fates.push(super::review::fate(&name, &w, survey, &r));
                }
                results.push((name, place.describe(&w.path), Some(w.branch), there, r));
            }
            for (name, path, from) in others {
                let from = match from {
                    Ok(from) => from,
                    Err(e) => {
                        results.push((name, path.display().to_string(), None, true, Err(e)));
                        continue;
                    }
                };
                let place = from.place();
                let found = worktree::at_path_in(place, &path);
                let survey = match &found {
                    Ok(Some(w)) => Some(worktree::survey_in(place, w)),
                    _ => None,
                };
                let r = match &found {
                    Ok(Some(w)) => worktree::retire_in(place, w),
                    Ok(None) => Ok(Retired::Removed),
                    Err(e) => Err(e.clone()),
                };
                if let (Ok(Some(w)), Some(survey)) = (&found, survey) {
                    fates.push(super::review::fate(&name, w, survey, &r));
                }
                results.push((name, place.describe(&path), None, true, r));
            }
            (results, fates, crate::backend::git::current_branch(&repo))
        })
        .await
        .unwrap_or_default();
        let mut removed = 0;
        for (name, path, branch, there, result) in results {
            let branch = branch.map(|b| format!(" (branch {b})")).unwrap_or_default();
            match result {
                Ok(Retired::Removed) if there => removed += 1,
                Ok(Retired::Removed) => {}
                Ok(Retired::Kept(work)) => {
                    self.note(format!("Kept worktree {path}{branch} of @{name}: {work}."))
                }
                Err(e) => self.note(format!("Kept worktree {path}{branch} of @{name}: {e}")),
            }
        }
        if removed > 0 {
            self.note(format!(
                "Removed {removed} teammate worktree(s) and their branches (nothing uncommitted or unmerged)."
            ));
        }
        let mut all = merged;
        all.extend(fates);
        self.report_worktrees(all, lead_branch);
    }

    /// Sends the list of teammate worktrees to the screens (nothing when there was none).
    fn report_worktrees(&mut self, worktrees: Vec<WorktreeFate>, lead_branch: String) {
        if worktrees.is_empty() {
            return;
        }
        let lead_branch = if lead_branch.is_empty() {
            crate::backend::git::current_branch(self.given.cwd())
        } else {
            lead_branch
        };
        self.emit(LeadEvent::WorktreesAtQuit(WorktreeReport {
            team: self.given.team().to_string(),
            lead_branch,
            worktrees,
        }));
    }

    /// Teammates that have not stopped (those to ask and wait for at quit).
    fn running_teammates(&self) -> Vec<String> {
        self.cache
            .file()
            .teammates()
            .filter(|m| {
                self.roster
                    .get(&m.name)
                    .is_none_or(|t| t.stopped().is_none())
            })
            .map(|m| m.name.clone())
            .collect()
    }

    /// `/quit --keep`: the lead leaves and the team stays (tasks, messages, teammates). Pane
    /// teammates wait for a new lead for their grace period; in-process ones end with this
    /// process. Nothing queued is answered: the next lead asks again. The leaving runs after
    /// the loop ([`Controller::end`]).
    pub fn detach(&mut self) {
        if self.phase != Phase::Running {
            return;
        }
        self.record.keep();
        self.save_record();
        self.phase = Phase::Ending(Ending::Detach);
    }

    async fn end_detach(&mut self) {
        let running = self.running_teammates().len();
        self.settle_store().await;
        self.given.executor().detach();
        crate::lead::emergency::unregister();
        let grace = crate::agent::process::lead_grace().as_secs();
        self.note(format!(
            "Left the team `{}` for the next lead: its tasks and messages are kept. {running} teammate(s) wait {grace} s for a lead (`teamlead --team {}` resumes the team), then exit.",
            self.given.team(), self.given.team()
        ));
        self.liveness = None;
        self.emit(LeadEvent::Exited);
        self.phase = Phase::Done;
        self.flush().await;
    }

    /// Answers every queued permission and plan with a refusal (at quit).
    pub fn deny_everything_pending(&mut self, why: &str) {
        let keys: Vec<u64> = self.permissions.views().iter().map(|p| p.key).collect();
        for key in keys {
            self.answer_permission(
                key,
                PermissionDecision::Deny {
                    feedback: Some(why.to_string()),
                },
            );
        }
        let plans: Vec<String> = self
            .plans
            .views()
            .into_iter()
            .map(|p| p.request_id)
            .collect();
        for request_id in plans {
            self.answer_plan(
                &request_id,
                PlanDecision::Reject {
                    feedback: why.to_string(),
                },
            );
        }
    }
}
