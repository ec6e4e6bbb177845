//! The holder marker: teamlead's way to tell at once that a lock directory belongs to a
//! teamlead process that died (PROTOCOL.md 4, teamlead-only note). Every `acquire` makes its
//! own marker file beside the lock, `<target>.lock.tmp.<16 hex>.holder`, and holds an
//! exclusive flock on it from before the lock directory exists until after it is removed; the
//! kernel drops that flock when the process dies, however it dies. The marker's one fixed-size
//! record says which lock directory it holds: the directory's device, inode and mtime (the
//! mtime carries random nanoseconds, so no other directory has it). Claude Code never looks
//! at these files (it reads inboxes and tasks by name, and `*.json` only).
//!
//! A waiter that finds a lock directory named by a marker whose flock it can take knows the
//! holder is gone: it takes that flock (so no other waiter acts on the same marker), reads the
//! record again, checks the directory is still that one and younger than
//! [`FAST_REAP_MAX_AGE`], marks the record `reaped`, removes the directory and the marker.

use std::fs::{File, TryLockError};
use std::io::ErrorKind;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::STALE_AFTER;
use crate::store::safe_file::PRIVATE_FILE_MODE;

/// A dead teamlead holder's lock is removed at once only while its mtime is younger than this,
/// well before anyone may take it as stale (10 s): a live holder refreshes it every 5 s, and
/// the margin covers the time between the check and the `rmdir`.
pub const FAST_REAP_MAX_AGE: Duration = Duration::from_secs(STALE_AFTER.as_secs() - 2);
/// A marker or staging directory whose flock is free is left alone while younger than this
/// (its maker may be between creating it and taking the flock).
pub const SIDE_FILE_MIN_AGE: Duration = Duration::from_secs(2);
/// Length of the record, padded with spaces; written with one `pwrite`.
const RECORD_LEN: usize = 192;
const MAGIC: &str = "teamlead-lock-holder 1";

/// What identifies one lock directory: device, inode and mtime (seconds, nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    pub mtime: (i64, i64),
}

impl Identity {
    pub fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
        }
    }
}

/// The state a record gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Holds (or is about to hold, for a staging directory) the directory with this device
    /// and inode, whose mtime is one of the two.
    Held {
        dev: u64,
        ino: u64,
        mtimes: [(i64, i64); 2],
    },
    /// Released by its holder, or never held.
    Free,
    /// Removed by another teamlead process after its holder died.
    Reaped,
}

/// One marker's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    pub pid: u32,
    pub state: State,
}

impl Record {
    /// Does this record hold the directory `id`?
    pub fn names(&self, id: &Identity) -> bool {
        match self.state {
            State::Held { dev, ino, mtimes } => {
                dev == id.dev && ino == id.ino && mtimes.contains(&id.mtime)
            }
            State::Free | State::Reaped => false,
        }
    }

    fn encode(&self) -> [u8; RECORD_LEN] {
        let body = match self.state {
            State::Held { dev, ino, mtimes } => format!(
                "{MAGIC} held pid={} dev={dev} ino={ino} m1={}.{} m2={}.{}\n",
                self.pid, mtimes[0].0, mtimes[0].1, mtimes[1].0, mtimes[1].1
            ),
            State::Free => format!("{MAGIC} free pid={}\n", self.pid),
            State::Reaped => format!("{MAGIC} reaped pid={}\n", self.pid),
        };
        let mut out = [b' '; RECORD_LEN];
        let n = body.len().min(RECORD_LEN);
        out[..n].copy_from_slice(&body.as_bytes()[..n]);
        out
    }

