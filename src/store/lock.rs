//! mkdir lock directories with proper-lockfile semantics (PROTOCOL.md 4), the scheme Claude
//! Code uses for every file it shares: `mkdir <target>.lock`; a directory older than 10 s is
//! stale and taken over; a held lock's mtime is refreshed every 5 s by one background thread
//! over a registry of held locks; release is `rmdir`. Nothing is ever put inside the directory.
//! A `<target>.lock` that exists but is not a directory (a stray file, a FIFO, a symlink) can
//! never be taken: acquisition fails at once with [`StoreError::LockNotADirectory`] and leaves
//! it where it is. Lock directories are made with mode 0700.
//!
//! Like proper-lockfile, the stale takeover (`rmdir` then `mkdir`) has a narrow race: two
//! processes that both judged the same dead lock stale can, in rare timing, both end up
//! believing they hold it. Stale locks only exist after a crash, so this is accepted.

use std::collections::HashMap;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;

use super::error::{Result, StoreError};
use super::safe_file::{FileKind, PRIVATE_DIR_MODE};

/// How long `acquire` waits by default before giving up.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);
/// A lock directory whose mtime is older than this is stale (proper-lockfile's `stale`).
pub const STALE_AFTER: Duration = Duration::from_secs(10);
/// A held lock's mtime is refreshed this often.
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);

const FIRST_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_millis(100);
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

/// Starts the one refresher thread of this process (once).
fn start_refresher() {
    static START: Once = Once::new();
    START.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("teamlead-lock-refresh".into())
            .spawn(|| {
                loop {
                    std::thread::sleep(Duration::from_millis(500));
                    refresh_due();
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the lock refresher thread: {e}");
        }
    });
}

/// Touches every held lock whose mtime was last set `REFRESH_EVERY` ago or more.
fn refresh_due() {
    let due: Vec<(u64, PathBuf)> = with_registry(|reg| {
        reg.iter()
            .filter(|(_, h)| h.last_touch.elapsed() >= REFRESH_EVERY)
            .map(|(id, h)| (*id, h.dir.clone()))
            .collect()
    });
    for (id, dir) in due {
        let touched = touch_dir(&dir);
        let still_held = with_registry(|reg| match reg.get_mut(&id) {
            Some(h) => {
                h.last_touch = Instant::now();
                true
            }
            None => false,
        });
        // A lock released meanwhile is no news; a held one that vanished was taken over.
        if let Err(e) = touched
            && still_held
        {
            tracing::warn!("lock {} could not be refreshed: {e}", dir.display());
        }
    }
}

/// Sets a directory's mtime (and atime) to now.
pub fn touch_dir(dir: &Path) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(dir)?;
    let now = SystemTime::now();
    f.set_times(
        std::fs::FileTimes::new()
            .set_accessed(now)
            .set_modified(now),
    )
}

/// A held lock directory; dropping it removes the directory.
#[derive(Debug)]
pub struct LockGuard {
    id: u64,
    dir: PathBuf,
    /// Someone else held the lock while we were acquiring it.
    contended: bool,
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
        let still_held = with_registry(|reg| reg.remove(&self.id).is_some());
        if still_held
            && let Err(e) = std::fs::remove_dir(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("cannot remove lock {}: {e}", self.dir.display());
        }
        if still_held && self.contended {
            note_contended_release(&self.dir);
        }
    }
}

/// What one `mkdir` attempt found.
enum Attempt {
    Acquired,
    Busy,
}

/// `mkdir` with mode 0700.
fn make_lock_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .mode(PRIVATE_DIR_MODE)
        .create(dir)
}

fn try_once(dir: &Path) -> Result<Attempt> {
    match make_lock_dir(dir) {
        Ok(()) => Ok(Attempt::Acquired),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            match std::fs::symlink_metadata(dir) {
                // A stray file, FIFO or symlink: no mkdir can ever succeed, and it is not ours
                // to remove. Fail at once.
                Ok(meta) if !meta.file_type().is_dir() => Err(StoreError::LockNotADirectory {
                    path: dir.to_path_buf(),
                    found: FileKind::of(&meta),
                }),
                Ok(meta) => {
                    let age = meta
                        .modified()
                        .ok()
                        .and_then(|m| SystemTime::now().duration_since(m).ok())
                        .unwrap_or(Duration::ZERO);
                    if age > STALE_AFTER {
                        tracing::warn!(
                            "taking over stale lock {} ({}s old)",
                            dir.display(),
                            age.as_secs()
                        );
                        // Another process may have done the same already: a missing or
                        // non-empty directory is fine, the next mkdir decides.
                        let _ = std::fs::remove_dir(dir);
                        match make_lock_dir(dir) {
                            Ok(()) => Ok(Attempt::Acquired),
                            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                                Ok(Attempt::Busy)
                            }
                            Err(e) => Err(StoreError::io(dir, e)),
                        }
                    } else {
                        Ok(Attempt::Busy)
                    }
                }
                // Released between our mkdir and stat: try again at once.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Attempt::Busy),
                Err(e) => Err(StoreError::io(dir, e)),
            }
        }
        Err(e) => Err(StoreError::io(dir, e)),
    }
}

/// Takes `<target>.lock/`, retrying with jittered backoff (5 ms doubling to 100 ms; after 1 s
/// of waiting, every 1–10 ms so long waiters are not starved) until `timeout` has passed.
/// The target itself need not exist. A lock path that is not a directory fails at once.
pub fn acquire(target: &Path, timeout: Duration) -> Result<LockGuard> {
    let dir = lock_dir_of(target);
    let deadline = Instant::now() + timeout;
    let started = Instant::now();
    let mut backoff = FIRST_BACKOFF;
    let mut contended = false;
    if take_recent_release(&dir) {
        let pause = rand::rng().random_range(Duration::ZERO..FAIRNESS_PAUSE);
        std::thread::sleep(pause);
    }
    loop {
        match try_once(&dir)? {
            Attempt::Acquired => {
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                with_registry(|reg| {
                    reg.insert(
                        id,
                        Held {
                            dir: dir.clone(),
                            last_touch: Instant::now(),
                        },
                    )
                });
                start_refresher();
                return Ok(LockGuard { id, dir, contended });
            }
            Attempt::Busy => {
                contended = true;
                let now = Instant::now();
                if now >= deadline {
                    return Err(StoreError::LockTimeout {
                        path: target.to_path_buf(),
                    });
                }
                let mut rng = rand::rng();
                let wait = if now.duration_since(started) < PATIENT_FOR {
                    let w = backoff.mul_f64(rng.random_range(0.5..1.5));
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    w
                } else {
                    // Aging: a writer that has waited long polls often, so under heavy
                    // contention the oldest waiters win over newcomers still backing off.
                    rng.random_range(AGED_POLL_MIN..AGED_POLL_MAX)
                };
                std::thread::sleep(wait.min(deadline - now));
            }
        }
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
        let _ = std::fs::remove_dir(&h.dir);
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
