//! The teammate loop: read the inbox, act on control frames (shutdown, mode), run a turn when
//! there are messages or tasks, end every turn with an `idle_notification` to the lead, and
//! otherwise sleep until woken, until the inbox or the task directory changes (checked with
//! two `stat`s every poll interval), or until the slow full look every few polls. The same loop
//! runs in a teammate process; only the asker (mailbox) and the watcher of the events differ.
//! The [`Engine`] it is given (`shell`, `llm`, …) does the turns; the loop counts them in the
//! usage meter and never knows which engine it is.

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::config::{Controls, TeammateConfig};
use super::engine::{Engine, TurnOutcome, TurnReport};
use super::incoming::{TeammateIncoming, classify};
use super::mailroom::{Mailroom, Signature};
use crate::agent::asker::PermissionAsker;
use crate::agent::events::{EventSink, LogKind, StopReason, TeammateEventKind};
use crate::agent::gate::PermissionGate;
use crate::protocol::frames::{
    Frame, IdleNotification, IdleReason, ShutdownApproved, ShutdownRequest,
};
use crate::protocol::inbox::clip;
use crate::protocol::time::now_iso;
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

/// Every this many polls an idle teammate reads its inbox and the task list even when the two
/// `stat`s saw no change (files edited in place keep the directory's mtime).
const FULL_LOOK_EVERY: u64 = 5;

/// A running teammate's state.
pub struct Teammate {
    pub config: TeammateConfig,
    pub gate: PermissionGate,
    pub asker: Arc<dyn PermissionAsker>,
    pub events: EventSink,
    pub controls: Controls,
    pub mailroom: Mailroom,
    /// Tasks whose plan the lead rejected: not claimed again until its mode changes.
    pub declined: HashSet<String>,
    signature: Signature,
    polls: u64,
}