    /// Parses a record; `None` for anything else (an empty marker, a torn or foreign file).
    pub fn decode(bytes: &[u8]) -> Option<Record> {
        let text = std::str::from_utf8(bytes).ok()?.trim_end();
        let rest = text.strip_prefix(MAGIC)?.trim_start();
        let mut words = rest.split(' ');
        let state = words.next()?;
        let mut field = |name: &str| -> Option<&str> { words.next()?.strip_prefix(name) };
        let pid = field("pid=")?.parse().ok()?;
        let state = match state {
            "free" => State::Free,
            "reaped" => State::Reaped,
            "held" => {
                let dev = field("dev=")?.parse().ok()?;
                let ino = field("ino=")?.parse().ok()?;
                let m1 = parse_time(field("m1=")?)?;
                let m2 = parse_time(field("m2=")?)?;
                State::Held {
                    dev,
                    ino,
                    mtimes: [m1, m2],
                }
            }
            _ => return None,
        };
        Some(Record { pid, state })
    }
}

fn parse_time(s: &str) -> Option<(i64, i64)> {
    let (secs, nanos) = s.split_once('.')?;
    Some((secs.parse().ok()?, nanos.parse().ok()?))
}

/// `<lock dir>.tmp.<token>.holder`.
pub fn marker_path(lock_dir: &Path, token: &str) -> PathBuf {
    let mut s = lock_dir.as_os_str().to_owned();
    s.push(format!(".tmp.{token}.holder"));
    PathBuf::from(s)
}

/// The name a holder's marker has while its record names `id`: `<lock dir>.tmp.<key>.holder`
/// with the key a 64-bit FNV-1a hash of the identity, so a waiter finds the holder of the
/// directory in its way with one `open`, without listing the directory.
pub fn marker_for(lock_dir: &Path, id: &Identity) -> PathBuf {
    let text = format!("{}:{}:{}.{}", id.dev, id.ino, id.mtime.0, id.mtime.1);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    marker_path(lock_dir, &format!("{hash:016x}"))
}

/// `<lock dir>.tmp.<token>`: where a lock directory is made before it is renamed into place.
pub fn staging_path(lock_dir: &Path, token: &str) -> PathBuf {
    let mut s = lock_dir.as_os_str().to_owned();
    s.push(format!(".tmp.{token}"));
    PathBuf::from(s)
}

/// Splits a side-file name into (lock directory name, token, is marker): a marker
/// `<x>.lock.tmp.<16 hex>.holder` or a staging directory `<x>.lock.tmp.<16 hex>`.
pub fn parse_side_name(name: &str) -> Option<(&str, &str, bool)> {
    let (stem, is_marker) = match name.strip_suffix(".holder") {
        Some(stem) => (stem, true),
        None => (name, false),
    };
    let (lock, token) = stem.rsplit_once(".tmp.")?;
    let ok = token.len() == 16
        && token.bytes().all(|b| b.is_ascii_hexdigit())
        && lock.len() > ".lock".len()
        && lock.ends_with(".lock");
    ok.then_some((lock, token, is_marker))
}

/// Opens an existing file for flock and record I/O: never through a link, never blocking on
/// a FIFO, and only a regular file.
pub fn open_existing(path: &Path) -> std::io::Result<File> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(std::io::Error::new(ErrorKind::InvalidInput, "not a file"));
    }
    Ok(f)
}

/// Reads the record of an open marker.
pub fn read_record(file: &File) -> Option<Record> {
    let mut buf = [0u8; RECORD_LEN];
    let n = file.read_at(&mut buf, 0).ok()?;
    Record::decode(&buf[..n])
}

/// This process's marker for one `acquire`: created and flocked at once, removed on drop.
/// Once its record names a directory it is renamed to [`marker_for`] that directory (during a
/// refresh it briefly has the names of both mtimes, as hard links).
#[derive(Debug)]
pub struct Marker {
    file: File,
    lock_dir: PathBuf,
    /// Every name of the file, the current one last.
    names: Vec<PathBuf>,
    token: String,
}

