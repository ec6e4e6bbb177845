//! mkdir lock directories with proper-lockfile semantics (PROTOCOL.md 4), the scheme Claude
//! Code uses for every file it shares: `<target>.lock` is a directory that exists while the
//! lock is held; a directory older than 10 s is stale and taken over; a held lock's mtime is
//! refreshed every 5 s by one background thread over a registry of held locks; release is
//! `rmdir`. Nothing is ever put inside the directory. A `<target>.lock` that exists but is not
//! a directory (a stray file, a FIFO, a symlink) can never be taken: acquisition fails at once
//! with [`StoreError::LockNotADirectory`] and leaves it where it is. Lock directories are made
//! with mode 0700.
//!
//! Waiting ends in a timeout only when the lock is *kept* (its holder alive and refreshing
//! it), never because other writers keep winning it: a lock that changes hands is progress,
//! and the waiter waits on (up to five minutes in all).
//!
//! teamlead-only on top (Claude Code ignores it): every acquisition has a flock-held marker
//! beside the lock ([`holder`]) whose record names the lock directory from the instant it
//! exists ([`create`]), so another teamlead writer sees at once that a teamlead holder died
//! and removes its lock instead of waiting 10 s. A lock no marker names (Claude Code's) keeps
//! the 10 s rule. A waiter whose deadline passes while a lock is in the way waits on until
//! that lock would be stale (at most 11 s more), so a holder that died never makes it fail.
//!
//! The stale takeover is proper-lockfile's `rmdir` then `mkdir`, but teamlead writers take it
//! one at a time and check again before the `rmdir` ([`takeover`]), so two of them that find
//! the same stale lock never both end up holding it.

#[cfg(test)]
mod backoff_tests;
pub(crate) mod create;
pub(crate) mod gate;
pub mod holder;
mod sightings;
mod takeover;
pub mod waiter;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use super::error::{Result, StoreError};
use super::safe_file::FileKind;
use create::Created;
use holder::{Identity, Marker};
use sightings::Sightings;
use takeover::Takeover;
use waiter::{Verdict, Watch};

/// How long `acquire` waits by default before giving up.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);
/// A lock directory whose mtime is older than this is stale (proper-lockfile's `stale`).
pub const STALE_AFTER: Duration = Duration::from_secs(10);
/// A held lock's mtime is refreshed this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);

const FIRST_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_millis(100);
/// The backoff cap while a live teamlead process holds the lock (polls are a `stat` and a
/// `try_lock`): its death is noticed within 1.5 × this.
const TEAMLEAD_MAX_BACKOFF: Duration = Duration::from_millis(10);
/// How long past the moment a lock in the way would turn stale a waiter keeps trying.
const STALE_GRACE: Duration = Duration::from_secs(1);
/// A waiter that has seen the lock change hands, but never got it, gives up after this long
/// in all (see [`past_deadline`]).
const GIVE_UP_AFTER: Duration = Duration::from_secs(300);
/// After waiting this long, poll quickly (every 1–10 ms) instead of backing off further.
const PATIENT_FOR: Duration = Duration::from_secs(1);
const AGED_POLL_MIN: Duration = Duration::from_millis(1);
const AGED_POLL_MAX: Duration = Duration::from_millis(10);
/// A process that just released a contended lock pauses this long (at random, up to) before
/// taking the same lock again, so a writer in a tight loop cannot starve the waiting ones.
const FAIRNESS_PAUSE: Duration = Duration::from_millis(10);
const FAIRNESS_WINDOW: Duration = Duration::from_millis(50);

/// Contended locks this process released recently: (lock directory, when).
fn recently_released() -> &'static Mutex<Vec<(PathBuf, Instant)>> {
    static RECENT: OnceLock<Mutex<Vec<(PathBuf, Instant)>>> = OnceLock::new();
    RECENT.get_or_init(|| Mutex::new(Vec::new()))
}

fn note_contended_release(dir: &Path) {
    let mut recent = match recently_released().lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    recent.retain(|(d, at)| d != dir && at.elapsed() < FAIRNESS_WINDOW);
    recent.push((dir.to_path_buf(), Instant::now()));
}

