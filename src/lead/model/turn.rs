//! One turn of the lead model, run as a tokio task beside the controller so the controller
//! keeps serving the UI, the inboxes and the permission queue while the model thinks. The task
//! owns the [`ModelSession`] for the turn and hands it back when the turn ends. It streams the
//! answer to the controller a paragraph at a time ([`ModelEvent::Text`]), asks the controller
//! to run each tool call ([`ModelEvent::Tool`]; the controller runs it through the slash
//! commands' code and replies), compacts the conversation when it grows past its budget, and
//! counts tokens, requests, tool uses and turns in a [`UsageMeter`]. Every text it sends out
//! has the configured keys scrubbed out.

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::events::UsageMeter;
use crate::agent::llm::compact::{compact, estimate_tokens};
use crate::agent::llm::conversation::{
    Block, Message, ModelRequest, Role, StopReason, StreamUpdate, ToolSpec,
};
use crate::agent::llm::tools::Call;
use crate::agent::llm::{LlmClient, LlmConfig, LlmError};

/// The lead model's conversation and client, kept between turns.
#[derive(Debug)]
pub struct ModelSession {
    client: LlmClient,
    history: Vec<Message>,
    /// Input + output tokens of the last answer (the context size the service saw).
    reported_context: usize,
}

impl ModelSession {
    pub fn new(config: &LlmConfig) -> Result<ModelSession, LlmError> {
        Ok(ModelSession {
            client: LlmClient::new(config.clone())?,
            history: Vec::new(),
            reported_context: 0,
        })
    }

    pub fn config(&self) -> &LlmConfig {
        self.client.config()
    }

    /// The conversation so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }
}

/// What a running turn tells the controller.
#[derive(Debug)]
pub enum ModelEvent {
    /// A finished paragraph of the answer (or its rest), as it streams.
    Text(String),
    /// Something worth a note: a retry, an answer cut short, a compaction.
    Notice(String),
    /// A tool call for the controller to run; the result goes back on `reply`.
    Tool {
        call: Call,
        reply: oneshot::Sender<ToolReply>,
    },
    /// The turn is over; the session comes back.
    Ended {
        session: Box<ModelSession>,
        end: TurnEnd,
    },
}

/// The result of one tool call, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReply {
    pub content: String,
    pub is_error: bool,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// The model ended its turn.
    Done,
    /// The human interrupted it (or the lead is going away).
    Interrupted,
    /// It made this many model calls without ending its turn.
    StepLimit(usize),
    /// A request failed for good (after the client's retries); the reason, without keys.
    Failed(String),
}

/// Starts a turn: `text` is the user turn (the human's words and/or `<teammate-message>`
/// blocks), `system` the system prompt, `tools` what the model may call.
pub fn spawn_turn(
    session: Box<ModelSession>,
    system: String,
    tools: Vec<ToolSpec>,
    text: String,
    usage: UsageMeter,
    events: mpsc::UnboundedSender<ModelEvent>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut session = session;
        let turn = Turn {
            system,
            tools,
            usage,
            events: events.clone(),
            cancel,
        };
        let end = turn.run(&mut session, text).await;
        let _ = events.send(ModelEvent::Ended { session, end });
    })
}

/// One running turn.
struct Turn {
    system: String,
    tools: Vec<ToolSpec>,
    usage: UsageMeter,
    events: mpsc::UnboundedSender<ModelEvent>,
    cancel: CancellationToken,
}

/// Text a key could hide in, without the keys.
fn scrub(config: &LlmConfig, text: &str) -> String {
    let mut text = text.to_string();
    for key in [&config.api_key, &config.auth_token].into_iter().flatten() {
        text = key.scrub(&text);
    }
    text
}

/// Sends the answer on a paragraph at a time (a blank line ends one).
struct ParagraphPrinter<'a> {
    events: &'a mpsc::UnboundedSender<ModelEvent>,
    config: &'a LlmConfig,
    usage: &'a UsageMeter,
    pending: String,
}

impl ParagraphPrinter<'_> {
    fn text(&self, text: &str) {
        let text = scrub(self.config, text.trim_end());
        let text = text.trim_start_matches('\n');
        if !text.trim().is_empty() {
            let _ = self.events.send(ModelEvent::Text(text.to_string()));
        }
    }

    fn update(&mut self, update: StreamUpdate) {
        match update {
            StreamUpdate::Text(piece) => {
                self.pending.push_str(&piece);
                if let Some(end) = self.pending.rfind("\n\n") {
                    let done = self.pending[..end].to_string();
                    self.pending = self.pending[end + 2..].to_string();
                    self.text(&done);
                }
            }
            StreamUpdate::ToolCall { .. } => self.flush(),
            StreamUpdate::Retrying {
                attempt,
                delay,
                error,
            } => {
                self.flush();
                self.usage.update(|u| u.retries += 1);
                let _ = self.events.send(ModelEvent::Notice(scrub(
                    self.config,
                    &format!(
                        "lead model: {error}; trying again in {:.1} s (attempt {attempt})",
                        delay.as_secs_f64()
                    ),
                )));
            }
        }
    }

    fn flush(&mut self) {
        let rest = std::mem::take(&mut self.pending);
        self.text(&rest);
    }
}

