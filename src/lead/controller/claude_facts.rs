//! What the lead learns about a `claude` teammate from its session transcript
//! (`store::claude_transcript`): its model, what it used (shown like a teamlead teammate's
//! reported usage), whether its model was offered the task tools, and until when it is rate- or
//! usage-limited (`TeammateView::rate_limited_until`). The transcript is read in
//! the background (the `Transcripts` lane) after each entry the teammate sends and at the
//! safety poll. A teammate whose model lacks the task tools is told about once, and its
//! assignments then go to it as plain instructions.

use super::state::Controller;

/// The tasks whose completion by a `claude` teammate was said (each once; a task reset and
/// completed again is said again).
#[derive(Debug, Default)]
pub struct SaidDone(std::collections::HashSet<String>);

impl SaidDone {
    /// Forgets every task not among `completed`.
    fn keep_only(&mut self, completed: &[&str]) {
        self.0.retain(|id| completed.contains(&id.as_str()));
    }

    /// Task `id` is to be said: whether it was not said before.
    fn first_time(&mut self, id: &str) -> bool {
        self.0.insert(id.to_string())
    }
}
use super::store_worker::Lane;
use crate::lead::contract::LeadEvent;
use crate::protocol::time::now_ms;
use crate::protocol::{InboxEntry, LEAD_NAME, Task};
use crate::store::claude_transcript::{
    TranscriptFacts, TranscriptMeter, Undelivered, UndeliveredKind,
};

/// The text of an assignment for a teammate that cannot use the task list.
pub fn plain_assignment(task: &Task) -> String {
    let mut text = format!("Task #{} is assigned to you: {}", task.id, task.subject);
    if !task.description.trim().is_empty() {
        text.push_str(&format!("\n\n{}", task.description));
    }
    text.push_str(&format!(
        "\n\nYour tools cannot update the shared task list: when the task is done, send \
         team-lead a message saying that task #{} is complete.",
        task.id
    ));
    text
}

/// How long a `claude` teammate may take from its start to its first turn before the lead
/// says so (a cold node start on a busy machine takes a few seconds; a model's first answer
/// more): 30 s unless `TEAMLEAD_FIRST_TURN_MS` says otherwise (tests).
pub fn first_turn_within() -> std::time::Duration {
    std::env::var("TEAMLEAD_FIRST_TURN_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(
            std::time::Duration::from_secs(30),
            std::time::Duration::from_millis,
        )
}

/// How long a read of a `claude` teammate's transcript waits for the turn it began on a
/// message it just took (off the loop, in the `Transcripts` lane).
const TURN_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

impl Controller {
    /// Tasks that a `claude` teammate owns and that became completed since `before` (the
    /// previous copy of the task list) are said at once, as teamlead's own teammates say them
    /// (`task #1 "…" done.`, under the teammate's name): the client writes the task file,
    /// and its idle notification (and so the wave's digest) comes only when its turn ends.
    pub(super) fn say_claude_completions(&mut self, before: &[Task]) {
        let done: Vec<(String, String)> = self
            .cache
            .tasks()
            .iter()
            .filter(|t| t.status == crate::protocol::TaskStatus::Completed && !t.is_internal())
            .filter(|t| {
                before
                    .iter()
                    .any(|b| b.id == t.id && b.status != crate::protocol::TaskStatus::Completed)
            })
            .filter_map(|t| {
                let owner = t.owner.as_deref()?;
                let member = self
                    .cache
                    .file()
                    .teammates()
                    .find(|m| m.name == owner || m.agent_id == owner)?;
                Some((member.name.clone(), t.id.clone()))
            })
            .collect();
        // A task reset and completed again is said again.
        let completed: Vec<&str> = self
            .cache
            .tasks()
            .iter()
            .filter(|t| t.status == crate::protocol::TaskStatus::Completed)
            .map(|t| t.id.as_str())
            .collect();
        self.said_done.keep_only(&completed);
        for (name, id) in done {
            if self.is_claude(&name) {
                self.say_claude_done(&name, &id);
            }
        }
    }

    /// Says once that `name` completed task `id`.
    pub(super) fn say_claude_done(&mut self, name: &str, id: &str) {
        if !self.said_done.first_time(id) {
            return;
        }
        let line = match self.cache.tasks().iter().find(|t| t.id == id) {
            Some(task) => task.done_line(),
            None => format!("task #{id} done."),
        };
        let entry = InboxEntry::new(name, &line).with_summary(Some(&format!("task {id} done")));
        let item = crate::lead::contract::TranscriptItem::Frame {
            from: name.to_string(),
            color: self.color_of(name),
            line,
        };
        self.offer_turn(&entry, item);
    }

