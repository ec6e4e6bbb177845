//! Read-only scans for `inspect` and `clean`: lock directories left behind, and the inboxes of
//! a team. Nothing here writes.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::atomic::is_temp_file;
use super::error::{Result, io_at};
use super::home::Home;
use super::lock::STALE_AFTER;

/// Lock directories (`*.lock/`) older than the stale limit (10 s) in `teams/<team>` (and its
/// subdirectories) and `tasks/<team>`, sorted.
pub fn stale_locks(home: &Home, team: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in [home.team_dir(team), home.tasks_dir(team)]
        .into_iter()
        .flatten()
    {
        // A directory behind a symbolic link is not looked into (nothing below the home
        // root is followed); `inspect` reports the link itself.
        if home.check_inside(&dir).is_ok() {
            collect_stale(&dir, 0, &mut found);
        }
    }
    found.sort();
    found
}

fn collect_stale(dir: &Path, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let path = entry.path();
        let is_lock = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.ends_with(".lock"));
        if is_lock {
            let age = meta
                .modified()
                .ok()
                .and_then(|m| SystemTime::now().duration_since(m).ok());
            if age.is_some_and(|a| a > STALE_AFTER) {
                found.push(path);
            }
        } else if depth < 2 {
            collect_stale(&path, depth + 1, found);
        }
    }
}

/// Member names that have an inbox file in `team` (`inboxes/<name>.json`), sorted; temp files
/// and lock directories are skipped. A symlinked team or inboxes directory is an error.
pub fn inbox_names(home: &Home, team: &str) -> Result<Vec<String>> {
    let dir = home.inboxes_dir(team)?;
    let Some(entries) = home.read_dir(&dir)? else {
        return Ok(Vec::new());
    };
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io_at(&dir))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if is_temp_file(&name) {
            continue;
        }
        if let Some(stem) = name.strip_suffix(".json")
            && entry.file_type().map(|t| t.is_file()).unwrap_or(false)
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}