impl Marker {
    /// Creates `<lock dir>.tmp.<random>.holder` (mode 0600) and takes its flock.
    pub fn create(lock_dir: &Path) -> std::io::Result<Marker> {
        let token = format!("{:016x}", rand::random::<u64>());
        let path = marker_path(lock_dir, &token);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)?;
        // Only a waiter peeking at a fresh marker can hold this flock, for an instant.
        file.lock()?;
        Ok(Marker {
            file,
            lock_dir: lock_dir.to_path_buf(),
            names: vec![path],
            token,
        })
    }

    /// The current name.
    pub fn path(&self) -> &Path {
        self.names
            .last()
            .map(PathBuf::as_path)
            .unwrap_or(Path::new(""))
    }

    /// The staging directory that goes with this marker.
    pub fn staging(&self, lock_dir: &Path) -> PathBuf {
        staging_path(lock_dir, &self.token)
    }

    /// Records that this marker holds `id`, then takes the name waiters look for.
    pub fn hold(&mut self, id: &Identity) {
        self.write_held(id, None);
        let to = marker_for(&self.lock_dir, id);
        if self.path() == to {
            return;
        }
        match std::fs::rename(self.path(), &to) {
            Ok(()) => self.names = vec![to],
            Err(e) => tracing::warn!("cannot rename lock marker {}: {e}", self.path().display()),
        }
    }

    /// Before a refresh that moves the directory's mtime from `id` to `next`: the record
    /// names both, and the marker has the names of both.
    pub fn prepare_refresh(&mut self, id: &Identity, next: &Identity) {
        self.write_held(id, Some(next.mtime));
        let to = marker_for(&self.lock_dir, next);
        if self.names.contains(&to) {
            return;
        }
        match std::fs::hard_link(self.path(), &to) {
            Ok(()) => self.names.push(to),
            Err(e) => tracing::warn!("cannot link lock marker {}: {e}", self.path().display()),
        }
    }

    /// After a refresh: drops every name but the current one.
    pub fn finish_refresh(&mut self) {
        while self.names.len() > 1 {
            let old = self.names.remove(0);
            let _ = std::fs::remove_file(old);
        }
    }

    /// Writes the record: holding `id` (its mtime, or either of two around a refresh).
    fn write_held(&self, id: &Identity, other_mtime: Option<(i64, i64)>) {
        let state = State::Held {
            dev: id.dev,
            ino: id.ino,
            mtimes: [id.mtime, other_mtime.unwrap_or(id.mtime)],
        };
        self.write(state);
    }

    pub fn write_free(&self) {
        self.write(State::Free);
    }

    fn write(&self, state: State) {
        let rec = Record {
            pid: std::process::id(),
            state,
        };
        if let Err(e) = self.file.write_all_at(&rec.encode(), 0) {
            tracing::warn!("cannot write lock marker {}: {e}", self.path().display());
        }
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = std::fs::remove_file(name);
        }
    }
}

/// What holds a lock directory that is in the way, as far as markers tell.
#[derive(Debug)]
enum Blocker {
    /// A live teamlead process (its marker's flock is held); the open marker is kept so the
    /// next poll only needs a `try_lock`.
    Teamlead(File, PathBuf),
    /// No marker names it: Claude Code, another program, or a teamlead that died before its
    /// record was written. Only the 10 s rule applies.
    Other,
}

/// What a look at the markers beside a lock directory found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A live teamlead process holds it.
    Teamlead,
    /// No marker names it: the 10 s rule decides.
    Other,
    /// Its holder was a teamlead process that died; the directory has been removed, so try
    /// again at once.
    Reaped { pid: u32 },
}

/// Cached knowledge about the lock directory in the way, refreshed when it changes.
#[derive(Debug, Default)]
pub struct Watch {
    seen: Option<(Identity, Blocker, Instant)>,
    /// The directory last found without a live marker by the quick lookup.
    seen_other: Option<Identity>,
}

/// How long a "no marker names it" answer is trusted before the markers are read again.
const OTHER_RECHECK: Duration = Duration::from_millis(500);

