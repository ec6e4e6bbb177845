//! `/task assign ID NAME` (and the lead model's TaskAssign): the owner is set in the task
//! lane, then the new owner hears of it (`task_assignment`; held while its rate limit holds).
//! Assigning a task to its current owner is nothing: no second assignment (which would make
//! it start the task over), and the note says so. Reassigning a task another teammate owned
//! answers what that teammate asked for the task and still waits (its permission requests,
//! denied as no longer needed, with the new owner named), so no request for work that is no
//! longer its own stays in the queue; the note says which.

use super::outcome::{Done, OpError, Outcome, TaskStep};
use super::state::Controller;
use super::store_worker::Lane;
use crate::lead::contract::PermissionDecision;
use crate::protocol::display::visible_line;
use crate::protocol::frames::{Frame, TaskAssignment};
use crate::protocol::time::now_iso;
use crate::protocol::{InboxEntry, LEAD_NAME, Task, TaskStatus};
use crate::store::tasks::Assigned;

/// Assignments kept for teammates whose rate or usage limit holds, sent when it resets
/// (`release_held_assignments`).
#[derive(Debug, Default)]
pub struct HeldAssignments(Vec<(Task, String)>);

impl HeldAssignments {
    /// Keeps `task` for `owner` until its limit resets.
    fn hold(&mut self, task: Task, owner: String) {
        self.0.push((task, owner));
    }

    /// Every assignment kept, taken (those still held are kept again).
    fn take_all(&mut self) -> Vec<(Task, String)> {
        std::mem::take(&mut self.0)
    }
}

impl Controller {
    /// `/task assign ID NAME`: sets the owner (in the task lane) and then sends
    /// `task_assignment` to it; `done` hears when the owner is set.
    pub fn assign_task(&mut self, id: &str, name: &str, done: Done) {
        let (id, name) = (id.to_string(), name.to_string());
        self.with_teammate(&name.clone(), move |c, known| {
            c.assign_known(&id, &name, known, done)
        });
    }

    fn assign_known(&mut self, id: &str, name: &str, known: bool, done: Done) {
        if !known {
            let e = self.no_such_teammate_error(name);
            return done(self, Err(e));
        }
        if let Some(how) = self
            .roster
            .get(name)
            .and_then(|t| t.stopped().map(str::to_string))
        {
            let e = OpError::NotRunning {
                name: name.to_string(),
                how,
            };
            return done(self, Err(e));
        }
        if let Some(why) = self.over_budget(name) {
            let e = OpError::Paused {
                name: name.to_string(),
                why,
                task: id.to_string(),
            };
            return done(self, Err(e));
        }
        let (list, task_id, owner) = (self.task_list.clone(), id.to_string(), name.to_string());
        let set = move |_: &crate::store::Home| list.assign(&task_id, &owner);
        let (id, name) = (id.to_string(), name.to_string());
        self.store.submit(Lane::Tasks, set, move |c, updated| {
            c.reload_tasks();
            let (task, before) = match updated {
                Ok(Assigned::Already(task)) => {
                    return done(
                        c,
                        Ok(Outcome::TaskAlreadyOwned {
                            id: task.id,
                            subject: visible_line(&task.subject).into_owned(),
                            owner: name,
                        }),
                    );
                }
                Ok(Assigned::Now { task, before }) => (task, before),
                Err(e) => {
                    let e = OpError::Task {
                        step: TaskStep::Assign,
                        id: Some(id.to_string()),
                        why: e.to_string(),
                    };
                    return done(c, Err(e));
                }
            };
            if let Some(before) = before.filter(|b| b != LEAD_NAME) {
                c.withdraw_requests_for(&task, &before, &name);
            }
            // A teammate whose rate or usage limit holds hears of it when the limit resets
            // (`release_held_assignments`).
            if let Some(until) = c.limited_until(&name) {
                c.held_assignments.hold(task.clone(), name.clone());
                c.note(format!(
                    "{name} is rate-limited until {}: it hears of task #{} then.",
                    crate::protocol::time::local_clock(until).unwrap_or_else(|| "later".into()),
                    task.id
                ));
                return done(
                    c,
                    Ok(Outcome::TaskAssigned {
                        id: task.id,
                        subject: task.subject,
                        owner: name,
                    }),
                );
            }
            // Acknowledged once the owner knows (its `task_assignment` is written).
            let (task_ref, owner) = (task.clone(), name.clone());
            c.send_assignment(&task_ref, &owner, move |c| {
                done(
                    c,
                    Ok(Outcome::TaskAssigned {
                        id: task.id,
                        subject: task.subject,
                        owner: name,
                    }),
                )
            });
        });
    }

