//! Git worktrees for teammates: `/spawn --worktree` gives a teammate its own worktree
//! `<repo>/../<repo-name>-worktrees/<team>-<name>` on branch `teamlead/<team>/<name>`.
//!
//! Nothing here ever destroys work. A worktree is *clean* when it holds no uncommitted file
//! (untracked included, ignored excluded) and its branch no unmerged commit (one reachable from
//! no other local branch and not from `HEAD` of the lead's checkout). [`retire`] (at `/quit`,
//! `clean`, a crash) removes a clean worktree with its branch and keeps any other, saying what
//! it holds. [`prepare`] (at `/spawn`) reuses a clean leftover worktree of the same name,
//! replaces a leftover branch with nothing unmerged, and otherwise picks a fresh name
//! (`<name>-2`, …) and says why.
//!
//! Every function asks its questions where the worktree is (a [`Place`]: the lead's machine,
//! or a host over its ssh master, `/spawn --host --worktree`): the rules are the same. The
//! plain names work on the lead's machine; the `_in` ones take the place.

pub(crate) mod git;
pub mod place;

use std::path::{Path, PathBuf};

use super::BackendError;
use git::{branch_exists, commit_of, uncommitted, unmerged};
pub use place::{Local, Place};

/// A teammate's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// The checkout it was made from (where `git worktree` and branch commands run).
    pub repo: PathBuf,
    /// The host it is on (`None`: the lead's machine); its paths are that host's.
    pub host: Option<String>,
}

/// How [`prepare`] came by the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum How {
    /// A new worktree on a new branch.
    Created,
    /// A clean worktree a previous session left, brought to the lead's `HEAD`.
    Reused,
    /// A new worktree on a leftover branch that had nothing unmerged (reset to `HEAD`).
    Replaced,
}

/// The worktree a teammate gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prepared {
    pub worktree: Worktree,
    pub how: How,
    /// Why the teammate's own name could not be used (a leftover holding work, …).
    pub instead_because: Option<String>,
    /// The commit it starts from (the lead's `HEAD`): the base its work is reviewed against.
    pub base: String,
}

/// What a worktree still holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Work {
    pub uncommitted: usize,
    pub unmerged: usize,
}

impl Work {
    pub fn is_empty(&self) -> bool {
        self.uncommitted == 0 && self.unmerged == 0
    }
}

impl std::fmt::Display for Work {
    /// `2 uncommitted files, 1 commit not merged`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        let mut parts = Vec::new();
        if self.uncommitted > 0 {
            parts.push(format!(
                "{} uncommitted file{}",
                self.uncommitted,
                plural(self.uncommitted)
            ));
        }
        if self.unmerged > 0 {
            parts.push(format!(
                "{} commit{} not merged",
                self.unmerged,
                plural(self.unmerged)
            ));
        }
        if parts.is_empty() {
            parts.push("nothing".to_string());
        }
        f.write_str(&parts.join(", "))
    }
}

/// What [`retire`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retired {
    /// The worktree and its branch are gone.
    Removed,
    /// Kept: it holds this work.
    Kept(Work),
}

/// How many leftovers of one name [`prepare`] steps over before giving up.
const MAX_TRIES: usize = 20;

/// Gives `name` of `team` a worktree of the repository `repo_cwd` is in (see the module doc);
/// the worktrees in `in_use` (other teammates') are stepped over.
pub fn prepare(
    repo_cwd: &Path,
    team: &str,
    name: &str,
    in_use: &[PathBuf],
) -> Result<Prepared, BackendError> {
    prepare_in(&Local, repo_cwd, team, name, in_use)
}

