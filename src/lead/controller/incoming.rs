//! What the controller does with what arrives: entries of the lead's inbox (idle reports,
//! permission and plan requests, shutdown answers, synthetic turns), events of in-process
//! teammates (their inline transcript and status), the leader bridge's asks, and the human's
//! answers to the queues.

use super::state::{Controller, Phase};
use super::store_worker::Lane;
use crate::agent::events::{LogKind, StopReason, TeammateEvent, TeammateEventKind};
use crate::lead::bridge::BridgeMessage;
use crate::lead::contract::{LeadEvent, PermissionDecision, PlanDecision, TranscriptItem};
use crate::lead::permission_queue::Answer;
use crate::lead::plan_queue::plan_response;
use crate::lead::poller::{LeadIncoming, turn_item};
use crate::lead::tracking::Activity;
use crate::lead::turns::SyntheticTurn;
use crate::protocol::display;
use crate::protocol::frames::{Frame, IdleReason, ShutdownApproved};
use crate::protocol::inbox::clip;
use crate::protocol::time::{now_ms, parse_iso_ms};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode, PermissionUpdate, Task};
use crate::store;

impl Controller {
    /// The palette color of a member, if any.
    pub fn color_of(&self, name: &str) -> Option<String> {
        self.cache.file().member(name).and_then(|m| m.color.clone())
    }

    /// The host a teammate runs on when it is not the lead's (its member's `teamleadHost`).
    pub fn host_of(&self, name: &str) -> Option<String> {
        self.cache
            .file()
            .member(name)
            .and_then(|m| m.host())
            .map(str::to_string)
    }

    /// Delivers a synthetic turn now (to the transcript, and to the lead model when there is
    /// one), or keeps it while the lead model is mid-turn. `item` shows `entry`.
    pub fn offer_turn(&mut self, entry: &InboxEntry, item: TranscriptItem) {
        let color = match &item {
            TranscriptItem::Teammate { color, .. } | TranscriptItem::Frame { color, .. } => {
                color.clone()
            }
            _ => None,
        };
        let entry = entry.clone().with_color(color.as_deref());
        if let Some(turn) = self.turns.offer(SyntheticTurn { item, entry }) {
            self.emit(LeadEvent::Transcript(turn.item));
            self.lead_model_hears(&[turn.entry]);
        }
    }

    /// The wave of completed tasks is over: told as one line, after a fresh read of the tasks
    /// (what it unblocked, and for whom).
    pub fn tell_wave(&mut self) {
        let Some(done) = self.wave.take(now_ms()) else {
            return;
        };
        self.with_fresh_tasks(move |c| {
            let line = crate::lead::wave::digest_line(&done, c.cache.tasks());
            let entry = InboxEntry::new(LEAD_NAME, &line).with_summary(Some("tasks done"));
            c.offer_turn(&entry, TranscriptItem::System { text: line });
        });
    }

