//! Everything the controller's loop receives, as one [`Input`]: [`Controller::next_input`]
//! holds the loop's one `select!` (each arm only produces an `Input`), and
//! [`Controller::apply`] matches it. `apply` never awaits: slow work (the store, git, panes
//! and processes) runs as jobs of the controller's [`StoreWorker`](super::store_worker), whose
//! results come back as [`Input::Done`]. So a permission answer typed while three teammates'
//! panes are being created is written at once, and the three starts overlap.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, Interval};

use super::drain::Drained;
use super::model::LeadModel;
use super::state::{Controller, Phase, Then};
use crate::agent::events::TeammateEvent;
use crate::backend::executor::LivenessReport;
use crate::lead::bridge::BridgeMessage;
use crate::lead::contract::LeadCommand;
use crate::lead::model::ModelEvent;
use crate::protocol::time::now_ms;
use crate::watch::ChangeEvent;

/// One thing the loop received.
pub(crate) enum Input {
    /// A command of the UI (or of a client of the lead server).
    Command(LeadCommand),
    /// The UI dropped its sender: nobody can command this lead any more.
    CommandsClosed,
    /// File changes in the team's directories (a burst, coalesced).
    Changes(Vec<ChangeEvent>),
    /// Events of in-process teammates (all that were ready).
    Teammates(Vec<TeammateEvent>),
    /// An in-process teammate asks for a permission.
    Bridge(BridgeMessage),
    /// A host's link went down or came back.
    Host(crate::backend::hosts::link::HostState),
    /// The executor's liveness reports.
    Liveness(Vec<LivenessReport>),
    /// A drain of the lead's inbox finished.
    Drained(Drained),
    /// Jobs finished: their continuations (all that were ready), in the order they finished.
    Done(Vec<Then>),
    /// The lead model asks for something (a tool, a reply).
    Model(ModelEvent),
    /// The slow safety poll.
    SafetyPoll,
    /// The quit's deadline passed: what is left is killed.
    QuitDeadline,
    /// A `/shutdown` outlasted its timeout.
    ShutdownOverdue,
    /// The wave of completed tasks has been quiet long enough to be told.
    WaveDue,
    /// Time to read the panes of `claude` teammates that have not started their first turn
    /// (`controller::client_prompts`).
    PromptCheck,
    /// The park at a usage limit has a teammate to resume (`controller::park`).
    ParkDue,
}

/// Where the inputs come from, besides the controller's own workers.
pub(crate) struct Sources {
    pub commands: mpsc::Receiver<LeadCommand>,
    pub commands_open: bool,
    pub bridge: mpsc::UnboundedReceiver<BridgeMessage>,
    pub teammates: mpsc::UnboundedReceiver<TeammateEvent>,
    pub changes: Option<mpsc::UnboundedReceiver<ChangeEvent>>,
    pub hosts: mpsc::UnboundedReceiver<crate::backend::hosts::link::HostState>,
    pub liveness: mpsc::Receiver<Vec<LivenessReport>>,
    pub safety: Interval,
}

impl Controller {
    /// Waits for the next input: the loop's one `select!`.
    pub(crate) async fn next_input(&mut self, src: &mut Sources) -> Input {
        let deadline = match self.phase {
            Phase::Quitting { deadline } => Some(deadline),
            _ => None,
        };
        let shutdown_due = self.next_shutdown_deadline();
        let wave_due = self
            .wave
            .due_ms()
            .map(|due| Instant::now() + Duration::from_millis(due.saturating_sub(now_ms())));
        let prompt_due = self.prompt_check_due();
        let park_due = self.park_due();
        tokio::select! {
            command = src.commands.recv(), if src.commands_open => match command {
                Some(command) => Input::Command(command),
                None => {
                    src.commands_open = false;
                    Input::CommandsClosed
                }
            },
            Some(change) = next_change(&mut src.changes) => {
                let mut batch = vec![change];
                if let Some(rx) = src.changes.as_mut() {
                    while let Ok(more) = rx.try_recv() {
                        batch.push(more);
                    }
                }
                Input::Changes(batch)
            }
            Some(event) = src.teammates.recv() => {
                let mut events = vec![event];
                while let Ok(more) = src.teammates.try_recv() {
                    events.push(more);
                }
                Input::Teammates(events)
            }
            Some(message) = src.bridge.recv() => Input::Bridge(message),
            Some(reports) = src.liveness.recv() => Input::Liveness(reports),
            Some(state) = src.hosts.recv() => Input::Host(state),
            Some(drained) = self.drain.next() => Input::Drained(drained),
            Some(then) = self.store.next() => {
                let mut done = vec![then];
                while let Some(more) = self.store.try_next() {
                    done.push(more);
                }
                Input::Done(done)
            }
            Some(event) = LeadModel::next_event(&mut self.lead_model) => Input::Model(event),
            _ = src.safety.tick() => Input::SafetyPoll,
            _ = sleep_until_opt(deadline) => Input::QuitDeadline,
            _ = sleep_until_opt(shutdown_due) => Input::ShutdownOverdue,
            _ = sleep_until_opt(wave_due) => Input::WaveDue,
            _ = sleep_until_opt(prompt_due) => Input::PromptCheck,
            _ = sleep_until_opt(park_due) => Input::ParkDue,
        }
    }

    /// Acts on one input. Never awaits: what is slow is started here and finishes as a later
    /// [`Input::Done`].
    pub(crate) fn apply(&mut self, input: Input) {
        match input {
            Input::Command(command) => self.on_command_in_order(command),
            Input::CommandsClosed => self.begin_quit("the user interface is gone"),
            Input::Changes(batch) => self.on_changes(&batch),
            Input::Teammates(events) => {
                for event in events {
                    self.on_teammate_event(event);
                }
            }
            Input::Bridge(message) => self.on_bridge(message),
            Input::Liveness(reports) => self.on_liveness(reports),
            Input::Host(state) => self.on_host_state(state),
            Input::Drained(drained) => self.on_drained(drained),
            Input::Done(done) => {
                for then in done {
                    then(self);
                }
            }
            Input::Model(event) => self.on_model_event(event),
            Input::SafetyPoll => self.on_safety_poll(),
            Input::QuitDeadline => self.finish_quit(),
            Input::ShutdownOverdue => self.on_shutdown_overdue(),
            Input::WaveDue => self.tell_wave(),
            Input::PromptCheck => self.check_client_prompts(),
            Input::ParkDue => self.on_park_due(),
        }
        self.check_quit_progress();
    }
}

async fn next_change(rx: &mut Option<mpsc::UnboundedReceiver<ChangeEvent>>) -> Option<ChangeEvent> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