/// [`prepare`] at `place`.
pub fn prepare_in(
    place: &dyn Place,
    repo_cwd: &Path,
    team: &str,
    name: &str,
    in_use: &[PathBuf],
) -> Result<Prepared, BackendError> {
    let top = PathBuf::from(
        place
            .git(repo_cwd, &["rev-parse", "--show-toplevel"])
            .map_err(|e| match e {
                // ssh itself failed: that is the error, not the repository.
                BackendError::Unavailable(_) => e,
                _ => BackendError::Unavailable(format!(
                    "{} is not inside a git repository: --worktree needs one",
                    place.describe(repo_cwd)
                )),
            })?,
    );
    let head = commit_of(place, &top, "HEAD").ok_or_else(|| {
        BackendError::Unavailable(format!(
            "the repository {} has no commit yet: --worktree needs one",
            place.describe(&top)
        ))
    })?;
    let repo_name = top
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_string());
    let dir = top
        .parent()
        .unwrap_or(&top)
        .join(format!("{repo_name}-worktrees"));
    // Administrative entries of worktree directories that were deleted by hand.
    let _ = place.git(&top, &["worktree", "prune"]);
    let listed = git::list(place, &top)?;
    let mut instead_because = None;
    for n in 1..=MAX_TRIES {
        let suffix = if n == 1 {
            String::new()
        } else {
            format!("-{n}")
        };
        let path = dir.join(format!("{team}-{name}{suffix}"));
        let branch = format!("teamlead/{team}/{name}{suffix}");
        let worktree = Worktree {
            path: path.clone(),
            branch: branch.clone(),
            repo: top.clone(),
            host: place.host().map(str::to_string),
        };
        let done = |how| Prepared {
            worktree: worktree.clone(),
            how,
            instead_because: instead_because.clone(),
            base: head.clone(),
        };
        let shown = place.describe(&path);
        let refused = match listed.iter().find(|l| place.same_path(&l.path, &path)) {
            _ if in_use.iter().any(|u| place.same_path(u, &path)) => {
                format!("{shown}, which another teammate works in")
            }
            Some(entry) if entry.branch.as_deref() == Some(branch.as_str()) => {
                let work = work_in(place, &worktree)?;
                if work.is_empty() {
                    place.git(&path, &["reset", "--quiet", "--hard", &head])?;
                    return Ok(done(How::Reused));
                }
                format!("the leftover worktree {shown} (branch {branch}), which holds {work}")
            }
            Some(_) => format!("{shown}, which is a worktree on another branch"),
            None if place.exists(&path)? => {
                format!("{shown}, which is in the way (not a worktree)")
            }
            None if branch_exists(place, &top, &branch) => {
                if let Some(other) = listed
                    .iter()
                    .find(|l| l.branch.as_deref() == Some(branch.as_str()))
                {
                    format!(
                        "branch {branch}, which is checked out in {}",
                        place.describe(&other.path)
                    )
                } else {
                    let commits = unmerged(place, &top, std::slice::from_ref(&branch), &branch)?;
                    if commits == 0 {
                        let p = path.to_string_lossy();
                        place.git(&top, &["worktree", "add", "-B", &branch, &p, &head])?;
                        return Ok(done(How::Replaced));
                    }
                    let work = Work {
                        uncommitted: 0,
                        unmerged: commits,
                    };
                    format!("the leftover branch {branch}, which holds {work}")
                }
            }
            None => {
                let p = path.to_string_lossy();
                place.git(&top, &["worktree", "add", "-b", &branch, &p, &head])?;
                return Ok(done(How::Created));
            }
        };
        instead_because.get_or_insert(refused);
    }
    Err(BackendError::Unavailable(format!(
        "{MAX_TRIES} leftover worktrees or branches of {name} hold work ({}): remove some first",
        instead_because.unwrap_or_default()
    )))
}

/// What `worktree` holds: uncommitted files, and commits only its branch (or its `HEAD`, if
/// the teammate switched branches) has.
fn work_in(place: &dyn Place, worktree: &Worktree) -> Result<Work, BackendError> {
    let mut tips = Vec::new();
    if branch_exists(place, &worktree.repo, &worktree.branch) {
        tips.push(worktree.branch.clone());
    }
    let exists = place.exists(&worktree.path)?;
    if exists && let Some(head) = commit_of(place, &worktree.path, "HEAD") {
        tips.push(head);
    }
    Ok(Work {
        uncommitted: if exists {
            uncommitted(place, &worktree.path)?
        } else {
            0
        },
        unmerged: unmerged(place, &worktree.repo, &tips, &worktree.branch)?,
    })
}

