//! The one agent loop of the `llm` engine, used by teammates and by the lead model alike (each
//! is a [`LoopHost`]: the one whose loop it is; "engine" means only what does a teammate's
//! turns, `agent::runtime::Engine`): a
//! turn is a user message, then, until the model ends its turn: compact the conversation when
//! it is over its budget, stream the answer (shown as it comes, through the one [`Printer`]),
//! run the tool calls in order, and send their results back. What differs between a teammate
//! and the lead model is behind the [`LoopHost`] trait: its system prompt, its tools and how one
//! call runs, where its text and notices go, and how finely the text is cut. The loop owns what
//! must not drift: every text that leaves a session has the configured keys scrubbed out
//! (the model's text, notices, tool results), results are clipped, calls left after a call
//! that ended the turn get the one [`NOT_RUN`] result, an interrupted turn is noted in the
//! conversation, and requests, retries, tool uses and compactions are counted.

mod calls;
mod printer;

pub use calls::{Call, Control, RESULT_CHARS, ToolOutput, clip_result};
pub use printer::{Cut, Notice, Printer};

use std::future::Future;

use tokio_util::sync::CancellationToken;

use super::compact::{compact, estimate_tokens};
use super::conversation::{Block, Message, ModelRequest, Role, StopReason, StreamUpdate, ToolSpec};
use super::error::LlmError;
use super::session::Session;
use crate::agent::events::UsageMeter;
use crate::protocol::frames::ShutdownRequest;

/// The result of a call that was not run because an earlier call of the same answer ended the
/// turn (an interruption, a shutdown).
pub const NOT_RUN: &str = "Not run: the turn ended first.";

/// The user line that tells the model its last turn was interrupted.
pub const INTERRUPTED_NOTE: &str = "[The user interrupted this turn.]";

/// What differs between the hosts of the loop (a teammate, the lead model).
pub trait LoopHost: Send {
    /// Whose conversation it is (the compaction's summary request names it).
    fn speaker(&self) -> &str;

    /// How its streamed text is cut before it is shown.
    fn cut(&self) -> Cut;

    /// The system prompt of the next model call (a teammate's mode can change mid-turn).
    fn system_prompt(&mut self) -> String;

    /// The tools the model is offered.
    fn tools(&self) -> Vec<ToolSpec>;

    /// Where requests, tokens, retries, tool uses and compactions are counted.
    fn usage(&self) -> &UsageMeter;

    /// A finished piece of the answer (keys already scrubbed out).
    fn show_text(&mut self, text: String);

    /// Something worth a line: a retry, a rate-limit pause, an answer cut short, a compaction
    /// (keys already scrubbed out of its text).
    fn show_notice(&mut self, notice: Notice);

    /// Runs one call. The result's text is scrubbed and clipped by the loop; its `control`
    /// ends the turn after it.
    fn run_tool<'a>(
        &'a mut self,
        call: &'a Call,
        cancel: &'a CancellationToken,
    ) -> impl Future<Output = ToolOutput> + Send + 'a;
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// The model ended its turn.
    Done,
    /// It made this many model calls without ending its turn.
    StepLimit(usize),
    /// The turn's token was cancelled (or a call saw it).
    Interrupted,
    /// The lead asked for a shutdown while a call waited (teammates only).
    Shutdown(Box<ShutdownRequest>),
    /// A request failed for good, after the client's retries (its text holds no key: the
    /// client scrubs what a server sends back).
    Failed(LlmError),
}

/// A turn's end and the last text the model wrote in it (for a teammate's idle report).
#[derive(Debug, Clone, PartialEq)]
pub struct TurnResult {
    pub end: TurnEnd,
    pub last_text: String,
}

