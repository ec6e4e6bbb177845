//! One turn of the `llm` engine. It starts when messages arrived or there is a task to give
//! the model (see [`session::pick_task`]); the messages become one `<teammate-message>` user
//! turn, followed by the task notice. Then, until the model ends its turn: compact the
//! conversation if it is over budget, stream the answer (text and tool calls show in the
//! transcript as they come), run the tool calls in order (each through the permission gate),
//! and send their results back. The last answer text goes into the idle notification's
//! `result`. The turn token aborts the stream or the running tool; a model request that fails
//! for good (after the client's retries) ends the turn `failed`, with a message to the lead.

use tokio_util::sync::CancellationToken;

use super::compact::{compact, estimate_tokens};
use super::conversation::{Block, Message, ModelRequest, Role, StopReason, StreamUpdate};
use super::error::LlmError;
use super::narrate::{StreamPrinter, call_line, show_result};
use super::prompt::{PromptContext, system_prompt, task_notice};
use super::session::{Session, current_task, pick_task};
use super::tools::{self, Call, Control, TurnState};
use crate::agent::events::{LogKind, TeammateEventKind};
use crate::agent::runtime::EngineKind;
use crate::agent::runtime::teammate::{Teammate, TurnOutcome, TurnReport};
use crate::protocol::frames::{IdleReason, ShutdownRequest};
use crate::protocol::inbox::{clip, first_line};
use crate::protocol::render::{synthetic_turn, teammate_message};
use crate::protocol::{InboxEntry, LEAD_NAME};

/// How the steps of a turn ended.
enum TurnEnd {
    /// The model ended its turn.
    Done,
    /// It made this many model calls without ending its turn.
    StepLimit(usize),
    Interrupted,
    Shutdown(ShutdownRequest),
    Failed(LlmError),
}