/// True (once) when this process released `dir` after a contended hold within the window.
fn take_recent_release(dir: &Path) -> bool {
    let mut recent = match recently_released().lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    let found = recent
        .iter()
        .any(|(d, at)| d == dir && at.elapsed() < FAIRNESS_WINDOW);
    recent.retain(|(d, at)| d != dir && at.elapsed() < FAIRNESS_WINDOW);
    found
}

/// The lock directory of `target`: `<target>.lock`.
pub fn lock_dir_of(target: &Path) -> PathBuf {
    let mut s = target.as_os_str().to_owned();
    s.push(".lock");
    PathBuf::from(s)
}

struct Held {
    dir: PathBuf,
    last_touch: Instant,
    /// The marker naming the directory, and the directory's identity (both absent when the
    /// marker could not be made or written: then the lock is a plain mkdir lock).
    marker: Option<Marker>,
    identity: Option<Identity>,
}

impl Held {
    /// Is `dir` still the directory this process made (same device and inode; its mtime
    /// may have been changed by someone else)?
    fn still_ours(&self) -> bool {
        match (&self.identity, std::fs::symlink_metadata(&self.dir)) {
            (Some(id), Ok(meta)) => {
                let now = Identity::of(&meta);
                now.dev == id.dev && now.ino == id.ino
            }
            (None, Ok(meta)) => meta.is_dir(),
            (_, Err(_)) => false,
        }
    }

    /// Touches the directory (with a marked mtime) and records the new identity first, so the
    /// record names the directory before, during and after the touch.
    fn refresh(&mut self) -> std::io::Result<()> {
        if !self.still_ours() {
            return Err(std::io::Error::other("taken over by another process"));
        }
        let at = create::marked_now();
        if let (Some(marker), Some(id)) = (&mut self.marker, &self.identity) {
            let next = Identity {
                mtime: mtime_parts(at),
                ..*id
            };
            marker.prepare_refresh(id, &next);
        }
        create::set_dir_times(&self.dir, at)?;
        if let Some(id) = &mut self.identity {
            let now = Identity::of(&std::fs::symlink_metadata(&self.dir)?);
            if let Some(marker) = &mut self.marker {
                if now.mtime != mtime_parts(at) {
                    marker.prepare_refresh(id, &now);
                }
                marker.finish_refresh();
            }
            *id = now;
        }
        Ok(())
    }

    /// Removes the directory if it is still ours, then clears and removes the marker.
    fn release(self) {
        if self.still_ours()
            && let Err(e) = std::fs::remove_dir(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove lock {}: {e}", self.dir.display());
        }
        if let Some(marker) = &self.marker {
            marker.write_free();
        }
        // Dropping the marker removes its file and closes it, which drops the flock.
    }
}

fn mtime_parts(at: SystemTime) -> (i64, i64) {
    match at.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(d) => (d.as_secs() as i64, i64::from(d.subsec_nanos())),
        Err(e) => {
            let d = e.duration();
            if d.subsec_nanos() == 0 {
                (-(d.as_secs() as i64), 0)
            } else {
                (
                    -(d.as_secs() as i64) - 1,
                    1_000_000_000 - i64::from(d.subsec_nanos()),
                )
            }
        }
    }
}

fn registry() -> &'static Mutex<HashMap<u64, Held>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u64, Held>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

fn with_registry<R>(f: impl FnOnce(&mut HashMap<u64, Held>) -> R) -> R {
    let mut guard = match registry().lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    f(&mut guard)
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The refresher thread, once started.
static REFRESHER: OnceLock<std::thread::Thread> = OnceLock::new();

/// Starts the one refresher thread of this process (once) and wakes it: a lock was taken. The
/// thread sleeps (parked, no timer) while no lock is held, so an idle process never wakes for it.
fn start_refresher() {
    static START: Once = Once::new();
    START.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("teamlead-lock-refresh".into())
            .spawn(|| {
                loop {
                    if with_registry(|reg| reg.is_empty()) {
                        // An unpark that came first is kept: no acquisition is missed.
                        std::thread::park();
                        continue;
                    }
                    std::thread::sleep(Duration::from_millis(500));
                    refresh_due();
                }
            });
        match spawned {
            Ok(handle) => {
                let _ = REFRESHER.set(handle.thread().clone());
            }
            Err(e) => tracing::warn!("cannot start the lock refresher thread: {e}"),
        }
    });
    if let Some(thread) = REFRESHER.get() {
        thread.unpark();
    }
}

