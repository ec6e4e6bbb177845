//! The UI's commands, and the team operations behind them: modes (the lead's, one teammate's,
//! "cycle all" in one team-file write), shutdown requests, kill, prune idle, hide/jump,
//! interrupting a teammate's turn, and quit. Runtime operations go through the session's one
//! executor.

use super::outcome::{OpError, OpResult, Outcome};
use super::state::Controller;
use crate::backend::executor::shutdown_request;
use crate::lead::view::{LeadCommand, LeadEvent, TeammateStatus};
use crate::lead::view_builder::status_of;
use crate::protocol::frames::{Frame, ModeSetRequest};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};
use crate::store;

impl Controller {
    /// One command from the UI.
    pub async fn on_command(&mut self, command: LeadCommand) {
        match command {
            LeadCommand::Submit { target, text } => self.on_submit(target, text).await,
            LeadCommand::CycleLeadMode => {
                self.lead_mode = self.lead_mode.next();
                let mode = self.lead_mode;
                if let Err(e) = store::set_modes(&self.home, &self.team, &[(LEAD_NAME, mode)]) {
                    tracing::warn!("recording the lead's mode: {e}");
                }
                self.emit(LeadEvent::LeadMode(mode));
            }
            LeadCommand::CycleAllModes => self.cycle_all_modes(),
            LeadCommand::CycleTeammateMode { name } => {
                if !self.has_teammate(&name) {
                    return self.no_such_teammate(&name);
                }
                if let Some(mode) = self.team_file.member(&name).map(|m| m.permission_mode()) {
                    self.set_teammate_mode(&name, mode.next());
                }
            }
            LeadCommand::SetTeammateMode { name, mode } => self.set_teammate_mode(&name, mode),
            LeadCommand::Shutdown { name } => {
                let done = self.shutdown_one(&name);
                self.report(done);
            }
            LeadCommand::Kill { name } => self.kill(&name).await,
            LeadCommand::PruneIdle => self.prune_idle(),
            LeadCommand::ToggleHidden { name } => {
                if self.known_teammate(&name) {
                    self.toggle_hidden(&name).await;
                }
            }
            LeadCommand::Jump { name } => {
                if self.known_teammate(&name) {
                    self.jump(&name).await;
                }
            }
            LeadCommand::AnswerPermission { key, decision } => {
                self.answer_permission(key, decision)
            }
            LeadCommand::AnswerPlan {
                request_id,
                decision,
            } => self.answer_plan(&request_id, decision),
            LeadCommand::InterruptLead => self.interrupt_lead_model(),
            LeadCommand::InterruptTeammate { name } => {
                if !self.executor.interrupt(&name) {
                    tracing::debug!("interrupt {name}: no turn running");
                }
            }
            LeadCommand::Quit => self.begin_quit("asked by the user"),
            LeadCommand::Detach => self.detach().await,
        }
    }

    /// Is `name` a teammate? A miss re-reads the team file first (it may have just changed).
    pub fn has_teammate(&mut self, name: &str) -> bool {
        let known = |c: &Controller| c.team_file.member(name).is_some_and(|m| !m.is_lead());
        if known(self) {
            return true;
        }
        self.reload_team();
        known(self)
    }

    pub fn no_such_teammate(&mut self, name: &str) {
        let e = self.no_such_teammate_error(name);
        self.note(e.to_string());
    }

    /// The error for a name that is no teammate, listing those there are.
    pub fn no_such_teammate_error(&self, name: &str) -> OpError {
        OpError::NoSuchTeammate {
            name: name.to_string(),
            known: self.team_file.teammates().map(|m| m.name.clone()).collect(),
        }
    }

    /// Shows an operation's outcome (or why it was not done) as a note.
    pub fn report(&mut self, result: OpResult) {
        match result {
            Ok(outcome) => self.note(outcome.to_string()),
            Err(e) => self.note(e.to_string()),
        }
    }

    /// Sends `mode_set_request` to each of `names` (after the team file was written).
    fn send_mode_requests(&mut self, names: &[String], mode: PermissionMode) {
        for name in names {
            let frame = Frame::ModeSetRequest(ModeSetRequest {
                mode,
                from: LEAD_NAME.to_string(),
            });
            match self.deliver(name, InboxEntry::frame(LEAD_NAME, &frame)) {
                // Clients that ignore the request adopt the mode at their next request
                // (controller::mode_sync).
                Ok(()) => self.tracking.entry(name.clone()).or_default().mode_sent = Some(mode),
                Err(e) => self.note(format!("Could not send the mode to {name}: {e}")),
            }
        }
    }

