//! Making a lock directory so that it is named by its holder's marker from the first instant
//! it exists: the directory is made under a private staging name
//! (`<target>.lock.tmp.<token>`), given an mtime with random nanoseconds, recorded in the
//! marker, and only then renamed to `<target>.lock` with a rename that never replaces
//! (`renameat2(RENAME_NOREPLACE)` on Linux, `renamex_np(RENAME_EXCL)` on macOS). To every
//! other process this is the same atomic "create the directory or fail because it exists" as
//! `mkdir`. Where that rename is not available (another OS, or a file system that refuses the
//! flag) the lock is made with plain `mkdir` and recorded right after: a holder killed between
//! the two leaves a lock only the 10 s rule removes.

use std::io::ErrorKind;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use rand::Rng;

use super::holder::{Identity, Marker};
use crate::store::safe_file::PRIVATE_DIR_MODE;

/// What one attempt to make the lock directory did.
pub enum Created {
    /// The lock directory is ours; this is its identity (recorded in the marker, if any).
    Yes(Option<Identity>),
    /// It already exists.
    Exists,
}

/// Set once a no-replace rename has been refused in this process.
static NO_RENAME: AtomicBool = AtomicBool::new(false);

/// `mkdir` with mode 0700.
pub(crate) fn make_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .mode(PRIVATE_DIR_MODE)
        .create(dir)
}

/// Now, minus a random part of a millisecond, with nanosecond precision: no other lock
/// directory gets exactly this mtime, so the marker's record names only ours.
pub(crate) fn marked_now() -> SystemTime {
    SystemTime::now() - Duration::from_nanos(rand::rng().random_range(0..1_000_000))
}

/// Sets a directory's mtime (and atime) to `at`.
pub(crate) fn set_dir_times(dir: &Path, at: SystemTime) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(dir)?;
    f.set_times(std::fs::FileTimes::new().set_accessed(at).set_modified(at))
}

fn identity_after_marking(dir: &Path) -> std::io::Result<Identity> {
    set_dir_times(dir, marked_now())?;
    Ok(Identity::of(&std::fs::symlink_metadata(dir)?))
}

/// Makes `dir` (the lock directory) for the holder of `marker`.
pub fn create(dir: &Path, marker: Option<&mut Marker>) -> std::io::Result<Created> {
    let mut marker = marker;
    if let Some(marker) = marker.as_deref_mut()
        && !NO_RENAME.load(Ordering::Relaxed)
    {
        match create_renamed(dir, marker)? {
            Some(created) => return Ok(created),
            None => NO_RENAME.store(true, Ordering::Relaxed),
        }
    }
    match make_dir(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Ok(Created::Exists),
        Err(e) => return Err(e),
    }
    let Some(marker) = marker else {
        return Ok(Created::Yes(None));
    };
    match identity_after_marking(dir) {
        Ok(id) => {
            marker.hold(&id);
            Ok(Created::Yes(Some(id)))
        }
        Err(e) => {
            tracing::warn!("cannot record the lock {}: {e}", dir.display());
            Ok(Created::Yes(None))
        }
    }
}

/// The staging way; `None` when the no-replace rename is not supported here.
fn create_renamed(dir: &Path, marker: &mut Marker) -> std::io::Result<Option<Created>> {
    let staging = marker.staging(dir);
    match make_dir(&staging) {
        Ok(()) => {}
        // Left by an attempt of ours that failed half-way: it is ours to reuse.
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let id = match identity_after_marking(&staging) {
        Ok(id) => id,
        Err(e) => {
            let _ = std::fs::remove_dir(&staging);
            return Err(e);
        }
    };
    marker.hold(&id);
    match rename_no_replace(&staging, dir) {
        Ok(()) => Ok(Some(Created::Yes(Some(id)))),
        Err(e) => {
            marker.write_free();
            let _ = std::fs::remove_dir(&staging);
            match e.raw_os_error() {
                Some(libc::EEXIST) | Some(libc::ENOTEMPTY) => Ok(Some(Created::Exists)),
                Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::ENOTSUP) => {
                    tracing::info!(
                        "no-replace rename refused in {} ({e}); locks are made with mkdir",
                        dir.parent().unwrap_or(dir).display()
                    );
                    Ok(None)
                }
                _ => Err(e),
            }
        }
    }
}

#[cfg(target_os = "linux")]
pub(crate) fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two valid NUL-terminated paths; renameat2 does not keep them.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(target_vendor = "apple")]
pub(crate) fn rename_no_replace(from: &Path, to: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: two valid NUL-terminated paths; renamex_np does not keep them.
    let r = unsafe { libc::renamex_np(from.as_ptr(), to.as_ptr(), libc::RENAME_EXCL) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(any(target_os = "linux", target_vendor = "apple")))]
pub(crate) fn rename_no_replace(_from: &Path, _to: &Path) -> std::io::Result<()> {
    Err(std::io::Error::from_raw_os_error(libc::ENOSYS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rename_keeps_the_marked_mtime_and_never_replaces() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a.json.lock");
        let mut marker = Marker::create(&dir).unwrap();
        let Created::Yes(Some(id)) = create(&dir, Some(&mut marker)).unwrap() else {
            panic!("not created with an identity");
        };
        assert_eq!(Identity::of(&std::fs::symlink_metadata(&dir).unwrap()), id);
        assert!(!marker.staging(&dir).exists());
        assert_eq!(marker.path(), super::super::holder::marker_for(&dir, &id));
        let mut other = Marker::create(&dir).unwrap();
        assert!(matches!(
            create(&dir, Some(&mut other)).unwrap(),
            Created::Exists
        ));
        assert!(!other.staging(&dir).exists());
        assert_eq!(Identity::of(&std::fs::symlink_metadata(&dir).unwrap()), id);
    }
}
