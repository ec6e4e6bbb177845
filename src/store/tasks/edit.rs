//! Edits of one task a person asks for (`/task done|reset|unassign|edit`, `teamlead task …`),
//! and the lead's reset of a task whose teammate reported it failed or refused. Each is one
//! read-modify-write under the task's lock ([`TaskList::update`]).

use serde_json::Value;

use super::TaskList;
use crate::protocol::{Task, TaskStatus};
use crate::store::error::Result;

/// The key of `metadata` where the lead notes why a task went back to pending.
pub const FAILURE_NOTE_KEY: &str = "teamleadNote";

/// What `/task edit` changes: a new subject, a new description, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskEdit {
    pub subject: Option<String>,
    pub description: Option<String>,
}

impl TaskList {
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
