//! The home layout (PROTOCOL.md 1): where the team files, inboxes, task lists, teamlead's own
//! files and the quarantine live. Every path built from a name goes through
//! `check_path_component`, so no name can lead outside the home, and every path the store
//! reads or writes goes through [`Home::check_inside`]: below the home root the store follows
//! no symbolic link (the root itself may be one).

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};

use super::error::{Result, StoreError, io_at};
use super::safe_file::{FileKind, PRIVATE_DIR_MODE};
use crate::names::check_path_component;

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

    /// `<home>/plans`: plan files written by teammates for plan approval.
    pub fn plans_dir(&self) -> PathBuf {
        self.root.join("plans")
    }

    /// `<home>/plans/<team>-<member>-<ms>.md`.
    pub fn plan_path(&self, team: &str, member: &str, ms: u64) -> Result<PathBuf> {
        let team = check_path_component(team)?;
        let member = check_path_component(member)?;
        Ok(self.plans_dir().join(format!("{team}-{member}-{ms}.md")))
    }

    /// Team names under `teams/` (directories whose names are safe path components), sorted;
    /// teams being deleted (`*.deleted-*`) are skipped. No `teams/` directory → empty.
    pub fn list_teams(&self) -> Result<Vec<String>> {
        let dir = self.teams_dir();
        let Some(entries) = self.read_dir(&dir)? else {
            return Ok(Vec::new());
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

    /// The one rule for symbolic links: below the home root the store follows none, for
    /// reading or writing (the root itself may be a link, as in dotfile setups). Checks every
    /// component of `path` from the root down with `lstat`: a symbolic link is an error that
    /// says where it points (and whether that is outside the home), a component that exists
    /// but is not a directory is an error, and a path that is not below the root at all is
    /// [`StoreError::NotInHome`]. The last component may be anything but a link (callers check
    /// its kind); checking stops at the first component that does not exist.
    pub fn check_inside(&self, path: &Path) -> Result<()> {
        let rel = self.below_root(path)?;
        let mut current = self.root.clone();
        let count = rel.components().count();
        for (i, component) in rel.components().enumerate() {
            current.push(component);
            match FileKind::at(&current)? {
                None => return Ok(()),
                Some(FileKind::Symlink) => return Err(self.symlink_error(&current)),
                Some(FileKind::Directory) => {}
                Some(_) if i + 1 == count => {}
                Some(found) => {
                    return Err(StoreError::NotADirectory {
                        path: current,
                        found,
                    });
                }
            }
        }
        Ok(())
    }

    /// `path` relative to the root; only plain names below it are accepted (no `..`).
    fn below_root<'a>(&self, path: &'a Path) -> Result<&'a Path> {
        let outside = || StoreError::NotInHome {
            path: path.to_path_buf(),
            root: self.root.clone(),
        };
        let rel = path.strip_prefix(&self.root).map_err(|_| outside())?;
        if rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
        {
            Ok(rel)
        } else {
            Err(outside())
        }
    }

    /// The error for a symbolic link found at `link` below the root: where it points, and
    /// whether that resolves outside the (canonical) home.
    fn symlink_error(&self, link: &Path) -> StoreError {
        let target = std::fs::read_link(link).ok();
        let root = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
        let outside = match std::fs::canonicalize(link) {
            Ok(resolved) => !resolved.starts_with(&root),
            // Dangling: judge the target as written.
            Err(_) => match &target {
                Some(t) if t.is_absolute() => !t.starts_with(&root) && !t.starts_with(&self.root),
                Some(t) => t
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir)),
                None => false,
            },
        };
        StoreError::Symlink {
            path: link.to_path_buf(),
            target,
            outside,
        }
    }

    /// Lists a directory below the root after [`Home::check_inside`]; `Ok(None)` when it does
    /// not exist, an error when it is not a directory.
    pub fn read_dir(&self, dir: &Path) -> Result<Option<std::fs::ReadDir>> {
        self.check_inside(dir)?;
        match FileKind::at(dir)? {
            None => return Ok(None),
            Some(FileKind::Directory) => {}
            Some(found) => {
                return Err(StoreError::NotADirectory {
                    path: dir.to_path_buf(),
                    found,
                });
            }
        }
        match std::fs::read_dir(dir) {
            Ok(e) => Ok(Some(e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(dir, e)),
        }
    }

    /// Creates `dir` (and its parents) for writing, each new directory with mode 0700 (the
    /// root too, when it is missing). Follows the rule of [`Home::check_inside`]: a symbolic
    /// link or a non-directory on the way is refused, so nothing is ever written outside the
    /// home through a planted link.
    pub fn ensure_dir(&self, dir: &Path) -> Result<()> {
        let rel = self.below_root(dir)?;
        // Looked at first: a `mkdir` of a folder that is there fails, but only after taking
        // the parent folder's lock, and every append asks for its inbox folder.
        if !self.root.as_os_str().is_empty()
            && !std::fs::metadata(&self.root).is_ok_and(|m| m.is_dir())
        {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(PRIVATE_DIR_MODE)
                .create(&self.root)
                .map_err(io_at(&self.root))?;
        }
        let mut current = self.root.clone();
        for component in rel.components() {
            current.push(component);
            match FileKind::at(&current)? {
                Some(FileKind::Directory) => {}
                Some(FileKind::Symlink) => return Err(self.symlink_error(&current)),
                Some(found) => {
                    return Err(StoreError::NotADirectory {
                        path: current,
                        found,
                    });
                }
                None => match std::fs::DirBuilder::new()
                    .mode(PRIVATE_DIR_MODE)
                    .create(&current)
                {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        // Made by someone else meanwhile: look again.
                        match FileKind::at(&current)? {
                            Some(FileKind::Directory) => {}
                            Some(FileKind::Symlink) => {
                                return Err(self.symlink_error(&current));
                            }
                            Some(found) => {
                                return Err(StoreError::NotADirectory {
                                    path: current,
                                    found,
                                });
                            }
                            None => return Err(StoreError::io(&current, e)),
                        }
                    }
                    Err(e) => return Err(StoreError::io(&current, e)),
                },
            }
        }
        Ok(())
    }

    /// Writes a file below the home atomically (mode 0600), creating its directory (0700)
    /// first; refuses links and non-directories on the way, and anything but a regular file
    /// at `path`.
    pub fn write_file(&self, path: &Path, bytes: &[u8]) -> Result<()> {
        let dir = path
            .parent()
            .ok_or_else(|| StoreError::parse(path, "not a file path"))?;
        self.ensure_dir(dir)?;
        self.check_inside(path)?;
        super::atomic::write_atomic(path, bytes)
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
