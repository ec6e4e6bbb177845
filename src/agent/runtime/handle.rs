//! Running a teammate inside the lead's process: a tokio task (no thread of its own) driven by
//! [`run_teammate`](super::run_teammate), and the [`TeammateHandle`] the lead keeps to wake it,
//! interrupt its turn, kill it and wait for it.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::config::{Controls, TeammateConfig};
use super::engine::Engine;
use crate::agent::asker::PermissionAsker;
use crate::agent::events::{EventSink, StopReason, TeammateEvent, Usage, UsageMeter};

/// The lead's grip on one in-process teammate. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TeammateHandle {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    name: String,
    controls: Controls,
    usage: UsageMeter,
    /// Cancelled when the loop has ended.
    done: CancellationToken,
    stop_reason: Mutex<Option<StopReason>>,
}

/// Starts a teammate as a tokio task on the current runtime. `asker` answers its permission
/// requests (the lead's bridge); `events` receives its transcript lines and status changes.
pub fn spawn_in_process(
    config: TeammateConfig,
    engine: Box<dyn Engine>,
    asker: Arc<dyn PermissionAsker>,
    events: mpsc::UnboundedSender<TeammateEvent>,
) -> TeammateHandle {
    spawn_with_controls(config, engine, asker, events, Controls::new())
}

/// [`spawn_in_process`] with controls made beforehand (to share the wake notifier with a
/// [`MailboxAsker`](crate::agent::mailbox_asker::MailboxAsker) or a file watcher).
pub fn spawn_with_controls(
    config: TeammateConfig,
    engine: Box<dyn Engine>,
    asker: Arc<dyn PermissionAsker>,
    events: mpsc::UnboundedSender<TeammateEvent>,
    controls: Controls,
) -> TeammateHandle {
    let inner = Arc::new(Inner {
        name: config.name.clone(),
        controls: controls.clone(),
        usage: config.usage.clone(),
        done: CancellationToken::new(),
        stop_reason: Mutex::new(None),
    });
    let sink = EventSink::new(&config.name, events);
    let task_inner = inner.clone();
    tokio::spawn(async move {
        // Marks the handle done even if the loop panics.
        let _done = task_inner.done.clone().drop_guard();
        let reason = super::run_teammate(config, engine, asker, sink, controls).await;
        if let Ok(mut slot) = task_inner.stop_reason.lock() {
            *slot = Some(reason);
        }
    });
    TeammateHandle { inner }
}

impl TeammateHandle {
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Its controls (to hand the wake notifier to a watcher).
    pub fn controls(&self) -> &Controls {
        &self.inner.controls
    }

    /// Its usage so far (tokens, requests, tool uses, turns).
    pub fn usage(&self) -> Usage {
        self.inner.usage.snapshot()
    }

    /// Its usage meter (to [`subscribe`](UsageMeter::subscribe) to changes).
    pub fn usage_meter(&self) -> &UsageMeter {
        &self.inner.usage
    }

    /// Look at the inbox and the task list now (call it right after writing its inbox).
    pub fn wake(&self) {
        self.inner.controls.wake();
    }

    /// Stops only the current turn (its command is killed; it reports `interrupted`). False
    /// when it was idle.
    pub fn interrupt_turn(&self) -> bool {
        self.inner.controls.interrupt_turn()
    }

    /// Stops the teammate now: its token is cancelled and its command killed. No shutdown
    /// handshake (that is a `shutdown_request` in its inbox).
    pub fn kill(&self) {
        self.inner.controls.stop();
    }

    /// True until its loop has ended.
    pub fn is_running(&self) -> bool {
        !self.inner.done.is_cancelled()
    }

    /// Waits for the loop to end and says why (`Failed` if it panicked).
    pub async fn join(&self) -> StopReason {
        self.inner.done.cancelled().await;
        match self.inner.stop_reason.lock() {
            Ok(slot) => slot
                .clone()
                .unwrap_or_else(|| StopReason::Failed("the teammate task panicked".into())),
            Err(_) => StopReason::Failed("the teammate task panicked".into()),
        }
    }
}
