//! Bringing a remote teammate's branch into the lead's repository: `git fetch` over the host's
//! own ssh master (git's ssh transport, `GIT_SSH_COMMAND` set to teamlead's `ssh` with its
//! ControlPath and BatchMode, so it rides the one connection of the host and never prompts),
//! into a ref of teamlead's own, `refs/teamlead/hosts/<host>/<branch>`: never a user's branch.
//! Review and merge then read that ref as they read a local teammate's branch.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::backend::hosts::Connection;
use crate::backend::hosts::run::{RunError, run};
use crate::backend::launch::shell_quote;

/// How long one fetch may take.
const FETCH_DEADLINE: Duration = Duration::from_secs(120);

/// Where a teammate's branch is fetched from.
#[derive(Debug, Clone)]
pub struct FetchFrom {
    /// The host's name in the config.
    pub host: String,
    pub connection: Connection,
    /// The repository on the host (absolute: the worktree's main checkout).
    pub repo: String,
    /// The teammate's branch there.
    pub branch: String,
}

/// The ref of the lead's repository that holds `branch` of `host`.
pub fn fetched_ref(host: &str, branch: &str) -> String {
    format!("refs/teamlead/hosts/{host}/{branch}")
}

/// Why nothing was fetched (the lead's repository is as it was).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    #[error("could not reach {host} to fetch {branch}: {why}")]
    Unreachable {
        host: String,
        branch: String,
        why: String,
    },
    #[error("fetching {branch} from {host} failed: {why}")]
    Failed {
        host: String,
        branch: String,
        why: String,
    },
}

/// Fetches `from.branch` into [`fetched_ref`] of the repository at `repo` (forced: it follows
/// the teammate's branch, rewritten or not); the ref fetched.
pub fn fetch(repo: &Path, from: &FetchFrom) -> Result<String, FetchError> {
    let unreachable = |why: String| FetchError::Unreachable {
        host: from.host.clone(),
        branch: from.branch.clone(),
        why,
    };
    // The master first (a dead one is replaced): git's ssh then only rides it.
    from.connection
        .ensure_master()
        .map_err(|e| unreachable(e.to_string()))?;
    let ssh = from
        .connection
        .ssh_words()
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ");
    let target = fetched_ref(&from.host, &from.branch);
    let url = format!("{}:{}", from.connection.host.destination, from.repo);
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(repo)
        .args(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head"])
        // Only `git` need be on the host's PATH (not `git-upload-pack`).
        .args(["--upload-pack", "git upload-pack"])
        .arg(&url)
        .arg(format!("+refs/heads/{}:{target}", from.branch))
        .env("GIT_SSH_COMMAND", ssh)
        .env("GIT_SSH_VARIANT", "ssh")
        .env("GIT_TERMINAL_PROMPT", "0");
    match run(cmd, None, FETCH_DEADLINE) {
        Ok(out) if out.status == Some(0) => Ok(target),
        Ok(out) => {
            let said = out.stderr;
            let host_error = crate::backend::hosts::HostError::from_stderr(
                &from.connection.host.destination,
                &said,
            );
            match host_error {
                Some(e) => Err(unreachable(e.to_string())),
                None => Err(FetchError::Failed {
                    host: from.host.clone(),
                    branch: from.branch.clone(),
                    why: said
                        .lines()
                        .map(str::trim)
                        .find(|l| !l.is_empty() && !l.starts_with("hint:"))
                        .unwrap_or("git said nothing")
                        .trim_start_matches("fatal: ")
                        .to_string(),
                }),
            }
        }
        Err(RunError::Deadline) => Err(unreachable(format!(
            "no answer within {} s",
            FETCH_DEADLINE.as_secs()
        ))),
        Err(RunError::Spawn(e)) => Err(FetchError::Failed {
            host: from.host.clone(),
            branch: from.branch.clone(),
            why: format!("could not run git: {e}"),
        }),
    }
}
