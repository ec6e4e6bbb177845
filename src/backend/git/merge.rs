//! Merging a teammate's branch into the lead's: whether it merges cleanly and whether anything
//! of it is left to merge (`git merge-tree --write-tree`: the tree a merge would make, compared
//! with the lead's; nothing is touched to find out), the merge itself with typed failures (what
//! happened, never git's command line), and removing a worktree whose work is in the lead's
//! branch.

use std::path::Path;

use super::{BackendError, git_ok, rev, run};
use crate::backend::worktree::{Place, Worktree};

/// How `theirs` would merge into `ours` (`git merge-tree --write-tree`: nothing is touched).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeCheck {
    /// Commits of `theirs` not in `ours`.
    pub ahead: usize,
    /// Commits of `ours` not in `theirs`.
    pub behind: usize,
    /// The files that would conflict (empty: it merges cleanly).
    pub conflicts: Vec<String>,
    /// Every change of `theirs` is in `ours` already: a merge would change no file (a branch
    /// merged before as a squash or a rebase, whose own commits stay unmerged by name).
    pub already_in: bool,
}

impl MergeCheck {
    /// Nothing is left to merge: no commit ahead, or none whose change `ours` lacks.
    pub fn nothing_left(&self) -> bool {
        self.conflicts.is_empty() && (self.ahead == 0 || self.already_in)
    }
}

/// What `git merge-tree --write-tree a b` says: the tree the merge makes and the conflicts.
struct MergeTree {
    tree: Option<String>,
    conflicts: Vec<String>,
}

fn merge_tree(repo: &Path, a: &str, b: &str) -> Result<MergeTree, BackendError> {
    let out = run(
        repo,
        &[
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            a,
            b,
        ],
    )?;
    let mut lines = out.stdout.lines();
    let tree = lines.next().map(|l| l.trim().to_string());
    match out.code {
        0 => Ok(MergeTree {
            tree,
            conflicts: Vec::new(),
        }),
        1 => {
            let mut files: Vec<String> = lines
                .take_while(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            files.dedup();
            Ok(MergeTree {
                tree: None,
                conflicts: files,
            })
        }
        _ => Err(BackendError::Command {
            command: format!("git merge-tree --write-tree {a} {b}"),
            detail: out.stderr,
        }),
    }
}

/// The tree of the commit `rev` names.
fn tree_of(repo: &Path, rev: &str) -> Option<String> {
    git_ok(
        repo,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{tree}}"),
        ],
    )
    .ok()
    .map(|t| t.trim().to_string())
    .filter(|t| !t.is_empty())
}

/// Whether `theirs` merges cleanly into `ours` in the repository at `repo`, and whether any of
/// its changes is left to merge.
pub fn merge_check(repo: &Path, ours: &str, theirs: &str) -> Result<MergeCheck, BackendError> {
    let counts = git_ok(
        repo,
        &[
            "rev-list",
            "--left-right",
            "--count",
            &format!("{ours}...{theirs}"),
        ],
    )?;
    let mut it = counts
        .split_whitespace()
        .map(|n| n.parse::<usize>().unwrap_or(0));
    let behind = it.next().unwrap_or(0);
    let ahead = it.next().unwrap_or(0);
    let merged = merge_tree(repo, ours, theirs)?;
    let ours_tree = tree_of(repo, ours);
    let already_in =
        merged.conflicts.is_empty() && merged.tree.is_some() && merged.tree == ours_tree;
    Ok(MergeCheck {
        ahead,
        behind,
        conflicts: merged.conflicts,
        already_in,
    })
}

/// The files a merge of `a` and `b` would conflict in (`git merge-tree --write-tree`).
pub fn conflicts(repo: &Path, a: &str, b: &str) -> Result<Vec<String>, BackendError> {
    merge_tree(repo, a, b).map(|m| m.conflicts)
}

