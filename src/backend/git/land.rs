//! `/merge`'s git work as one call with a typed report ([`land`]): the checks (the lead's
//! checkout clean, the branch free of conflicts, anything left to merge), the merge in the
//! chosen style, and, when asked, removing the teammate's worktree and branch afterwards. The
//! lead turns a [`MergeReport`] or a [`LandRefusal`] into sentences for people; nothing here
//! makes one.

use std::path::Path;

use super::merge::{MergeFailure, MergeHow, merge, merge_check, retire_merged};
use super::{BackendError, commits, current_branch, rev, uncommitted};
use crate::backend::worktree::{Place, Worktree};

/// What to merge, and how.
#[derive(Clone)]
pub struct LandRequest<'a> {
    /// The lead's checkout.
    pub repo: &'a Path,
    /// The teammate's worktree (path, branch, repository), where `place` is.
    pub worktree: &'a Worktree,
    /// Where the worktree is: the lead's machine, or the teammate's host.
    pub place: &'a dyn Place,
    /// What names the teammate's branch in the lead's repository: the branch itself, or the
    /// ref it was fetched into from its host.
    pub tip: &'a str,
    /// Who did the work (the squash commit's message names them).
    pub who: &'a str,
    pub how: MergeHow,
    /// Only say whether it would apply.
    pub dry_run: bool,
    /// Remove the worktree and the branch afterwards (never when they hold anything new).
    pub retire: bool,
}

/// Why nothing was merged. In every case the lead's checkout is as it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LandRefusal {
    /// The lead's checkout has uncommitted changes in these files.
    Dirty(Vec<String>),
    /// The branch conflicts with the lead's branch in these files.
    Conflicts {
        lead_branch: String,
        files: Vec<String>,
    },
    /// Git refused a step of the merge (and it was undone).
    Failed(MergeFailure),
    /// The repository could not be read.
    Git(String),
}

impl From<BackendError> for LandRefusal {
    fn from(e: BackendError) -> LandRefusal {
        LandRefusal::Git(e.to_string())
    }
}

/// What came of the merge itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    /// Nothing to merge: the branch has no commit the lead's lacks (`ahead == 0`), or the
    /// changes of its commits are in the lead's branch already (merged before, as a squash or
    /// a rebase). `found_by_merging`: the checks did not see it, the merge found nothing to
    /// commit.
    NothingLeft { found_by_merging: bool },
    /// A dry run: it would apply cleanly.
    WouldApply,
    /// Merged: the lead's branch is now at `head`.
    Merged { head: String },
}

/// What became of the worktree when retiring was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retired {
    /// The worktree and the branch are gone.
    Removed,
    /// Kept: it holds this (uncommitted files, commits made after the merge).
    Kept(String),
    /// Kept: removing it failed.
    Failed(String),
}

/// What `/merge` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeReport {
    pub branch: String,
    /// The lead's branch.
    pub lead_branch: String,
    /// Commits of the branch the lead's lacks, and the other way round.
    pub ahead: usize,
    pub behind: usize,
    /// Uncommitted files in the teammate's worktree: not part of the merge.
    pub left_out: usize,
    /// The branch's tip that was looked at (merged, when it was).
    pub tip: String,
    pub landing: Landing,
    /// When retiring was asked and this was no dry run.
    pub retired: Option<Retired>,
}

/// Checks, then merges `request.branch` into the lead's checkout (or says it would, on a dry
/// run), then retires the worktree when asked. Blocking: run it off the controller's loop.
pub fn land(request: &LandRequest<'_>) -> Result<MergeReport, LandRefusal> {
    let (repo, branch) = (request.repo, request.tip);
    let shown = request.worktree.branch.as_str();
    let dirty = uncommitted(repo, false)?;
    if !dirty.is_empty() {
        return Err(LandRefusal::Dirty(dirty));
    }
    let check = merge_check(repo, "HEAD", branch)?;
    if !check.conflicts.is_empty() {
        return Err(LandRefusal::Conflicts {
            lead_branch: current_branch(repo),
            files: check.conflicts,
        });
    }
    let mut report = MergeReport {
        branch: shown.to_string(),
        lead_branch: current_branch(repo),
        ahead: check.ahead,
        behind: check.behind,
        left_out: crate::backend::worktree::git::uncommitted(request.place, &request.worktree.path)
            .unwrap_or(0),
        tip: rev(repo, branch).unwrap_or_default(),
        landing: Landing::NothingLeft {
            found_by_merging: false,
        },
        retired: None,
    };
    if check.nothing_left() {
        return Ok(retire_if_asked(request, report));
    }
    if request.dry_run {
        report.landing = Landing::WouldApply;
        return Ok(report);
    }
    let subjects = commits(repo, "HEAD", branch)
        .map(|cs| {
            cs.iter()
                .map(|c| format!("- {}", c.subject))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let message = format!("Work of @{} ({shown})\n\n{subjects}\n", request.who);
    match merge(repo, branch, request.how, &message) {
        Ok(()) => {
            report.landing = Landing::Merged {
                head: rev(repo, "HEAD").unwrap_or_default(),
            };
        }
        Err(MergeFailure::NothingToCommit) => {
            report.landing = Landing::NothingLeft {
                found_by_merging: true,
            };
        }
        Err(e) => return Err(LandRefusal::Failed(e)),
    }
    Ok(retire_if_asked(request, report))
}

/// Retires the worktree when asked and this is no dry run.
fn retire_if_asked(request: &LandRequest<'_>, mut report: MergeReport) -> MergeReport {
    if request.retire && !request.dry_run {
        report.retired = Some(
            match retire_merged(request.place, request.worktree, &report.tip) {
                Ok(None) => Retired::Removed,
                Ok(Some(why)) => Retired::Kept(why),
                Err(e) => Retired::Failed(e.to_string()),
            },
        );
    }
    report
}
