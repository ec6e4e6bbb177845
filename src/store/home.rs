//! The home layout (PROTOCOL.md 1): where the team files, inboxes, task lists, teamlead's own
//! files and the quarantine live. Every path built from a name goes through
//! `check_path_component`, so no name can lead outside the home.

use std::path::{Path, PathBuf};

use super::error::{Result, StoreError, io_at};
use crate::protocol::names::check_path_component;

/// The root of every team (`~/.claude` by default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    pub root: PathBuf,
}

/// The suffix of a team directory that is being deleted (`teams/<team>.deleted-<token>`).
pub const DELETED_MARKER: &str = ".deleted-";

impl Home {
    /// A home at `root`, as given.
    pub fn new(root: impl Into<PathBuf>) -> Home {
        Home { root: root.into() }
    }

    /// First match wins: `--home`, `$TEAMLEAD_HOME`, `$CLAUDE_CONFIG_DIR`, `~/.claude`.
    /// Empty variables are ignored.
    pub fn resolve(flag: Option<&Path>) -> Result<Home> {
        if let Some(p) = flag {
            return Ok(Home::new(p));
        }
        for var in ["TEAMLEAD_HOME", "CLAUDE_CONFIG_DIR"] {
            if let Some(v) = std::env::var_os(var).filter(|v| !v.is_empty()) {
                return Ok(Home::new(PathBuf::from(v)));
            }
        }
        let user_home = etcetera::home_dir().map_err(|_| StoreError::NoHome)?;
        Ok(Home::new(user_home.join(".claude")))
    }

    /// `<home>/teams`.
    pub fn teams_dir(&self) -> PathBuf {
        self.root.join("teams")
    }

    /// `<home>/tasks`.
    pub fn tasks_root(&self) -> PathBuf {
        self.root.join("tasks")
    }

    /// `<home>/teams/<team>`.
    pub fn team_dir(&self, team: &str) -> Result<PathBuf> {
        Ok(self.teams_dir().join(check_path_component(team)?))
    }

    /// `<home>/teams/<team>/config.json`.
    pub fn config_path(&self, team: &str) -> Result<PathBuf> {
        Ok(self.team_dir(team)?.join("config.json"))
    }

    /// `<home>/teams/<team>/inboxes`.
    pub fn inboxes_dir(&self, team: &str) -> Result<PathBuf> {
        Ok(self.team_dir(team)?.join("inboxes"))
    }

    /// `<home>/teams/<team>/inboxes/<member>.json`.
    pub fn inbox_path(&self, team: &str, member: &str) -> Result<PathBuf> {
        let member = check_path_component(member)?;
        Ok(self.inboxes_dir(team)?.join(format!("{member}.json")))
    }

    /// `<home>/tasks/<team>`.
    pub fn tasks_dir(&self, team: &str) -> Result<PathBuf> {
        Ok(self.tasks_root().join(check_path_component(team)?))
    }

    /// `<home>/teams/<team>/.teamlead`: files only teamlead uses (delivery logs, the lead
    /// liveness lock).
    pub fn teamlead_dir(&self, team: &str) -> Result<PathBuf> {
        Ok(self.team_dir(team)?.join(".teamlead"))
    }

    /// `<home>/teams/<team>/.teamlead/delivered-<member>.jsonl`: the default delivery log of
    /// `member`'s inbox.
    pub fn delivery_log_path(&self, team: &str, member: &str) -> Result<PathBuf> {
        let member = check_path_component(member)?;
        Ok(self
            .teamlead_dir(team)?
            .join(format!("delivered-{member}.jsonl")))
    }

    /// `<home>/teams/<team>/.teamlead/lead.lock`.
    pub fn lead_lock_path(&self, team: &str) -> Result<PathBuf> {
        Ok(self.teamlead_dir(team)?.join("lead.lock"))
    }

    /// `<home>/quarantine`.
    pub fn quarantine_dir(&self) -> PathBuf {
        self.root.join("quarantine")
    }

    /// Team names under `teams/` (directories whose names are safe path components), sorted;
    /// teams being deleted (`*.deleted-*`) are skipped. No `teams/` directory → empty.
    pub fn list_teams(&self) -> Result<Vec<String>> {
        let dir = self.teams_dir();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::io(&dir, e)),
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_at(&dir))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.contains(DELETED_MARKER) || check_path_component(&name).is_err() {
                continue;
            }
            let is_dir = entry.file_type().map(|t| t.is_dir()).unwrap_or(false);
            if is_dir {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    /// Creates `dir` (and its parents) for writing. Every component below the home root must
    /// be a real directory: a symbolic link there is refused, so nothing is written outside
    /// the home through a planted link. The root itself may be a link (dotfile setups).
    pub fn ensure_dir(&self, dir: &Path) -> Result<()> {
        let rel = dir.strip_prefix(&self.root).unwrap_or(dir);
        let mut current = if dir.starts_with(&self.root) {
            self.root.clone()
        } else {
            PathBuf::new()
        };
        if !current.as_os_str().is_empty() {
            std::fs::create_dir_all(&current).map_err(io_at(&current))?;
        }
        for component in rel.components() {
            current.push(component);
            match std::fs::symlink_metadata(&current) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    return Err(StoreError::Symlink { path: current });
                }
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => return Err(StoreError::NotAFile { path: current }),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    match std::fs::create_dir(&current) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(StoreError::io(&current, e)),
                    }
                }
                Err(e) => return Err(StoreError::io(&current, e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_refuse_unsafe_names() {
        let home = Home::new("/h");
        assert!(home.team_dir("../../etc").is_err());
        assert!(home.inbox_path("t", "a b").is_err());
        assert_eq!(
            home.inbox_path("t", "worker").unwrap(),
            PathBuf::from("/h/teams/t/inboxes/worker.json")
        );
        assert_eq!(home.tasks_dir("t").unwrap(), PathBuf::from("/h/tasks/t"));
    }
}