    /// Shift+Tab in the teams dialog: all equal → next, mixed → default; one team-file write,
    /// then one `mode_set_request` per teammate.
    pub fn cycle_all_modes(&mut self) {
        self.reload_team();
        let members: Vec<(String, PermissionMode)> = self
            .team_file
            .teammates()
            .map(|m| (m.name.clone(), m.permission_mode()))
            .collect();
        if members.is_empty() {
            self.note("There are no teammates to change.");
            return;
        }
        let modes: Vec<PermissionMode> = members.iter().map(|(_, m)| *m).collect();
        let target = PermissionMode::cycle_all(&modes);
        let pairs: Vec<(&str, PermissionMode)> =
            members.iter().map(|(n, _)| (n.as_str(), target)).collect();
        if let Err(e) = store::set_modes(&self.home, &self.team, &pairs) {
            self.note(format!("Could not change the modes: {e}"));
            return;
        }
        let names: Vec<String> = members.into_iter().map(|(n, _)| n).collect();
        self.send_mode_requests(&names, target);
        self.reload_team();
        self.note(format!("Every teammate is now in {target} mode."));
    }

    /// One teammate's mode: team-file write, then `mode_set_request`.
    pub fn set_teammate_mode(&mut self, name: &str, mode: PermissionMode) {
        if !self.has_teammate(name) {
            return self.no_such_teammate(name);
        }
        if let Err(e) = store::set_modes(&self.home, &self.team, &[(name, mode)]) {
            self.note(format!("Could not change {name}'s mode: {e}"));
            return;
        }
        self.send_mode_requests(&[name.to_string()], mode);
        self.reload_team();
        self.note(format!("{name} is now in {mode} mode."));
    }

    /// Writes a `shutdown_request` to `name`'s inbox and remembers its id. False on failure.
    pub fn send_shutdown_request(&mut self, name: &str, reason: Option<&str>) -> bool {
        let (request_id, entry) = shutdown_request(name, reason);
        match self.deliver(name, entry) {
            Ok(()) => {
                self.tracking
                    .entry(name.to_string())
                    .or_default()
                    .shutdown_request = Some(request_id);
                true
            }
            Err(e) => {
                self.note(format!("Could not ask {name} to shut down: {e}"));
                false
            }
        }
    }

    /// Asks one teammate to shut down.
    pub fn shutdown_one(&mut self, name: &str) -> OpResult {
        if !self.has_teammate(name) {
            return Err(self.no_such_teammate_error(name));
        }
        if self.send_shutdown_request(name, None) {
            Ok(Outcome::ShutdownAsked {
                name: name.to_string(),
            })
        } else {
            Err(OpError::Refused(format!(
                "{name} was not asked to shut down."
            )))
        }
    }

    /// Asks every teammate to shut down.
    pub fn shutdown_all(&mut self) {
        self.reload_team();
        let names: Vec<String> = self.team_file.teammates().map(|m| m.name.clone()).collect();
        if names.is_empty() {
            self.note("There are no teammates to shut down.");
            return;
        }
        let asked = names
            .iter()
            .filter(|n| self.send_shutdown_request(n, None))
            .count();
        self.note(format!("Asked {asked} teammate(s) to shut down."));
    }

    /// Stops a teammate now: its runtime is killed, it leaves the team, its tasks are freed.
    pub async fn kill(&mut self, name: &str) {
        if !self.has_teammate(name) {
            return self.no_such_teammate(name);
        }
        if let Err(e) = self.executor.kill(name).await {
            tracing::info!("killing {name}: {e}");
        }
        self.remove_teammate(name, "was killed");
    }

    /// Asks every idle teammate to shut down.
    pub fn prune_idle(&mut self) {
        self.reload_team();
        let idle: Vec<String> = self
            .team_file
            .teammates()
            .filter(|m| {
                matches!(
                    status_of(m, self.tracking.get(&m.name), false),
                    TeammateStatus::Idle { .. }
                )
            })
            .map(|m| m.name.clone())
            .collect();
        if idle.is_empty() {
            self.note("No teammate is idle.");
            return;
        }
        let asked: Vec<String> = idle
            .into_iter()
            .filter(|n| self.send_shutdown_request(n, Some("idle")))
            .collect();
        self.note(format!(
            "Asked {} idle teammate(s) to shut down: {}",
            asked.len(),
            asked.join(", ")
        ));
    }

    /// Is `name` a teammate (told when not)?
    fn known_teammate(&mut self, name: &str) -> bool {
        if self.has_teammate(name) {
            return true;
        }
        self.no_such_teammate(name);
        false
    }
}