impl Turn {
    fn notice(&self, session: &ModelSession, text: &str) {
        let _ = self
            .events
            .send(ModelEvent::Notice(scrub(session.config(), text)));
    }

    async fn run(&self, session: &mut ModelSession, text: String) -> TurnEnd {
        self.usage.update(|u| u.turns += 1);
        session.history.push(Message::user(text));
        let end = self.steps(session).await;
        match &end {
            TurnEnd::Interrupted => session
                .history
                .push(Message::user("[The user interrupted this turn.]")),
            TurnEnd::Failed(_) => self.usage.update(|u| u.failed_turns += 1),
            TurnEnd::Done | TurnEnd::StepLimit(_) => {}
        }
        end
    }

    /// Model calls and tool calls until the model ends its turn.
    async fn steps(&self, session: &mut ModelSession) -> TurnEnd {
        let max_steps = session.config().max_steps.max(1);
        for _ in 0..max_steps {
            if self.cancel.is_cancelled() {
                return TurnEnd::Interrupted;
            }
            self.keep_in_budget(session).await;
            let request = ModelRequest {
                system: self.system.clone(),
                messages: session.history.clone(),
                tools: self.tools.clone(),
            };
            let config = session.config().clone();
            let mut printer = ParagraphPrinter {
                events: &self.events,
                config: &config,
                usage: &self.usage,
                pending: String::new(),
            };
            let answer = {
                let mut out = |u: StreamUpdate| printer.update(u);
                session.client.send(&request, &self.cancel, &mut out).await
            };
            printer.flush();
            let response = match answer {
                Ok(r) => r,
                Err(LlmError::Cancelled) => return TurnEnd::Interrupted,
                Err(e) => return TurnEnd::Failed(scrub(&config, &e.to_string())),
            };
            let used = response.usage;
            session.reported_context = used.record(&self.usage);
            let message = Message::assistant(response.content);
            let calls = Call::all_of(&message);
            if !message.content.is_empty() {
                session.history.push(message);
            }
            if calls.is_empty() {
                if response.stop == StopReason::MaxTokens {
                    self.notice(session, "the lead model's answer was cut at max_tokens");
                }
                return TurnEnd::Done;
            }
            let mut results = Vec::new();
            let mut interrupted = false;
            for call in &calls {
                if interrupted {
                    results.push(Block::ToolResult {
                        tool_use_id: call.id.clone(),
                        content: "Not run: the turn was interrupted first.".to_string(),
                        is_error: true,
                    });
                    continue;
                }
                self.usage.update(|u| u.tool_uses += 1);
                let reply = match self.ask(call).await {
                    Some(reply) => reply,
                    None => {
                        interrupted = true;
                        ToolReply {
                            content: "Interrupted by the user: not done.".to_string(),
                            is_error: true,
                        }
                    }
                };
                results.push(Block::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: scrub(&config, &reply.content),
                    is_error: reply.is_error,
                });
            }
            session.history.push(Message {
                role: Role::User,
                content: results,
            });
            if interrupted {
                return TurnEnd::Interrupted;
            }
        }
        TurnEnd::StepLimit(max_steps)
    }

    /// Has the controller run `call`; `None` when the turn was interrupted meanwhile (or the
    /// controller is gone).
    async fn ask(&self, call: &Call) -> Option<ToolReply> {
        let (reply, answer) = oneshot::channel();
        self.events
            .send(ModelEvent::Tool {
                call: call.clone(),
                reply,
            })
            .ok()?;
        tokio::select! {
            biased;
            _ = self.cancel.cancelled() => None,
            r = answer => r.ok(),
        }
    }

    /// Compacts the conversation when it is over the context budget.
    async fn keep_in_budget(&self, session: &mut ModelSession) {
        let budget = session.config().context;
        let estimate = |m: &[Message]| estimate_tokens(&self.system, &self.tools, m);
        let current = estimate(&session.history).max(session.reported_context);
        let client = session.client.clone();
        let cancel = &self.cancel;
        let summarize = |request: ModelRequest| async move {
            let mut quiet = |_: StreamUpdate| {};
            match client.send(&request, cancel, &mut quiet).await {
                Ok(answer) => Ok(Message::assistant(answer.content).text()),
                Err(e) => Err(e.to_string()),
            }
        };
        let done = compact(
            &mut session.history,
            "team-lead",
            current,
            budget.max_tokens,
            budget.keep_exchanges,
            estimate,
            summarize,
        )
        .await;
        if let Some(done) = done {
            session.reported_context = 0;
            self.usage.update(|u| u.compactions += 1);
            self.notice(
                session,
                &format!(
                    "compacted the lead's conversation: ~{} → ~{} tokens",
                    done.tokens_before, done.tokens_after
                ),
            );
        }
    }
}
