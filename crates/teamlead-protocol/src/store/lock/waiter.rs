//! The waiter's side of the holder markers ([`super::holder`]). A waiter that finds a lock
//! directory looks for the marker named after it ([`marker_for`]): one `open`. A marker whose
//! record names the directory and whose flock is held means a live teamlead holder (the open
//! marker is kept, so each later poll is one `try_lock`). A marker whose flock it can take
//! means the holder is gone: holding that flock (so no other waiter acts on the same marker),
//! it reads the record again, checks the directory is still that one and younger than
//! [`FAST_REAP_MAX_AGE`], marks the record `reaped`, and removes the directory and the marker.
//! No marker: the 10 s rule. Such an answer is checked again every 500 ms by listing the
//! directory, which also removes markers that dead processes left naming nothing.

use std::fs::{File, TryLockError};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use super::holder::{
    FAST_REAP_MAX_AGE, Identity, Record, SIDE_FILE_MIN_AGE, State, marker_for, open_existing,
    parse_side_name, read_record, staging_path,
};

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
