//! The store's error type: one variant per way a file operation can fail, each naming the
//! path (or the thing) it is about in a one-line message.

use std::path::{Path, PathBuf};

use super::safe_file::FileKind;
use crate::names::NameError;

/// Everything the store layer can fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// An operating-system error on `path`.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not what the protocol says it is (after torn-read retries).
    #[error("{}: {detail}", path.display())]
    Parse { path: PathBuf, detail: String },
    /// The lock directory `<path>.lock/` stayed held until the deadline.
    #[error("{}: still locked by another process (lock directory {}.lock/) after the timeout", path.display(), path.display())]
    LockTimeout { path: PathBuf },
    /// Something other than a regular file (a directory, a FIFO, a socket, …) where a file
    /// should be. It is reported, never read, replaced or removed.
    #[error("{} is {}, not a regular file", path.display(), found.describe())]
    NotAFile { path: PathBuf, found: FileKind },
    /// Something other than a directory where a directory should be.
    #[error("{} is {}, not a directory", path.display(), found.describe())]
    NotADirectory { path: PathBuf, found: FileKind },
    /// A symbolic link below the home root: the store follows none (the root itself may be
    /// one). `outside` is true when the link resolves outside the home.
    #[error("{}", symlink_message(path, target.as_deref(), *outside))]
    Symlink {
        path: PathBuf,
        target: Option<PathBuf>,
        outside: bool,
    },
    /// A path that is not below the home root at all.
    #[error("{} is outside the home {}", path.display(), root.display())]
    NotInHome { path: PathBuf, root: PathBuf },
    /// `<target>.lock` exists but is not a directory, so the mkdir lock can never be taken.
    #[error("{} is {} where a lock directory should be; nothing can take this lock until it is removed", path.display(), found.describe())]
    LockNotADirectory { path: PathBuf, found: FileKind },
    /// No new task id is left (the high-water mark or a task file name is at `u64::MAX`).
    #[error("{}: task ids are exhausted (the highest id used is {highest}); no new task can be created", dir.display())]
    TaskIdsExhausted { dir: PathBuf, highest: String },
    /// A team, member or task name that cannot be used to build a path.
    #[error(transparent)]
    BadName(#[from] NameError),
    /// A team, member, task or file that does not exist.
    #[error("{what} not found")]
    NotFound { what: String },
    /// Something that must not exist yet already does.
    #[error("{what} already exists")]
    AlreadyExists { what: String },
    /// The lead of a team is already running in another process.
    #[error("team `{team}` already has a running lead{}", pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    LeadAlive { team: String, pid: Option<u32> },
    /// No home directory could be determined.
    #[error("cannot find the home directory: pass --home or set TEAMLEAD_HOME")]
    NoHome,
}

/// The store's result type.
pub type Result<T> = std::result::Result<T, StoreError>;

impl StoreError {
    /// An I/O error on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> StoreError {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }

    /// A parse error on `path`.
    pub fn parse(path: impl Into<PathBuf>, detail: impl ToString) -> StoreError {
        StoreError::Parse {
            path: path.into(),
            detail: detail.to_string(),
        }
    }

    /// A missing thing.
    pub fn not_found(what: impl Into<String>) -> StoreError {
        StoreError::NotFound { what: what.into() }
    }
}

fn symlink_message(path: &Path, target: Option<&Path>, outside: bool) -> String {
    match (target, outside) {
        (Some(t), true) => format!(
            "{} is a symbolic link to {}, outside the home; refusing to follow it",
            path.display(),
            t.display()
        ),
        (Some(t), false) => format!(
            "{} is a symbolic link (to {}); the store follows no link below the home",
            path.display(),
            t.display()
        ),
        (None, _) => format!(
            "{} is a symbolic link; refusing to follow it",
            path.display()
        ),
    }
}

/// `map_err` helper: `.map_err(io_at(&path))`.
pub(crate) fn io_at(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::io(path, e)
}
