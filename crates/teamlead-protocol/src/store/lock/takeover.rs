//! The 10 s stale takeover, one teamlead process at a time. proper-lockfile's takeover is
//! `rmdir` then `mkdir`, judged from one `stat`: two writers that both judged the same dead
//! lock stale could both remove "it", the second removing the lock the first had just made,
//! and then both write the file (a lost update; measured: 5 rounds of 25 with eight writers
//! on one stale lock). Here a writer that finds a stale lock takes an exclusive flock on a
//! guard file beside it, `<target>.lock.tmp.0000000000000000.holder` (a marker's name, so
//! [`super::waiter`] and the leftovers sweep treat one left by a dead process as a dead
//! marker), looks at the lock again while holding it, and removes it only if it is still
//! the same stale directory. The guard file is unlinked before its flock is released, and a
//! taker checks after locking that the path still names the file it locked. A guard path
//! that is a link or a FIFO is never followed or removed; the takeover is then unguarded
//! (as proper-lockfile's) rather than never.
//!
//! Claude Code does not take the guard: a Claude Code writer and a teamlead writer that both
//! find the same stale lock keep proper-lockfile's narrow race. Stale locks only exist after
//! a crash.

use std::fs::{File, TryLockError};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::STALE_AFTER;
use super::holder::{Identity, marker_path};
use crate::store::safe_file::PRIVATE_FILE_MODE;

/// The guard's token in the marker naming scheme.
const GUARD_TOKEN: &str = "0000000000000000";
/// How many times a guard that was unlinked between `open` and `flock` is opened again.
const REOPENS: usize = 8;

/// What a takeover attempt did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takeover {
    /// The stale directory was removed: try to take the lock at once.
    Removed,
    /// The directory changed since it was judged stale (removed or taken by someone else):
    /// look again.
    Changed,
    /// Another writer is taking it over right now: the lock is still in the way.
    Busy,
}

/// `<lock dir>.tmp.0000000000000000.holder`.
pub(crate) fn guard_path(lock_dir: &Path) -> PathBuf {
    marker_path(lock_dir, GUARD_TOKEN)
}

/// Removes the lock directory `dir`, judged stale as `judged`, if it is still that directory
/// and still stale when looked at again while holding the takeover guard.
pub(crate) fn remove_if_still_stale(dir: &Path, judged: &Identity) -> Takeover {
    let guard = match Guard::take(dir) {
        Taken::Held(guard) => Some(guard),
        Taken::Busy => return Takeover::Busy,
        // Not ours to remove, and it must not keep a dead lock forever: the unguarded
        // takeover, as proper-lockfile does it.
        Taken::Unusable => None,
    };
    let still = std::fs::symlink_metadata(dir).is_ok_and(|meta| {
        meta.is_dir() && Identity::of(&meta) == *judged && age(&meta) > STALE_AFTER
    });
    let outcome = if still && std::fs::remove_dir(dir).is_ok() {
        Takeover::Removed
    } else {
        Takeover::Changed
    };
    drop(guard);
    outcome
}

fn age(meta: &std::fs::Metadata) -> std::time::Duration {
    meta.modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .unwrap_or_default()
}

/// What an attempt to take the guard found.
enum Taken {
    Held(Guard),
    /// Another writer holds it.
    Busy,
    /// The path is not a regular file teamlead can open (a link, a FIFO): never followed,
    /// never removed.
    Unusable,
}

/// The held guard: unlinked, then unlocked, on drop.
struct Guard {
    file: File,
    path: PathBuf,
}

impl Guard {
    /// Takes the guard without waiting.
    fn take(lock_dir: &Path) -> Taken {
        let path = guard_path(lock_dir);
        for _ in 0..REOPENS {
            let Ok(file) = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .mode(PRIVATE_FILE_MODE)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(&path)
            else {
                return Taken::Unusable;
            };
            let Some(opened) = file.metadata().ok().filter(|m| m.is_file()) else {
                return Taken::Unusable;
            };
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Taken::Busy,
                Err(TryLockError::Error(_)) => return Taken::Unusable,
            }
            // The previous holder may have unlinked it between our open and our flock.
            let named = std::fs::symlink_metadata(&path).is_ok_and(|now| {
                now.is_file() && now.dev() == opened.dev() && now.ino() == opened.ino()
            });
            if named {
                return Taken::Held(Guard { file, path });
            }
            let _ = file.unlock();
        }
        Taken::Busy
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;
    use std::time::Duration;

    fn stale_dir(root: &Path) -> (PathBuf, Identity) {
        let dir = root.join("config.json.lock");
        std::fs::create_dir(&dir).unwrap();
        let f = File::open(&dir).unwrap();
        f.set_modified(SystemTime::now() - Duration::from_secs(30))
            .unwrap();
        let id = Identity::of(&std::fs::symlink_metadata(&dir).unwrap());
        (dir, id)
    }

    #[test]
    fn a_stale_lock_is_removed_and_the_guard_with_it() {
        let root = tempfile::tempdir().unwrap();
        let (dir, id) = stale_dir(root.path());
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Removed);
        assert!(!dir.exists());
        assert!(!guard_path(&dir).exists());
    }

    #[test]
    fn a_lock_made_after_the_judgement_is_left_alone() {
        let root = tempfile::tempdir().unwrap();
        let (dir, id) = stale_dir(root.path());
        std::fs::remove_dir(&dir).unwrap();
        std::fs::create_dir(&dir).unwrap();
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Changed);
        assert!(dir.is_dir(), "the new holder keeps its lock");
    }

    #[test]
    fn a_held_guard_makes_the_lock_busy() {
        let root = tempfile::tempdir().unwrap();
        let (dir, id) = stale_dir(root.path());
        let Taken::Held(held) = Guard::take(&dir) else {
            panic!("the guard is free")
        };
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Busy);
        assert!(dir.is_dir());
        drop(held);
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Removed);
    }

    #[test]
    fn a_fifo_or_link_at_the_guard_never_blocks_the_takeover_and_is_never_touched() {
        let root = tempfile::tempdir().unwrap();
        let (dir, id) = stale_dir(root.path());
        let guard = guard_path(&dir);
        let c = std::ffi::CString::new(guard.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Removed);
        assert!(
            std::fs::symlink_metadata(&guard)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        std::fs::remove_file(&guard).unwrap();

        let (dir, id) = stale_dir(root.path());
        let elsewhere = root.path().join("elsewhere");
        std::fs::write(&elsewhere, "keep").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &guard).unwrap();
        assert_eq!(remove_if_still_stale(&dir, &id), Takeover::Removed);
        assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep");
        assert!(std::fs::symlink_metadata(&guard).unwrap().is_symlink());
    }
}
