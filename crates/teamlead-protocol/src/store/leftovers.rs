//! What teamlead writers that died leave behind, found and removed (`teamlead clean`): the
//! atomic writers' temp files (`<file>.tmp.<8 hex>`), lock holder markers
//! (`<file>.lock.tmp.<16 hex>.holder`), their staging directories (`<file>.lock.tmp.<16 hex>`)
//! and a lock directory whose marker proves its holder dead. Only teamlead's own names, only
//! in the directories teamlead writes under the home (`teams/<t>/`, its `inboxes/` and
//! `.teamlead/`, `tasks/<t>/`, `quarantine/`, `plans/`), never through a symbolic link, and
//! only what is provably orphaned: teamlead's writers hold an exclusive flock on each of these
//! files while they live, so a file whose flock can be taken is a dead writer's. A file
//! younger than [`SIDE_FILE_MIN_AGE`] is left alone even then (its writer may be between
//! creating it and taking the flock). Each file is removed while this process holds its flock.

use std::fs::TryLockError;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::atomic::is_own_temp_name;
use super::home::Home;
use super::lock::holder::{
    FAST_REAP_MAX_AGE, Identity, SIDE_FILE_MIN_AGE, open_existing, parse_side_name, read_record,
    staging_path,
};
use super::lock::waiter::reap_locked;

/// What a leftover is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeftoverKind {
    /// An atomic writer's temp file.
    TempFile,
    /// A lock holder marker.
    LockMarker,
    /// A lock directory's staging directory.
    StagingDir,
    /// A lock directory whose holder died (its marker says so).
    DeadLock,
}

impl LeftoverKind {
    pub fn describe(self) -> &'static str {
        match self {
            LeftoverKind::TempFile => "temp file of a writer that is gone",
            LeftoverKind::LockMarker => "lock marker of a writer that is gone",
            LeftoverKind::StagingDir => "unused lock directory of a writer that is gone",
            LeftoverKind::DeadLock => "lock directory of a writer that died holding it",
        }
    }
}

/// One leftover, and whether removing it worked (always `Ok` in a dry run).
#[derive(Debug)]
pub struct Swept {
    pub path: PathBuf,
    pub kind: LeftoverKind,
    pub result: Result<(), String>,
}

/// The directories looked in.
fn places(home: &Home) -> Vec<PathBuf> {
    let mut teams: Vec<String> = home.list_teams().unwrap_or_default();
    if let Ok(Some(entries)) = home.read_dir(&home.tasks_root()) {
        for entry in entries.flatten() {
            if let Ok(name) = entry.file_name().into_string()
                && entry.file_type().is_ok_and(|t| t.is_dir())
                && crate::names::check_path_component(&name).is_ok()
                && !teams.contains(&name)
            {
                teams.push(name);
            }
        }
    }
    let mut dirs = vec![home.quarantine_dir(), home.plans_dir()];
    for team in &teams {
        dirs.extend(
            [
                home.team_dir(team),
                home.inboxes_dir(team),
                home.teamlead_dir(team),
                home.tasks_dir(team),
            ]
            .into_iter()
            .flatten(),
        );
    }
    dirs.retain(|d| {
        home.check_inside(d).is_ok() && std::fs::symlink_metadata(d).is_ok_and(|m| m.is_dir())
    });
    dirs
}

/// Finds every leftover under `home` and, unless `dry_run`, removes it.
pub fn sweep(home: &Home, dry_run: bool) -> Vec<Swept> {
    let mut out = Vec::new();
    for dir in places(home) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        // Markers before staging directories: a dead marker takes its staging directory along.
        names.sort_by_key(|n| !n.ends_with(".holder"));
        for name in names {
            let path = dir.join(&name);
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            match parse_side_name(&name) {
                Some((lock, token, true)) if meta.is_file() => {
                    sweep_marker(&path, &dir.join(lock), token, dry_run, &mut out);
                }
                Some((_, _, false)) if meta.is_dir() => {
                    sweep_staging(&path, &meta, dry_run, &mut out)
                }
                Some(_) => {}
                None if meta.is_file() && is_own_temp_name(&name) => {
                    sweep_temp(&path, dry_run, &mut out);
                }
                None => {}
            }
        }
    }
    out
}

fn old_enough(meta: &std::fs::Metadata) -> bool {
    meta.modified()
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= SIDE_FILE_MIN_AGE)
}

fn removed(path: &Path, kind: LeftoverKind, result: std::io::Result<()>, out: &mut Vec<Swept>) {
    let result = match result {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => Err(e.to_string()),
    };
    out.push(Swept {
        path: path.to_path_buf(),
        kind,
        result,
    });
}

/// An atomic temp file: removed when its flock is free and it is old enough.
fn sweep_temp(path: &Path, dry_run: bool, out: &mut Vec<Swept>) {
    let Ok(file) = open_existing(path) else {
        return;
    };
    if file.try_lock().is_err() || !file.metadata().is_ok_and(|m| old_enough(&m)) {
        return;
    }
    let result = if dry_run {
        Ok(())
    } else {
        std::fs::remove_file(path)
    };
    removed(path, LeftoverKind::TempFile, result, out);
}

/// A marker whose flock is free: its lock directory is removed too when the record still
/// names it (and it is young enough for that to be safe), then the marker and its staging
/// directory go.
fn sweep_marker(path: &Path, lock_dir: &Path, token: &str, dry_run: bool, out: &mut Vec<Swept>) {
    let Ok(file) = open_existing(path) else {
        return;
    };
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) | Err(TryLockError::Error(_)) => return,
    }
    let record = read_record(&file);
    if record.is_none() && !file.metadata().is_ok_and(|m| old_enough(&m)) {
        return;
    }
    if let Some(record) = record
        && let Ok(meta) = std::fs::symlink_metadata(lock_dir)
        && record.names(&Identity::of(&meta))
    {
        let young = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .is_some_and(|age| age <= FAST_REAP_MAX_AGE);
        if young {
            if dry_run {
                removed(lock_dir, LeftoverKind::DeadLock, Ok(()), out);
            } else if reap_locked(lock_dir, &Identity::of(&meta), &file, path).is_some() {
                removed(lock_dir, LeftoverKind::DeadLock, Ok(()), out);
                removed(path, LeftoverKind::LockMarker, Ok(()), out);
                return;
            }
        }
        // Older: the 10 s rule takes it; without its marker it is an ordinary stale lock.
    }
    let result = if dry_run {
        Ok(())
    } else {
        std::fs::remove_file(path)
    };
    removed(path, LeftoverKind::LockMarker, result, out);
    let staging = staging_path(lock_dir, token);
    if std::fs::symlink_metadata(&staging).is_ok_and(|m| m.is_dir()) {
        let result = if dry_run {
            Ok(())
        } else {
            std::fs::remove_dir(&staging)
        };
        removed(&staging, LeftoverKind::StagingDir, result, out);
    }
}

/// A staging directory without a marker (the marker names and removes its own): removed
/// when old enough. `rmdir` never removes a directory with something in it.
fn sweep_staging(path: &Path, meta: &std::fs::Metadata, dry_run: bool, out: &mut Vec<Swept>) {
    let mut marker = path.as_os_str().to_owned();
    marker.push(".holder");
    if std::fs::symlink_metadata(PathBuf::from(marker)).is_ok() || !old_enough(meta) {
        return;
    }
    let result = if dry_run {
        Ok(())
    } else {
        std::fs::remove_dir(path)
    };
    removed(path, LeftoverKind::StagingDir, result, out);
}