    /// One entry of the lead's inbox.
    pub fn on_incoming(&mut self, incoming: LeadIncoming) {
        let entry = incoming.entry().clone();
        let from = entry.from.clone();
        let color = entry.color.clone().or_else(|| self.color_of(&from));
        let carried = display::controls_in_message(&entry);
        if !carried.is_empty() {
            self.note_once(format!(
                "A {} from {} (sent {}) carried control sequences in {}: shown escaped, never applied.",
                display::visible_line(&display::message_kind(&entry)),
                display::visible_line(&from),
                display::visible_line(&entry.timestamp),
                display::field_list(&carried)
            ));
        }
        if from != LEAD_NAME && self.cache.file().member(&from).is_some() {
            self.roster.entry(&from).remember(entry.one_liner());
            self.read_claude_transcript(&from);
            // Anything it sends after taking a message shows it got to it.
            self.teammate_acted(&from, parse_iso_ms(&entry.timestamp).unwrap_or_else(now_ms));
        }
        match incoming {
            LeadIncoming::Idle { notification, .. } => {
                let since_ms = parse_iso_ms(&notification.timestamp).unwrap_or_else(now_ms);
                if let Some(t) = self.roster.get_mut(&from) {
                    // An in-process teammate's events said so already, in order; its
                    // notification comes through the inbox and can be a turn behind.
                    t.idle_reported(since_ms);
                    if let Some(usage) = notification.usage {
                        t.set_usage(usage);
                    }
                    if let Some(until) = notification.limit_until_ms {
                        t.set_rate_limited_until(Some(until));
                    }
                }
                // One of teamlead's own teammates stopped at a usage limit.
                if let Some(until) = notification.limit_until_ms {
                    self.on_limit(&from, until);
                }
                // A claude teammate's final answer (`result`, newer clients) is its last word
                // on the turn: shown as its turn, unless it just sent the same text.
                let answer = notification
                    .result
                    .as_deref()
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(str::to_string);
                if let Some(answer) = answer
                    && self.is_claude(&from)
                {
                    let said = self.roster.get_mut(&from).and_then(|t| t.take_said());
                    if said.as_deref() != Some(answer.as_str()) {
                        let item = TranscriptItem::Teammate {
                            from: from.clone(),
                            color: color.clone(),
                            summary: Some("final answer".to_string()),
                            text: answer,
                        };
                        self.offer_turn(&entry, item);
                    }
                }
                // A failed turn is told at once; a completed task joins the wave told as one
                // digest line (`lead::wave`); an idle report with nothing else to say is
                // neither shown nor given to the lead model.
                if notification.idle_reason == Some(IdleReason::Failed) {
                    self.release_failed_task(&from, &notification);
                    let frame = Frame::IdleNotification(notification);
                    self.offer_turn(&entry, turn_item(&entry, Some(&frame), color));
                } else if let Some(id) = &notification.completed_task_id {
                    self.wave.completed(id, now_ms());
                    if self.is_claude(&from) {
                        self.say_claude_done(&from, id);
                    }
                }
            }
            LeadIncoming::Permission { request, .. } => {
                let claimed = request.agent_id.clone();
                let (tool, input) = (request.tool_name.clone(), request.input.clone());
                match self.permissions.push_inbox(&from, color, request) {
                    Some((key, whole)) => {
                        let host = self.host_of(&from);
                        self.permissions.set_host(key, host);
                        self.keep_whole_request(whole);
                        self.answer_by_set_mode(&from, key, &tool, &input)
                    }
                    None if claimed != from => self.note(format!(
                        "Dropped a permission request from {from} that claims to come from {claimed}."
                    )),
                    None => {}
                }
            }
            LeadIncoming::Sandbox { request, .. } => {
                let claimed = request.worker_name.clone();
                if self
                    .permissions
                    .push_sandbox(&from, color, request)
                    .is_none()
                    && claimed != from
                {
                    self.note(format!(
                        "Dropped a sandbox request from {from} that claims to come from {claimed}."
                    ));
                }
            }
            LeadIncoming::Plan { request, .. } => {
                if request.from != from {
                    self.note(format!(
                        "Dropped a plan from {from} that claims to come from {}.",
                        request.from
                    ));
                } else {
                    let request_id = request.request_id.clone();
                    let pushed = self.plans.push(&from, color, request);
                    if pushed.is_some() {
                        let host = self.host_of(&from);
                        self.plans.set_host(&request_id, host);
                        // The request was made in a turn: that turn has ended once the count
                        // moves (none seen yet: 0, the count a record made later starts at).
                        let seen = self.roster.get(&from).map_or(0, |t| t.turn_ends().count());
                        self.plans.set_turn_ends_seen(&request_id, seen);
                    }
                    if let Some(Some((text, digest))) = pushed {
                        self.keep_whole_plan(request_id, text, &digest);
                    }
                }
            }
            LeadIncoming::ShutdownApproved { approved, .. } => {
                self.on_shutdown_approved(&from, approved)
            }
            LeadIncoming::ShutdownRejected { rejected, .. } => {
                if let Some(t) = self.roster.get_mut(&from) {
                    t.shutdown_mut().end(&rejected.request_id);
                }
                let reason = if rejected.reason.trim().is_empty() {
                    "no reason given".to_string()
                } else {
                    clip(&rejected.reason, 200)
                };
                self.note(format!("{from} rejected the shutdown: {reason}"));
            }
            LeadIncoming::Turn { frame, .. } => {
                if frame.is_none()
                    && let Some(t) = self.roster.get_mut(&from)
                {
                    t.said(entry.text.trim().to_string());
                }
                self.offer_turn(&entry, turn_item(&entry, frame.as_ref(), color));
            }
        }
    }