/// Removes a teammate's worktree and its branch when they hold no work; keeps them otherwise.
pub fn retire(worktree: &Worktree) -> Result<Retired, BackendError> {
    retire_in(&Local, worktree)
}

/// [`retire`] at `place`.
pub fn retire_in(place: &dyn Place, worktree: &Worktree) -> Result<Retired, BackendError> {
    if !place.exists(&worktree.repo)? {
        return Ok(Retired::Removed);
    }
    let work = work_in(place, worktree)?;
    if !work.is_empty() {
        return Ok(Retired::Kept(work));
    }
    if place.exists(&worktree.path)? {
        let p = worktree.path.to_string_lossy();
        place.git(&worktree.repo, &["worktree", "remove", &p])?;
    } else {
        let _ = place.git(&worktree.repo, &["worktree", "prune"]);
    }
    // Only branches teamlead made are deleted (a teammate may have checked out another).
    if worktree.branch.starts_with("teamlead/")
        && branch_exists(place, &worktree.repo, &worktree.branch)
    {
        place.git(
            &worktree.repo,
            &["branch", "-D", "--quiet", &worktree.branch],
        )?;
    }
    // `<repo>-worktrees` goes when it is empty (never anything in it).
    if let Some(parent) = worktree.path.parent() {
        place.remove_empty_dir(parent);
    }
    Ok(Retired::Removed)
}

/// What a worktree holds, as `/quit` and `clean` list it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Survey {
    /// What keeps it ([`retire`] removes it when this is empty).
    pub work: Work,
    /// Commits of its branch that `HEAD` of the lead's checkout lacks (`None`: its branch is
    /// gone).
    pub ahead: Option<usize>,
}

/// What `worktree` holds (nothing is changed).
pub fn survey(worktree: &Worktree) -> Result<Survey, BackendError> {
    survey_in(&Local, worktree)
}

/// [`survey`] at `place`.
pub fn survey_in(place: &dyn Place, worktree: &Worktree) -> Result<Survey, BackendError> {
    if !place.exists(&worktree.repo)? {
        return Ok(Survey::default());
    }
    let work = work_in(place, worktree)?;
    let ahead = if branch_exists(place, &worktree.repo, &worktree.branch) {
        place
            .git(
                &worktree.repo,
                &[
                    "rev-list",
                    "--count",
                    &format!("HEAD..refs/heads/{}", worktree.branch),
                ],
            )
            .ok()
            .and_then(|n| n.parse().ok())
    } else {
        None
    };
    Ok(Survey { work, ahead })
}

/// The worktree at `path` (a member's `worktreePath`), its branch and repository asked of git;
/// `None` when the path is gone.
pub fn at_path(path: &Path) -> Result<Option<Worktree>, BackendError> {
    at_path_in(&Local, path)
}

/// [`at_path`] at `place`.
pub fn at_path_in(place: &dyn Place, path: &Path) -> Result<Option<Worktree>, BackendError> {
    if !place.exists(path)? {
        return Ok(None);
    }
    let listed = git::list(place, path)?;
    let main = listed.first().map(|l| l.path.clone());
    let Some(entry) = listed.iter().find(|l| place.same_path(&l.path, path)) else {
        return Err(BackendError::Unavailable(format!(
            "{} is not a worktree",
            place.describe(path)
        )));
    };
    let (Some(repo), Some(branch)) = (main, entry.branch.clone()) else {
        return Err(BackendError::Unavailable(format!(
            "{} has no branch checked out: left alone",
            place.describe(path)
        )));
    };
    if place.same_path(&repo, path) {
        return Err(BackendError::Unavailable(format!(
            "{} is a repository's main checkout, not a teammate's worktree",
            place.describe(path)
        )));
    }
    Ok(Some(Worktree {
        path: path.to_path_buf(),
        branch,
        repo,
        host: place.host().map(str::to_string),
    }))
}

/// [`retire`] for a worktree known only by its path (a member's `worktreePath`): its branch and
/// repository are asked of git. A path that is gone or not a worktree is left alone.
pub fn remove(path: &Path) -> Result<Retired, BackendError> {
    match at_path(path)? {
        Some(worktree) => retire(&worktree),
        None => Ok(Retired::Removed),
    }
}
