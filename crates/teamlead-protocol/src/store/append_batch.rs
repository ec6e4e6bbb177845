//! Group commit of inbox appends inside one process ([`super::inbox::append_many`]). An
//! append rewrites the whole inbox (a JSON array) with two fsyncs; when 100 in-process
//! teammates answer a `/quit` at once, each appended its answer to the lead's inbox alone, one
//! after the other, and the optimistic swap (the new file made before the lock) was beaten by
//! another writer again and again, each loss a wasted fsync. Now a caller first leaves its
//! entries in the inbox's pending list, then waits for its turn at the inbox's lock (the
//! per-process queue, [`super::lock::gate`]): the thread whose turn comes takes every entry
//! pending (its own and those of the threads queued behind it, in the order they were left,
//! at most [`MAX_ENTRIES`]) and appends them in one write; a thread whose turn comes after its
//! entries were written returns that write's outcome at once. Each caller still returns only
//! once its entries are on disk, in the order the callers came.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::error::{Result, StoreError};
use super::lock::{self, DEFAULT_LOCK_TIMEOUT};
use crate::InboxEntry;

/// The most entries one write carries.
const MAX_ENTRIES: usize = 512;

/// The pending appends of one inbox and the outcomes of written ones.
#[derive(Default)]
struct Pending {
    next_id: u64,
    waiting: Vec<(u64, Vec<InboxEntry>)>,
    /// Outcomes of appends written by another caller's turn, until their caller reads them.
    written: HashMap<u64, std::result::Result<(), String>>,
}

/// The pending lists of the inboxes with appends under way.
fn all() -> MutexGuard<'static, HashMap<PathBuf, Arc<Mutex<Pending>>>> {
    static ALL: OnceLock<Mutex<HashMap<PathBuf, Arc<Mutex<Pending>>>>> = OnceLock::new();
    crate::store::unpoisoned(ALL.get_or_init(Default::default))
}

/// Idle pending lists are kept (no allocation for the next append to a busy inbox) until
/// there are more than this many; then the idle ones go.
const KEEP_LISTS: usize = 64;

fn pending_of(path: &Path) -> Arc<Mutex<Pending>> {
    let mut all = all();
    if let Some(p) = all.get(path) {
        return p.clone();
    }
    if all.len() >= KEEP_LISTS {
        // Nobody uses an idle list (the map's lock is held, and users hold its Arc).
        all.retain(|_, p| {
            Arc::strong_count(p) > 1 || {
                let p = locked(p);
                !p.waiting.is_empty() || !p.written.is_empty()
            }
        });
    }
    all.entry(path.to_path_buf()).or_default().clone()
}

fn locked(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    crate::store::unpoisoned(pending)
}