    /// Until when (epoch ms) `name`'s rate or usage limit holds, if it does now.
    pub(super) fn limited_until(&self, name: &str) -> Option<u64> {
        let now = crate::protocol::time::now_ms();
        self.roster
            .get(name)
            .and_then(|t| t.rate_limited_until())
            .filter(|u| *u > now)
    }

    /// Sends the assignments held for teammates whose limit has reset (at the safety poll and
    /// after each transcript read).
    pub(super) fn release_held_assignments(&mut self) {
        for (task, owner) in self.held_assignments.take_all() {
            if !self.knows_teammate(&owner) {
                continue;
            }
            if self.limited_until(&owner).is_some() {
                self.held_assignments.hold(task, owner);
                continue;
            }
            self.note(format!(
                "{owner}'s limit has reset: it hears of task #{} now.",
                task.id
            ));
            self.send_assignment(&task, &owner, |_| {});
        }
    }

    /// Sends `task_assignment` for `task` to `owner`; `then` runs once it is written (or could
    /// not be: that is told).
    pub(super) fn send_assignment(
        &mut self,
        task: &Task,
        owner: &str,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        let frame = Frame::TaskAssignment(TaskAssignment {
            task_id: task.id.clone(),
            subject: task.subject.clone(),
            description: task.description.clone(),
            assigned_by: LEAD_NAME.to_string(),
            timestamp: now_iso(),
        });
        let what = format!("Could not tell {owner} about task #{}", task.id);
        // A claude teammate whose model has no task tools gets the assignment as plain
        // instructions (`controller::claude_facts`).
        let entry = if self
            .roster
            .get(owner)
            .is_some_and(|t| t.claude().lacks_task_tools())
        {
            InboxEntry::new(LEAD_NAME, super::claude_facts::plain_assignment(task))
                .with_summary(Some(&format!("Task #{} is yours", task.id)))
        } else {
            InboxEntry::frame(LEAD_NAME, &frame)
        };
        self.deliver(owner, entry, move |c, sent| {
            if let Err(e) = sent {
                c.note(format!("{what}: {e}"));
            }
            then(c)
        });
    }

    /// `task`, owned by `before` until now, is `after`'s: `before`'s permission requests for it
    /// are answered as no longer needed. Which are for it: those that name it (teamlead's
    /// teammates describe a task's command as `subject (task #ID)`), and all of `before`'s when
    /// `before` had no other task in progress (a turn works on one task).
    fn withdraw_requests_for(&mut self, task: &Task, before: &str, after: &str) {
        // The cached list still shows the task as `before`'s.
        let only_task = !self.cache.tasks().iter().any(|t| {
            t.id != task.id
                && t.owner.as_deref() == Some(before)
                && t.status == TaskStatus::InProgress
                && !t.is_internal()
        });
        let names_it = format!("(task #{})", task.id);
        let keys: Vec<(u64, String)> = self
            .permissions
            .views()
            .into_iter()
            .filter(|p| p.worker == before && (only_task || p.description.contains(&names_it)))
            .map(|p| (p.key, request_label(&p.tool_name, &p.input)))
            .collect();
        if keys.is_empty() {
            return;
        }
        let feedback = format!(
            "No longer needed: task #{} is now {after}'s, not yours. Leave it.",
            task.id
        );
        let mut what = Vec::new();
        for (key, label) in keys {
            self.answer_permission(
                key,
                PermissionDecision::Deny {
                    feedback: Some(feedback.clone()),
                },
            );
            what.push(label);
        }
        self.publish();
        self.note(format!(
            "Task #{} was {before}'s: its request{} for it ({}) {} answered as no longer needed.",
            task.id,
            if what.len() == 1 { "" } else { "s" },
            what.join(", "),
            if what.len() == 1 { "was" } else { "were" },
        ));
    }
}

/// `Bash \`make\``: a request in a few words.
fn request_label(tool: &str, input: &serde_json::Value) -> String {
    match input.get("command").and_then(|c| c.as_str()) {
        Some(cmd) => format!(
            "{tool} `{}`",
            crate::protocol::inbox::clip(&visible_line(cmd.lines().next().unwrap_or("")), 40)
        ),
        None => tool.to_string(),
    }
}
