//! The task edits a person asks for (`/task done|reset|unassign|edit`), and the lead's own
//! reset of a task whose teammate reported it failed or not run: back to `pending` with no
//! owner and a note, so the teammate is no longer `agent_busy` with it and anyone (it too, on
//! an explicit `/task assign`) can take it again. Each edit is one job of the task lane.

use super::outcome::{OpError, Outcome, reported};
use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::commands::TaskChange;
use crate::protocol::frames::{IdleNotification, IdleReason};
use crate::store::tasks::TaskEdit;

impl Controller {
    /// `/task done|reset|unassign ID`.
    pub(super) fn change_task(&mut self, id: &str, change: TaskChange) {
        let (list, task_id) = (self.task_list.clone(), id.to_string());
        let job = move |_: &crate::store::Home| match change {
            TaskChange::Done => list.complete(&task_id),
            TaskChange::Reset => list.reset(&task_id),
            TaskChange::Unassign => list.unassign(&task_id),
        };
        let id = id.to_string();
        let done = reported();
        self.store.submit(Lane::Tasks, job, move |c, changed| {
            c.reload_tasks();
            let result = match changed {
                Ok(task) => Ok(Outcome::TaskChanged {
                    id: task.id,
                    subject: task.subject,
                    now: match change {
                        TaskChange::Done => "completed",
                        TaskChange::Reset => "pending, with no owner",
                        TaskChange::Unassign => "unassigned",
                    },
                }),
                Err(e) => Err(OpError::Refused(format!("Cannot change task #{id}: {e}"))),
            };
            done(c, result)
        });
    }

    /// `/task edit ID [--subject S] [--description D]`.
    pub(super) fn edit_task(&mut self, id: &str, edit: TaskEdit) {
        let (list, task_id) = (self.task_list.clone(), id.to_string());
        let job = move |_: &crate::store::Home| list.edit(&task_id, &edit);
        let id = id.to_string();
        let done = reported();
        self.store.submit(Lane::Tasks, job, move |c, edited| {
            c.reload_tasks();
            let result = match edited {
                Ok(task) => Ok(Outcome::TaskChanged {
                    id: task.id,
                    subject: task.subject,
                    now: "edited",
                }),
                Err(e) => Err(OpError::Refused(format!("Cannot edit task #{id}: {e}"))),
            };
            done(c, result)
        });
    }

    /// A teammate's idle report that says its task failed or was not run (teamlead's `shell`
    /// teammates: `idleReason: failed`, `completedStatus: failed`): the task goes back to
    /// pending with no owner and the reason in its metadata, and the transcript says so.
    pub(super) fn release_failed_task(&mut self, from: &str, notification: &IdleNotification) {
        let failed = notification.completed_status.as_deref() == Some("failed")
            || notification.idle_reason == Some(IdleReason::Failed);
        let Some(id) = notification.completed_task_id.clone().filter(|_| failed) else {
            return;
        };
        let why = notification
            .failure_reason
            .clone()
            .or_else(|| notification.summary.clone())
            .unwrap_or_else(|| "failed".to_string());
        let note = format!("{from}: {why}");
        let (list, owner, task_id) = (self.task_list.clone(), from.to_string(), id.clone());
        let job = move |_: &crate::store::Home| list.release_failed(&task_id, &owner, &note);
        let from = from.to_string();
        self.store.submit(Lane::Tasks, job, move |c, released| {
            c.reload_tasks();
            match released {
                Ok(Some(task)) => c.note(format!(
                    "Task #{} \"{}\" is pending again, with no owner: {from} reported {}. \
                     /task assign {} NAME to have it tried again.",
                    task.id,
                    crate::protocol::display::visible_line(&task.subject),
                    crate::protocol::display::visible_line(&why),
                    task.id
                )),
                Ok(None) => {}
                Err(e) => c.note(format!(
                    "Could not set task #{id} back to pending after {from}'s failure: {e}"
                )),
            }
        });
    }
}
