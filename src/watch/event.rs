//! The typed change events the watcher reports, and the name rules that decide what is worth
//! reporting: temp files of atomic writers (`<file>.tmp.<hex>`) never are, lock directories
//! (`<file>.lock/`) are reported as their own kinds.

use std::path::{Path, PathBuf};

/// What happened to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// A file or directory appeared (created, or renamed into place for the first time).
    Created,
    /// A file's content changed (written in place, or replaced by an atomic rename).
    Modified,
    /// A file or directory disappeared.
    Removed,
    /// A lock directory `<file>.lock/` appeared: someone took the lock on `<file>`.
    LockAcquired,
    /// A lock directory disappeared: the lock on `<file>` was released.
    LockReleased,
}

impl ChangeKind {
    /// A short lower-case label (`created`, `modified`, …).
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
            ChangeKind::LockAcquired => "lock acquired",
            ChangeKind::LockReleased => "lock released",
        }
    }

    /// Is this a lock-directory event?
    pub fn is_lock(self) -> bool {
        matches!(self, ChangeKind::LockAcquired | ChangeKind::LockReleased)
    }
}

/// One change under a watched directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeEvent {
    /// The path that changed (under the watched home).
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// Whether the path is (or was) a directory.
    pub is_dir: bool,
}

impl ChangeEvent {
    pub fn new(path: impl Into<PathBuf>, kind: ChangeKind, is_dir: bool) -> ChangeEvent {
        ChangeEvent {
            path: path.into(),
            kind,
            is_dir,
        }
    }

    /// The last component of the path, when it is valid UTF-8.
    pub fn file_name(&self) -> Option<&str> {
        self.path.file_name().and_then(|n| n.to_str())
    }

    /// For a lock event, the file the lock protects (`config.json.lock` → `config.json`).
    pub fn lock_target(&self) -> Option<PathBuf> {
        if !self.kind.is_lock() {
            return None;
        }
        let name = self.file_name()?;
        let target = name.strip_suffix(".lock")?;
        Some(self.path.with_file_name(target))
    }
}

/// A temp file of an atomic writer (`<file>.tmp.<token>`): never reported.
pub fn is_temp_name(name: &str) -> bool {
    name.contains(".tmp.")
}

/// A name a lock directory has (`<something>.lock`, including the task list's `.lock.lock`).
/// Only directories with such a name are locks: `tasks/<team>/.lock` is a plain file.
pub fn is_lock_name(name: &str) -> bool {
    name.len() > ".lock".len() && name.ends_with(".lock")
}

/// Is the path's last component a temp file name?
pub fn is_temp_path(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_temp_name)
}

/// Is a directory at `path` a lock directory?
pub fn is_lock_dir_path(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(is_lock_name)
}

/// The kind to report for a path that appeared.
pub(crate) fn appeared_kind(path: &Path, is_dir: bool) -> ChangeKind {
    if is_dir && is_lock_dir_path(path) {
        ChangeKind::LockAcquired
    } else {
        ChangeKind::Created
    }
}

/// The kind to report for a path that disappeared.
pub(crate) fn vanished_kind(path: &Path, is_dir: bool) -> ChangeKind {
    if is_dir && is_lock_dir_path(path) {
        ChangeKind::LockReleased
    } else {
        ChangeKind::Removed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(is_temp_name("config.json.tmp.1a2b3c4d"));
        assert!(!is_temp_name("config.json"));
        assert!(is_lock_name("config.json.lock"));
        assert!(is_lock_name(".lock.lock"));
        assert!(!is_lock_name(".lock"));
        assert_eq!(
            appeared_kind(Path::new("/h/t/.lock"), false),
            ChangeKind::Created
        );
        assert_eq!(
            appeared_kind(Path::new("/h/t/lead.lock"), false),
            ChangeKind::Created
        );
        let e = ChangeEvent::new("/h/t/config.json.lock", ChangeKind::LockAcquired, true);
        assert_eq!(e.lock_target(), Some(PathBuf::from("/h/t/config.json")));
    }
}
