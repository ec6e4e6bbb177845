//! The controller's side of the optional lead model: plain composer text and synthetic turns
//! become model turns (one at a time: while a turn runs, synthetic turns wait in the
//! [`TurnQueue`](crate::lead::turns::TurnQueue) and the human's text waits here; both go to the
//! model together when the turn ends), the model's answer goes into the transcript, its tool
//! calls run through the slash commands' code (spawn, tasks, messages, shutdown), whose typed
//! [`Outcome`](super::outcome::Outcome) is both the note the human sees and the model's result,
//! and usage (the lead model's, and every teammate's: from its executor or its idle reports) is
//! published for the UI. Permission requests and plans never reach the model: they are queued
//! for the human before anything is offered as a turn, and no tool answers them.

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::outcome::Done;
use super::state::{Controller, Phase};
use crate::agent::events::UsageMeter;
use crate::agent::llm::LlmConfig;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::lead::contract::{LeadEvent, TeammateStatus, TeammateView, TranscriptItem, UsageView};
use crate::lead::model::{
    LeadPromptContext, LeadTool, ModelEvent, Session, TeammateLine, TurnEnd, call_line,
    lead_system_prompt, lead_tool_specs, parse_call, spawn_turn, usage_view,
};
use crate::lead::view_builder::{status_of, task_views};
use crate::protocol::render::synthetic_turn;
use crate::protocol::{InboxEntry, LEAD_NAME};

/// The lead model of a session.
pub(crate) struct LeadModel {
    /// The model it talks to (for its price).
    model: String,
    /// `None` while a turn runs (the turn's task holds it).
    session: Option<Box<Session>>,
    usage: UsageMeter,
    published: Option<UsageView>,
    events_tx: mpsc::UnboundedSender<ModelEvent>,
    events_rx: mpsc::UnboundedReceiver<ModelEvent>,
    /// The running turn's token.
    turn: Option<CancellationToken>,
    /// Turn texts waiting for the next turn (the human's words typed mid-turn, turns that
    /// waited through an interrupted turn), oldest first.
    pending: Vec<String>,
}

impl LeadModel {
    /// The model it talks to.
    pub fn model_name(&self) -> Option<&str> {
        Some(self.model.as_str())
    }

    /// The model of a session started with `--lead-model`; `None` (with a note) when its
    /// client cannot be made, or when there is no model.
    pub fn open(config: Option<LlmConfig>, notes: &mut Vec<String>) -> Option<LeadModel> {
        let config = config?;
        match Session::new(&config) {
            Ok(session) => {
                notes.push(format!(
                    "Lead model: {}. Plain text goes to it; @name text still goes to a teammate.",
                    config.describe()
                ));
                let (events_tx, events_rx) = mpsc::unbounded_channel();
                Some(LeadModel {
                    model: config.model.clone(),
                    session: Some(Box::new(session)),
                    usage: UsageMeter::new(),
                    published: None,
                    events_tx,
                    events_rx,
                    turn: None,
                    pending: Vec::new(),
                })
            }
            Err(e) => {
                notes.push(format!("No lead model: {e}"));
                None
            }
        }
    }

    /// What its running turn says next (pending forever while none runs).
    pub async fn next_event(model: &mut Option<LeadModel>) -> Option<ModelEvent> {
        match model {
            Some(m) => m.events_rx.recv().await,
            None => std::future::pending().await,
        }
    }

    /// Its usage so far.
    pub fn usage(&self) -> &UsageMeter {
        &self.usage
    }
}

impl Drop for LeadModel {
    /// A turn still running ends with the session.
    fn drop(&mut self) {
        if let Some(turn) = &self.turn {
            turn.cancel();
        }
    }
}

/// The messages of one SendMessage still being written; the reply goes when the last is.
struct SendTally {
    left: usize,
    sent: Vec<String>,
    failed: Vec<String>,
    tx: Option<oneshot::Sender<ToolOutput>>,
}