    /// A `shutdown_approved`: acted on only when it answers a shutdown this lead sent to that
    /// member, and (when it names a pane) comes from the member's recorded pane.
    fn on_shutdown_approved(&mut self, from: &str, approved: ShutdownApproved) {
        let expected = self
            .roster
            .get(from)
            .and_then(|t| t.shutdown().request().map(str::to_string));
        let Some(member) = self.cache.file().member(from) else {
            tracing::info!("ignored shutdown_approved from {from}: not a member");
            return;
        };
        let pane_ok = approved
            .pane_id
            .as_deref()
            .is_none_or(|p| p == member.tmux_pane_id);
        if expected.as_deref() != Some(approved.request_id.as_str())
            || approved.from != from
            || !pane_ok
        {
            tracing::info!(
                "ignored shutdown_approved from {from} (request {}, pane {:?}): it matches no shutdown this lead sent",
                approved.request_id,
                approved.pane_id
            );
            return;
        }
        // The teammate exits by itself and its pane closes; the executor makes sure of it.
        self.forget_runtime(from);
        self.remove_teammate(from, "has shut down");
    }

    /// Removes a teammate that is gone: member out of `config.json`, its unfinished tasks back
    /// to pending with no owner, its queued requests dropped, and a note.
    /// The writes run in the background (tasks, then the member: each in its lane); the note
    /// comes once the tasks are freed.
    pub fn remove_teammate(&mut self, name: &str, what_happened: &str) {
        self.remove_teammate_then(name, what_happened, |_| {});
    }

    /// [`Controller::remove_teammate`], then `then` once the team file without it is read.
    pub fn remove_teammate_then(
        &mut self,
        name: &str,
        what_happened: &str,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        let (who, what) = (name.to_string(), what_happened.to_string());
        self.unassign_tasks_then(name, move |c, unassigned| {
            // Then the member goes; the note comes with the team file as written.
            let (team, member) = (c.given.team().to_string(), who.clone());
            let clock = c.cache.clock();
            c.store.submit(
                Lane::Team,
                move |home| {
                    let removed = store::remove_member(home, &team, &member);
                    let ticket = clock.stamp();
                    (
                        removed,
                        ticket,
                        store::read_team(home, &team).map(|f| (f, None)),
                    )
                },
                move |c, (removed, ticket, read)| {
                    match removed {
                        Ok(_) | Err(store::StoreError::NotFound { .. }) => {}
                        Err(e) => c.note(format!("Could not remove {who} from the team file: {e}")),
                    }
                    c.cache.removal_done(&who);
                    c.apply_team(read, ticket);
                    c.note(gone_note(&who, &what, &unassigned));
                    then(c);
                },
            );
        });
        // Gone from the team the user sees at once (a status without its tracking would read
        // `Working` until the write lands).
        self.cache.remove_member(name);
        self.record.forget(name);
        self.permissions.remove_worker(name);
        self.plans.remove_worker(name);
        self.roster.forget(name);
    }

