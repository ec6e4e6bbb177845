//! Where a teammate's worktree and the repository it belongs to are: on the lead's machine
//! ([`Local`]) or on a host (`backend::hosts::worktree::HostGit`, git run over the host's ssh
//! master). The worktree rules (`prepare`, `retire`, `survey`) ask their questions through a
//! [`Place`], so a worktree on a host is made and retired by the same code, with the same
//! "never delete work" rules, as a local one.

use std::path::Path;

use crate::backend::BackendError;

/// Where git runs and paths are looked at for a worktree.
pub trait Place: Send + Sync {
    /// `git -C cwd args…` there; stdout trimmed, or the command and its stderr as the error.
    fn git(&self, cwd: &Path, args: &[&str]) -> Result<String, BackendError>;
    /// Does `path` exist there? An error when it cannot be told (a host that does not
    /// answer): never read as "gone".
    fn exists(&self, path: &Path) -> Result<bool, BackendError>;
    /// Are `a` and `b` the same directory there?
    fn same_path(&self, a: &Path, b: &Path) -> bool;
    /// Removes the directory `path` when it is empty (never anything in it).
    fn remove_empty_dir(&self, path: &Path);
    /// `path` as a sentence names it: the path, and where it is when not here.
    fn describe(&self, path: &Path) -> String;
    /// The host it is on (`None`: the lead's machine).
    fn host(&self) -> Option<&str>;
}

/// The lead's own machine.
#[derive(Debug, Clone, Copy, Default)]
pub struct Local;

impl Place for Local {
    fn git(&self, cwd: &Path, args: &[&str]) -> Result<String, BackendError> {
        super::git::git(cwd, args)
    }

    fn exists(&self, path: &Path) -> Result<bool, BackendError> {
        Ok(path.exists())
    }

    fn same_path(&self, a: &Path, b: &Path) -> bool {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        canon(a) == canon(b)
    }

    fn remove_empty_dir(&self, path: &Path) {
        let _ = std::fs::remove_dir(path);
    }

    fn describe(&self, path: &Path) -> String {
        path.display().to_string()
    }

    fn host(&self) -> Option<&str> {
        None
    }
}