impl Teammate {
    pub fn new(
        config: TeammateConfig,
        asker: Arc<dyn PermissionAsker>,
        events: EventSink,
        controls: Controls,
    ) -> Teammate {
        let gate = PermissionGate::new(config.starting_mode(), &config.cwd);
        let mailroom = Mailroom::new(
            &config.home,
            &config.team,
            &config.name,
            config.color.as_deref(),
        );
        Teammate {
            config,
            gate,
            asker,
            events,
            controls,
            mailroom,
            declined: HashSet::new(),
            signature: Signature::default(),
            // Spread the full looks of many teammates started together.
            polls: rand::random_range(0..FULL_LOOK_EVERY),
        }
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The loop, with `engine` doing the turns; returns why it ended.
    pub async fn run(&mut self, engine: &mut dyn Engine) -> StopReason {
        if let Ok(team) = crate::store::read_team(&self.config.home, &self.config.team)
            && let Some(paths) = &team.team_allowed_paths
        {
            self.gate.add_team_allowed_paths(paths);
        }
        let described = engine
            .describe()
            .map(|d| format!(", {d}"))
            .unwrap_or_default();
        self.events.log(
            LogKind::Note,
            format!(
                "{} started in {} ({} mode{described})",
                self.config.agent_id(),
                self.config.cwd.display(),
                self.gate.mode()
            ),
        );
        loop {
            if self.controls.stop.is_cancelled() {
                return self.killed().await;
            }
            self.signature = self.mailroom.signature();
            let mut content = Vec::new();
            for entry in self.take_new().await {
                match classify(&entry) {
                    TeammateIncoming::Shutdown(request) => {
                        return self.approve_shutdown(request).await;
                    }
                    TeammateIncoming::SetMode(mode) => self.change_mode(mode, "team-lead").await,
                    TeammateIncoming::Ignored(why) => self.events.log(LogKind::Warning, why),
                    TeammateIncoming::Content => content.push(entry),
                }
            }
            let outcome = engine.turn(self, content).await;
            match outcome {
                TurnOutcome::NoTurn => self.idle_wait().await,
                TurnOutcome::Ended(report) => {
                    if let Some(stop) = self.finish_turn(*report).await {
                        return stop;
                    }
                }
            }
        }
    }

    /// The entries handed at the start (the first time), then the unread entries of the own
    /// inbox, now marked read.
    async fn take_new(&mut self) -> Vec<InboxEntry> {
        let mut taken = std::mem::take(&mut self.config.handed);
        let entries = match self.mailroom.unread() {
            Ok(e) => e,
            Err(e) => {
                self.events
                    .log(LogKind::Warning, format!("cannot read my inbox: {e}"));
                return taken;
            }
        };
        if let Err(e) = self.mailroom.mark_read(&entries).await {
            // Delivered anyway: a second delivery is better than none.
            self.events
                .log(LogKind::Warning, format!("cannot mark my inbox read: {e}"));
        }
        taken.extend(entries);
        taken
    }

    /// Sleeps until woken, stopped, or a poll sees a change (or it is time for a full look).
    async fn idle_wait(&mut self) {
        loop {
            tokio::select! {
                _ = self.controls.stop.cancelled() => return,
                _ = self.controls.wake.notified() => return,
                _ = tokio::time::sleep(self.config.poll_interval) => {}
            }
            self.polls += 1;
            if self.polls.is_multiple_of(FULL_LOOK_EVERY)
                || self.mailroom.signature() != self.signature
            {
                return;
            }
        }
    }

    /// Starts a turn: a fresh turn token, `isActive: true`, the `Working` event.
    pub async fn begin_turn(&mut self, task: Option<(String, String)>) -> CancellationToken {
        let token = self.controls.begin_turn();
        self.config.usage.update(|u| u.turns += 1);
        if let Err(e) = self.mailroom.set_active(true).await {
            tracing::debug!(teammate = self.name(), "isActive true: {e}");
        }
        self.events.send(TeammateEventKind::Working { task });
        token
    }

    /// Ends a turn: `isActive: false`, then the idle notification (or the shutdown answer, or
    /// nothing when killed). Returns `Some` when the loop must end.
    async fn finish_turn(&mut self, report: TurnReport) -> Option<StopReason> {
        self.controls.end_turn();
        if self.controls.stop.is_cancelled() {
            return Some(self.killed().await);
        }
        if let Some(request) = report.shutdown {
            return Some(self.approve_shutdown(request).await);
        }
        if let Err(e) = self.mailroom.set_active(false).await {
            tracing::debug!(teammate = self.name(), "isActive false: {e}");
        }
        if report.reason == IdleReason::Failed {
            self.config.usage.update(|u| u.failed_turns += 1);
        }
        let notification = IdleNotification {
            from: self.config.name.clone(),
            timestamp: now_iso(),
            idle_reason: Some(report.reason),
            summary: report.summary.clone(),
            completed_task_id: report.completed.as_ref().map(|(id, _)| id.clone()),
            completed_status: report.completed.as_ref().map(|(_, s)| s.to_string()),
            failure_reason: report.failure.clone(),
            result: report.result.as_deref().map(|r| clip(r, 4000)),
            usage: self.config.usage.snapshot().reported(),
            limit_until_ms: report.limit_until_ms,
        };
        let frame = Frame::IdleNotification(notification);
        if let Err(e) = self.mailroom.send_frame(LEAD_NAME, &frame).await {
            self.events.log(
                LogKind::Warning,
                format!("cannot send my idle notification: {e}"),
            );
        }
        self.events.send(TeammateEventKind::Idle {
            reason: report.reason,
            summary: report.summary,
        });
        None
    }

    /// Switches mode (from the lead, a plan approval or a permission answer), records it in
    /// `config.json`, and lets declined tasks be claimed again.
    pub async fn change_mode(&mut self, mode: PermissionMode, by: &str) {
        self.declined.clear();
        if self.gate.mode() != mode {
            self.gate.set_mode(mode);
            self.events
                .log(LogKind::Note, format!("mode set to {mode} by {by}"));
        }
        self.events.send(TeammateEventKind::ModeChanged(mode));
        if let Err(e) = self.mailroom.set_mode(mode).await {
            tracing::debug!(teammate = self.name(), "recording mode: {e}");
        }
    }

    /// Answers a shutdown request with `shutdown_approved` and ends.
    async fn approve_shutdown(&mut self, request: ShutdownRequest) -> StopReason {
        let approved = Frame::ShutdownApproved(ShutdownApproved {
            request_id: request.request_id.clone(),
            from: self.config.name.clone(),
            timestamp: now_iso(),
            pane_id: Some(self.config.pane_id.clone()),
            backend_type: Some(self.config.backend_type.clone()),
        });
        tracing::debug!(teammate = self.name(), "shutdown request taken");
        if let Err(e) = self.mailroom.set_active(false).await {
            tracing::debug!(teammate = self.name(), "isActive false: {e}");
        }
        tracing::debug!(teammate = self.name(), "isActive false written");
        if let Err(e) = self.mailroom.send_frame(LEAD_NAME, &approved).await {
            self.events.log(
                LogKind::Warning,
                format!("cannot send shutdown_approved: {e}"),
            );
        }
        self.events.log(
            LogKind::Note,
            format!(
                "shutting down ({})",
                request.reason.as_deref().unwrap_or("asked by team-lead")
            ),
        );
        StopReason::Shutdown
    }

    /// Killed: best-effort `isActive: false`, no notification.
    async fn killed(&mut self) -> StopReason {
        self.controls.end_turn();
        let _ = self.mailroom.set_active(false).await;
        StopReason::Killed
    }
}
