//! The polling fallback: a snapshot of the scope every interval, compared with the previous
//! one. Used when no inotify watcher can be made (Linux allows 128 inotify instances per user
//! by default) or when `TEAMLEAD_WATCH=poll` asks for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::scope::{Snapshot, WatchScope, diff};
use super::sink::Sink;

/// Runs the poll loop on its own thread until `stop` is set or the receiver is gone.
pub(crate) fn spawn(
    scope: WatchScope,
    interval: Duration,
    include_locks: bool,
    sink: Sink,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    let mut known = Snapshot::scan(&scope);
    std::thread::Builder::new()
        .name("teamlead-watch-poll".into())
        .spawn(move || {
            loop {
                let wake = Instant::now() + interval;
                while Instant::now() < wake {
                    if stop.load(Ordering::Relaxed) || sink.is_closed() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50).min(interval));
                }
                let now = Snapshot::scan(&scope);
                let mut events = diff(&known, &now);
                known = now;
                if !include_locks {
                    events.retain(|e| !e.kind.is_lock());
                }
                if !sink.send_all(events) {
                    return;
                }
            }
        })?;
    Ok(())
}