impl SendTally {
    fn one(&mut self, name: String, appended: Result<(), crate::store::StoreError>) {
        match appended {
            Ok(()) => self.sent.push(name),
            Err(e) => self
                .failed
                .push(format!("Could not send the message to {name}: {e}")),
        }
        self.left = self.left.saturating_sub(1);
        if self.left > 0 {
            return;
        }
        let result = if self.failed.is_empty() {
            reply(format!("Message sent to {}.", self.sent.join(", ")), false)
        } else {
            reply(self.failed.join("\n"), self.sent.is_empty())
        };
        if let Some(tx) = self.tx.take() {
            let _ = tx.send(result);
        }
    }
}

fn reply(content: impl Into<String>, is_error: bool) -> ToolOutput {
    if is_error {
        ToolOutput::error(content)
    } else {
        ToolOutput::ok(content)
    }
}

impl Controller {
    /// Plain composer text for the lead model (already shown in the transcript): a turn now,
    /// or after the running one. False when the session has no lead model.
    pub fn ask_lead_model(&mut self, text: String) -> bool {
        if self.lead_model.is_none() {
            return false;
        }
        if self.phase != Phase::Running {
            self.note("The lead is shutting down: the lead model takes no more turns.");
            return true;
        }
        let Some(model) = self.lead_model.as_mut() else {
            return false;
        };
        model.pending.push(text);
        if model.turn.is_none() {
            self.start_model_turn();
        }
        true
    }

    /// Synthetic turns delivered now (the model is idle): they become its next turn.
    pub fn lead_model_hears(&mut self, entries: &[InboxEntry]) {
        let Some(model) = self.lead_model.as_mut() else {
            return;
        };
        if entries.is_empty() {
            return;
        }
        model.pending.push(synthetic_turn(entries));
        if model.turn.is_none() {
            self.start_model_turn();
        }
    }

    /// Esc in the lead's view: stops the lead model's turn (what waits stays for the next).
    pub fn interrupt_lead_model(&mut self) {
        match self.lead_model.as_ref().and_then(|m| m.turn.as_ref()) {
            Some(turn) => turn.cancel(),
            None => tracing::debug!("interrupt the lead model: no turn running"),
        }
    }

    /// Starts a turn with everything pending; false when nothing was started.
    fn start_model_turn(&mut self) -> bool {
        if self.phase != Phase::Running {
            return false;
        }
        let system = self.lead_prompt();
        let Some(model) = self.lead_model.as_mut() else {
            return false;
        };
        if model.turn.is_some() || model.pending.is_empty() {
            return false;
        }
        let Some(mut session) = model.session.take() else {
            return false;
        };
        // Its rate-limit pauses are the team's: teammates in panes on the same key see them.
        session.share_rate_limits(self.given.home(), self.given.team());
        let text = std::mem::take(&mut model.pending).join("\n\n");
        let cancel = CancellationToken::new();
        model.turn = Some(cancel.clone());
        spawn_turn(
            session,
            system,
            lead_tool_specs(),
            text,
            model.usage.clone(),
            model.events_tx.clone(),
            cancel,
        );
        let waited = self.turns.set_busy(true);
        debug_assert!(waited.is_empty());
        self.emit(LeadEvent::Busy(true));
        true
    }

    /// The system prompt with the team as it is now.
    fn lead_prompt(&self) -> String {
        let teammates: Vec<TeammateLine> = self
            .cache
            .file()
            .teammates()
            .map(|m| TeammateLine {
                name: m.name.clone(),
                backend: m
                    .backend_kind()
                    .map_or_else(|| "unknown".to_string(), |k| k.to_string()),
                mode: m.permission_mode().to_string(),
            })
            .collect();
        lead_system_prompt(&LeadPromptContext {
            team: self.given.team(),
            cwd: self.given.cwd(),
            teammates: &teammates,
        })
    }

