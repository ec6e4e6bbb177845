//! The holder marker: teamlead's way to tell at once that a lock directory belongs to a
//! teamlead process that died (PROTOCOL.md 4, teamlead-only note). Every `acquire` makes its
//! own marker file beside the lock, `<target>.lock.tmp.<16 hex>.holder`, and holds an
//! exclusive flock on it from before the lock directory exists until after it is removed; the
//! kernel drops that flock when the process dies, however it dies. The marker's one fixed-size
//! record says which lock directory it holds: the directory's device, inode and mtime (the
//! mtime carries random nanoseconds, so no other directory has it). Claude Code never looks
//! at these files (it reads inboxes and tasks by name, and `*.json` only).
//!
//! What a waiter does with them is in [`super::waiter`].

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::STALE_AFTER;
use crate::store::safe_file::PRIVATE_FILE_MODE;

/// A dead teamlead holder's lock is removed at once only while its mtime is younger than this,
/// well before anyone may take it as stale (10 s): a live holder refreshes it every 5 s, and
/// the margin covers the time between the check and the `rmdir`.
pub(crate) const FAST_REAP_MAX_AGE: Duration = Duration::from_secs(STALE_AFTER.as_secs() - 2);
/// A marker or staging directory whose flock is free is left alone while younger than this
/// (its maker may be between creating it and taking the flock).
pub(crate) const SIDE_FILE_MIN_AGE: Duration = Duration::from_secs(2);
/// Length of the record, padded with spaces; written with one `pwrite`.
pub(crate) const RECORD_LEN: usize = 192;
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

    /// The record as written: [`RECORD_LEN`] bytes, padded with spaces.
    pub fn encode(&self) -> [u8; RECORD_LEN] {
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
    pub(crate) fn decode(bytes: &[u8]) -> Option<Record> {
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
pub(crate) fn marker_for(lock_dir: &Path, id: &Identity) -> PathBuf {
    let text = format!("{}:{}:{}.{}", id.dev, id.ino, id.mtime.0, id.mtime.1);
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    marker_path(lock_dir, &format!("{hash:016x}"))
}

/// `<lock dir>.tmp.<token>`: where a lock directory is made before it is renamed into place.
pub(crate) fn staging_path(lock_dir: &Path, token: &str) -> PathBuf {
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
pub(crate) struct Marker {
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
    pub(crate) fn staging(&self, lock_dir: &Path) -> PathBuf {
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
    pub(crate) fn prepare_refresh(&mut self, id: &Identity, next: &Identity) {
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
    pub(crate) fn finish_refresh(&mut self) {
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

    pub(crate) fn write_free(&self) {
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