    /// An event of an in-process teammate: its inline transcript and its status.
    pub fn on_teammate_event(&mut self, event: TeammateEvent) {
        let name = event.name;
        if let Some(t) = self.roster.get_mut(&name) {
            t.follow_events();
        }
        let item = match event.kind {
            TeammateEventKind::Received {
                from,
                color,
                summary,
                text,
                key,
                ..
            } => {
                // The lead's message is read the moment it is taken, before the turn's
                // `Working` (an off-loop read of the inbox could come after the turn ended).
                if from == LEAD_NAME
                    && let Some(change) = self.ledger.taken(&name, &key, now_ms())
                {
                    self.tell_receipts(vec![change]);
                }
                let entry = InboxEntry {
                    summary,
                    color,
                    ..InboxEntry::new(&from, text)
                };
                let frame = entry.parse_frame();
                let fallback = self.color_of(&from);
                Some(turn_item(&entry, frame.as_ref(), fallback))
            }
            TeammateEventKind::Log { kind, text } => Some(match kind {
                LogKind::Command => TranscriptItem::Lead { text },
                LogKind::Result => TranscriptItem::Lead {
                    text: format!("→ {text}"),
                },
                LogKind::Output | LogKind::Note => TranscriptItem::System { text },
                LogKind::Warning => TranscriptItem::System {
                    text: format!("! {text}"),
                },
            }),
            TeammateEventKind::Working { .. } => {
                if let Some(t) = self.roster.get_mut(&name) {
                    t.turn_began();
                }
                let changes = self.ledger.turn_started(&name, now_ms());
                self.tell_receipts(changes);
                None
            }
            TeammateEventKind::WaitingForApproval { what } => Some(TranscriptItem::System {
                text: format!("waiting for team lead approval: {}", clip(&what, 160)),
            }),
            TeammateEventKind::Idle { .. } => {
                if let Some(t) = self.roster.get_mut(&name) {
                    t.turn_ended(now_ms());
                }
                None
            }
            TeammateEventKind::ModeChanged(mode) => Some(TranscriptItem::System {
                text: format!("mode is now {mode}"),
            }),
            TeammateEventKind::Stopped(reason) => {
                if let Some(t) = self.roster.get_mut(&name) {
                    t.exited();
                }
                if let StopReason::Failed(why) = &reason
                    && self.cache.file().member(&name).is_some()
                {
                    self.note(format!("{name} stopped: {why}"));
                }
                Some(TranscriptItem::System {
                    text: match reason {
                        StopReason::Shutdown => "shut down".to_string(),
                        StopReason::Killed => "stopped".to_string(),
                        StopReason::Failed(why) => format!("failed: {why}"),
                    },
                })
            }
        };
        if let Some(item) = item {
            self.emit(LeadEvent::TeammateTranscript { name, item });
        }
    }

    /// The bridge: an in-process teammate asks, or withdraws its ask.
    pub fn on_bridge(&mut self, message: BridgeMessage) {
        match message {
            BridgeMessage::Ask {
                ask_id,
                asking,
                reply,
            } => {
                if self.phase != Phase::Running {
                    let response = crate::protocol::frames::PermissionResponse::deny(
                        &asking.request,
                        Some("The lead is shutting down."),
                    );
                    let _ = reply.send(response);
                    return;
                }
                let color = asking
                    .color
                    .clone()
                    .or_else(|| self.color_of(&asking.worker));
                let asking = crate::agent::asker::Asking { color, ..*asking };
                let (_, whole) = self.permissions.push_bridge(ask_id, asking, reply);
                self.keep_whole_request(whole);
            }
            BridgeMessage::Withdrawn { ask_id } => {
                self.permissions.withdraw(ask_id);
            }
        }
    }

    /// A request's input too large to show whole is kept in a file for the person to read
    /// (`store::kept_texts`, in the background); the dialog says where once it is written.
    fn keep_whole_request(&mut self, whole: Option<crate::lead::permission_queue::WholeText>) {
        let Some(whole) = whole else {
            return;
        };
        let digest = whole.digest.clone();
        let team = self.given.team().to_string();
        let key = whole.key;
        self.store.submit(
            Lane::Kept,
            move |home| {
                let at = store::kept_texts::path(home, &team, "permission", &digest, "json")?;
                store::kept_texts::keep(home, &team, &at, whole.text.as_bytes())?;
                Ok::<_, store::StoreError>(at)
            },
            move |c, kept| match kept {
                Ok(at) => c.permissions.kept_at(key, Some(at.display().to_string())),
                Err(e) => c.note(format!(
                    "Could not keep the whole of permission request #{key} for reading: {e}"
                )),
            },
        );
    }