/// Appends `entries` to the inbox at `path` with the entries of other threads that come at
/// the same time; `write` appends a batch (taking the inbox's lock itself: this thread holds
/// its turn, so the lock goes straight to the directory).
pub(super) fn append(
    path: &Path,
    entries: &[InboxEntry],
    write: impl FnOnce(&[InboxEntry]) -> Result<()>,
) -> Result<()> {
    let pending = pending_of(path);
    let id = {
        let mut p = locked(&pending);
        let id = p.next_id;
        p.next_id += 1;
        p.waiting.push((id, entries.to_vec()));
        id
    };
    let turn = match lock::wait_turn(path, DEFAULT_LOCK_TIMEOUT) {
        Ok(turn) => turn,
        Err(e) => {
            // Not taken by anyone yet: taken back, and the wait's error. Taken by another
            // turn: that write's outcome, once it is known (never a success it did not have).
            let end = std::time::Instant::now() + DEFAULT_LOCK_TIMEOUT;
            loop {
                let mut p = locked(&pending);
                if let Some(i) = p.waiting.iter().position(|(w, _)| *w == id) {
                    p.waiting.remove(i);
                    return Err(e);
                }
                if let Some(outcome) = p.written.remove(&id) {
                    return outcome.map_err(|why| io(path, why));
                }
                drop(p);
                if std::time::Instant::now() >= end {
                    return Err(e);
                }
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    };
    let batch: Vec<(u64, Vec<InboxEntry>)> = {
        let mut p = locked(&pending);
        if let Some(outcome) = p.written.remove(&id) {
            drop(p);
            drop(turn);
            return outcome.map_err(|why| io(path, why));
        }
        // Neither pending nor written: the turn that took our entries ended without a word
        // (its write panicked). Said as a failure, never as a success.
        let Some(own) = p.waiting.iter().position(|(w, _)| *w == id) else {
            drop(p);
            drop(turn);
            return Err(io(
                path,
                "the write that carried these entries did not finish".to_string(),
            ));
        };
        // Everything pending in the order it was left, up to the cap, and always up to our
        // own (an older one may still be pending: its thread got its ticket after ours).
        let mut taken = 0;
        let mut count = 0;
        for (i, (_, e)) in p.waiting.iter().enumerate() {
            if i > own && count + e.len() > MAX_ENTRIES {
                break;
            }
            count += e.len();
            taken += 1;
        }
        p.waiting.drain(..taken).collect()
    };
    let others: Vec<u64> = batch
        .iter()
        .map(|(other, _)| *other)
        .filter(|other| *other != id)
        .collect();
    let all: Vec<InboxEntry> = batch.into_iter().flat_map(|(_, e)| e).collect();
    #[cfg(test)]
    super::batch_writes::count(path);
    let outcome = write(&all);
    let shared = outcome.as_ref().map(|_| ()).map_err(|e| e.to_string());
    {
        let mut p = locked(&pending);
        for other in others {
            p.written.insert(other, shared.clone());
        }
    }
    drop(turn);
    outcome
}

fn io(path: &Path, why: String) -> StoreError {
    StoreError::io(path, std::io::Error::other(why))
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use crate::InboxEntry;
    use crate::store::{Home, create_team, inbox};

    /// Appends that come at once: each is on disk when its call returns, every one is there
    /// once, each caller's entries in its own order, in fewer writes than appends.
    #[test]
    fn appends_at_once_each_land_once_in_fewer_writes() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        create_team(&home, &crate::TeamFile::new("t", None, "/tmp")).unwrap();
        let writers = 24;
        let start = std::sync::Arc::new(Barrier::new(writers));
        let threads: Vec<_> = (0..writers)
            .map(|w| {
                let (home, start) = (home.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    for i in 0..5 {
                        let text = format!("w{w}-{i}");
                        inbox::append(&home, "t", "lead", &InboxEntry::new("x", text.clone()))
                            .unwrap();
                        let now: Vec<String> = inbox::read(&home, "t", "lead")
                            .unwrap()
                            .entries
                            .into_iter()
                            .map(|e| e.text)
                            .collect();
                        assert!(now.contains(&text), "{text} returned before it was on disk");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let texts: Vec<String> = inbox::read(&home, "t", "lead")
            .unwrap()
            .entries
            .into_iter()
            .map(|e| e.text)
            .collect();
        assert_eq!(texts.len(), writers * 5, "lost or doubled: {texts:?}");
        let path = home.inbox_path("t", "lead").unwrap();
        let writes = crate::store::batch_writes::of(&path);
        assert!(
            writes < writers * 5,
            "{writes} writes for {} appends",
            writers * 5
        );
        for w in 0..writers {
            let mine: Vec<&String> = texts
                .iter()
                .filter(|t| t.starts_with(&format!("w{w}-")))
                .collect();
            let want: Vec<String> = (0..5).map(|i| format!("w{w}-{i}")).collect();
            assert_eq!(mine, want.iter().collect::<Vec<_>>());
        }
    }

    /// A turn whose write panics after it took another caller's entries: that caller is told
    /// its entries were not written, never that they were.
    #[test]
    fn entries_taken_by_a_write_that_panicked_are_a_failure_not_a_success() {
        use super::{DEFAULT_LOCK_TIMEOUT, Result, append, locked, pending_of};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("inbox.json");
        let held = crate::store::lock::wait_turn(&path, DEFAULT_LOCK_TIMEOUT).unwrap();
        let queued = |n: usize| {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
            while locked(&pending_of(&path)).waiting.len() < n {
                assert!(std::time::Instant::now() < deadline, "{n} not queued");
                std::thread::yield_now();
            }
        };
        let first = {
            let path = path.clone();
            std::thread::spawn(move || {
                append(&path, &[InboxEntry::new("a", "one")], |_| -> Result<()> {
                    panic!("a write that panics")
                })
            })
        };
        queued(1);
        let second = {
            let path = path.clone();
            std::thread::spawn(move || append(&path, &[InboxEntry::new("b", "two")], |_| Ok(())))
        };
        queued(2);
        // Both hold tickets before the turn is passed on: the first takes both entries.
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(held);
        assert!(first.join().is_err(), "the first write panicked");
        let second = second.join().unwrap();
        assert!(
            second.is_err(),
            "entries a panicked write took were called written"
        );
    }
}
