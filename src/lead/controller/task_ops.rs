//! The task edits a person asks for (`/task done|reset|unassign|edit`), and the lead taking a
//! task back: one whose teammate reported it failed or not run, and the tasks in progress of
//! a teammate whose turn the lead interrupted. Taken back, a task is *held by the lead*
//! (pending, owned by `team-lead`: claimable by nobody) with a note, so the teammate is no
//! longer `agent_busy` with it and no other teammate picks it up, until a person assigns it
//! (`retry-failed-tasks` instead leaves a failed one pending with no owner, for others to
//! try). Each edit is one job of the task lane.

use super::outcome::{OpError, Outcome, TaskStep, reported};
use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::commands::TaskChange;
use crate::protocol::display::visible_line;
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
                Err(e) => Err(OpError::Task {
                    step: TaskStep::Change,
                    id: Some(id.to_string()),
                    why: e.to_string(),
                }),
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
                Err(e) => Err(OpError::Task {
                    step: TaskStep::Edit,
                    id: Some(id.to_string()),
                    why: e.to_string(),
                }),
            };
            done(c, result)
        });
    }

    /// A teammate's idle report that says its task failed or was not run (teamlead's `shell`
    /// teammates: `idleReason: failed`, `completedStatus: failed`): the lead holds the task
    /// (`TaskList::hold`: pending, owned by the lead, claimable by nobody) until a person
    /// assigns it; with `retry-failed-tasks` it goes back to pending with no owner for another
    /// teammate to try. Either way with the reason in its metadata, and the transcript says so.
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
        let retry = self.settings.retry_failed_tasks();
        let (list, owner, task_id) = (self.task_list.clone(), from.to_string(), id.clone());
        let job = move |_: &crate::store::Home| {
            if retry {
                list.release_failed(&task_id, &owner, &note)
            } else {
                list.hold(&task_id, &owner, &note)
            }
        };
        let from = from.to_string();
        self.store.submit(Lane::Tasks, job, move |c, released| {
            c.reload_tasks();
            match released {
                Ok(Some(task)) => {
                    let (subject, why) = (visible_line(&task.subject), visible_line(&why));
                    c.note(if retry {
                        format!(
                            "Task #{id} \"{subject}\" is pending again, with no owner: {from} \
                             reported {why}. Another teammate may claim it and try it \
                             (retry-failed-tasks is on); {from} does not take it again by itself.",
                            id = task.id
                        )
                    } else {
                        format!(
                            "Task #{id} \"{subject}\" is held by the lead: {from} reported {why}. \
                             No teammate takes it until you assign it: /task assign {id} NAME.",
                            id = task.id
                        )
                    })
                }
                Ok(None) => {}
                Err(e) => c.note(format!(
                    "Could not take task #{id} back after {from}'s failure: {e}"
                )),
            }
        });
    }

    /// After an interrupt of `name`'s turn: the lead holds every task it had in progress
    /// (`TaskList::hold`), so it does not resume it and nobody claims it, and says how to give
    /// it out again; `then` runs once that is written (a steer's message comes after it).
    pub(super) fn hold_interrupted(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        let (list, owner) = (self.task_list.clone(), name.to_string());
        let note = format!("{name}: interrupted by the lead");
        let job = move |_: &crate::store::Home| list.hold_in_progress(&owner, &note);
        let who = name.to_string();
        self.store.submit(Lane::Tasks, job, move |c, held| {
            c.reload_tasks();
            match held {
                Ok(tasks) => {
                    for task in tasks {
                        c.note(format!(
                            "Task #{id} \"{subject}\" is held by the lead: {who} stopped \
                             working on it and does not resume it. /task assign {id} NAME gives \
                             it out again ({who} included).",
                            id = task.id,
                            subject = visible_line(&task.subject),
                        ));
                    }
                }
                Err(e) => c.note(format!(
                    "Could not take back the tasks {who} had in progress: {e}"
                )),
            }
            then(c);
        });
    }
}
