//! The git reads and writes behind review and merge (`/review`, `/merge`, `/merges`): what a
//! teammate's worktree changed since its base (committed on its branch and uncommitted), what
//! the files a teammate without a worktree wrote show in the lead's checkout, one file's
//! unified diff, its commits, whether its branch merges cleanly into the lead's checkout (`git
//! merge-tree --write-tree`: the working tree is never touched to find out), the merge itself,
//! removing a worktree whose work was merged, and the pull request of a branch ([`gh`]). Plain
//! `git` commands; the caller runs them off the controller's loop. Raw results only: the lead
//! parses them (`lead::review`).

pub mod gh;
mod land;
mod merge;
mod remote_fetch;

pub use land::{LandRefusal, LandRequest, Landing, MergeReport, Retired, land};
pub use merge::{
    MergeCheck, MergeFailure, MergeHow, conflicts, merge, merge_check, own_changes, retire_merged,
};
pub use remote_fetch::{FetchError, FetchFrom, fetch, fetched_ref};

use std::path::Path;
use std::process::Command;

use super::BackendError;

/// What one git command gave: exit code and stdout (stderr in the error of [`git_ok`]).
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `git -C cwd args…` (no pager, no colour, no prompt, paths unquoted).
pub fn run(cwd: &Path, args: &[&str]) -> Result<Output, BackendError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(["-c", "core.quotePath=false", "-c", "color.ui=false"])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        .env("GIT_EDITOR", "true")
        .output()
        .map_err(|e| BackendError::Spawn {
            program: "git".into(),
            detail: e.to_string(),
        })?;
    Ok(Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
    })
}

/// [`run`], where anything but exit 0 is an error naming the command and its stderr.
pub fn git_ok(cwd: &Path, args: &[&str]) -> Result<String, BackendError> {
    let out = run(cwd, args)?;
    if out.code == 0 {
        Ok(out.stdout)
    } else {
        Err(BackendError::Command {
            command: format!("git {}", args.join(" ")),
            detail: out.stderr,
        })
    }
}

/// One changed file: its path, `A`/`M`/`D`/`T` (or `?` untracked), lines added and removed
/// (`None` for a binary file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub path: String,
    pub status: char,
    pub counts: Option<(usize, usize)>,
}

/// The files changed in the worktree at `wt` since `base`: committed and uncommitted changes
/// of tracked files, and untracked files (ignored ones excluded), sorted by path.
pub fn changed_files(wt: &Path, base: &str) -> Result<Vec<Changed>, BackendError> {
    changed(wt, &[base], true)
}

/// The files the commits of `tip` changed since `base`, in the repository at `repo` (a
/// branch fetched from a host: its worktree is not here), sorted by path.
pub fn changed_between(repo: &Path, base: &str, tip: &str) -> Result<Vec<Changed>, BackendError> {
    changed(repo, &[base, tip], false)
}