impl Watch {
    /// Looks at the lock directory `dir` (found with `meta`): a dead teamlead holder's
    /// directory is removed at once; otherwise says who holds it. `own` is the caller's own
    /// marker, never looked at.
    pub fn check(&mut self, dir: &Path, meta: &std::fs::Metadata, own: Option<&Path>) -> Verdict {
        let id = Identity::of(meta);
        if let Some((seen_id, blocker, at)) = self.seen.take()
            && seen_id == id
        {
            match blocker {
                Blocker::Teamlead(file, path) => match file.try_lock() {
                    Err(TryLockError::WouldBlock) => {
                        self.seen = Some((id, Blocker::Teamlead(file, path), at));
                        return Verdict::Teamlead;
                    }
                    Ok(()) => {
                        if let Some(v) = reap_locked(dir, &id, &file, &path) {
                            return v;
                        }
                        let _ = file.unlock();
                    }
                    Err(TryLockError::Error(_)) => {}
                },
                Blocker::Other if at.elapsed() < OTHER_RECHECK => {
                    self.seen = Some((id, Blocker::Other, at));
                    return Verdict::Other;
                }
                Blocker::Other => {}
            }
        }
        // First sight of this directory: the holder's marker, if any, has a known name. The
        // full listing (which also clears dead markers) is only for a "nobody" answer that
        // is being checked again.
        let found = match self.seen_other.take() {
            Some(last) if last == id => scan(dir, &id, own),
            _ => lookup(dir, &id),
        };
        match found {
            Scanned::Held(file, path) => {
                self.seen = Some((id, Blocker::Teamlead(file, path), Instant::now()));
                Verdict::Teamlead
            }
            Scanned::Nothing => {
                self.seen = Some((id, Blocker::Other, Instant::now()));
                self.seen_other = Some(id);
                Verdict::Other
            }
            Scanned::Reaped(pid) => Verdict::Reaped { pid },
        }
    }
}

enum Scanned {
    Held(File, PathBuf),
    Nothing,
    Reaped(u32),
}

/// The marker named after `id`, if it names it: its holder's liveness decides.
fn lookup(dir: &Path, id: &Identity) -> Scanned {
    let path = marker_for(dir, id);
    let Ok(file) = open_existing(&path) else {
        return Scanned::Nothing;
    };
    if !read_record(&file).is_some_and(|r| r.names(id)) {
        return Scanned::Nothing;
    }
    match file.try_lock() {
        Err(TryLockError::WouldBlock) => Scanned::Held(file, path),
        Err(TryLockError::Error(_)) => Scanned::Nothing,
        Ok(()) => match reap_locked(dir, id, &file, &path) {
            Some(Verdict::Reaped { pid }) => Scanned::Reaped(pid),
            _ => Scanned::Nothing,
        },
    }
}

/// Reads every marker of `dir`: a live one naming `id` is the blocker; a dead one naming it
/// is reaped; dead markers naming nothing current are removed on the way.
fn scan(dir: &Path, id: &Identity, own: Option<&Path>) -> Scanned {
    let Some(parent) = dir.parent() else {
        return Scanned::Nothing;
    };
    let Some(lock_name) = dir.file_name().and_then(|n| n.to_str()) else {
        return Scanned::Nothing;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Scanned::Nothing;
    };
    // The holder wrote its record just before its directory appeared, so its marker is
    // nearly always the most recently modified: newest first, and stop at the holder.
    let mut markers: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|entry| {
            entry.file_name().to_str().is_some_and(
                |name| matches!(parse_side_name(name), Some((lock, _, true)) if lock == lock_name),
            )
        })
        .filter_map(|entry| {
            let mtime = entry.metadata().ok()?.modified().ok()?;
            Some((mtime, entry.path()))
        })
        .filter(|(_, path)| Some(path.as_path()) != own)
        .collect();
    markers.sort_by_key(|m| std::cmp::Reverse(m.0));
    for (_, path) in markers {
        let Ok(file) = open_existing(&path) else {
            continue;
        };
        let names_it = read_record(&file).is_some_and(|r| r.names(id));
        match file.try_lock() {
            Err(TryLockError::WouldBlock) if names_it => return Scanned::Held(file, path),
            Err(_) => {}
            Ok(()) => {
                if names_it
                    && let Some(Verdict::Reaped { pid }) = reap_locked(dir, id, &file, &path)
                {
                    return Scanned::Reaped(pid);
                }
                discard_dead_marker(&file, &path, dir);
            }
        }
    }
    Scanned::Nothing
}

