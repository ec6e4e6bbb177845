//! Quitting: shutdown requests to every teammate still running, waiting (up to the quit
//! timeout) for their `shutdown_approved`, then the executor ends what is left, the team and
//! its tasks are deleted, the liveness lock is released and `Exited` said. Whatever waits in
//! the queues is refused first, so no teammate stays blocked on an answer that will not come.
//! `/quit --keep` ([`Controller::detach`]) leaves instead: nothing is refused, stopped or
//! deleted; the team waits for the next lead.

use tokio::time::Instant;

use super::state::{Controller, Phase};
use crate::lead::view::{LeadEvent, PermissionDecision, PlanDecision};
use crate::store::{self, StoreError};

impl Controller {
    /// Starts the graceful quit (idempotent).
    pub fn begin_quit(&mut self, why: &str) {
        if self.phase != Phase::Running {
            return;
        }
        tracing::info!("lead quitting: {why}");
        self.reload_team();
        self.deny_everything_pending("The lead is shutting down.");
        let names = self.running_teammates();
        let mut asked = 0;
        for name in &names {
            let pending = self
                .tracking
                .get(name)
                .is_some_and(|t| t.shutdown_request.is_some());
            if pending || self.send_shutdown_request(name, Some("the lead is quitting")) {
                asked += 1;
            }
        }
        if asked > 0 {
            self.note(format!(
                "Asking {asked} teammate(s) to shut down (waiting up to {:.1} s)…",
                self.quit_timeout.as_secs_f64()
            ));
        }
        self.phase = Phase::Quitting {
            deadline: Instant::now() + self.quit_timeout,
        };
    }

    /// Ends the quit when every teammate has left.
    pub async fn check_quit_progress(&mut self) {
        if matches!(self.phase, Phase::Quitting { .. }) && self.running_teammates().is_empty() {
            self.finish_quit().await;
        }
    }

    /// Kills what is left, deletes the team, releases the liveness lock, says `Exited`.
    pub async fn finish_quit(&mut self) {
        if self.phase == Phase::Done {
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
        self.executor.quit().await;
        self.deny_everything_pending("The lead is shutting down.");
        let removed = store::delete_team_with(&self.home, &self.team, |file| {
            for m in &file.members {
                if let Some(path) = &m.worktree_path
                    && let Err(e) = crate::backend::worktree::remove(std::path::Path::new(path))
                {
                    tracing::warn!("removing the worktree {path}: {e}");
                }
            }
        });
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

    /// Teammates that have not stopped (those to ask and wait for at quit).
    fn running_teammates(&self) -> Vec<String> {
        self.team_file
            .teammates()
            .filter(|m| {
                self.tracking
                    .get(&m.name)
                    .is_none_or(|t| t.stopped.is_none())
            })
            .map(|m| m.name.clone())
            .collect()
    }

    /// `/quit --keep`: the lead leaves and the team stays (tasks, messages, teammates). Pane
    /// teammates wait for a new lead for their grace period; in-process ones end with this
    /// process. Nothing queued is answered: the next lead asks again.
    pub async fn detach(&mut self) {
        if self.phase != Phase::Running {
            return;
        }
        let running = self.running_teammates().len();
        self.record.kept = true;
        self.save_record();
        self.executor.detach();
        crate::lead::emergency::unregister();
        let grace = crate::agent::process::lead_grace().as_secs();
        self.note(format!(
            "Left the team `{}` for the next lead: its tasks and messages are kept. {running} teammate(s) wait {grace} s for a lead (`teamlead --team {}` resumes the team), then exit.",
            self.team, self.team
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
