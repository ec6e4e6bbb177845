//! Teammate worktrees on a host (`/spawn NAME --host HOST --worktree`): git run in the host's
//! repository through its ssh master ([`HostGit`], a worktree [`Place`]), so the worktree
//! rules of `backend::worktree` (naming, leftovers, never deleting work) make and retire them
//! there exactly as they do locally. [`HostsGit`] gives the place of each configured host.
//!
//! A command line is built with the same quoting as the rest of the host calls
//! (`launch::shell_quote`, `probe::remote_path` for `~/`).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::probe::remote_path;
use super::{Connection, Connector};
use crate::backend::BackendError;
use crate::backend::launch::shell_quote;
use crate::backend::worktree::Place;
use crate::config::HostConfig;

/// How long one git command on a host may take.
const GIT_DEADLINE: Duration = Duration::from_secs(30);

/// Git in one host's repositories, through its master.
#[derive(Debug, Clone)]
pub struct HostGit {
    /// The host's name in the config.
    pub name: String,
    pub connection: Connection,
}

impl HostGit {
    /// `sh`'s words for `path` on the host (`~/` is its HOME).
    fn quoted(path: &Path) -> String {
        remote_path(&path.to_string_lossy())
    }

    /// Runs `line` (a POSIX `sh` command line, run as `sh -c` whatever the login shell); its
    /// exit status and output, or why the host could not be asked (one line: unreachable,
    /// auth, …).
    fn call(&self, line: &str) -> Result<super::run::Output, BackendError> {
        self.connection
            .call(&format!("sh -c {}", shell_quote(line)), None, GIT_DEADLINE)
            .map_err(|e| BackendError::Unavailable(format!("{} is unreachable: {e}", self.name)))
    }
}

impl Place for HostGit {
    fn git(&self, cwd: &Path, args: &[&str]) -> Result<String, BackendError> {
        let mut line = format!(
            "GIT_TERMINAL_PROMPT=0 git -C {} -c core.quotePath=false",
            Self::quoted(cwd)
        );
        for arg in args {
            line.push(' ');
            line.push_str(&shell_quote(arg));
        }
        let out = self.call(&line)?;
        if out.status == Some(0) {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(BackendError::Command {
                command: format!("git {} (on {})", args.join(" "), self.name),
                detail: out.stderr.trim().to_string(),
            })
        }
    }

    fn exists(&self, path: &Path) -> Result<bool, BackendError> {
        let out = self.call(&format!("test -e {} && echo yes", Self::quoted(path)))?;
        Ok(out.status == Some(0) && out.stdout.starts_with(b"yes"))
    }

    fn same_path(&self, a: &Path, b: &Path) -> bool {
        // Paths git gives on the host are absolute and resolved; the ones compared with them
        // are made from them.
        let plain = |p: &Path| p.to_string_lossy().trim_end_matches('/').to_string();
        plain(a) == plain(b)
    }

    fn remove_empty_dir(&self, path: &Path) {
        let _ = self.call(&format!("rmdir {} 2>/dev/null", Self::quoted(path)));
    }

    fn describe(&self, path: &Path) -> String {
        format!("{} on {}", path.display(), self.name)
    }

    fn host(&self) -> Option<&str> {
        Some(&self.name)
    }
}

/// The hosts of the config, for their git: where each one's connection is.
#[derive(Debug, Clone)]
pub struct HostsGit {
    pub connector: Connector,
    pub hosts: Vec<HostConfig>,
}

impl HostsGit {
    /// The configured host `name`.
    pub fn config(&self, name: &str) -> Result<&HostConfig, BackendError> {
        self.hosts.iter().find(|h| h.name == name).ok_or_else(|| {
            BackendError::Unavailable(format!(
                "no host `{name}` in the config file: `teamlead hosts add {name} [user@]host` adds it"
            ))
        })
    }

    /// Git on host `name`.
    pub fn place(&self, name: &str) -> Result<Arc<HostGit>, BackendError> {
        let config = self.config(name)?;
        Ok(Arc::new(HostGit {
            name: name.to_string(),
            connection: self.connector.connection(config),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_compare_without_a_trailing_slash() {
        let config = HostConfig {
            name: "box".into(),
            destination: "me@box".into(),
            ..Default::default()
        };
        let connector = Connector::new(std::path::PathBuf::from("/nonexistent"));
        let git = HostGit {
            name: "box".into(),
            connection: connector.connection(&config),
        };
        assert!(git.same_path(
            Path::new("/srv/r-worktrees/t-a/"),
            Path::new("/srv/r-worktrees/t-a")
        ));
        assert!(!git.same_path(Path::new("/srv/r"), Path::new("/srv/r2")));
        assert_eq!(git.describe(Path::new("/srv/r")), "/srv/r on box");
        assert_eq!(HostGit::quoted(Path::new("~/src/app")), "\"$HOME\"/src/app");
    }
}