/// The files `branch` itself changed since it left `lead` (`git diff lead...branch`: from
/// their merge base, so what `lead` changed meanwhile is not counted).
pub fn own_changes(
    repo: &Path,
    lead: &str,
    branch: &str,
) -> Result<std::collections::HashSet<String>, BackendError> {
    let text = git_ok(
        repo,
        &[
            "diff",
            "--no-ext-diff",
            "--no-renames",
            "--name-only",
            "-z",
            &format!("{lead}...{branch}"),
        ],
    )?;
    Ok(text
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect())
}

/// How a teammate's branch is brought into the lead's branch: the one place that names the
/// styles (`/merge`'s options, the words of the lead's sentences, the git steps).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum MergeHow {
    /// One new commit with all of its changes.
    Squash,
    /// A merge commit (`--no-ff`).
    Merge,
    /// Its commits replayed one by one on top (linear history).
    Rebase,
}

impl MergeHow {
    /// Every style, in the order `/merge`'s usage names them.
    pub const ALL: [MergeHow; 3] = [MergeHow::Squash, MergeHow::Merge, MergeHow::Rebase];

    /// Its `/merge` option: `--squash`, `--merge`, `--rebase`.
    pub fn option(self) -> &'static str {
        match self {
            MergeHow::Squash => "--squash",
            MergeHow::Merge => "--merge",
            MergeHow::Rebase => "--rebase",
        }
    }

    /// The style an option names.
    pub fn from_option(option: &str) -> Option<MergeHow> {
        MergeHow::ALL.into_iter().find(|h| h.option() == option)
    }

    /// What doing it is called in a sentence: `squash-merge`, `merge`, `rebase`.
    pub fn verb(self) -> &'static str {
        match self {
            MergeHow::Squash => "squash-merge",
            MergeHow::Merge => "merge",
            MergeHow::Rebase => "rebase",
        }
    }
}

/// Why [`merge`] did not merge (the lead's checkout is as it was in every case).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergeFailure {
    /// The merge would change nothing: its changes are in the lead's branch already.
    #[error("its changes are already in the lead's branch: there was nothing to commit")]
    NothingToCommit,
    /// It stopped on a conflict in these files (and was undone).
    #[error("it stopped on a conflict in {}", .0.join(", "))]
    Conflict(Vec<String>),
    /// Another git command holds a lock of the repository.
    #[error(
        "another git command is using the repository (a .lock file is there): try again when it is done"
    )]
    Locked,
    /// Git refused a step: which one, and why in a few words.
    #[error("git refused to {step}{}", if .why.is_empty() { String::new() } else { format!(" ({})", .why) })]
    Refused { step: &'static str, why: String },
    /// Git could not be run at all.
    #[error("{0}")]
    Backend(#[from] BackendError),
}

/// What a failed step of a merge was, from git's stderr: a lock, a conflict, or its reason in
/// one line (without `fatal:`/`error:` and the hints).
fn failure(repo: &Path, step: &'static str, stderr: &str) -> MergeFailure {
    if stderr.contains(".lock") && (stderr.contains("File exists") || stderr.contains("lock")) {
        return MergeFailure::Locked;
    }
    let conflicted: Vec<String> = run(repo, &["diff", "--name-only", "--diff-filter=U"])
        .map(|o| o.stdout.lines().map(str::to_string).collect())
        .unwrap_or_default();
    if !conflicted.is_empty() {
        return MergeFailure::Conflict(conflicted);
    }
    let why = stderr
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("hint:"))
        .unwrap_or("")
        .trim_start_matches("fatal: ")
        .trim_start_matches("error: ")
        .trim_end_matches('.')
        .to_string();
    MergeFailure::Refused { step, why }
}

/// Runs one step of a merge; on failure, `undo` runs and the failure says what happened.
fn step(
    repo: &Path,
    name: &'static str,
    args: &[&str],
    undo: &[&str],
) -> Result<String, MergeFailure> {
    let out = run(repo, args)?;
    if out.code == 0 {
        return Ok(out.stdout);
    }
    let failed = failure(repo, name, &format!("{}\n{}", out.stderr, out.stdout));
    if !undo.is_empty() {
        let _ = run(repo, undo);
    }
    Err(failed)
}