    /// One event of the running turn.
    pub fn on_model_event(&mut self, event: ModelEvent) {
        match event {
            ModelEvent::Text(text) => {
                self.emit(LeadEvent::Transcript(TranscriptItem::Lead { text }))
            }
            ModelEvent::Notice(text) => self.note(text),
            ModelEvent::Tool { call, reply: tx } => {
                if self.phase == Phase::Running {
                    self.run_lead_tool(&call, tx)
                } else {
                    self.interrupt_lead_model();
                    let _ = tx.send(reply("The lead is shutting down: nothing was done.", true));
                }
            }
            ModelEvent::Ended { session, end } => {
                let interrupted = end == TurnEnd::Interrupted;
                match end {
                    TurnEnd::Done => {}
                    TurnEnd::Interrupted => self.note("Interrupted the lead model's turn."),
                    TurnEnd::StepLimit(n) => self.note(format!(
                        "The lead model stopped after {n} model calls in one turn."
                    )),
                    TurnEnd::Failed(why) => {
                        self.note(format!("The lead model's turn failed: {why}"))
                    }
                    // The lead's tools never ask for a shutdown.
                    TurnEnd::Shutdown(_) => {}
                }
                if let Some(model) = self.lead_model.as_mut() {
                    model.session = Some(session);
                    model.turn = None;
                }
                self.after_model_turn(interrupted);
            }
        }
    }

    /// The turn ended: what waited is shown and goes to the model at once, unless the human
    /// interrupted (then it waits for the next turn).
    fn after_model_turn(&mut self, interrupted: bool) {
        let waited = self.turns.set_busy(false);
        let mut entries = Vec::new();
        for turn in waited {
            self.emit(LeadEvent::Transcript(turn.item));
            entries.push(turn.entry);
        }
        if let Some(model) = self.lead_model.as_mut()
            && !entries.is_empty()
        {
            model.pending.push(synthetic_turn(&entries));
        }
        if interrupted || !self.start_model_turn() {
            self.emit(LeadEvent::Busy(false));
        }
    }

    /// Runs one tool call of the lead model through the slash commands' code; the typed
    /// outcome is both the note the human sees and the model's result, sent on `tx` when the
    /// operation is done (for one whose store work runs in the background, from the loop once
    /// that work completes: the model's turn waits, the loop does not).
    fn run_lead_tool(&mut self, call: &Call, tx: oneshot::Sender<ToolOutput>) {
        let tool = match parse_call(call) {
            Ok(tool) => tool,
            Err(e) => {
                let text = format!("{}: {e}", call.name);
                self.note(format!("lead model: {text}"));
                let _ = tx.send(reply(format!("Error: {text}"), true));
                return;
            }
        };
        self.emit(LeadEvent::Transcript(TranscriptItem::Lead {
            text: call_line(&tool),
        }));
        let tool = match tool {
            LeadTool::TaskList => {
                return self.with_fresh_team(move |c| {
                    c.with_fresh_tasks(move |c| {
                        let text = c.task_list_text();
                        let _ = tx.send(reply(text, false));
                    })
                });
            }
            LeadTool::SendMessage {
                to,
                message,
                summary,
            } => {
                return self.lead_send(&to, &message, summary.as_deref(), tx);
            }
            other => other,
        };
        let done: Done = Box::new(move |c, done| {
            let result = match &done {
                Ok(outcome) => reply(outcome.for_model(), false),
                Err(e) => reply(e.to_string(), true),
            };
            c.report(done);
            let _ = tx.send(result);
        });
        match tool {
            LeadTool::SpawnTeammate {
                name,
                prompt,
                plan_mode_required,
                mode,
            } => self.spawn_teammate(&name, plan_mode_required, mode, &prompt, done),
            LeadTool::TaskCreate {
                subject,
                description,
                blocked_by,
                command,
            } => self.add_task(&subject, &description, blocked_by, command.as_deref(), done),
            LeadTool::TaskAssign { task_id, owner } => self.assign_task(&task_id, &owner, done),
            LeadTool::ShutdownTeammate { name } => self.shutdown_one(&name, done),
            LeadTool::TaskList | LeadTool::SendMessage { .. } => {}
        }
    }