/// Touches every held lock whose mtime was last set `REFRESH_EVERY` ago or more. Under the
/// registry's mutex, so a lock is never released while its record is being rewritten.
fn refresh_due() {
    with_registry(|reg| {
        for held in reg.values_mut() {
            if held.last_touch.elapsed() < REFRESH_EVERY {
                continue;
            }
            held.last_touch = Instant::now();
            if let Err(e) = held.refresh() {
                tracing::warn!("lock {} could not be refreshed: {e}", held.dir.display());
            }
        }
    });
}

/// Sets a directory's mtime (and atime) to now.
pub fn touch_dir(dir: &Path) -> std::io::Result<()> {
    create::set_dir_times(dir, SystemTime::now())
}

/// A held lock directory; dropping it removes the directory.
#[derive(Debug)]
pub struct LockGuard {
    id: u64,
    dir: PathBuf,
    /// Someone else held the lock while we were acquiring it.
    contended: bool,
    /// This thread's turn among the process's own waiters, passed on after the release
    /// (a field dropped after [`LockGuard::drop`] removed the directory).
    _turn: Option<gate::Turn>,
}

impl LockGuard {
    /// The lock directory (`<target>.lock`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Releases the lock now (the same as dropping it).
    pub fn release(self) {}
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Only remove the directory if this process still holds it: after
        // `release_all_held` it may already belong to someone else.
        let held = with_registry(|reg| reg.remove(&self.id));
        if let Some(held) = held {
            held.release();
            if self.contended {
                note_contended_release(&self.dir);
            }
        }
    }
}

/// What one look at the lock did.
enum Attempt {
    Acquired(Option<Identity>),
    /// Someone holds it: a live teamlead process (`true`) or anyone else; its identity and
    /// mtime.
    Busy(bool, Identity, SystemTime),
    /// The way may be free now (a dead or stale lock was removed, or it was just released).
    Again,
}

fn try_once(dir: &Path, marker: Option<&mut Marker>, watch: &mut Watch) -> Result<Attempt> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return match create::create(dir, marker).map_err(|e| StoreError::io(dir, e))? {
                Created::Yes(id) => Ok(Attempt::Acquired(id)),
                Created::Exists => Ok(Attempt::Again),
            };
        }
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    // A stray file, FIFO or symlink: no mkdir can ever succeed, and it is not ours to remove.
    if !meta.file_type().is_dir() {
        return Err(StoreError::LockNotADirectory {
            path: dir.to_path_buf(),
            found: FileKind::of(&meta),
        });
    }
    let mtime = meta.modified().unwrap_or_else(|_| SystemTime::now());
    let age = SystemTime::now()
        .duration_since(mtime)
        .unwrap_or(Duration::ZERO);
    if age > STALE_AFTER {
        let judged = Identity::of(&meta);
        return Ok(match takeover::remove_if_still_stale(dir, &judged) {
            Takeover::Removed => {
                tracing::warn!(
                    "took over stale lock {} ({}s old)",
                    dir.display(),
                    age.as_secs()
                );
                Attempt::Again
            }
            Takeover::Changed => Attempt::Again,
            Takeover::Busy => Attempt::Busy(false, judged, mtime),
        });
    }
    Ok(match watch.check(dir, &meta, marker.map(|m| m.path())) {
        Verdict::Reaped { .. } => Attempt::Again,
        Verdict::Teamlead => Attempt::Busy(true, Identity::of(&meta), mtime),
        Verdict::Other => Attempt::Busy(false, Identity::of(&meta), mtime),
    })
}

/// The sleep before the next look: jittered backoff (5 ms doubling to 100 ms, or to 10 ms
/// while a live teamlead process holds the lock, so its death is noticed within that); after
/// `PATIENT_FOR` of waiting, 1–10 ms so long waiters are not starved.
fn next_wait(waited: Duration, backoff: &mut Duration, teamlead: bool) -> Duration {
    let mut rng = rand::rng();
    if waited < PATIENT_FOR {
        let cap = if teamlead {
            TEAMLEAD_MAX_BACKOFF
        } else {
            MAX_BACKOFF
        };
        let w = (*backoff).min(cap).mul_f64(rng.random_range(0.5..1.5));
        *backoff = (*backoff * 2).min(MAX_BACKOFF);
        w
    } else {
        // Aging: a writer that has waited long polls often, so under heavy contention the
        // oldest waiters win over newcomers still backing off.
        rng.random_range(AGED_POLL_MIN..AGED_POLL_MAX)
    }
}

