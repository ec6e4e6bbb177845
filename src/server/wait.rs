//! The conditions of `teamlead ctl T wait`, checked against the latest snapshots a client
//! has seen ([`Seen`]).

use crate::lead::contract::{LeadEvent, PendingPermission, PendingPlan, TaskView, TeammateView};

use super::story::status_word;

/// What `wait` waits for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WaitFor {
    /// No task is pending or in progress (internal tasks aside).
    TasksDone,
    /// Every teammate is idle (there is at least one) and nothing waits for an answer.
    Idle,
    /// A permission request or a plan waits for an answer.
    Approval,
    /// This teammate has this status ([`super::story::STATUS_WORDS`]; a teammate not in the
    /// team is `gone`).
    Teammate { name: String, status: String },
}

/// The latest snapshots.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub team: Vec<TeammateView>,
    pub tasks: Vec<TaskView>,
    pub permissions: Vec<PendingPermission>,
    pub plans: Vec<PendingPlan>,
}

impl Seen {
    /// Takes one event into account.
    pub fn apply(&mut self, event: &LeadEvent) {
        match event {
            LeadEvent::Team(t) => self.team = t.clone(),
            LeadEvent::Tasks(t) => self.tasks = t.clone(),
            LeadEvent::Permissions(p) => self.permissions = p.clone(),
            LeadEvent::Plans(p) => self.plans = p.clone(),
            _ => {}
        }
    }
}

impl WaitFor {
    /// Does the condition hold?
    pub fn holds(&self, seen: &Seen) -> bool {
        match self {
            WaitFor::TasksDone => seen
                .tasks
                .iter()
                .filter(|t| !t.internal)
                .all(|t| t.status == "completed"),
            WaitFor::Idle => {
                !seen.team.is_empty()
                    && seen.permissions.is_empty()
                    && seen.plans.is_empty()
                    && seen.team.iter().all(|t| status_word(&t.status).0 == "idle")
            }
            WaitFor::Approval => !seen.permissions.is_empty() || !seen.plans.is_empty(),
            WaitFor::Teammate { name, status } => {
                let now = seen
                    .team
                    .iter()
                    .find(|t| &t.name == name)
                    .map_or("gone", |t| status_word(&t.status).0);
                now == status
            }
        }
    }

    /// The condition in words (for a timeout's message).
    pub fn describe(&self) -> String {
        match self {
            WaitFor::TasksDone => "every task to be done".to_string(),
            WaitFor::Idle => "every teammate to be idle".to_string(),
            WaitFor::Approval => "a request waiting for approval".to_string(),
            WaitFor::Teammate { name, status } => format!("{name} to be {status}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_done_ignores_internal_tasks_and_a_missing_teammate_is_gone() {
        let task = |status: &str, internal| TaskView {
            id: "1".into(),
            subject: "s".into(),
            status: status.into(),
            owner: None,
            blocked_by: vec![],
            internal,
        };
        let mut seen = Seen {
            tasks: vec![task("completed", false), task("pending", true)],
            ..Seen::default()
        };
        assert!(WaitFor::TasksDone.holds(&seen));
        seen.tasks.push(task("in_progress", false));
        assert!(!WaitFor::TasksDone.holds(&seen));
        assert!(!WaitFor::Idle.holds(&seen));
        let gone = WaitFor::Teammate {
            name: "x".into(),
            status: "gone".into(),
        };
        assert!(gone.holds(&seen));
    }
}
