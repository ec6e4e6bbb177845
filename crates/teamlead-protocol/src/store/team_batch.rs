//! Group commit of the team file's edits inside one process ([`super::team::edit_team`]).
//! Every member change is a read-modify-write of the whole `config.json` under its mkdir lock,
//! with two fsyncs; a lead spawning 100 in-process teammates made ~400 of them (each spawn's
//! member entry, each teammate's `isActive` at its first turn and after it), one after the
//! other, and spawning took seconds. Now the threads of this process that want to edit the
//! same team file at once share one read and one write: they take turns in the order they came
//! (the lock's per-process queue, [`super::lock::gate`]); the first takes the lock directory
//! and reads the file; each applies its own edit to the copy in memory and passes the turn on;
//! the last one (no thread waits behind it, or the batch is full) writes the file once,
//! releases the lock and tells the others how the write went. Each edit still returns only
//! after the write that holds it is on disk, and an edit that fails leaves the batch as it was
//! (it is applied to a copy). Other processes (Claude Code, other teamlead processes) meet the
//! lock directory as before; a batch holds it no longer than [`MAX_HOLD`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use super::atomic::write_atomic;
use super::error::{Result, StoreError};
use super::lock::{self, DEFAULT_LOCK_TIMEOUT, LockGuard};
use crate::TeamFile;

/// The most edits one write carries.
const MAX_BATCH: usize = 64;
/// The longest a batch keeps the lock directory before it writes.
const MAX_HOLD: Duration = Duration::from_millis(100);
/// An edit whose batch was taken for its write and has no outcome after this long gets a
/// failure (see [`Batches::wait_written`]).
const NO_OUTCOME_AFTER: Duration = Duration::from_secs(60);
/// A batch still open this long after it was opened has nobody to write it (see
/// [`Batches::wait_written`]).
const STRANDED_AFTER: Duration = Duration::from_secs(5);

/// The batches of one team file.
#[derive(Default)]
struct Batches {
    state: Mutex<State>,
    written: Condvar,
}

#[derive(Default)]
struct State {
    /// The batch being built (only the thread whose turn it is touches it).
    open: Option<Open>,
    next_number: u64,
    /// How the writes of closed batches went, until every edit in them has read it: the
    /// outcome (an error in words) and how many edits still wait for it.
    outcomes: HashMap<u64, (std::result::Result<(), String>, usize)>,
}

struct Open {
    number: u64,
    _lock: LockGuard,
    /// The file as read, and with the edits applied so far.
    before: TeamFile,
    file: TeamFile,
    /// The read repaired the file (`team_guard`): written even without an edit.
    repaired: bool,
    edits: usize,
    /// Edits applied that wait for this batch's write.
    waiting: usize,
    opened: Instant,
}

fn batches_of(path: &Path) -> Arc<Batches> {
    static ALL: OnceLock<Mutex<HashMap<PathBuf, Arc<Batches>>>> = OnceLock::new();
    let mut all = crate::store::unpoisoned(ALL.get_or_init(Default::default));
    all.entry(path.to_path_buf()).or_default().clone()
}