    /// The same for a plan too large to show whole.
    fn keep_whole_plan(&mut self, request_id: String, text: String, digest: &str) {
        let team = self.given.team().to_string();
        let digest = digest.to_string();
        self.store.submit(
            Lane::Kept,
            move |home| {
                let at = store::kept_texts::path(home, &team, "plan", &digest, "md")?;
                store::kept_texts::keep(home, &team, &at, text.as_bytes())?;
                Ok::<_, store::StoreError>(at)
            },
            move |c, kept| match kept {
                Ok(at) => c.plans.kept_at(&request_id, Some(at.display().to_string())),
                Err(e) => c.note(format!(
                    "Could not keep the whole of {request_id}'s plan for reading: {e}"
                )),
            },
        );
    }

    /// The human's answer to one permission request; a key that is not queued (answered
    /// already, or withdrawn) does nothing.
    pub fn answer_permission(&mut self, key: u64, decision: PermissionDecision) {
        let Some(queued) = self.permissions.take(key) else {
            return;
        };
        let worker = queued.pending.worker.clone();
        // A `setMode` among the updates changes the teammate's mode; Claude Code applies it
        // without writing config.json, so the lead records it (the teams dialog reads it there).
        let new_mode = match &decision {
            PermissionDecision::AllowAlways(updates) => {
                updates.iter().rev().find_map(|u| match u {
                    PermissionUpdate::SetMode { mode, .. } => Some(*mode),
                    _ => None,
                })
            }
            _ => None,
        };
        match queued.answer(&decision) {
            Answer::Bridge { reply, response } => {
                let _ = reply.send(response);
                if let Some(mode) = new_mode {
                    self.record_mode(&worker, mode, |_| {});
                }
            }
            Answer::Inbox { to, frame } => {
                let entry = InboxEntry::frame(LEAD_NAME, &frame);
                let recipient = to.clone();
                self.deliver(&to, entry, move |c, sent| match sent {
                    Err(e) => c.note(format!("Could not send the answer to {recipient}: {e}")),
                    Ok(()) => {
                        if let Some(mode) = new_mode {
                            c.record_mode(&worker, mode, |_| {});
                        }
                    }
                });
            }
        }
    }

    /// Writes a teammate's new mode into config.json (a mode it switched to on the lead's
    /// answer: a permission update or an approved plan).
    /// `then` runs once it is written (or could not be: that is told).
    pub(super) fn record_mode(
        &mut self,
        name: &str,
        mode: PermissionMode,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        // Every client applies the mode an answer of the lead carries (`setMode`, an approved
        // plan's `permissionMode`), but does not write it into config.json itself.
        let Some(left) = self.cache.file().member(name).map(|m| m.permission_mode()) else {
            return then(self);
        };
        self.hold_mode(name, mode, left);
        let (team, member) = (self.given.team().to_string(), name.to_string());
        self.store.submit(
            Lane::Team,
            move |home| store::set_modes(home, &team, &[(member.as_str(), mode)]),
            {
                let name = name.to_string();
                move |c, written| {
                    if let Err(e) = written {
                        c.note(format!("Could not record {name}'s mode: {e}"));
                    }
                    c.reload_team();
                    then(c)
                }
            },
        );
    }

