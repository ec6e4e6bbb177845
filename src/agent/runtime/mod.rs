//! The teammate runtime: its configuration and controls, the loop, the files it reads and
//! writes, and the in-process handle. [`run_teammate`] is the whole teammate; in process it is
//! a tokio task ([`spawn_in_process`]), and a teammate process will run the same function with
//! a [`MailboxAsker`](crate::agent::mailbox_asker::MailboxAsker).

pub mod config;
pub mod engine;
pub mod handle;
pub mod incoming;
pub mod mailroom;
pub(crate) mod plan_approval;
pub mod teammate;

use std::sync::Arc;

pub use config::{Controls, TeammateConfig};
pub use engine::{Engine, TurnOutcome, TurnReport};
pub use handle::{TeammateHandle, spawn_in_process, spawn_with_controls};

use crate::agent::asker::PermissionAsker;
use crate::agent::events::{EventSink, StopReason, TeammateEventKind};

/// Runs a teammate, its turns done by `engine`, until it shuts down (after a
/// `shutdown_request` from the lead) or its `controls.stop` token is cancelled. Ends with a
/// `Stopped` event.
pub async fn run_teammate(
    config: TeammateConfig,
    mut engine: Box<dyn Engine>,
    asker: Arc<dyn PermissionAsker>,
    events: EventSink,
    controls: Controls,
) -> StopReason {
    // The files its Write and Edit calls write, for the lead's review (in-process and in a
    // pane alike).
    let events = match crate::store::written_files::WrittenLog::new(
        &config.home,
        &config.team,
        &config.name,
    ) {
        Some(log) => events.with_written_log(Arc::new(log)),
        None => events,
    };
    let mut teammate = teammate::Teammate::new(config, asker, events.clone(), controls);
    let reason = teammate.run(engine.as_mut()).await;
    events.send(TeammateEventKind::Stopped(reason.clone()));
    reason
}
