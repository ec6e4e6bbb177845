//! Helpers of the clean-up tests: a git repository in a temporary directory, a lead session
//! (the library) working in it, and processes found in /proc by a marker on their command line.
//! (The real binary in a pseudo-terminal is [`crate::pty_harness::PtyLead`].)

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use std::time::Duration;

/// How long any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

pub use teamlead_test_support::git::git;

/// `<dir>/repo`: a repository with one commit on `main`.
pub fn repo_in(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    git(&repo, &["config", "user.name", "t"]);
    git(&repo, &["config", "user.email", "t@example.com"]);
    std::fs::write(repo.join("README"), "hello\n").expect("write README");
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    repo
}

/// The repository's local branches.
pub fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The paths of the repository's worktrees (the main checkout first).
pub fn worktrees(repo: &Path) -> Vec<String> {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(str::to_string))
        .collect()
}

/// Where a teammate's worktree lives: `<dir>/repo-worktrees/<team>-<name>`.
pub fn worktree_dir(dir: &Path, team: &str, name: &str) -> PathBuf {
    dir.join("repo-worktrees").join(format!("{team}-{name}"))
}

/// The tests' one poll with a deadline.
#[allow(unused_imports)]
pub use teamlead_test_support::wait::wait_until;

// ---------------------------------------------------------------------------------------------
// Processes, from /proc.

/// Running processes (zombies excluded) with `marker` in an argument: pid and command line.
pub fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<String> = raw
                .split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            (!zombie && args.iter().any(|a| a.contains(marker))).then(|| (pid, args.join(" ")))
        })
        .collect()
}

/// SIGKILL to every process with `marker` on its command line (clean-up after a failure).
pub fn kill_marked(marker: &str) {
    for (pid, _) in processes_with(marker) {
        // SAFETY: kill(2) on processes this test started (they carry its unique marker).
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}
