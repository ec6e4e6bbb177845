//! File watching for the team directories. One watcher per process, on directories (never on
//! files: atomic writes replace them), recursive over a team's `teams/<team>/` and
//! `tasks/<team>/` (or over `teams/` and `tasks/` for every team), reporting typed
//! [`ChangeEvent`]s on a tokio channel ([`watch`]) or a std channel ([`watch_sync`]).
//! Temp files of atomic writers are never reported; lock directories are reported as
//! [`ChangeKind::LockAcquired`]/[`ChangeKind::LockReleased`] only when asked for. When no
//! inotify watcher can be made (Linux allows 128 instances per user by default, and every
//! teammate process needs one) the watcher polls every 500 ms instead and says so in the log;
//! `TEAMLEAD_WATCH=poll` forces polling. Nothing here parses file contents.

mod coalesce;
pub mod event;
mod inotify;
#[cfg(target_os = "linux")]
mod narrow;
mod poll;
pub mod scope;
mod sink;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use event::{ChangeEvent, ChangeKind, is_lock_dir_path, is_temp_path};
pub use scope::WatchScope;

use sink::Sink;

/// How a watcher behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchOptions {
    /// Report lock directories appearing and vanishing (lock churn). Off by default.
    pub include_locks: bool,
    /// Poll even when inotify is available (default: `TEAMLEAD_WATCH=poll` in the environment).
    pub force_poll: bool,
    /// The polling interval of the fallback.
    pub poll_interval: Duration,
    /// A burst of raw events ends after this much quiet; it is then collapsed (one event per
    /// path) and sent.
    pub coalesce: Duration,
    /// With inotify, re-scan the trees this often anyway, as a safety net for missed events.
    pub safety_rescan: Option<Duration>,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            include_locks: false,
            force_poll: std::env::var("TEAMLEAD_WATCH").is_ok_and(|v| v == "poll"),
            poll_interval: Duration::from_millis(500),
            coalesce: Duration::from_millis(20),
            safety_rescan: Some(Duration::from_secs(5)),
        }
    }
}

impl WatchOptions {
    /// The same options, with lock churn reported or not.
    pub fn with_locks(mut self, include: bool) -> WatchOptions {
        self.include_locks = include;
        self
    }

    /// The same options, polling or not.
    pub fn with_poll(mut self, force: bool) -> WatchOptions {
        self.force_poll = force;
        self
    }
}

/// How a running watcher learns about changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchMode {
    /// Kernel notifications (inotify, FSEvents, …), with a slow safety re-scan.
    Notify,
    /// A scan every poll interval.
    Poll,
}

impl WatchMode {
    pub fn label(self) -> &'static str {
        match self {
            WatchMode::Notify => "notify",
            WatchMode::Poll => "poll",
        }
    }
}

/// Why a watcher could not start at all (polling is always possible, so this is rare).
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("cannot start the file watcher thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// A running watcher. Dropping it stops it (its thread ends within a quarter second); so does
/// dropping the receiver.
#[derive(Debug)]
pub struct Watcher {
    mode: WatchMode,
    stop: Arc<AtomicBool>,
}

impl Watcher {
    /// Notify or polling.
    pub fn mode(&self) -> WatchMode {
        self.mode
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Watches `scope`, sending events on a tokio channel. Call it once per process.
pub fn watch(
    scope: &WatchScope,
    options: &WatchOptions,
) -> Result<(Watcher, tokio::sync::mpsc::UnboundedReceiver<ChangeEvent>), WatchError> {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let watcher = start(scope, options, Sink::Tokio(tx))?;
    Ok((watcher, rx))
}

/// Watches `scope`, sending events on a std channel (for code without a tokio runtime).
pub fn watch_sync(
    scope: &WatchScope,
    options: &WatchOptions,
) -> Result<(Watcher, std::sync::mpsc::Receiver<ChangeEvent>), WatchError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let watcher = start(scope, options, Sink::Std(tx))?;
    Ok((watcher, rx))
}

fn start(scope: &WatchScope, options: &WatchOptions, sink: Sink) -> Result<Watcher, WatchError> {
    let stop = Arc::new(AtomicBool::new(false));
    let roots = scope
        .roots()
        .iter()
        .map(|r| r.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let sink = if options.force_poll {
        tracing::info!("watching {roots} by polling (asked for)");
        sink
    } else {
        match inotify::spawn(scope.clone(), options, sink, stop.clone()) {
            Ok(()) => {
                tracing::info!("watching {roots} with kernel notifications");
                return Ok(Watcher {
                    mode: WatchMode::Notify,
                    stop,
                });
            }
            Err(inotify::StartError::Thread(e)) => return Err(WatchError::Thread(e)),
            Err(inotify::StartError::Unavailable(why, sink)) => {
                tracing::warn!(
                    "no file watcher could be made ({why}); polling {roots} every {} ms instead",
                    options.poll_interval.as_millis()
                );
                sink
            }
        }
    };
    poll::spawn(
        scope.clone(),
        options.poll_interval,
        options.include_locks,
        sink,
        stop.clone(),
    )?;
    Ok(Watcher {
        mode: WatchMode::Poll,
        stop,
    })
}