    /// The human's answer to a plan; an unknown request id does nothing.
    pub fn answer_plan(&mut self, request_id: &str, decision: PlanDecision) {
        let Some(queued) = self.plans.take(request_id) else {
            return;
        };
        let response = plan_response(&queued.request, &queued.digest, &decision);
        let plan = queued.pending;
        // A `claude` teammate still in the turn that asked (its ExitPlanMode returns at once
        // and the turn ends moments later) gets the verdict once that turn has ended: 2.1.332
        // can find a verdict while its turn ends, apply its mode and never take its turn
        // (PROTOCOL.md 3). That turn has ended once the lead has seen a turn end of the
        // teammate's after the request came (the count, not its activity alone: a team file not
        // read yet when the answer comes says nothing of this turn). Not working as far as the
        // lead knows (nothing heard, or an idle from before): the file's `isActive: false` says
        // no turn runs (a lead started again after the turn's end). The wait runs off the
        // loop; the verdict is written from the loop.
        let seen = queued.turn_ends_seen;
        let idle_in_file = self
            .cache
            .file()
            .member(&plan.from)
            .is_some_and(|m| m.is_active == Some(false));
        let busy = self.is_claude(&plan.from)
            && match self.roster.get(&plan.from) {
                None => !idle_in_file,
                Some(t) => {
                    t.turn_ends().count() == seen
                        && match t.activity() {
                            Activity::Exited => false,
                            Activity::Working => true,
                            Activity::Unknown | Activity::Idle { .. } => !idle_in_file,
                        }
                }
            };
        if busy {
            let ends = self.roster.entry(&plan.from).turn_ends().clone();
            let who = plan.from.clone();
            // A job, not a blocking one: the wait holds none of the blocking pool's threads
            // (bounded: `lead::runtime`), which the drain that sees the turn end needs.
            self.store.job(
                Lane::Marks(who.clone()),
                move |_| async move { ends.wait_past(seen, VERDICT_WAIT).await },
                move |c, ended| {
                    if !ended {
                        tracing::info!(
                            teammate = %who,
                            "its turn did not end within {VERDICT_WAIT:?}: the plan verdict goes now"
                        );
                    }
                    c.send_plan_answer(plan, response, decision)
                },
            );
            return;
        }
        self.send_plan_answer(plan, response, decision);
    }

    /// Writes a plan's verdict, then records its mode and tells the human.
    fn send_plan_answer(
        &mut self,
        plan: crate::lead::contract::PendingPlan,
        response: crate::protocol::frames::PlanApprovalResponse,
        decision: PlanDecision,
    ) {
        let entry = InboxEntry::frame(LEAD_NAME, &Frame::PlanApprovalResponse(response.clone()));
        let to = plan.from.clone();
        self.deliver(&to, entry, move |c, sent| match sent {
            Err(e) => c.note(format!(
                "Could not send the plan answer to {}: {e}",
                plan.from
            )),
            Ok(()) => c.after_plan_answer(&plan.from, &decision, response.permission_mode),
        });
    }

    /// The plan answer was written: the approved mode is recorded and the human told.
    fn after_plan_answer(
        &mut self,
        from: &str,
        decision: &PlanDecision,
        mode: Option<PermissionMode>,
    ) {
        match (decision, mode) {
            (PlanDecision::Approve { .. }, Some(mode)) => {
                // 2.1.45 switches to the approved mode without writing config.json.
                let told = format!("Approved {from}'s plan ({mode} mode).");
                self.record_mode(from, mode, move |c| c.note(told))
            }
            (PlanDecision::Approve { .. }, None) => self.note(format!("Approved {}'s plan.", from)),
            (PlanDecision::Reject { feedback }, _) => {
                self.note(format!("Rejected {}'s plan: {}", from, clip(feedback, 200)))
            }
        }
    }
}

/// How long a plan verdict for a `claude` teammate waits for the turn that asked for it to end.
const VERDICT_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// `"<name> has shut down. N task(s) were unassigned: #id \"subject\", …"` (without the task
/// part when none were).
pub fn gone_note(name: &str, what_happened: &str, unassigned: &[Task]) -> String {
    if unassigned.is_empty() {
        return format!("{name} {what_happened}.");
    }
    let list: Vec<String> = unassigned
        .iter()
        .map(|t| format!("#{} \"{}\"", t.id, t.subject))
        .collect();
    format!(
        "{name} {what_happened}. {} task(s) were unassigned: {}",
        unassigned.len(),
        list.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gone_note_lists_unassigned_tasks() {
        let a = Task::new("2", "write the parser", "");
        let b = Task::new("5", "test it", "");
        assert_eq!(
            gone_note("builder", "has shut down", &[a, b]),
            "builder has shut down. 2 task(s) were unassigned: #2 \"write the parser\", #5 \"test it\""
        );
        assert_eq!(
            gone_note("builder", "has shut down", &[]),
            "builder has shut down."
        );
    }
}
