//! What a watcher covers (a team's `teams/<team>/` and `tasks/<team>/`, or every team), and
//! snapshots of those trees (path → kind, mtime, length) whose difference is a list of change
//! events: the polling fallback is nothing but repeated snapshots, and the notify watcher uses
//! one to tell "created" from "replaced" and to recover from missed events.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::event::{ChangeEvent, ChangeKind, appeared_kind, is_temp_name, vanished_kind};
use crate::store::Home;
use crate::store::home::DELETED_MARKER;

/// The directories one watcher covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchScope {
    base: PathBuf,
    roots: Vec<PathBuf>,
}

impl WatchScope {
    /// One team: `teams/<team>/` and `tasks/<team>/`, recursively. The name must be a safe
    /// path component.
    pub fn team(home: &Home, team: &str) -> Result<WatchScope, crate::store::StoreError> {
        Ok(WatchScope {
            base: home.root.clone(),
            roots: vec![home.team_dir(team)?, home.tasks_dir(team)?],
        })
    }

    /// Every team: `teams/` and `tasks/`, recursively (teams appearing included).
    pub fn all(home: &Home) -> WatchScope {
        WatchScope {
            base: home.root.clone(),
            roots: vec![home.teams_dir(), home.tasks_root()],
        }
    }

    /// The watched trees (they need not exist yet).
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The home the trees are in.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Is `path` one of the trees or inside one, and worth reporting (no temp file, nothing
    /// inside a team that is being deleted)?
    pub fn contains(&self, path: &Path) -> bool {
        if !self.roots.iter().any(|r| path.starts_with(r)) {
            return false;
        }
        !path.components().any(|c| {
            c.as_os_str()
                .to_str()
                .is_some_and(|s| is_temp_name(s) || s.contains(DELETED_MARKER))
        })
    }
}

/// How deep below the path it starts at a scan goes.
pub(crate) const MAX_SCAN_DEPTH: usize = 8;

/// What is known about one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub is_dir: bool,
    pub mtime: Option<SystemTime>,
    pub len: u64,
}

impl Meta {
    /// The metadata of `path` without following a final symbolic link.
    pub fn of(path: &Path) -> Option<Meta> {
        let m = std::fs::symlink_metadata(path).ok()?;
        Some(Meta {
            is_dir: m.is_dir(),
            mtime: m.modified().ok(),
            len: m.len(),
        })
    }
}

/// Every path of a scope, as last seen.
#[derive(Debug, Clone, Default)]
pub(crate) struct Snapshot {
    pub entries: HashMap<PathBuf, Meta>,
}

impl Snapshot {
    /// Walks every root of the scope (roots that do not exist are simply empty).
    pub fn scan(scope: &WatchScope) -> Snapshot {
        let mut snap = Snapshot::default();
        for root in scope.roots() {
            snap.scan_into(scope, root);
        }
        snap
    }

    /// Adds `path` and everything below it, down to [`MAX_SCAN_DEPTH`] levels (the protocol's
    /// trees are two deep; a hostile tree thousands deep must not exhaust the stack).
    pub fn scan_into(&mut self, scope: &WatchScope, path: &Path) {
        self.scan_depth(scope, path, 0);
    }

    fn scan_depth(&mut self, scope: &WatchScope, path: &Path, depth: usize) {
        let Some(meta) = Meta::of(path) else {
            return;
        };
        if !scope.contains(path) {
            return;
        }
        self.entries.insert(path.to_path_buf(), meta);
        if !meta.is_dir || depth >= MAX_SCAN_DEPTH {
            return;
        }
        let Ok(children) = std::fs::read_dir(path) else {
            return;
        };
        for child in children.flatten() {
            self.scan_depth(scope, &child.path(), depth + 1);
        }
    }

    /// Known paths under `dir` (not `dir` itself).
    pub fn children_of(&self, dir: &Path) -> Vec<PathBuf> {
        self.entries
            .keys()
            .filter(|p| p.as_path() != dir && p.starts_with(dir))
            .cloned()
            .collect()
    }
}

/// The events that turn `old` into `new`: removals first (deepest first), then creations and
/// modifications (parents first). Directories are never "modified".
pub(crate) fn diff(old: &Snapshot, new: &Snapshot) -> Vec<ChangeEvent> {
    let mut removed: Vec<ChangeEvent> = old
        .entries
        .iter()
        .filter(|(p, _)| !new.entries.contains_key(*p))
        .map(|(p, m)| ChangeEvent::new(p.clone(), vanished_kind(p, m.is_dir), m.is_dir))
        .collect();
    removed.sort_by(|a, b| b.path.cmp(&a.path));
    let mut appeared: Vec<ChangeEvent> = new
        .entries
        .iter()
        .filter_map(|(p, m)| match old.entries.get(p) {
            None => Some(ChangeEvent::new(
                p.clone(),
                appeared_kind(p, m.is_dir),
                m.is_dir,
            )),
            Some(before) if before.is_dir != m.is_dir => Some(ChangeEvent::new(
                p.clone(),
                appeared_kind(p, m.is_dir),
                m.is_dir,
            )),
            Some(before) if !m.is_dir && (before.mtime != m.mtime || before.len != m.len) => {
                Some(ChangeEvent::new(p.clone(), ChangeKind::Modified, false))
            }
            Some(_) => None,
        })
        .collect();
    appeared.sort_by(|a, b| a.path.cmp(&b.path));
    removed.extend(appeared);
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_filters_temp_and_deleted() {
        let home = Home::new("/h");
        let scope = WatchScope::team(&home, "t").unwrap();
        assert!(scope.contains(Path::new("/h/teams/t/config.json")));
        assert!(scope.contains(Path::new("/h/tasks/t")));
        assert!(!scope.contains(Path::new("/h/teams/t/config.json.tmp.0a1b2c3d")));
        assert!(!scope.contains(Path::new("/h/teams/u/config.json")));
        assert!(!scope.contains(Path::new("/h/teams")));
        let all = WatchScope::all(&home);
        assert!(all.contains(Path::new("/h/teams/u/config.json")));
        assert!(!all.contains(Path::new("/h/teams/u.deleted-1234/config.json")));
        assert!(WatchScope::team(&home, "../x").is_err());
    }

    #[test]
    fn diff_orders_and_classifies() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        let scope = WatchScope::all(&home);
        let team = home.team_dir("t").unwrap();
        std::fs::create_dir_all(&team).unwrap();
        let before = Snapshot::scan(&scope);
        std::fs::write(team.join("config.json"), "{}").unwrap();
        std::fs::create_dir(team.join("config.json.lock")).unwrap();
        let after = Snapshot::scan(&scope);
        let events = diff(&before, &after);
        assert_eq!(
            events,
            vec![
                ChangeEvent::new(team.join("config.json"), ChangeKind::Created, false),
                ChangeEvent::new(
                    team.join("config.json.lock"),
                    ChangeKind::LockAcquired,
                    true
                ),
            ]
        );
        std::fs::remove_dir(team.join("config.json.lock")).unwrap();
        let last = Snapshot::scan(&scope);
        assert_eq!(
            diff(&after, &last),
            vec![ChangeEvent::new(
                team.join("config.json.lock"),
                ChangeKind::LockReleased,
                true
            )]
        );
    }
}