/// With the flock of a dead holder's marker taken: if its record (read again) still names
/// `id`, `dir` is still that directory and young enough, removes it and the marker.
pub(crate) fn reap_locked(dir: &Path, id: &Identity, file: &File, path: &Path) -> Option<Verdict> {
    let record = read_record(file)?;
    if !record.names(id) {
        return None;
    }
    let meta = std::fs::symlink_metadata(dir).ok()?;
    let age = SystemTime::now()
        .duration_since(meta.modified().ok()?)
        .unwrap_or_default();
    if Identity::of(&meta) != *id || age > FAST_REAP_MAX_AGE {
        return None;
    }
    let reaped = Record {
        pid: std::process::id(),
        state: State::Reaped,
    };
    file.write_all_at(&reaped.encode(), 0).ok()?;
    match std::fs::remove_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(
                "cannot remove the lock {} of a dead holder: {e}",
                dir.display()
            );
            return None;
        }
    }
    let _ = std::fs::remove_file(path);
    tracing::info!(
        "removed the lock {} of teamlead process {} (it died holding it)",
        dir.display(),
        record.pid
    );
    Some(Verdict::Reaped { pid: record.pid })
}

/// With a marker's flock taken: removes it (and its staging directory) when it names no
/// lock directory, or when it is old enough that its maker cannot be about to lock it.
fn discard_dead_marker(file: &File, path: &Path, lock_dir: &Path) {
    let has_record = read_record(file).is_some();
    let old = file
        .metadata()
        .ok()
        .and_then(|m| m.modified().ok())
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= SIDE_FILE_MIN_AGE);
    if !(has_record || old) {
        return;
    }
    let _ = std::fs::remove_file(path);
    if let Some(name) = path.file_name().and_then(|n| n.to_str())
        && let Some((_, token, _)) = parse_side_name(name)
    {
        let _ = std::fs::remove_dir(staging_path(lock_dir, token));
    }
    let _ = file.unlock();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let held = Record {
            pid: 42,
            state: State::Held {
                dev: 2049,
                ino: 123456789,
                mtimes: [(1_700_000_000, 123), (1_700_000_005, 999_999_999)],
            },
        };
        let bytes = held.encode();
        assert_eq!(bytes.len(), RECORD_LEN);
        assert_eq!(Record::decode(&bytes), Some(held));
        let id = Identity {
            dev: 2049,
            ino: 123456789,
            mtime: (1_700_000_005, 999_999_999),
        };
        assert!(held.names(&id));
        assert!(!held.names(&Identity { ino: 1, ..id }));
        assert!(!held.names(&Identity {
            mtime: (1_700_000_005, 0),
            ..id
        }));
        for state in [State::Free, State::Reaped] {
            let r = Record { pid: 7, state };
            assert_eq!(Record::decode(&r.encode()), Some(r));
            assert!(!r.names(&id));
        }
        assert_eq!(Record::decode(b""), None);
        assert_eq!(
            Record::decode(b"teamlead-lock-holder 1 held pid=1 dev=2"),
            None
        );
    }

    #[test]
    fn side_names() {
        assert_eq!(
            parse_side_name("a.json.lock.tmp.0123456789abcdef.holder"),
            Some(("a.json.lock", "0123456789abcdef", true))
        );
        assert_eq!(
            parse_side_name(".lock.lock.tmp.0123456789abcdef"),
            Some((".lock.lock", "0123456789abcdef", false))
        );
        assert_eq!(parse_side_name("a.json.tmp.01234567"), None);
        assert_eq!(parse_side_name("a.json.lock.tmp.0123.holder"), None);
        assert_eq!(parse_side_name(".lock.tmp.0123456789abcdef"), None);
    }
}