    /// The task list and the teammates' statuses, for the model (from copies just read).
    fn task_list_text(&mut self) -> String {
        let mut lines = Vec::new();
        let tasks: Vec<_> = task_views(self.cache.tasks())
            .into_iter()
            .filter(|t| !t.internal)
            .collect();
        if tasks.is_empty() {
            lines.push("No tasks.".to_string());
        } else {
            lines.push("Tasks:".to_string());
        }
        for t in tasks {
            let owner = t
                .owner
                .map(|o| format!(", owner {o}"))
                .unwrap_or_else(|| ", no owner".to_string());
            let blocked = if t.blocked_by.is_empty() {
                String::new()
            } else {
                format!(
                    ", blocked by {}",
                    t.blocked_by
                        .iter()
                        .map(|b| format!("#{b}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            lines.push(format!(
                "#{} \"{}\": {}{owner}{blocked}",
                t.id, t.subject, t.status
            ));
        }
        let waiting = self.permissions.waiting_by_worker();
        let teammates: Vec<String> = self
            .cache
            .file()
            .teammates()
            .map(|m| {
                let status = status_of(
                    m,
                    self.roster.get(&m.name),
                    waiting.contains_key(&m.name) || self.plans.has_worker(&m.name),
                );
                let status = match status {
                    TeammateStatus::Working => "working".to_string(),
                    TeammateStatus::WaitingForApproval => {
                        "waiting for the human's approval".to_string()
                    }
                    TeammateStatus::OnClientPrompt { title, .. } => format!(
                        "waiting on its client's own prompt in its pane ({title}): only the \
                         person can answer it there"
                    ),
                    TeammateStatus::Idle { .. } => "idle".to_string(),
                    TeammateStatus::ShuttingDown { .. } => "shutting down".to_string(),
                    TeammateStatus::Gone => "gone".to_string(),
                    TeammateStatus::Unreachable { host, .. } => {
                        format!("unreachable: the link to {host} is down; it is kept")
                    }
                    TeammateStatus::Stopped { how } => format!("{how}; /respawn starts it again"),
                };
                format!("{} ({status}, {} mode)", m.name, m.permission_mode())
            })
            .collect();
        if teammates.is_empty() {
            lines.push("Teammates: none.".to_string());
        } else {
            lines.push(format!("Teammates: {}.", teammates.join(", ")));
        }
        lines.join("\n")
    }

    /// SendMessage: from `team-lead` to one teammate or to every one (`*`), with the same
    /// membership check and delivery as `/msg` and `/broadcast`, and the model's summary. The
    /// reply goes on `tx` once every inbox was written (each in its lane).
    fn lead_send(
        &mut self,
        to: &str,
        text: &str,
        summary: Option<&str>,
        tx: oneshot::Sender<ToolOutput>,
    ) {
        let entry = InboxEntry::new(LEAD_NAME, text).with_summary(summary);
        let (to, text) = (to.to_string(), text.to_string());
        if to == "*" {
            return self.with_fresh_team(move |c| {
                let names = c.cache.teammate_names();
                c.lead_send_to(names, &to, &text, entry, tx)
            });
        }
        if to == LEAD_NAME {
            let _ = tx.send(reply(
                "That is you: send to a teammate by name, or *.",
                true,
            ));
            return;
        }
        self.with_teammate(&to.clone(), move |c, known| {
            if known {
                c.lead_send_to(vec![to.clone()], &to, &text, entry, tx)
            } else {
                let e = c.no_such_teammate_error(&to);
                c.note(e.to_string());
                let _ = tx.send(reply(e.to_string(), true));
            }
        });
    }

    /// SendMessage to `names` (`to` as the model said it).
    fn lead_send_to(
        &mut self,
        names: Vec<String>,
        to: &str,
        text: &str,
        entry: InboxEntry,
        tx: oneshot::Sender<ToolOutput>,
    ) {
        if names.is_empty() {
            let _ = tx.send(reply("There are no teammates yet: nothing was sent.", true));
            return;
        }
        self.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
            to: if to == "*" {
                "everyone".to_string()
            } else {
                to.to_string()
            },
            text: text.to_string(),
            receipt: None,
        }));
        let tally = std::sync::Arc::new(std::sync::Mutex::new(SendTally {
            left: names.len(),
            sent: Vec::new(),
            failed: Vec::new(),
            tx: Some(tx),
        }));
        for name in names {
            let tally = tally.clone();
            let to = name.clone();
            self.send_message(&name, entry.clone(), move |c, appended, _| {
                if let Err(e) = &appended {
                    c.note(format!("Could not send the message to {to}: {e}"));
                }
                if let Ok(mut t) = tally.lock() {
                    t.one(to, appended);
                }
            });
        }
    }

    /// Fills in every teammate's usage (what its executor sees, else what its last idle
    /// report said) and sends the lead model's when it changed (called when the snapshots are
    /// published).
    pub fn publish_usage(&mut self, team: &mut [TeammateView]) {
        for view in team.iter_mut() {
            let reported = self
                .given
                .executor()
                .usage(&view.name)
                .or_else(|| self.roster.get(&view.name).and_then(|t| t.usage()));
            // The model its transcript names is the one that ran (the team file may hold an
            // alias such as `sonnet`).
            let model = self
                .roster
                .get(&view.name)
                .and_then(|t| t.claude().model())
                .or(view.model.as_deref());
            let ledger = self
                .roster
                .get(&view.name)
                .and_then(|t| t.claude().ledger());
            view.usage = reported.map(|u| usage_of(&u, model, ledger, self.settings.prices()));
        }
        let prices = self.settings.prices();
        let changed = self.lead_model.as_mut().and_then(|model| {
            let used = model.usage().snapshot();
            let mut now = usage_view(&used)?;
            now.cost_micros = prices.cost_micros(
                model.model_name(),
                &crate::protocol::pricing::Tokens {
                    input: used.input_tokens,
                    output: used.output_tokens,
                    cache_write_5m: used.cache_creation_input_tokens,
                    cache_write_1h: 0,
                    cache_read: used.cache_read_input_tokens,
                },
            );
            if now.cost_micros.is_none() {
                now.unpriced_models = model.model_name().map(str::to_string).into_iter().collect();
            }
            (model.published.as_ref() != Some(&now)).then(|| {
                model.published = Some(now.clone());
                now
            })
        });
        if let Some(now) = changed {
            self.emit(LeadEvent::LeadUsage(now));
        }
    }
}

