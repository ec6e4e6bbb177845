//! The task list of a team (PROTOCOL.md 5): one JSON file per task under `tasks/<team>/`, ids
//! from `max(largest numeric file name, .highwatermark) + 1` under the list lock
//! (`.lock` → `.lock.lock/`), per-task edits under `<id>.json.lock/`, deletion that never lets
//! an id be reused and cleans every reference. Files that fail the schema are reported as
//! problems and skipped, never deleted. Ids live in `ids`, claim and availability in `claim`.
//! Every path is checked with `Home::check_inside`; the list lock's `.lock` must be a regular
//! file and `.lock.lock/` a directory, or the operation fails at once.

mod claim;
mod edit;
mod ids;

pub use claim::{
    CLAIM_HELD_KEY, CLAIM_KEY, ClaimError, available, is_available, unfinished_blockers,
};
pub use edit::{Assigned, FAILURE_NOTE_KEY, TaskEdit};
pub use ids::parse_highwatermark;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::atomic::{
    Parsed, check_regular_file, create_exclusive, is_temp_file, pretty_bytes, read_parsed,
    write_atomic,
};
use super::error::{Result, StoreError, io_at};
use super::home::Home;
use super::json_check::utf8_text;
use super::lock::{self, DEFAULT_LOCK_TIMEOUT, LockGuard};
use super::quarantine::Problem;
use crate::names::check_path_component;
use crate::{Task, TaskStatus};

/// The tasks of a team and what could not be read.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct TaskListing {
    /// Valid tasks, sorted by numeric id.
    pub tasks: Vec<Task>,
    /// Files that were skipped, and why.
    pub problems: Vec<Problem>,
}

/// One team's task list.
#[derive(Debug, Clone)]
pub struct TaskList {
    home: Home,
    team: String,
    dir: PathBuf,
}

fn parse_task(bytes: &[u8]) -> std::result::Result<Task, String> {
    let text = utf8_text(bytes)?;
    serde_json::from_str(text).map_err(|e| format!("not a valid task: {e}"))
}

impl TaskList {
    /// The task list of `team` (nothing is created until a task is written).
    pub fn new(home: &Home, team: &str) -> Result<TaskList> {
        Ok(TaskList {
            home: home.clone(),
            dir: home.tasks_dir(team)?,
            team: team.to_string(),
        })
    }

    /// `tasks/<team>`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The team.
    pub fn team(&self) -> &str {
        &self.team
    }

    /// `tasks/<team>/<id>.json`.
    pub fn task_path(&self, id: &str) -> Result<PathBuf> {
        Ok(self.dir.join(format!("{}.json", check_path_component(id)?)))
    }

    /// Takes the list lock (`.lock` → `.lock.lock/`), creating the directory and the empty
    /// `.lock` file when missing.
    fn lock_list(&self) -> Result<LockGuard> {
        self.home.check_inside(&self.dir)?;
        self.home.ensure_dir(&self.dir)?;
        let target = self.dir.join(".lock");
        self.home.check_inside(&target)?;
        create_exclusive(&target, b"")?;
        lock::acquire(&target, DEFAULT_LOCK_TIMEOUT)
    }

    /// Takes `<id>.json.lock/`; `NotFound` when the task file does not exist (so no lock
    /// directory is made for a task that is not there).
    fn lock_task(&self, id: &str) -> Result<(LockGuard, PathBuf)> {
        let path = self.task_path(id)?;
        self.home.check_inside(&path)?;
        if !check_regular_file(&path)? {
            return Err(self.missing(id));
        }
        let guard = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
        Ok((guard, path))
    }

    fn missing(&self, id: &str) -> StoreError {
        StoreError::not_found(format!("task #{id} of team `{}`", self.team))
    }

    fn read_at(&self, id: &str, path: &Path) -> Result<Task> {
        match read_parsed(path, parse_task)? {
            Parsed::Missing => Err(self.missing(id)),
            Parsed::Ok(t) => Ok(t),
            Parsed::Invalid { detail, .. } => Err(StoreError::parse(path, detail)),
        }
    }

    fn write(&self, path: &Path, task: &Task) -> Result<()> {
        write_atomic(path, &pretty_bytes(task))
    }

    /// Names of the `*.json` files (no temp files, no lock directories).
    fn file_names(&self) -> Result<Vec<String>> {
        let Some(entries) = self.home.read_dir(&self.dir)? else {
            return Ok(Vec::new());
        };
        let mut names = Vec::new();
        for entry in entries {
            let entry = entry.map_err(io_at(&self.dir))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            if name.ends_with(".json") && !name.starts_with('.') && !is_temp_file(&name) {
                names.push(name);
            }
        }
        Ok(names)
    }

