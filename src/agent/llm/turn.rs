//! The `llm` engine of a teammate ([`LlmEngine`]) and one of its turns: the teammate's side of the one agent loop
//! ([`agent_loop::run_turn`](super::agent_loop::run_turn)). A turn starts when messages arrived or
//! there is a task to give the model (see [`pick_task`]); the messages become one
//! `<teammate-message>` user turn, followed by the task notice. [`TeammateHost`] plugs the
//! teammate into the loop: its system prompt (rebuilt at each step, as its mode can change),
//! its tools (each call through the permission gate), and its transcript (text a line at a time,
//! each call and its result as a line, notices as notes and warnings). The last answer text
//! goes into the idle notification's `result`; a model request that fails for good ends the
//! turn `failed`, with a message to the lead.

use tokio_util::sync::CancellationToken;

use super::agent_loop::{Call, Cut, LoopHost, Notice, ToolOutput, TurnEnd, run_turn};
use super::config::LlmConfig;
use super::conversation::ToolSpec;
use super::error::LlmError;
use super::narrate::{call_line, show_result};
use super::prompt::{PromptContext, system_prompt, task_notice};
use super::teammate::{LlmState, current_task, pick_task};
use super::tools::{self, TurnState};
use crate::agent::events::{LogKind, TeammateEventKind, UsageMeter};
use crate::agent::runtime::engine::{Engine, TurnFuture, TurnOutcome, TurnReport};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::frames::IdleReason;
use crate::protocol::inbox::{clip, first_line};
use crate::protocol::render::{synthetic_turn, teammate_message};
use crate::protocol::{InboxEntry, LEAD_NAME};

/// The `llm` engine of one teammate: its configuration, and its state once its first turn
/// made it.
#[derive(Debug)]
pub struct LlmEngine {
    config: LlmConfig,
    state: Option<LlmState>,
}

impl LlmEngine {
    pub fn new(config: LlmConfig) -> LlmEngine {
        LlmEngine {
            config,
            state: None,
        }
    }
}

impl Engine for LlmEngine {
    fn name(&self) -> &'static str {
        "llm"
    }

    fn describe(&self) -> Option<String> {
        Some(format!("model {}", self.config.describe()))
    }

    fn turn<'a>(&'a mut self, tm: &'a mut Teammate, content: Vec<InboxEntry>) -> TurnFuture<'a> {
        Box::pin(turn(self, tm, content))
    }
}

/// One turn of an `llm` teammate; `NoTurn` when there is neither a message nor a task. Its
/// model session is made at the first turn (a configuration that cannot make one fails the
/// turn, with a message to the lead).
async fn turn(engine: &mut LlmEngine, tm: &mut Teammate, content: Vec<InboxEntry>) -> TurnOutcome {
    if engine.state.is_none() {
        match LlmState::new(&engine.config, tm) {
            Ok(state) => engine.state = Some(state),
            Err(e) => {
                if content.is_empty() {
                    return TurnOutcome::NoTurn;
                }
                let cancel = tm.begin_turn(None).await;
                drop(cancel);
                return TurnOutcome::Ended(Box::new(failed(tm, &e).await));
            }
        }
    }
    let Some(state) = engine.state.as_mut() else {
        return TurnOutcome::NoTurn;
    };
    run(tm, state, &engine.config, content).await
}

async fn run(
    tm: &mut Teammate,
    llm: &mut LlmState,
    config: &LlmConfig,
    content: Vec<InboxEntry>,
) -> TurnOutcome {
    for entry in &content {
        tm.events.send(TeammateEventKind::Received {
            from: entry.from.clone(),
            color: entry.color.clone(),
            summary: entry.summary.clone(),
            text: entry.text.clone(),
            rendered: teammate_message(entry),
            key: entry.dedup_key(),
        });
    }
    let offer = pick_task(tm, llm).await;
    if content.is_empty() && offer.is_none() {
        return TurnOutcome::NoTurn;
    }
    let mut parts = Vec::new();
    if !content.is_empty() {
        parts.push(synthetic_turn(&content));
    }
    let mut state = TurnState::new(config);
    if let Some((task, claimed)) = &offer {
        llm.offered.insert(task.id.clone());
        if *claimed {
            tm.events.log(
                LogKind::Note,
                format!("claimed task #{} \"{}\"", task.id, clip(&task.subject, 60)),
            );
        }
        parts.push(task_notice(task, *claimed));
        state.task = Some((task.id.clone(), task.subject.clone()));
    } else {
        state.task = current_task(tm);
    }
    let cancel = tm.begin_turn(state.task.clone()).await;
    let members = members(tm);
    let mut host = TeammateHost {
        tm,
        state: &mut state,
        members,
    };
    let result = run_turn(&mut host, &mut llm.session, parts.join("\n\n"), &cancel).await;
    let last_text = result.last_text;
    let mut report = TurnReport::available();
    if !last_text.trim().is_empty() {
        report.result = Some(last_text.trim().to_string());
    }
    if let Some(id) = &state.completed {
        report.completed = Some((id.clone(), "resolved"));
    }
    match result.end {
        TurnEnd::Done => {
            report.summary = Some(match &state.completed {
                Some(id) => format!("completed task #{id}"),
                None if !last_text.trim().is_empty() => clip(&first_line(&last_text), 100),
                None => "turn ended".to_string(),
            });
        }
        TurnEnd::StepLimit(n) => {
            let note = format!("stopped after {n} model calls in one turn");
            tm.events.log(LogKind::Warning, note.clone());
            report.summary = Some(note);
        }
        TurnEnd::Interrupted => {
            tm.events.log(LogKind::Result, "interrupted");
            report.reason = IdleReason::Interrupted;
            report.summary = Some("interrupted".to_string());
        }
        TurnEnd::Shutdown(request) => report.shutdown = Some(*request),
        TurnEnd::Failed(error) => {
            let mut failed = failed(tm, &error).await;
            failed.completed = report.completed.take();
            return TurnOutcome::Ended(Box::new(failed));
        }
    }
    if let Some(summary) = &report.summary {
        tm.events.log(LogKind::Result, summary.clone());
    }
    TurnOutcome::Ended(Box::new(report))
}

