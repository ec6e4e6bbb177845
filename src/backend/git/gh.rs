//! The pull request of a branch, from GitHub's CLI: `gh pr view <branch> --json …`, run only
//! where `gh` is on `PATH` and the repository has a remote, with a time limit (the child is
//! killed when it passes), never prompting. Any failure (no pull request, not logged in, no
//! network, a timeout) is "no pull request known": the review simply shows none.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

/// How long `gh` may take before it is killed: 8 s, or `TEAMLEAD_GH_TIMEOUT_MS`.
pub fn gh_timeout() -> Duration {
    std::env::var("TEAMLEAD_GH_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(Duration::from_secs(8), Duration::from_millis)
}

/// What `gh pr view --json number,state,isDraft,url,title` says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pr {
    pub number: u64,
    pub state: String,
    #[serde(default)]
    pub is_draft: bool,
    pub url: String,
    #[serde(default)]
    pub title: String,
}

/// The `gh` program on `PATH`, if any.
pub fn find_gh() -> Option<String> {
    crate::backend::detect::CapturedEnv::from_process().which("gh")
}

/// Whether the repository at `repo` has a remote.
pub fn has_remote(repo: &Path) -> bool {
    super::git_ok(repo, &["remote"]).is_ok_and(|r| !r.trim().is_empty())
}

/// The pull request of `branch` in the repository at `repo`, asked of `gh` (the program) with
/// `timeout`; `None` when it has none or `gh` cannot say.
pub fn pr_of(gh: &str, repo: &Path, branch: &str, timeout: Duration) -> Option<Pr> {
    let mut child = Command::new(gh)
        .args([
            "pr",
            "view",
            branch,
            "--json",
            "number,state,isDraft,url,title",
        ])
        .current_dir(repo)
        .env("GH_PROMPT_DISABLED", "1")
        .env("GH_NO_UPDATE_NOTIFIER", "1")
        .env("NO_COLOR", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    // The output is read on a thread, so a full pipe never blocks the child past the limit.
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.by_ref().take(1024 * 1024).read_to_end(&mut out);
        out
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                tracing::info!("gh pr view {branch}: no answer within {timeout:?}");
                // The reader ends when whatever still holds the pipe lets go; nobody waits.
                return None;
            }
        }
    };
    if !status.success() {
        return None;
    }
    let out = reader.join().ok()?;
    serde_json::from_slice(&out).ok()
}
