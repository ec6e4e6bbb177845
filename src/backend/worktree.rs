//! Git worktrees for teammates: `/spawn --worktree` gives a teammate its own worktree and branch
//! beside the repository; they are removed with `git worktree remove --force` when the team is
//! deleted.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::BackendError;

/// A teammate's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
}

fn git(cwd: &Path, args: &[&str]) -> Result<String, BackendError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(args)
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

/// Creates `<repo>/../<repo-name>-worktrees/<team>-<name>` on a new branch `teamlead/<team>/<name>`.
pub fn create(repo_cwd: &Path, team: &str, name: &str) -> Result<Worktree, BackendError> {
    let top = PathBuf::from(
        git(repo_cwd, &["rev-parse", "--show-toplevel"]).map_err(|_| {
            BackendError::Unavailable(format!(
                "{} is not inside a git repository: --worktree needs one",
                repo_cwd.display()
            ))
        })?,
    );
    let repo_name = top
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repo".to_string());
    let parent = top.parent().unwrap_or(&top);
    let path = parent
        .join(format!("{repo_name}-worktrees"))
        .join(format!("{team}-{name}"));
    let branch = format!("teamlead/{team}/{name}");
    let path_str = path.to_string_lossy().into_owned();
    git(&top, &["worktree", "add", "-b", &branch, &path_str])?;
    Ok(Worktree { path, branch })
}

/// `git worktree remove --force <path>` (run from the worktree's repository).
pub fn remove(path: &Path) -> Result<(), BackendError> {
    if !path.exists() {
        return Ok(());
    }
    git(
        path,
        &["worktree", "remove", "--force", &path.to_string_lossy()],
    )
    .map(|_| ())
}