/// The other members' names (for the system prompt).
fn members(tm: &Teammate) -> Vec<String> {
    match crate::store::read_team(&tm.config.home, &tm.config.team) {
        Ok(team) => team
            .members
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| n != &tm.config.name)
            .collect(),
        Err(_) => vec![LEAD_NAME.to_string()],
    }
}

/// A teammate plugged into the one agent loop for one turn.
struct TeammateHost<'t> {
    tm: &'t mut Teammate,
    state: &'t mut TurnState,
    /// The other members, for the system prompt.
    members: Vec<String>,
}

impl LoopHost for TeammateHost<'_> {
    fn speaker(&self) -> &str {
        &self.tm.config.name
    }

    fn cut(&self) -> Cut {
        Cut::Lines
    }

    fn system_prompt(&mut self) -> String {
        system_prompt(&PromptContext {
            name: &self.tm.config.name,
            team: &self.tm.config.team,
            cwd: &self.tm.config.cwd,
            mode: self.tm.gate.mode(),
            members: &self.members,
        })
    }

    fn tools(&self) -> Vec<ToolSpec> {
        tools::specs()
    }

    fn usage(&self) -> &UsageMeter {
        &self.tm.config.usage
    }

    fn show_text(&mut self, text: String) {
        self.tm.events.log(LogKind::Note, text);
    }

    fn show_notice(&mut self, notice: Notice) {
        let kind = if notice.is_warning() {
            LogKind::Warning
        } else {
            LogKind::Note
        };
        self.tm.events.log(kind, notice.line());
    }

    async fn run_tool<'a>(
        &'a mut self,
        call: &'a Call,
        cancel: &'a CancellationToken,
    ) -> ToolOutput {
        self.tm.events.log(LogKind::Command, call_line(call));
        let output = tools::run(self.tm, call, self.state, cancel).await;
        show_result(&self.tm.events, call, &output);
        output
    }
}

/// A failed turn: the lead is told in a message, and the idle notification says `failed`.
async fn failed(tm: &mut Teammate, error: &LlmError) -> TurnReport {
    let reason = clip(&error.to_string(), 500);
    let hint = if let Some(until) = error.limit_until_ms() {
        let at = crate::protocol::time::local_clock(until).unwrap_or_else(|| "later".into());
        format!(" I stopped here; the limit resets at {at}. Send me a message to go on then.")
    } else if error.is_auth() {
        " Check the API key the teammate was started with (ANTHROPIC_API_KEY or OPENAI_API_KEY, or the variable named by api_key_env) and restart it.".to_string()
    } else if error.is_retryable() {
        " The request was retried and kept failing; send me a message to try again.".to_string()
    } else {
        String::new()
    };
    tm.events
        .log(LogKind::Warning, format!("turn failed: {reason}"));
    let text = format!("My turn failed: {reason}.{hint}");
    let entry = tm.mailroom.entry(text, Some("my turn failed"));
    if let Err(e) = tm.mailroom.send(LEAD_NAME, entry).await {
        tm.events.log(
            LogKind::Warning,
            format!("cannot tell the lead my turn failed: {e}"),
        );
    }
    let mut report = TurnReport::available();
    report.reason = IdleReason::Failed;
    report.summary = Some("turn failed".to_string());
    report.failure = Some(reason);
    report.limit_until_ms = error.limit_until_ms();
    report
}