    /// Reports, once, every `claude` teammate that was started more than
    /// [`first_turn_within`] ago and has shown no sign of a first turn (no entry sent, no
    /// `isActive`, no turn in its transcript), with its pane's last lines. One report per
    /// cause: a teammate that stopped (or is in `not_running`, a liveness report on its way)
    /// was told as such, and one waiting on its client's own prompt is told as that
    /// (`controller::client_prompts`; its deadline starts again once the prompt is answered).
    pub(super) fn check_first_turns(&mut self, not_running: &[String]) {
        let now = tokio::time::Instant::now();
        let within = first_turn_within();
        let late: Vec<String> = self
            .roster
            .iter_mut()
            .filter_map(|(name, t)| {
                let since = t.client().awaiting_since()?;
                if !t.not_turned() || t.stopped().is_some() || not_running.contains(name) {
                    t.client_mut().stop_awaiting();
                    return None;
                }
                if t.client().prompt().is_some() {
                    return None;
                }
                (now.duration_since(since) >= within).then(|| {
                    t.client_mut().stop_awaiting();
                    name.clone()
                })
            })
            .collect();
        for name in late {
            let reader = self.given.executor().pane_reader(&name);
            let who = name.clone();
            let secs = within.as_secs();
            self.store.submit(
                Lane::Transcripts,
                move |_| reader.map(|read| read(8)).unwrap_or_default(),
                move |c, tail| {
                    let tail: Vec<String> = tail
                        .into_iter()
                        .map(|l| l.trim_end().to_string())
                        .filter(|l| !l.trim().is_empty())
                        .collect();
                    let shown = if tail.is_empty() {
                        String::new()
                    } else {
                        format!(" Its pane shows:\n{}", tail.join("\n"))
                    };
                    c.note(format!(
                        "{who} has not started its first turn {secs} s after it was started: its \
                         prompt may not have reached its model. teamlead nudged it once; if \
                         nothing happens, /kill {who} and /respawn it, or jump to its pane.{shown}"
                    ));
                    // Claude Code can strand a message it read while its session was busy
                    // until the next one arrives (PROTOCOL.md 3): one more message wakes it.
                    let nudge = InboxEntry::new(
                        LEAD_NAME,
                        "Your first message from team-lead is above: please start on it.",
                    )
                    .with_summary(Some("start on your first message"));
                    c.deliver_or_note(&who, nudge, format!("Could not nudge {who}"));
                },
            );
        }
    }

    /// Reports, once per mark, every `claude` teammate the lead marked active before a delivery
    /// (`LeadMark`) [`first_turn_within`] ago that has shown no turn since and still has a
    /// message it has not started a turn on: the lead's own `isActive: true` never shows it
    /// working, so a client that never takes the message is said here (one report per cause:
    /// not for a teammate that stopped or is shutting down).
    pub(super) fn check_marked_turns(&mut self) {
        let now = now_ms();
        let within = first_turn_within();
        let mut late = Vec::new();
        for (name, t) in self.roster.iter_mut() {
            let Some(mark) = t.lead_mark() else {
                continue;
            };
            if mark.reported()
                || t.stopped().is_some()
                || t.shutdown().is_waiting()
                || now.saturating_sub(mark.at_ms()) < within.as_millis() as u64
            {
                continue;
            }
            let Some(sent) = self.ledger.not_turned(name) else {
                continue;
            };
            t.mark_reported();
            late.push((name.clone(), sent));
        }
        for (name, sent) in late {
            self.note(format!(
                "{name} has not started a turn on \"{}\" ({}, sent {} s ago): its client may be \
                 stuck. Jump to its pane, or /steer {name} with it again.",
                crate::protocol::display::visible_line(&sent.preview),
                sent.state.as_str(),
                now.saturating_sub(sent.sent_ms) / 1000
            ));
        }
    }

