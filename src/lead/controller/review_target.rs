//! What review and merge work on: a teammate's worktree and branch ([`Target`]), and where its
//! branch comes from ([`BranchFrom`]): the lead's own repository (a local worktree's branch),
//! or a host, whose branch is fetched over the host's ssh master into a ref of teamlead's own
//! (`backend::git::fetch`) first. Review, merge, the merge queue and retiring ask the target
//! and never which kind it is: one code path for both.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::review::ReviewError;
use crate::backend::git;
use crate::backend::hosts::worktree::HostGit;
use crate::backend::worktree::{self, Local, Place, Worktree};

/// Where a teammate's branch is.
#[derive(Debug, Clone)]
pub(super) enum BranchFrom {
    /// Its worktree is on the lead's machine: the branch is in the lead's repository.
    Local,
    /// Its worktree is on a host: the branch is fetched from there first.
    Host(Arc<HostGit>),
}

impl BranchFrom {
    /// Where the worktree is.
    pub fn place(&self) -> &dyn Place {
        match self {
            BranchFrom::Local => &Local,
            BranchFrom::Host(host) => host.as_ref(),
        }
    }
}

/// A teammate's worktree as review and merge need it.
#[derive(Debug, Clone)]
pub(super) struct Target {
    pub name: String,
    /// Its worktree (a path of its host, for a remote teammate).
    pub worktree: PathBuf,
    /// Its branch, when known (else asked of git).
    pub branch: Option<String>,
    /// The repository its worktree belongs to, when known (on its host; locally the lead's).
    pub home_repo: Option<PathBuf>,
    /// The commit it started from, when recorded.
    pub base: Option<String>,
    /// The lead's checkout.
    pub repo: PathBuf,
    pub from: BranchFrom,
}

impl Target {
    /// Where its worktree is.
    pub fn place(&self) -> &dyn Place {
        self.from.place()
    }

    pub fn branch(&self) -> Result<String, ReviewError> {
        if let Some(b) = &self.branch {
            return Ok(b.clone());
        }
        self.place()
            .git(&self.worktree, &["symbolic-ref", "--short", "HEAD"])
            .map(|b| b.trim().to_string())
            .map_err(|source| ReviewError::NoBranch {
                name: self.name.clone(),
                source,
            })
    }

    /// Its worktree, branch and repository where they are.
    pub fn worktree_of(&self, branch: &str) -> Result<Worktree, ReviewError> {
        let repo = match (&self.from, &self.home_repo) {
            (BranchFrom::Local, _) => self.repo.clone(),
            (BranchFrom::Host(_), Some(repo)) => repo.clone(),
            (BranchFrom::Host(_), None) => worktree::at_path_in(self.place(), &self.worktree)?
                .map(|w| w.repo)
                .ok_or_else(|| ReviewError::Gone {
                    what: self.place().describe(&self.worktree),
                })?,
        };
        Ok(Worktree {
            path: self.worktree.clone(),
            branch: branch.to_string(),
            repo,
            host: self.place().host().map(str::to_string),
        })
    }

    /// What names its branch in the lead's repository: the branch itself, or (on a host) the
    /// ref it is fetched into now (`fresh`), or was last time when there is one.
    pub fn tip(&self, branch: &str, fresh: bool) -> Result<String, ReviewError> {
        let BranchFrom::Host(host) = &self.from else {
            return Ok(branch.to_string());
        };
        let fetched = git::fetched_ref(&host.name, branch);
        if !fresh && git::rev(&self.repo, &fetched).is_some() {
            return Ok(fetched);
        }
        let w = self.worktree_of(branch)?;
        let from = git::FetchFrom {
            host: host.name.clone(),
            connection: host.connection.clone(),
            repo: w.repo.to_string_lossy().into_owned(),
            branch: branch.to_string(),
        };
        Ok(git::fetch(&self.repo, &from)?)
    }

    /// The recorded base, else where its branch (`tip`) left the lead's `HEAD`.
    pub fn base(&self, tip: &str) -> Result<String, ReviewError> {
        if let Some(b) = &self.base
            && git::rev(&self.repo, b).is_some()
        {
            return Ok(b.clone());
        }
        git::merge_base(&self.repo, "HEAD", tip).ok_or_else(|| ReviewError::NoHistory {
            branch: tip.to_string(),
        })
    }

    /// Files with uncommitted changes in its worktree (untracked included).
    pub fn uncommitted(&self) -> Result<usize, ReviewError> {
        Ok(worktree::git::uncommitted(self.place(), &self.worktree)?)
    }

    /// The files changed since `base`: in its worktree here (committed, uncommitted and
    /// untracked), or on its fetched branch (committed only: its worktree is elsewhere).
    pub fn changed(&self, base: &str, tip: &str) -> Result<Vec<git::Changed>, ReviewError> {
        let read = |e| ReviewError::Reading {
            what: format!("Reading {}'s changes", self.name),
            source: e,
        };
        match &self.from {
            BranchFrom::Local => git::changed_files(&self.worktree, base).map_err(read),
            BranchFrom::Host(_) => git::changed_between(&self.repo, base, tip).map_err(read),
        }
    }

    /// Its commits since `base`, newest first.
    pub fn commits(&self, base: &str, tip: &str) -> Result<Vec<git::Commit>, ReviewError> {
        let (dir, tip): (&Path, &str) = match &self.from {
            BranchFrom::Local => (&self.worktree, "HEAD"),
            BranchFrom::Host(_) => (&self.repo, tip),
        };
        git::commits(dir, base, tip).map_err(|e| ReviewError::Reading {
            what: format!("Reading {}'s commits", self.name),
            source: e,
        })
    }

    /// One file's unified diff since `base`.
    pub fn file_diff(&self, base: &str, tip: &str, path: &str) -> Result<String, ReviewError> {
        let diff = match &self.from {
            BranchFrom::Local => git::file_diff(&self.worktree, base, path),
            BranchFrom::Host(_) => git::file_diff_between(&self.repo, base, tip, path),
        };
        diff.map_err(|e| ReviewError::Reading {
            what: format!("The diff of {path}"),
            source: e,
        })
    }
}
