//! The lead's presence on a relay's host. The lead runs elsewhere, so nothing on this host can
//! see its process; the relay stands in for it. While a relay is bound to a team (the lead's
//! hello passed), it holds that team's liveness lock here (`teams/<team>/.teamlead/lead.lock`,
//! the flock a local lead holds, with the relay's pid inside), and keeps a record of when the
//! lead was last there (`teams/<team>/.teamlead/lead-presence.json`: `relayPid`, `seenMs`,
//! rewritten every [`BEAT`]). The relay ends with its connection (the lead closed it, or went
//! silent for the link's 4 s), and the kernel drops the lock with it, however it ends.
//!
//! So a teammate on this host sees its lead gone exactly when no relay carries its team's link,
//! and waits its grace period as it would for a local lead: a link down for less than the grace
//! (a partition, a restarted lead) reaps nothing, a lead gone for longer does. `teamlead clean`
//! here reads the record ([`last_seen`]) to tell a lead gone for longer than the grace from one
//! merely out of reach.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use teamlead_protocol::store::safe_file::{MAX_SMALL_FILE_BYTES, read_regular};
use teamlead_protocol::store::{Home, LeadLiveness};
use teamlead_protocol::time::now_ms;

/// How often the record is rewritten while the relay is bound.
pub const BEAT: Duration = Duration::from_secs(1);

/// The record's file name, in the team's `.teamlead/` directory.
pub const RECORD: &str = "lead-presence.json";

/// What the record says.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The relay that stands for the lead.
    pub relay_pid: u32,
    /// When the lead was last there (epoch ms; the relay's last beat).
    pub seen_ms: u64,
    /// The grace the lead gives its teammates on this host (milliseconds; the lead starts the
    /// relay with it in [`GRACE_VAR`], as it starts the teammates), so `teamlead clean` here
    /// waits as long as they do. `None`: an older relay, or none was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grace_ms: Option<u64>,
}

/// The variable that carries the lead's grace to the teammates and the relay on a host.
pub const GRACE_VAR: &str = "TEAMLEAD_LEAD_GRACE_MS";

/// The grace this relay was started with.
fn own_grace_ms() -> Option<u64> {
    std::env::var(GRACE_VAR).ok()?.trim().parse().ok()
}

/// The record's path for `team` under `home`.
pub fn record_path(home: &Home, team: &str) -> Option<PathBuf> {
    home.teamlead_dir(team).ok().map(|d| d.join(RECORD))
}

/// The record of `team`, when a relay ever stood for its lead on this host (`None`: never,
/// or it cannot be read).
pub fn last_seen(home: &Home, team: &str) -> Option<Record> {
    let path = record_path(home, team)?;
    home.check_inside(&path).ok()?;
    let bytes = read_regular(&path, MAX_SMALL_FILE_BYTES).ok()??;
    serde_json::from_slice(&bytes).ok()
}

fn write(home: &Home, path: &std::path::Path, grace_ms: Option<u64>) {
    let record = Record {
        relay_pid: std::process::id(),
        seen_ms: now_ms(),
        grace_ms,
    };
    let written = serde_json::to_vec(&record)
        .map_err(|e| e.to_string())
        .and_then(|bytes| home.write_file(path, &bytes).map_err(|e| e.to_string()));
    if let Err(e) = written {
        tracing::warn!("the lead's presence record: {e}");
    }
}

/// The lead's presence for one team, held by its relay; dropped, the lock goes and the record
/// keeps the time the lead was last there.
#[derive(Debug)]
pub struct Presence {
    stop: Arc<AtomicBool>,
    beat: Option<JoinHandle<()>>,
    _lock: Option<LeadLiveness>,
}

impl Presence {
    /// Takes `team`'s liveness lock on this host and starts the record's beat. A lock another
    /// process holds (a lead of the team running on this very host and home) is left to it:
    /// the lead is present then anyway.
    pub fn hold(home: &Home, team: &str) -> Presence {
        let lock = match LeadLiveness::acquire(home, team) {
            Ok(lock) => Some(lock),
            Err(e) => {
                tracing::info!("the lead's liveness lock of {team} is not taken: {e}");
                None
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        // Read once: the relay's environment does not change while it runs.
        let grace_ms = own_grace_ms();
        let beat = record_path(home, team).and_then(|path| {
            let (home, stop) = (home.clone(), stop.clone());
            std::thread::Builder::new()
                .name("lead-presence".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        write(&home, &path, grace_ms);
                        let mut slept = Duration::ZERO;
                        while slept < BEAT && !stop.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(50));
                            slept += Duration::from_millis(50);
                        }
                    }
                    // The last time the lead was there: now.
                    write(&home, &path, grace_ms);
                })
                .ok()
        });
        Presence {
            stop,
            beat,
            _lock: lock,
        }
    }
}

impl Drop for Presence {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(beat) = self.beat.take() {
            let _ = beat.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relay_holds_the_lock_and_beats_while_bound() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        assert!(last_seen(&home, "crew").is_none());
        let presence = Presence::hold(&home, "crew");
        assert!(teamlead_protocol::store::is_lead_alive(&home, "crew"));
        let first = (0..100)
            .find_map(|_| {
                std::thread::sleep(Duration::from_millis(20));
                last_seen(&home, "crew")
            })
            .unwrap();
        assert_eq!(first.relay_pid, std::process::id());
        drop(presence);
        assert!(!teamlead_protocol::store::is_lead_alive(&home, "crew"));
        let last = last_seen(&home, "crew").unwrap();
        assert!(last.seen_ms >= first.seen_ms);
    }
}
