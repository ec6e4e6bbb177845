//! Edits of one task a person asks for (`/task done|reset|unassign|edit`, `teamlead task …`),
//! the lead's hold of a task it takes back (a failure, an interrupt), and its reset of a task
//! whose teammate reported it failed when the user lets others retry it. Each is one
//! read-modify-write under the task's lock ([`TaskList::update`]).

use serde_json::Value;

use super::TaskList;
use crate::store::error::Result;
use crate::{LEAD_NAME, Task, TaskStatus};

/// The key of `metadata` where the lead notes why a task went back to pending.
pub const FAILURE_NOTE_KEY: &str = "teamleadNote";

/// What `/task edit` changes: a new subject, a new description, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskEdit {
    pub subject: Option<String>,
    pub description: Option<String>,
}

/// What `/task assign` did.
#[derive(Debug, Clone)]
pub enum Assigned {
    /// The task was already the new owner's: nothing changed.
    Already(Task),
    /// The task is the new owner's; `before` owned it until now.
    Now { task: Task, before: Option<String> },
}

impl TaskList {
    /// Sets `owner` as the owner of task `id` (its status unchanged; a note of the lead's hold
    /// is cleared). A task already `owner`'s is left as it is.
    pub fn assign(&self, id: &str, owner: &str) -> Result<Assigned> {
        self.update(id, |t| {
            if t.owner.as_deref() == Some(owner) {
                return Ok(Assigned::Already(t.clone()));
            }
            let before = t.owner.replace(owner.to_string());
            clear_note(t);
            Ok(Assigned::Now {
                task: t.clone(),
                before,
            })
        })
    }

    /// Back to `pending` with no owner (a completed task is opened again); the lead's note of
    /// an earlier failure is cleared.
    pub fn reset(&self, id: &str) -> Result<Task> {
        self.update(id, |t| {
            t.status = TaskStatus::Pending;
            t.owner = None;
            clear_note(t);
            Ok(t.clone())
        })
    }

    /// No owner; a task in progress goes back to `pending` (a completed one stays completed).
    pub fn unassign(&self, id: &str) -> Result<Task> {
        self.update(id, |t| {
            t.owner = None;
            if t.status == TaskStatus::InProgress {
                t.status = TaskStatus::Pending;
            }
            Ok(t.clone())
        })
    }

    /// A new subject and/or description (the callers refuse an empty subject).
    pub fn edit(&self, id: &str, edit: &TaskEdit) -> Result<Task> {
        self.update(id, |t| {
            if let Some(subject) = &edit.subject {
                t.subject = subject.clone();
            }
            if let Some(description) = &edit.description {
                t.description = description.clone();
            }
            Ok(t.clone())
        })
    }

    /// The lead takes task `id` back from `owner` (a failure it reported, an interrupt): when
    /// `owner` still owns it unfinished, it becomes `pending` and owned by the lead
    /// (`team-lead`), with `note` in its metadata. Owned by the lead, it is available to
    /// nobody (PROTOCOL.md 5: a claim of a task with another owner fails), Claude Code's
    /// teammates included, until a person assigns it (`/task assign`) or resets it. `None`
    /// when the task had moved on (another owner, completed).
    pub fn hold(&self, id: &str, owner: &str, note: &str) -> Result<Option<Task>> {
        self.update(id, |t| {
            if t.owner.as_deref() != Some(owner) || t.status == TaskStatus::Completed {
                return Ok(None);
            }
            t.owner = Some(LEAD_NAME.to_string());
            t.status = TaskStatus::Pending;
            t.metadata.get_or_insert_with(Default::default).insert(
                FAILURE_NOTE_KEY.to_string(),
                Value::String(note.to_string()),
            );
            Ok(Some(t.clone()))
        })
    }

    /// [`TaskList::hold`] for every task `owner` has in progress.
    pub fn hold_in_progress(&self, owner: &str, note: &str) -> Result<Vec<Task>> {
        let mut held = Vec::new();
        for task in self.list()?.tasks {
            if task.owner.as_deref() == Some(owner)
                && task.status == TaskStatus::InProgress
                && !task.is_internal()
                && let Some(t) = self.hold(&task.id, owner, note)?
            {
                held.push(t);
            }
        }
        Ok(held)
    }

    /// The lead's answer to a teammate that reported `id` failed (or not run): when `owner`
    /// still owns it unfinished, it goes back to `pending` with no owner and `note` kept in
    /// its metadata. `None` when the task had moved on (another owner, completed).
    pub fn release_failed(&self, id: &str, owner: &str, note: &str) -> Result<Option<Task>> {
        self.update(id, |t| {
            if t.owner.as_deref() != Some(owner) || t.status == TaskStatus::Completed {
                return Ok(None);
            }
            t.owner = None;
            t.status = TaskStatus::Pending;
            t.metadata.get_or_insert_with(Default::default).insert(
                FAILURE_NOTE_KEY.to_string(),
                Value::String(note.to_string()),
            );
            Ok(Some(t.clone()))
        })
    }
}

fn clear_note(t: &mut Task) {
    if let Some(m) = t.metadata.as_mut() {
        m.remove(FAILURE_NOTE_KEY);
        if m.is_empty() {
            t.metadata = None;
        }
    }
}
