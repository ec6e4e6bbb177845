//! The store's error type: one variant per way a file operation can fail, each naming the
//! path (or the thing) it is about in a one-line message.

use std::path::PathBuf;

use crate::protocol::names::NameError;

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
    /// A directory (or other non-file) where a file should be.
    #[error("{} is a directory (or not a regular file) where a file should be", path.display())]
    NotAFile { path: PathBuf },
    /// A symbolic link where teamlead will only read or write a real file or directory.
    #[error("{} is a symbolic link; refusing to follow it", path.display())]
    Symlink { path: PathBuf },
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

/// `map_err` helper: `.map_err(io_at(&path))`.
pub(crate) fn io_at(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::io(path, e)
}