/// What a waiter does when its deadline has come (or the lock in its way was refreshed).
#[derive(Debug, PartialEq, Eq)]
enum PastDeadline {
    /// Wait on until the lock now in the way would be stale (plus [`STALE_GRACE`]).
    WaitOn { until_stale: Duration },
    /// Fail with [`StoreError::LockTimeout`].
    GiveUp,
}

/// The decision past the deadline. `extended` is the lock that was in the way when the
/// deadline was last pushed back (`Some(None)`: none was seen), `busy` the lock in the way now
/// (`None`: it changed hands just now), `handed_on` whether a look since then saw the lock
/// change hands ([`Sightings`]), `waited` how long this waiter has waited in all.
///
/// A waiter gives up only when its lock is *kept*: the same holder refreshed it (alive and
/// holding), or the same lock outlived the wait until it would be stale. While the lock
/// changes hands (other writers make progress: a storm of appends on a loaded machine), it
/// waits on, up to [`GIVE_UP_AFTER`] in all: failing a send because others were faster lost
/// messages under load (32 writers on 2 loaded cores).
fn past_deadline(
    extended: Option<Option<Identity>>,
    busy: Option<(bool, Identity, SystemTime)>,
    refreshed: bool,
    handed_on: bool,
    waited: Duration,
) -> PastDeadline {
    if refreshed || waited >= GIVE_UP_AFTER {
        return PastDeadline::GiveUp;
    }
    let until_stale = match busy {
        Some((_, _, mtime)) => {
            match (mtime + STALE_AFTER + STALE_GRACE).duration_since(SystemTime::now()) {
                Ok(more) => more.min(STALE_AFTER + STALE_GRACE),
                // Already stale by its mtime: the next look takes it over.
                Err(_) => STALE_GRACE,
            }
        }
        // The lock changed hands just now: one more round.
        None => STALE_GRACE,
    };
    let changed_hands = handed_on
        || match (extended, busy) {
            (None, _) => true,
            (Some(Some(was)), Some((_, now, _))) => was != now,
            (Some(_), _) => true,
        };
    if changed_hands {
        PastDeadline::WaitOn { until_stale }
    } else {
        PastDeadline::GiveUp
    }
}

/// Takes `<target>.lock/`, retrying until `timeout` has passed (see [`next_wait`]). When
/// the deadline comes while a lock is in the way, it waits on until that lock would be stale
/// by the 10 s rule, plus a second, unless that lock is refreshed meanwhile: a holder that
/// died is then taken over, so only a holder that keeps its lock alive makes this fail. A lock
/// that changed hands meanwhile pushes the deadline back again ([`past_deadline`]). The target itself need not exist. A lock path that is not a directory fails
/// at once.
pub fn acquire(target: &Path, timeout: Duration) -> Result<LockGuard> {
    // A thread that holds its turn here already (a batch writing) goes to the directory.
    if gate::held_here(&lock_dir_of(target)) {
        return acquire_dir(target, timeout);
    }
    // This process's threads take turns first (`gate`).
    let turn = wait_turn(target, timeout)?;
    let mut guard = acquire_dir(target, timeout)?;
    guard._turn = Some(turn);
    Ok(guard)
}

/// This thread's turn at `target`'s lock among the process's own waiters ([`gate`]). The
/// holder before it is this process, alive: a turn that does not come within the deadline and
/// the next refresh a live holder would make (a kept lock, as [`past_deadline`] tells it for
/// other processes) fails the wait the same way.
pub(crate) fn wait_turn(target: &Path, timeout: Duration) -> Result<gate::Turn> {
    let dir = lock_dir_of(target);
    let patience = timeout + REFRESH_EVERY + STALE_GRACE;
    gate::wait_turn(&dir, patience, GIVE_UP_AFTER).ok_or_else(|| StoreError::LockTimeout {
        path: target.to_path_buf(),
    })
}

