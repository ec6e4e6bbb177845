//! The git questions worktree handling asks: run one git command, list a repository's
//! worktrees, does a branch exist, how many files are uncommitted in a worktree, how many
//! commits exist only on a branch (reachable from no other local branch and not from `HEAD` of
//! the checkout the lead works in). Each question is asked where the worktree is ([`Place`]).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::place::Place;
use crate::backend::BackendError;

/// Runs `git -C cwd args…`; stdout trimmed, or the command and its stderr as the error.
pub fn git(cwd: &Path, args: &[&str]) -> Result<String, BackendError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| BackendError::Spawn {
            program: "git".into(),
            detail: e.to_string(),
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(BackendError::Command {
            command: format!("git {}", args.join(" ")),
            detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub path: PathBuf,
    /// The branch checked out (`refs/heads/` stripped), `None` when detached.
    pub branch: Option<String>,
}

/// The worktrees of the repository `cwd` belongs to; the main checkout comes first.
pub fn list(place: &dyn Place, cwd: &Path) -> Result<Vec<Listed>, BackendError> {
    let text = place.git(cwd, &["worktree", "list", "--porcelain"])?;
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let mut path = None;
        let mut branch = None;
        for line in block.lines() {
            if let Some(p) = line.strip_prefix("worktree ") {
                path = Some(PathBuf::from(p));
            } else if let Some(b) = line.strip_prefix("branch ") {
                branch = Some(b.strip_prefix("refs/heads/").unwrap_or(b).to_string());
            }
        }
        if let Some(path) = path {
            out.push(Listed { path, branch });
        }
    }
    Ok(out)
}

/// Does the local branch exist?
pub fn branch_exists(place: &dyn Place, repo: &Path, branch: &str) -> bool {
    place
        .git(
            repo,
            &[
                "show-ref",
                "--verify",
                "--quiet",
                &format!("refs/heads/{branch}"),
            ],
        )
        .is_ok()
}

/// Files with changes not committed in the worktree at `path`: modified, staged, deleted and
/// untracked files (ignored files do not count).
pub fn uncommitted(place: &dyn Place, path: &Path) -> Result<usize, BackendError> {
    let text = place.git(path, &["status", "--porcelain", "--untracked-files=all"])?;
    Ok(text.lines().filter(|l| !l.trim().is_empty()).count())
}

/// Commits reachable from `tips` that are on no local branch but `own_branch` and not reachable
/// from `HEAD` of `repo` (the checkout the lead works in): work that only exists there.
pub fn unmerged(
    place: &dyn Place,
    repo: &Path,
    tips: &[String],
    own_branch: &str,
) -> Result<usize, BackendError> {
    if tips.is_empty() {
        return Ok(0);
    }
    // With `--branches`, `--exclude` patterns are matched without `refs/heads/`.
    let exclude = format!("--exclude={own_branch}");
    let mut args = vec!["rev-list", "--count"];
    args.extend(tips.iter().map(String::as_str));
    args.extend(["--not", &exclude, "--branches", "HEAD"]);
    let text = place.git(repo, &args)?;
    text.parse().map_err(|_| BackendError::Command {
        command: "git rev-list --count".into(),
        detail: format!("unexpected output `{text}`"),
    })
}

/// The commit `rev` names in `cwd`, if any.
pub fn commit_of(place: &dyn Place, cwd: &Path, rev: &str) -> Option<String> {
    place
        .git(
            cwd,
            &[
                "rev-parse",
                "--verify",
                "--quiet",
                &format!("{rev}^{{commit}}"),
            ],
        )
        .ok()
}