    /// `who`'s client said a frame for the lead could not be delivered: say so at once, as
    /// what it is, with the way to have it try again, and mark the message its turn was
    /// answering as not done.
    fn frame_not_delivered(&mut self, who: &str, lost: &Undelivered) {
        let input = &lost.input;
        let (what, outcome, again) = match lost.kind {
            UndeliveredKind::PermissionRequest => (
                format!("permission request for {} ({input})", lost.tool),
                "the call did not run",
                format!(
                    "your permission request for {} ({input}) never reached me; make that call again",
                    lost.tool
                ),
            ),
            UndeliveredKind::Message => (
                format!("message to the lead ({input})"),
                "the lead never got it",
                "your last message to me never reached me; send it again".to_string(),
            ),
            UndeliveredKind::PlanApproval => (
                "plan approval request".to_string(),
                "the plan was not submitted",
                "your plan never reached me; call ExitPlanMode again".to_string(),
            ),
        };
        let text = format!(
            "{who}'s {what} never reached the lead: its client could not write it to the              lead's inbox (\"{}\"), so {outcome}. To have {who} try again: /steer {who} {again}",
            lost.said
        );
        tracing::warn!("{text}");
        self.note(text);
        if let Some(change) = self.ledger.reply_lost(who, now_ms()) {
            self.emit(LeadEvent::Receipt {
                id: change.id,
                to: change.to,
                state: change.state,
                at_ms: change.at_ms,
            });
        }
    }

    /// Reads more of every `claude` teammate's transcript, in the background.
    pub(super) fn read_claude_transcripts(&mut self) {
        let names: Vec<String> = self
            .cache
            .file()
            .teammates()
            .filter(|m| self.is_claude(&m.name))
            .map(|m| m.name.clone())
            .collect();
        for name in names {
            self.read_claude_transcript(&name);
        }
    }

    /// Reads more of `name`'s transcript, when it is a `claude` teammate with a known session.
    pub(super) fn read_claude_transcript(&mut self, name: &str) {
        self.read_claude_transcript_for_turn(name, None);
    }

    /// [`Controller::read_claude_transcript`]; with `turn_after` (epoch ms), the read waits (off
    /// the loop, up to [`TURN_WAIT`]) for a turn the transcript begins from then on: the
    /// teammate took what the lead sent it, and its turn's first line follows in a moment.
    pub(super) fn read_claude_transcript_for_turn(&mut self, name: &str, turn_after: Option<u64>) {
        let Some(session) = self.record.claude_session(name).map(str::to_string) else {
            return;
        };
        let prices = self.settings.prices().clone();
        let tracking = self.roster.entry(name);
        let meter = tracking
            .claude_mut()
            .meter(|| TranscriptMeter::new(&session, prices));
        let who = name.to_string();
        // A teammate on another host: its transcript is there; its relay sends what it says,
        // kept here (`store::remote_facts`).
        let remote = self
            .host_of(name)
            .map(|_| (self.given.team().to_string(), name.to_string()));
        self.store.submit(
            Lane::Transcripts,
            move |home| {
                let deadline = std::time::Instant::now() + TURN_WAIT;
                loop {
                    let facts = match &remote {
                        Some((team, who)) => crate::store::remote_facts::read(home, team, who)
                            .ok()
                            .flatten(),
                        None => meter.lock().unwrap_or_else(|e| e.into_inner()).read(home),
                    };
                    let begun = |f: &TranscriptFacts| {
                        turn_after.is_none_or(|at| f.last_turn_ms.is_some_and(|t| t >= at))
                    };
                    if facts.as_ref().is_some_and(begun) || std::time::Instant::now() >= deadline {
                        return facts;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(100));
                }
            },
            move |c, facts| {
                let Some(facts) = facts else { return };
                let Some(t) = c.roster.get_mut(&who) else {
                    return;
                };
                // A turn its transcript began after the lead's own `isActive: true`.
                if let Some(turn) = facts.last_turn_ms {
                    t.turn_seen(turn);
                }
                if facts.usage != Default::default() {
                    t.set_usage(facts.usage);
                }
                let lifted = t.set_rate_limited_until(facts.limited_until_ms);
                let read = t.claude_mut().read(&facts);
                let told = read.undelivered_told_before;
                if read.task_tools_lost {
                    let model = facts.model.as_deref().unwrap_or("its model");
                    c.note(format!(
                        "{who} cannot use the task list: {model} was not offered the task tools \
                         (TaskList, TaskUpdate); its assignments go to it as plain instructions."
                    ));
                }
                if lifted {
                    c.release_held_assignments();
                }
                if let Some(until) = facts.limited_until_ms {
                    c.on_limit(&who, until);
                }
                for lost in facts.undelivered.iter().filter(|u| u.seq > told) {
                    c.frame_not_delivered(&who, lost);
                }
                c.publish();
            },
        );
    }
}