/// Brings `branch` into the branch checked out in `repo` (the caller checked that it applies
/// cleanly and that `repo` has no uncommitted change). Whatever fails is undone, leaving
/// `repo` as it was; a merge that would change nothing is [`MergeFailure::NothingToCommit`].
pub fn merge(repo: &Path, branch: &str, how: MergeHow, message: &str) -> Result<(), MergeFailure> {
    let head = rev(repo, "HEAD");
    let head_tree = tree_of(repo, "HEAD");
    match how {
        MergeHow::Squash => {
            step(
                repo,
                "bring its changes in",
                &["merge", "--squash", "--quiet", branch],
                &["reset", "--quiet", "--merge"],
            )?;
            let staged = run(repo, &["diff", "--cached", "--quiet"])?.code != 0;
            if !staged {
                let _ = run(repo, &["reset", "--quiet", "--merge"]);
                return Err(MergeFailure::NothingToCommit);
            }
            step(
                repo,
                "make the squash commit",
                &["commit", "--quiet", "--no-verify", "-m", message],
                &["reset", "--quiet", "--merge"],
            )?;
        }
        MergeHow::Merge => {
            step(
                repo,
                "make the merge commit",
                &[
                    "merge",
                    "--no-ff",
                    "--no-verify",
                    "--quiet",
                    "-m",
                    message,
                    branch,
                ],
                &["merge", "--abort"],
            )?;
        }
        MergeHow::Rebase => {
            let range = format!("HEAD..{branch}");
            let picks = git_ok(repo, &["rev-list", "--reverse", "--no-merges", &range])?;
            let picks: Vec<&str> = picks.lines().filter(|l| !l.is_empty()).collect();
            if picks.is_empty() {
                return Err(MergeFailure::NothingToCommit);
            }
            let mut args = vec!["cherry-pick", "--allow-empty"];
            args.extend(picks);
            step(
                repo,
                "replay its commits",
                &args,
                &["cherry-pick", "--abort"],
            )?;
        }
    }
    // A merge commit or replay that changed no file is no merge at all: undone.
    if let Some(head) = head
        && head_tree.is_some()
        && tree_of(repo, "HEAD") == head_tree
    {
        let _ = run(repo, &["reset", "--quiet", "--keep", &head]);
        return Err(MergeFailure::NothingToCommit);
    }
    Ok(())
}

/// Removes `worktree` and its branch after its work was merged, where it is (`place`: the
/// lead's machine or its host): only when it has no uncommitted file and its branch still
/// points at `merged_tip` (nothing new since).
pub fn retire_merged(
    place: &dyn Place,
    worktree: &Worktree,
    merged_tip: &str,
) -> Result<Option<String>, BackendError> {
    let (repo, path, branch) = (&worktree.repo, &worktree.path, &worktree.branch);
    let there = place.exists(path)?;
    if there {
        let left = place.git(path, &["status", "--porcelain", "--untracked-files=all"])?;
        let left = left.lines().filter(|l| !l.trim().is_empty()).count();
        if left > 0 {
            return Ok(Some(format!("{left} uncommitted file(s)")));
        }
    }
    let tip = crate::backend::worktree::git::commit_of(place, repo, branch);
    if tip.as_deref().map(str::trim) != Some(merged_tip) {
        return Ok(Some("commits made after the merge".to_string()));
    }
    if there {
        place.git(repo, &["worktree", "remove", &path.to_string_lossy()])?;
    } else {
        let _ = place.git(repo, &["worktree", "prune"]);
    }
    if branch.starts_with("teamlead/") {
        place.git(repo, &["branch", "-D", "--quiet", branch])?;
    }
    if let Some(parent) = path.parent() {
        place.remove_empty_dir(parent);
    }
    Ok(None)
}