/// [`acquire`] by a thread that holds its turn already ([`wait_turn`]): the lock directory
/// itself, against other processes.
pub(crate) fn acquire_dir(target: &Path, timeout: Duration) -> Result<LockGuard> {
    let dir = lock_dir_of(target);
    let started = Instant::now();
    let mut deadline = started + timeout;
    // Set when the deadline was pushed back: the identity of the lock then in the way.
    let mut extended: Option<Option<Identity>> = None;
    let mut backoff = FIRST_BACKOFF;
    let mut contended = false;
    let mut agains = 0u32;
    if take_recent_release(&dir) {
        let pause = rand::rng().random_range(Duration::ZERO..FAIRNESS_PAUSE);
        std::thread::sleep(pause);
    }
    let mut marker = match Marker::create(&dir) {
        Ok(m) => Some(m),
        Err(e) => {
            // Without it this is a plain mkdir lock (the 10 s rule for everyone).
            tracing::debug!("no holder marker for {}: {e}", dir.display());
            None
        }
    };
    let mut watch = Watch::default();
    let mut sightings = Sightings::default();
    loop {
        let attempt = try_once(&dir, marker.as_mut(), &mut watch)?;
        sightings.saw(match &attempt {
            Attempt::Busy(_, id, _) => Some(*id),
            _ => None,
        });
        let busy = match attempt {
            Attempt::Acquired(identity) => {
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                let marker = if identity.is_some() { marker } else { None };
                with_registry(|reg| {
                    reg.insert(
                        id,
                        Held {
                            dir: dir.clone(),
                            last_touch: Instant::now(),
                            marker,
                            identity,
                        },
                    )
                });
                start_refresher();
                return Ok(LockGuard {
                    id,
                    dir,
                    contended,
                    _turn: None,
                });
            }
            Attempt::Again => {
                agains += 1;
                if !agains.is_multiple_of(4) {
                    continue;
                }
                None
            }
            Attempt::Busy(teamlead, id, mtime) => Some((teamlead, id, mtime)),
        };
        contended = true;
        let now = Instant::now();
        // Past the deadline, the lock that was in the way has been refreshed (the same
        // directory, its mtime moved on by the refresh period, and no hand-off seen since):
        // its holder is alive and keeps it, so waiting is pointless.
        let refreshed = matches!((extended, busy), (Some(Some(was)), Some((_, id, _)))
            if sightings.refreshed(&was, &id));
        if now >= deadline || refreshed {
            let waited = now.duration_since(started);
            match past_deadline(extended, busy, refreshed, sightings.handed_on(), waited) {
                PastDeadline::WaitOn { until_stale } => {
                    extended = Some(busy.map(|(_, id, _)| id));
                    deadline = now + until_stale;
                    sightings.restart();
                }
                PastDeadline::GiveUp => {
                    return Err(StoreError::LockTimeout {
                        path: target.to_path_buf(),
                    });
                }
            }
        }
        let teamlead = busy.is_some_and(|(t, _, _)| t);
        let wait = next_wait(now.duration_since(started), &mut backoff, teamlead);
        std::thread::sleep(wait.min(deadline.saturating_duration_since(now)));
    }
}

/// Takes `<target>.lock/` with [`DEFAULT_LOCK_TIMEOUT`].
pub fn acquire_default(target: &Path) -> Result<LockGuard> {
    acquire(target, DEFAULT_LOCK_TIMEOUT)
}

/// Removes every lock directory this process still holds (on exit or signal). Guards dropped
/// afterwards do nothing.
pub fn release_all_held() {
    let held: Vec<Held> = with_registry(|reg| reg.drain().map(|(_, h)| h).collect());
    for h in held {
        h.release();
    }
}

/// How many lock directories this process holds now.
pub fn held_count() -> usize {
    with_registry(|reg| reg.len())
}

/// For synchronous command-line processes: on SIGINT, SIGTERM or SIGHUP, remove every held
/// lock and exit with status 128 + signal. Installing twice is harmless.
pub fn install_signal_cleanup() -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .map_err(|e| StoreError::io("signal handler", e))?;
    std::thread::Builder::new()
        .name("teamlead-signal-cleanup".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                release_all_held();
                std::process::exit(128 + sig);
            }
        })
        .map_err(|e| StoreError::io("signal handler thread", e))?;
    let _ = INSTALLED.set(());
    Ok(())
}