impl Batches {
    fn state(&self) -> MutexGuard<'_, State> {
        crate::store::unpoisoned(&self.state)
    }

    /// Writes `open` (when it changed anything), releases its lock and records the outcome
    /// for the edits that wait for it. Called by the thread whose turn it is.
    fn write(&self, path: &Path, open: Open) -> std::result::Result<(), String> {
        let outcome = if open.file != open.before || open.repaired {
            #[cfg(test)]
            super::batch_writes::count(path);
            write_atomic(path, open.file.to_text().as_bytes())
                .map(|()| super::team_guard::wrote(path, &open.file))
                .map_err(|e| e.to_string())
        } else {
            Ok(())
        };
        let Open {
            number,
            _lock,
            waiting,
            ..
        } = open;
        drop(_lock);
        if waiting > 0 {
            self.state()
                .outcomes
                .insert(number, (outcome.clone(), waiting));
            self.written.notify_all();
        }
        outcome
    }

    /// Waits for the write of batch `number`; how it went. A batch that stays open with
    /// nobody's turn (the thread the turn was passed to gave its ticket up at that moment) is
    /// closed by this thread in a turn of its own.
    fn wait_written(&self, path: &Path, number: u64) -> std::result::Result<(), String> {
        let started = Instant::now();
        let mut state = self.state();
        loop {
            // The batch was taken to be written and no outcome came in all that time: its
            // writer ended without one (it panicked). A failure, never a success.
            let open_still = state.open.as_ref().is_some_and(|o| o.number == number);
            if !open_still
                && !state.outcomes.contains_key(&number)
                && started.elapsed() >= NO_OUTCOME_AFTER
            {
                return Err("the write that carried this edit did not finish".to_string());
            }
            let stranded = state
                .open
                .as_ref()
                .is_some_and(|o| o.number == number && o.opened.elapsed() >= STRANDED_AFTER);
            if stranded {
                drop(state);
                if let Ok(_turn) = lock::wait_turn(path, DEFAULT_LOCK_TIMEOUT) {
                    let open = self.state().open.take_if(|o| o.number == number);
                    if let Some(open) = open {
                        let _ = self.write(path, open);
                    }
                }
                state = self.state();
                continue;
            }
            if let Some((outcome, left)) = state.outcomes.get_mut(&number) {
                let outcome = outcome.clone();
                *left -= 1;
                if *left == 0 {
                    state.outcomes.remove(&number);
                }
                return outcome;
            }
            state = match self.written.wait_timeout(state, Duration::from_millis(100)) {
                Ok((s, _)) => s,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

/// `edit` applied to the team file at `path` as part of a batch (see the module's text).
/// `read` reads and, where the lead guards the file, repairs it (`team_guard::repaired`): the
/// file as read and whether it was repaired. An edit that panics is left out of the batch,
/// which goes on (written, or passed on), and the panic then continues in its thread.
pub(super) fn edit<R>(
    path: &Path,
    read: impl FnOnce() -> Result<(TeamFile, bool)>,
    edit: impl FnOnce(&mut TeamFile) -> Result<R>,
) -> Result<R> {
    let turn = lock::wait_turn(path, DEFAULT_LOCK_TIMEOUT)?;
    let batches = batches_of(path);
    // The batch is this thread's while its turn lasts.
    let taken = batches.state().open.take();
    let mut open = match taken {
        Some(open) => open,
        None => {
            let lock = lock::acquire_dir(path, DEFAULT_LOCK_TIMEOUT)?;
            let (before, repaired) = read()?;
            let mut state = batches.state();
            let number = state.next_number;
            state.next_number += 1;
            Open {
                number,
                _lock: lock,
                file: before.clone(),
                before,
                repaired,
                edits: 0,
                waiting: 0,
                opened: Instant::now(),
            }
        }
    };
    let mut copy = open.file.clone();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| edit(&mut copy)));
    open.edits += 1;
    if matches!(result, Ok(Ok(_))) {
        open.file = copy;
        open.waiting += 1;
    }
    let number = open.number;
    let full = open.edits >= MAX_BATCH || open.opened.elapsed() >= MAX_HOLD;
    let written = if full || !turn.others_wait() {
        let written = batches.write(path, open);
        drop(turn);
        if matches!(result, Ok(Ok(_))) {
            // This edit's own share of the outcome, read here.
            let mut state = batches.state();
            if let Some((_, left)) = state.outcomes.get_mut(&number) {
                *left -= 1;
                if *left == 0 {
                    state.outcomes.remove(&number);
                }
            }
        }
        Some(written)
    } else {
        batches.state().open = Some(open);
        drop(turn);
        None
    };
    let result = match result {
        Ok(result) => result?,
        Err(panic) => std::panic::resume_unwind(panic),
    };
    written
        .unwrap_or_else(|| batches.wait_written(path, number))
        .map(|()| result)
        .map_err(|why| StoreError::io(path, std::io::Error::other(why)))
}

#[cfg(test)]
mod tests {
    use std::sync::Barrier;

    use crate::store::{Home, add_member, create_team, read_team};
    use crate::{Member, TeamFile};

    const THREADS: usize = 24;

    fn writes_of(home: &Home) -> usize {
        crate::store::batch_writes::of(&home.config_path("t").unwrap())
    }

    /// No lock directory is left beside the team file.
    fn no_lock_left(home: &Home) -> bool {
        !home
            .config_path("t")
            .unwrap()
            .with_extension("json.lock")
            .exists()
    }

    fn team() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        create_team(&home, &TeamFile::new("t", None, "/tmp")).unwrap();
        (dir, home)
    }

    /// Edits that come at once: each is on disk when its call returns, none is lost, and an
    /// edit that fails leaves the others (and the file) as they were.
    #[test]
    fn edits_at_once_each_land_and_a_failing_one_spoils_none() {
        let (_dir, home) = team();
        let start = std::sync::Arc::new(Barrier::new(THREADS));
        let threads: Vec<_> = (0..THREADS)
            .map(|n| {
                let (home, start) = (home.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let name = format!("m{n}");
                    if n % 3 == 0 {
                        // Changes the copy, then fails: nothing of it may be written.
                        let failed = crate::store::edit_team(&home, "t", |file| {
                            file.members.push(Member::new(&name, "t", "/tmp"));
                            file.members.clear();
                            Err::<(), _>(crate::store::StoreError::not_found("on purpose"))
                        });
                        assert!(failed.is_err());
                        return;
                    }
                    add_member(&home, "t", Member::new(&name, "t", "/tmp")).unwrap();
                    let now = read_team(&home, "t").unwrap();
                    assert!(
                        now.member(&name).is_some(),
                        "{name}'s edit returned before it was on disk"
                    );
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let file = read_team(&home, "t").unwrap();
        let mut names: Vec<String> = file
            .members
            .iter()
            .map(|m| m.name.clone())
            .filter(|n| n.starts_with('m'))
            .collect();
        names.sort();
        let mut want: Vec<String> = (0..THREADS)
            .filter(|n| n % 3 != 0)
            .map(|n| format!("m{n}"))
            .collect();
        want.sort();
        assert_eq!(names, want);
        // Shared writes: fewer than one per edit.
        let writes = writes_of(&home);
        assert!(
            writes < want.len(),
            "{writes} writes for {} edits that came at once",
            want.len()
        );
        assert!(no_lock_left(&home));
    }

    /// An edit that panics while others wait behind it: they still land and the lock goes.
    #[test]
    fn an_edit_that_panics_does_not_strand_the_others() {
        let (_dir, home) = team();
        let start = std::sync::Arc::new(Barrier::new(8));
        let threads: Vec<_> = (0..8)
            .map(|n| {
                let (home, start) = (home.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    if n == 3 {
                        let _ =
                            crate::store::edit_team(&home, "t", |_| -> crate::store::Result<()> {
                                panic!("an edit that panics")
                            });
                        return false;
                    }
                    add_member(&home, "t", Member::new(&format!("m{n}"), "t", "/tmp")).is_ok()
                })
            })
            .collect();
        let landed: Vec<bool> = threads
            .into_iter()
            .map(|t| t.join().unwrap_or(false))
            .collect();
        assert_eq!(landed.iter().filter(|l| **l).count(), 7);
        let file = read_team(&home, "t").unwrap();
        assert_eq!(
            file.members
                .iter()
                .filter(|m| m.name.starts_with('m'))
                .count(),
            7
        );
        assert!(no_lock_left(&home));
    }
}