/// `git diff REVS` in `cwd` as [`Changed`] files, with the untracked files when `untracked`.
fn changed(cwd: &Path, revs: &[&str], untracked: bool) -> Result<Vec<Changed>, BackendError> {
    let wt = cwd;
    let mut args = vec!["diff", "--no-ext-diff", "--no-renames", "--numstat", "-z"];
    args.extend_from_slice(revs);
    let numstat = git_ok(wt, &args)?;
    let mut counts = std::collections::HashMap::new();
    for record in numstat.split('\0').filter(|r| !r.is_empty()) {
        let mut parts = record.splitn(3, '\t');
        let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        counts.insert(path.to_string(), a.parse().ok().zip(r.parse().ok()));
    }
    args[3] = "--name-status";
    let status = git_ok(wt, &args)?;
    let mut out = Vec::new();
    let mut fields = status.split('\0').filter(|r| !r.is_empty());
    while let (Some(s), Some(path)) = (fields.next(), fields.next()) {
        out.push(Changed {
            path: path.to_string(),
            status: s.chars().next().unwrap_or('M'),
            counts: counts.get(path).copied().flatten(),
        });
    }
    let untracked = if untracked {
        git_ok(wt, &["ls-files", "--others", "--exclude-standard", "-z"])?
    } else {
        String::new()
    };
    for path in untracked.split('\0').filter(|r| !r.is_empty()) {
        let counts = match std::fs::read(wt.join(path)) {
            Ok(bytes) if !bytes.contains(&0) => Some((bytecount_lines(&bytes), 0)),
            _ => None,
        };
        out.push(Changed {
            path: path.to_string(),
            status: '?',
            counts,
        });
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// What the files `paths` (relative to the checkout `repo`) show against `base`: changed,
/// added or untracked ones as [`changed_files`] gives them, and `=` for one with no change;
/// in the order given.
pub fn changed_paths(
    repo: &Path,
    base: &str,
    paths: &[String],
) -> Result<Vec<Changed>, BackendError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args = vec![
        "diff",
        "--no-ext-diff",
        "--no-renames",
        "--numstat",
        "-z",
        base,
        "--",
    ];
    args.extend(paths.iter().map(String::as_str));
    let numstat = git_ok(repo, &args)?;
    let mut counts = std::collections::HashMap::new();
    for record in numstat.split('\0').filter(|r| !r.is_empty()) {
        let mut parts = record.splitn(3, '\t');
        if let (Some(a), Some(r), Some(path)) = (parts.next(), parts.next(), parts.next()) {
            counts.insert(path.to_string(), a.parse().ok().zip(r.parse().ok()));
        }
    }
    args[3] = "--name-status";
    let status = git_ok(repo, &args)?;
    let mut statuses = std::collections::HashMap::new();
    let mut fields = status.split('\0').filter(|r| !r.is_empty());
    while let (Some(s), Some(path)) = (fields.next(), fields.next()) {
        statuses.insert(path.to_string(), s.chars().next().unwrap_or('M'));
    }
    let mut others = vec!["ls-files", "--others", "--exclude-standard", "-z", "--"];
    others.extend(paths.iter().map(String::as_str));
    let untracked: std::collections::HashSet<String> = git_ok(repo, &others)?
        .split('\0')
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .collect();
    Ok(paths
        .iter()
        .map(|path| {
            if let Some(status) = statuses.get(path) {
                Changed {
                    path: path.clone(),
                    status: *status,
                    counts: counts.get(path).copied().flatten(),
                }
            } else if untracked.contains(path) {
                let counts = match std::fs::read(repo.join(path)) {
                    Ok(bytes) if !bytes.contains(&0) => Some((bytecount_lines(&bytes), 0)),
                    _ => None,
                };
                Changed {
                    path: path.clone(),
                    status: '?',
                    counts,
                }
            } else {
                Changed {
                    path: path.clone(),
                    status: '=',
                    counts: Some((0, 0)),
                }
            }
        })
        .collect())
}

/// The top of the checkout `cwd` is in.
pub fn toplevel(cwd: &Path) -> Result<std::path::PathBuf, BackendError> {
    git_ok(cwd, &["rev-parse", "--show-toplevel"]).map(|t| std::path::PathBuf::from(t.trim()))
}

/// The branch checked out in `cwd` (`HEAD` when detached).
pub fn current_branch(cwd: &Path) -> String {
    git_ok(cwd, &["rev-parse", "--abbrev-ref", "HEAD"])
        .map(|b| b.trim().to_string())
        .unwrap_or_else(|_| "HEAD".to_string())
}

fn bytecount_lines(bytes: &[u8]) -> usize {
    let newlines = bytes.iter().filter(|b| **b == b'\n').count();
    newlines + usize::from(bytes.last().is_some_and(|b| *b != b'\n'))
}

/// The unified diff of one file of the worktree at `wt` against `base` (an untracked file
/// against nothing), three lines of context.
pub fn file_diff(wt: &Path, base: &str, path: &str) -> Result<String, BackendError> {
    let tracked = run(wt, &["ls-files", "--error-unmatch", "--", path])?.code == 0;
    let in_base = run(wt, &["cat-file", "-e", &format!("{base}:{path}")])?.code == 0;
    if !tracked && !in_base {
        // `--no-index` exits 1 when the files differ.
        let out = run(
            wt,
            &[
                "diff",
                "--no-ext-diff",
                "--no-index",
                "--",
                "/dev/null",
                path,
            ],
        )?;
        return match out.code {
            0 | 1 => Ok(out.stdout),
            _ => Err(BackendError::Command {
                command: format!("git diff --no-index /dev/null {path}"),
                detail: out.stderr,
            }),
        };
    }
    git_ok(
        wt,
        &["diff", "--no-ext-diff", "--no-renames", base, "--", path],
    )
}

/// The unified diff of one file between `base` and `tip` in the repository at `repo`, three
/// lines of context.
pub fn file_diff_between(
    repo: &Path,
    base: &str,
    tip: &str,
    path: &str,
) -> Result<String, BackendError> {
    git_ok(
        repo,
        &[
            "diff",
            "--no-ext-diff",
            "--no-renames",
            base,
            tip,
            "--",
            path,
        ],
    )
}

/// One commit: short id and subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    pub id: String,
    pub subject: String,
}

/// The commits of `tip` since `base`, newest first.
pub fn commits(cwd: &Path, base: &str, tip: &str) -> Result<Vec<Commit>, BackendError> {
    let text = git_ok(
        cwd,
        &["log", "--format=%h%x1f%s", &format!("{base}..{tip}")],
    )?;
    Ok(text
        .lines()
        .filter_map(|l| l.split_once('\x1f'))
        .map(|(id, subject)| Commit {
            id: id.to_string(),
            subject: subject.to_string(),
        })
        .collect())
}

/// The full commit id `rev` names in `cwd` (the worktree module's reading, one for both).
pub fn rev(cwd: &Path, rev: &str) -> Option<String> {
    super::worktree::git::commit_of(&super::worktree::Local, cwd, rev)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The best common ancestor of `a` and `b`.
pub fn merge_base(cwd: &Path, a: &str, b: &str) -> Option<String> {
    git_ok(cwd, &["merge-base", a, b])
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// Files with uncommitted changes (untracked included when `untracked`).
pub fn uncommitted(cwd: &Path, untracked: bool) -> Result<Vec<String>, BackendError> {
    let flag = if untracked {
        "--untracked-files=all"
    } else {
        "--untracked-files=no"
    };
    let text = git_ok(cwd, &["status", "--porcelain", flag])?;
    Ok(text
        .lines()
        .filter(|l| l.len() > 3)
        .map(|l| l[3..].to_string())
        .collect())
}