/// Runs one turn: `prompt` becomes the user message, then model calls and tool calls until
/// the model ends its turn, the step limit, an interruption, a shutdown or a failure.
pub async fn run_turn<E: LoopHost>(
    host: &mut E,
    session: &mut Session,
    prompt: String,
    cancel: &CancellationToken,
) -> TurnResult {
    session.history.push(Message::user(prompt));
    let mut last_text = String::new();
    let end = steps(host, session, &mut last_text, cancel).await;
    if end == TurnEnd::Interrupted {
        session.history.push(Message::user(INTERRUPTED_NOTE));
    }
    TurnResult { end, last_text }
}

/// Model calls and tool calls until the model ends its turn.
async fn steps<E: LoopHost>(
    host: &mut E,
    session: &mut Session,
    last_text: &mut String,
    cancel: &CancellationToken,
) -> TurnEnd {
    let tools = host.tools();
    let max_steps = session.config().max_steps.max(1);
    for _ in 0..max_steps {
        if cancel.is_cancelled() {
            return TurnEnd::Interrupted;
        }
        let system = host.system_prompt();
        keep_in_budget(host, session, &system, &tools, cancel).await;
        let request = ModelRequest {
            system,
            messages: session.history.clone(),
            tools: tools.clone(),
        };
        let client = session.client.clone();
        let answer = {
            let mut printer = Printer::new(&mut *host, client.config());
            let answer = {
                let mut out = |u: StreamUpdate| printer.update(u);
                client.send(&request, cancel, &mut out).await
            };
            printer.flush();
            answer
        };
        let response = match answer {
            Ok(r) => r,
            Err(LlmError::Cancelled) => return TurnEnd::Interrupted,
            Err(e) => return TurnEnd::Failed(e),
        };
        session.reported_context = response.usage.record(host.usage());
        let message = Message::assistant(response.content);
        let text = message.text();
        if !text.trim().is_empty() {
            *last_text = client.config().scrub(&text);
        }
        let calls = Call::all_of(&message);
        if !message.content.is_empty() {
            session.history.push(message);
        }
        if calls.is_empty() {
            if response.stop == StopReason::MaxTokens {
                host.show_notice(Notice::CutAtMaxTokens);
            }
            return TurnEnd::Done;
        }
        let mut results = Vec::new();
        let mut control = None;
        for call in &calls {
            if control.is_some() {
                results.push(Block::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: NOT_RUN.to_string(),
                    is_error: true,
                });
                continue;
            }
            host.usage().update(|u| u.tool_uses += 1);
            let output = host.run_tool(call, cancel).await;
            control = output.control;
            results.push(Block::ToolResult {
                tool_use_id: call.id.clone(),
                content: clip_result(&client.config().scrub(&output.content)),
                is_error: output.is_error,
            });
        }
        session.history.push(Message {
            role: Role::User,
            content: results,
        });
        match control {
            Some(Control::Interrupted) => return TurnEnd::Interrupted,
            Some(Control::Shutdown(request)) => return TurnEnd::Shutdown(request),
            None => {}
        }
    }
    TurnEnd::StepLimit(max_steps)
}

/// Compacts the conversation when it is over the context budget.
async fn keep_in_budget<E: LoopHost>(
    host: &mut E,
    session: &mut Session,
    system: &str,
    tools: &[ToolSpec],
    cancel: &CancellationToken,
) {
    let budget = session.config().context;
    let estimate = |m: &[Message]| estimate_tokens(system, tools, m);
    let current = estimate(&session.history).max(session.reported_context);
    let client = session.client.clone();
    let speaker = host.speaker().to_string();
    let summarize = |request: ModelRequest| async move {
        let mut quiet = |_: StreamUpdate| {};
        match client.send(&request, cancel, &mut quiet).await {
            Ok(answer) => Ok(Message::assistant(answer.content).text()),
            Err(e) => Err(e.to_string()),
        }
    };
    let done = compact(
        &mut session.history,
        &speaker,
        current,
        budget.max_tokens,
        budget.keep_exchanges,
        estimate,
        summarize,
    )
    .await;
    if let Some(done) = done {
        session.reported_context = 0;
        host.usage().update(|u| u.compactions += 1);
        host.show_notice(Notice::Compacted(done));
    }
}
