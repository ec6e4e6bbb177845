//! Helpers of the clean-up tests: a git repository in a temporary directory, a lead session
//! (the library) working in it, the real binary in a pseudo-terminal with chosen arguments and
//! environment (killed on drop), and processes found in /proc by a marker on their command line.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::{Duration, Instant};

use crate::pty_harness::{self, Terminal};

/// How long any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// Runs git in `dir` (test identity, no global config); panics on failure; stdout trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

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

/// Polls `cond` every 20 ms until it holds; panics after `timeout` with `what` and `explain()`.
pub fn wait_until(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> bool,
    explain: impl Fn() -> String,
) -> Duration {
    let start = Instant::now();
    loop {
        if cond() {
            return start.elapsed();
        }
        if start.elapsed() > timeout {
            panic!(
                "timed out after {timeout:?} waiting for {what}\n{}",
                explain()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

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

// ---------------------------------------------------------------------------------------------
// The real binary in a pseudo-terminal.

/// `teamlead --home H <args>` in a 160×40 PTY, on the suite's PTY harness (which it derefs
/// to); killed on drop.
pub struct PtyLead(Terminal);

impl std::ops::Deref for PtyLead {
    type Target = Terminal;
    fn deref(&self) -> &Terminal {
        &self.0
    }
}

impl std::ops::DerefMut for PtyLead {
    fn deref_mut(&mut self) -> &mut Terminal {
        &mut self.0
    }
}

impl PtyLead {
    /// Starts the lead in `cwd` with `env` set (and `TMUX`, `TMUX_PANE`, `TEAMLEAD_HOME`,
    /// `CLAUDE_CONFIG_DIR`, `TEAMLEAD_CLAUDE_BIN` removed unless `env` sets them); waits for
    /// its screen.
    pub fn start(home: &Path, cwd: &Path, args: &[&str], env: &[(&str, String)]) -> PtyLead {
        let mut cmd = pty_harness::teamlead(Some(home), cwd, args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        let lead = PtyLead(Terminal::spawn(cmd, 160, 40));
        lead.wait_screen("the lead's screen", |s| s.contains("shift+tab to cycle"));
        lead
    }

    /// The screen's text.
    pub fn screen(&self) -> String {
        self.contents()
    }

    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        wait_until(
            what,
            WAIT,
            || check(&self.screen()),
            || format!("lead screen:\n{}", self.screen()),
        )
    }

    /// Types a one-line composer input, waits until the composer shows it, presses Enter.
    pub fn submit(&self, line: &str) {
        self.send(line.as_bytes());
        self.wait_screen(&format!("the composer to show `{line}`"), |s| {
            s.contains(line)
        });
        self.send(b"\r");
    }

    /// Waits for the lead to exit; returns whether it exited with status 0.
    pub fn wait_exit(&mut self) -> bool {
        self.wait_exit_within(WAIT)
    }
}