    /// Creates a pending task with a new id; every blocker must exist and gets the new id in
    /// its `blocks`.
    pub fn create(
        &self,
        subject: &str,
        description: &str,
        blocked_by: Vec<String>,
        metadata: Option<Map<String, Value>>,
    ) -> Result<Task> {
        let _list = self.lock_list()?;
        for blocker in &blocked_by {
            if !check_regular_file(&self.task_path(blocker)?)? {
                return Err(StoreError::not_found(format!(
                    "blocking task #{blocker} of team `{}`",
                    self.team
                )));
            }
        }
        let id = self.next_id()?;
        let mut task = Task::new(id.to_string(), subject, description);
        task.blocked_by = blocked_by;
        task.metadata = metadata;
        let path = self.task_path(&task.id)?;
        let guard = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
        self.write(&path, &task)?;
        drop(guard);
        self.raise_highwatermark(id)?;
        for blocker in &task.blocked_by {
            self.update(blocker, |b| {
                if !b.blocks.contains(&task.id) {
                    b.blocks.push(task.id.clone());
                }
                Ok(())
            })?;
        }
        Ok(task)
    }

    /// Every valid task, sorted by numeric id, and the files that were skipped.
    pub fn list(&self) -> Result<TaskListing> {
        let mut listing = TaskListing::default();
        for name in self.file_names()? {
            let path = self.dir.join(&name);
            let stem = name.trim_end_matches(".json");
            match read_parsed(&path, parse_task) {
                Ok(Parsed::Missing) => {}
                Ok(Parsed::Ok(task)) if task.id == stem => listing.tasks.push(task),
                Ok(Parsed::Ok(task)) => listing.problems.push(Problem::new(
                    &path,
                    format!("task id `{}` does not match the file name", task.id),
                )),
                Ok(Parsed::Invalid { detail, .. }) => {
                    listing.problems.push(Problem::new(&path, detail))
                }
                Err(e) => listing.problems.push(Problem::new(&path, e.to_string())),
            }
        }
        listing
            .tasks
            .sort_by(|a, b| a.numeric_id().cmp(&b.numeric_id()).then(a.id.cmp(&b.id)));
        listing.problems.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(listing)
    }

    /// One task.
    pub fn get(&self, id: &str) -> Result<Task> {
        let path = self.task_path(id)?;
        self.home.check_inside(&path)?;
        self.read_at(id, &path)
    }

    /// Read-modify-write of one task under `<id>.json.lock/`; written only if changed.
    pub fn update<R>(&self, id: &str, f: impl FnOnce(&mut Task) -> Result<R>) -> Result<R> {
        let (_guard, path) = self.lock_task(id)?;
        let before = self.read_at(id, &path)?;
        let mut task = before.clone();
        let result = f(&mut task)?;
        task.id = before.id.clone();
        if task != before {
            self.write(&path, &task)?;
        }
        Ok(result)
    }

    /// Marks a task completed and returns it.
    pub fn complete(&self, id: &str) -> Result<Task> {
        self.update(id, |t| {
            t.status = TaskStatus::Completed;
            Ok(t.clone())
        })
    }

    /// Sets every unfinished task of `owner` back to `pending` with no owner; returns them
    /// (as they are now).
    pub fn unassign_owner(&self, owner: &str) -> Result<Vec<Task>> {
        let mut changed = Vec::new();
        for task in self.list()?.tasks {
            if task.owner.as_deref() != Some(owner) || task.status == TaskStatus::Completed {
                continue;
            }
            let updated = self.update(&task.id, |t| {
                if t.owner.as_deref() == Some(owner) && t.status != TaskStatus::Completed {
                    t.owner = None;
                    t.status = TaskStatus::Pending;
                    Ok(Some(t.clone()))
                } else {
                    Ok(None)
                }
            });
            match updated {
                Ok(Some(t)) => changed.push(t),
                Ok(None) | Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(changed)
    }

    /// Deletes a task under the list lock: raises `.highwatermark` so the id is never reused,
    /// removes the file, and removes the id from every other task's `blocks`/`blockedBy`.
    pub fn delete(&self, id: &str) -> Result<Task> {
        let _list = self.lock_list()?;
        let task = {
            let (_guard, path) = self.lock_task(id)?;
            let task = self.read_at(id, &path)?;
            if let Ok(n) = id.parse::<u64>() {
                self.raise_highwatermark(n)?;
            }
            std::fs::remove_file(&path).map_err(io_at(&path))?;
            task
        };
        for other in self.list()?.tasks {
            if other.blocks.iter().any(|b| b == id) || other.blocked_by.iter().any(|b| b == id) {
                let cleaned = self.update(&other.id, |t| {
                    t.blocks.retain(|b| b != id);
                    t.blocked_by.retain(|b| b != id);
                    Ok(())
                });
                match cleaned {
                    Ok(()) | Err(StoreError::NotFound { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(task)
    }
}