/// What a teammate used, as the UI shows it: priced message by message when its transcript's
/// ledger is known, else its reported totals at its model's standard rate. A model without a
/// price is named, so totals can say what they leave out.
fn usage_of(
    u: &crate::protocol::frames::ReportedUsage,
    model: Option<&str>,
    ledger: Option<&crate::protocol::pricing::Ledger>,
    prices: &crate::protocol::pricing::PriceTable,
) -> UsageView {
    let tokens = u.tokens();
    let (cost_micros, unpriced_models) = match ledger {
        Some(ledger) => (ledger.cost_micros(), ledger.unpriced()),
        None => {
            let cost = prices.cost_micros(model, &tokens);
            let unpriced = if cost.is_none() && tokens.total() > 0 {
                vec![model.unwrap_or("unknown").to_string()]
            } else {
                Vec::new()
            };
            (cost, unpriced)
        }
    };
    UsageView {
        input_tokens: u.input_tokens,
        output_tokens: u.output_tokens,
        tool_uses: u.tool_uses,
        turns: u.turns,
        cost_micros,
        cache_read_tokens: tokens.cache_read,
        cache_write_5m_tokens: tokens.cache_write_5m,
        cache_write_1h_tokens: tokens.cache_write_1h,
        unpriced_models,
    }
}
