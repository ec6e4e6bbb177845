//! One turn of the lead model: the lead's side of the one agent loop
//! ([`agent::llm::agent_loop::run_turn`](crate::agent::llm::agent_loop::run_turn)), run as a tokio task
//! beside the controller so the controller keeps serving the UI, the inboxes and the permission
//! queue while the model thinks. The task owns the model [`Session`] for the turn and hands it
//! back when the turn ends. [`LeadHost`] plugs the lead into the loop: the answer goes to the
//! controller a paragraph at a time ([`ModelEvent::Text`]), notices as
//! [`ModelEvent::Notice`], and each tool call is run by the controller ([`ModelEvent::Tool`];
//! it runs it through the slash commands' code and replies). The loop scrubs the keys out of
//! everything and counts tokens, requests, retries, tool uses and compactions; this side counts
//! the turns and the failed ones.

use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::agent::events::UsageMeter;
use crate::agent::llm::agent_loop::{Call, Cut, LoopHost, Notice, ToolOutput, run_turn};
use crate::agent::llm::conversation::ToolSpec;
use crate::protocol::LEAD_NAME;

pub use crate::agent::llm::agent_loop::TurnEnd;
pub use crate::agent::llm::session::Session;

/// What a running turn tells the controller.
#[derive(Debug)]
pub enum ModelEvent {
    /// A finished paragraph of the answer (or its rest), as it streams.
    Text(String),
    /// Something worth a note: a retry, a rate-limit pause, an answer cut short, a compaction.
    Notice(String),
    /// A tool call for the controller to run; the result goes back on `reply`.
    Tool {
        call: Call,
        reply: oneshot::Sender<ToolOutput>,
    },
    /// The turn is over; the session comes back.
    Ended { session: Box<Session>, end: TurnEnd },
}

/// Starts a turn: `text` is the user turn (the human's words and/or `<teammate-message>`
/// blocks), `system` the system prompt, `tools` what the model may call.
pub fn spawn_turn(
    session: Box<Session>,
    system: String,
    tools: Vec<ToolSpec>,
    text: String,
    usage: UsageMeter,
    events: mpsc::UnboundedSender<ModelEvent>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut session = session;
        usage.update(|u| u.turns += 1);
        let mut host = LeadHost {
            system,
            tools,
            usage: usage.clone(),
            events: events.clone(),
        };
        let result = run_turn(&mut host, &mut session, text, &cancel).await;
        if matches!(result.end, TurnEnd::Failed(_)) {
            usage.update(|u| u.failed_turns += 1);
        }
        let _ = events.send(ModelEvent::Ended {
            session,
            end: result.end,
        });
    })
}

/// The lead plugged into the one agent loop for one turn.
struct LeadHost {
    system: String,
    tools: Vec<ToolSpec>,
    usage: UsageMeter,
    events: mpsc::UnboundedSender<ModelEvent>,
}

impl LoopHost for LeadHost {
    fn speaker(&self) -> &str {
        LEAD_NAME
    }

    fn cut(&self) -> Cut {
        Cut::Paragraphs
    }

    fn system_prompt(&mut self) -> String {
        self.system.clone()
    }

    fn tools(&self) -> Vec<ToolSpec> {
        self.tools.clone()
    }

    fn usage(&self) -> &UsageMeter {
        &self.usage
    }

    fn show_text(&mut self, text: String) {
        let _ = self.events.send(ModelEvent::Text(text));
    }

    fn show_notice(&mut self, notice: Notice) {
        let _ = self
            .events
            .send(ModelEvent::Notice(format!("lead model: {}", notice.line())));
    }

    /// Has the controller run `call`; interrupted when the turn is (or the controller is gone).
    async fn run_tool<'a>(
        &'a mut self,
        call: &'a Call,
        cancel: &'a CancellationToken,
    ) -> ToolOutput {
        let (reply, answer) = oneshot::channel();
        let asked = self.events.send(ModelEvent::Tool {
            call: call.clone(),
            reply,
        });
        if asked.is_err() {
            return ToolOutput::interrupted();
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => ToolOutput::interrupted(),
            r = answer => r.unwrap_or_else(|_| ToolOutput::interrupted()),
        }
    }
}