/// One turn of an `llm` teammate; `NoTurn` when there is neither a message nor a task.
pub(crate) async fn turn(tm: &mut Teammate, content: Vec<InboxEntry>) -> TurnOutcome {
    let EngineKind::Llm(config) = &tm.config.engine else {
        return TurnOutcome::NoTurn;
    };
    if tm.llm.is_none() {
        match Session::new(config) {
            Ok(session) => tm.llm = Some(Box::new(session)),
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
    let Some(mut session) = tm.llm.take() else {
        return TurnOutcome::NoTurn;
    };
    let outcome = run(tm, &mut session, content).await;
    tm.llm = Some(session);
    outcome
}

async fn run(tm: &mut Teammate, session: &mut Session, content: Vec<InboxEntry>) -> TurnOutcome {
    for entry in &content {
        tm.events.send(TeammateEventKind::Received {
            from: entry.from.clone(),
            color: entry.color.clone(),
            summary: entry.summary.clone(),
            text: entry.text.clone(),
            rendered: teammate_message(entry),
        });
    }
    let offer = pick_task(tm, session).await;
    if content.is_empty() && offer.is_none() {
        return TurnOutcome::NoTurn;
    }
    let mut parts = Vec::new();
    if !content.is_empty() {
        parts.push(synthetic_turn(&content));
    }
    let mut state = TurnState::default();
    if let Some((task, claimed)) = &offer {
        session.offered.insert(task.id.clone());
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
    session.history.push(Message::user(parts.join("\n\n")));

    let mut last_text = String::new();
    let end = steps(tm, session, &mut state, &mut last_text, &cancel).await;
    let mut report = TurnReport::available();
    if !last_text.trim().is_empty() {
        report.result = Some(last_text.trim().to_string());
    }
    if let Some(id) = &state.completed {
        report.completed = Some((id.clone(), "resolved"));
    }
    match end {
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
        TurnEnd::Shutdown(request) => report.shutdown = Some(request),
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

/// Model calls and tool calls until the model ends its turn.
async fn steps(
    tm: &mut Teammate,
    session: &mut Session,
    state: &mut TurnState,
    last_text: &mut String,
    cancel: &CancellationToken,
) -> TurnEnd {
    let tool_specs = tools::specs();
    let members = members(tm);
    let max_steps = session.client.config().max_steps.max(1);
    for _ in 0..max_steps {
        if cancel.is_cancelled() {
            return interrupted(session);
        }
        let system = system_prompt(&PromptContext {
            name: &tm.config.name,
            team: &tm.config.team,
            cwd: &tm.config.cwd,
            mode: tm.gate.mode(),
            members: &members,
        });
        keep_in_budget(tm, session, &system, &tool_specs, cancel).await;
        let request = ModelRequest {
            system,
            messages: session.history.clone(),
            tools: tool_specs.clone(),
        };
        let mut printer = StreamPrinter::new(&tm.events, &tm.config.usage);
        let answer = {
            let mut out = |u: StreamUpdate| printer.update(u);
            session.client.send(&request, cancel, &mut out).await
        };
        printer.flush();
        let response = match answer {
            Ok(r) => r,
            Err(LlmError::Cancelled) => return interrupted(session),
            Err(e) => return TurnEnd::Failed(e),
        };
        let usage = response.usage;
        session.reported_context = usage.record(&tm.config.usage);
        let message = Message::assistant(response.content);
        let text = message.text();
        if !text.trim().is_empty() {
            *last_text = text;
        }
        let calls = Call::all_of(&message);
        if !message.content.is_empty() {
            session.history.push(message);
        }
        if calls.is_empty() {
            if response.stop == StopReason::MaxTokens {
                tm.events
                    .log(LogKind::Warning, "the answer was cut at max_tokens");
            }
            return TurnEnd::Done;
        }
        let mut results = Vec::new();
        let mut control = None;
        for call in &calls {
            if control.is_some() {
                results.push(Block::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: "Not run: the turn ended first.".to_string(),
                    is_error: true,
                });
                continue;
            }
            tm.events.log(LogKind::Command, call_line(call));
            tm.config.usage.update(|u| u.tool_uses += 1);
            let output = tools::run(tm, call, state, cancel).await;
            show_result(&tm.events, call, &output);
            control = output.control.clone();
            results.push(Block::ToolResult {
                tool_use_id: call.id.clone(),
                content: output.content,
                is_error: output.is_error,
            });
        }
        session.history.push(Message {
            role: Role::User,
            content: results,
        });
        match control {
            Some(Control::Interrupted) => return interrupted(session),
            Some(Control::Shutdown(request)) => return TurnEnd::Shutdown(*request),
            None => {}
        }
    }
    TurnEnd::StepLimit(max_steps)
}

/// Notes the interruption in the conversation (the model sees it next turn).
fn interrupted(session: &mut Session) -> TurnEnd {
    session
        .history
        .push(Message::user("[The user interrupted this turn.]"));
    TurnEnd::Interrupted
}

/// Compacts the conversation when it is over the context budget.
async fn keep_in_budget(
    tm: &mut Teammate,
    session: &mut Session,
    system: &str,
    tool_specs: &[super::conversation::ToolSpec],
    cancel: &CancellationToken,
) {
    let budget = session.client.config().context;
    let estimate = |m: &[Message]| estimate_tokens(system, tool_specs, m);
    let current = estimate(&session.history).max(session.reported_context);
    let client = session.client.clone();
    let summarize = |request: ModelRequest| async move {
        let mut quiet = |_: StreamUpdate| {};
        match client.send(&request, cancel, &mut quiet).await {
            Ok(answer) => Ok(Message::assistant(answer.content).text()),
            Err(e) => Err(e.to_string()),
        }
    };
    let done = compact(
        &mut session.history,
        &tm.config.name,
        current,
        budget.max_tokens,
        budget.keep_exchanges,
        estimate,
        summarize,
    )
    .await;
    if let Some(done) = done {
        session.reported_context = 0;
        tm.config.usage.update(|u| u.compactions += 1);
        tm.events.log(
            LogKind::Note,
            format!(
                "compacted the conversation: {} older message(s) → {} summary, ~{} → ~{} tokens",
                done.summarized,
                if done.by_model {
                    "a"
                } else {
                    "a shortened-transcript"
                },
                done.tokens_before,
                done.tokens_after
            ),
        );
    }
}

/// A failed turn: the lead is told in a message, and the idle notification says `failed`.
async fn failed(tm: &mut Teammate, error: &LlmError) -> TurnReport {
    let reason = clip(&error.to_string(), 500);
    let hint = if error.is_auth() {
        " Check the API key the teammate was started with (ANTHROPIC_API_KEY or OPENAI_API_KEY, or the variable named by api_key_env) and restart it."
    } else if error.is_retryable() {
        " The request was retried and kept failing; send me a message to try again."
    } else {
        ""
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
    report
}
