//! Claiming a task (the five failures of PROTOCOL.md 5) and availability, computed on every
//! read: pending, no owner, every `blockedBy` id completed.

use super::TaskList;
use crate::store::error::StoreError;
use crate::{Task, TaskStatus};

/// Why a claim failed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimError {
    #[error("task #{id} not found")]
    TaskNotFound { id: String },
    #[error("task is already claimed by {owner}")]
    AlreadyClaimed { owner: String },
    #[error("task is already completed")]
    AlreadyResolved,
    #[error("task is blocked by unfinished task(s) {}", by.iter().map(|b| format!("#{b}")).collect::<Vec<_>>().join(", "))]
    Blocked { by: Vec<String> },
    #[error("the claimant already works on task #{task}")]
    AgentBusy { task: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl ClaimError {
    /// The protocol's name for the failure (`task_not_found`, `already_claimed`, …).
    pub fn code(&self) -> &'static str {
        match self {
            ClaimError::TaskNotFound { .. } => "task_not_found",
            ClaimError::AlreadyClaimed { .. } => "already_claimed",
            ClaimError::AlreadyResolved => "already_resolved",
            ClaimError::Blocked { .. } => "blocked",
            ClaimError::AgentBusy { .. } => "agent_busy",
            ClaimError::Store(_) => "store_error",
        }
    }
}

/// Ids in `task.blockedBy` whose task exists in `all` and is not completed (a deleted blocker
/// no longer blocks).
pub fn unfinished_blockers(task: &Task, all: &[Task]) -> Vec<String> {
    task.blocked_by
        .iter()
        .filter(|id| {
            all.iter()
                .any(|t| &t.id == *id && t.status != TaskStatus::Completed)
        })
        .cloned()
        .collect()
}

/// Pending, no owner, and every blocker completed.
pub fn is_available(task: &Task, all: &[Task]) -> bool {
    task.status == TaskStatus::Pending
        && task.owner.is_none()
        && unfinished_blockers(task, all).is_empty()
}

/// The available tasks of `all` (internal lifecycle tasks are never available: they are not
/// pending-without-owner work).
pub fn available(all: &[Task]) -> Vec<&Task> {
    all.iter()
        .filter(|t| !t.is_internal() && is_available(t, all))
        .collect()
}

/// A task field (teamlead's own) a claim made on a host's mirror carries: `<name>/<uuid>`, new
/// for each claim, so the lead's word on exactly this claim can be told from an older one.
pub const CLAIM_KEY: &str = "teamleadClaim";

/// A task field only the lead's end of a link writes: the [`CLAIM_KEY`] of the host's claim it
/// applied under its own lock. A teammate on a host starts the work of a task it claimed only
/// once its mirror shows it (or gives up when the owner is someone else): a claim on a mirror
/// is a proposal until the lead's list holds it.
pub const CLAIM_HELD_KEY: &str = "teamleadClaimHeld";

impl TaskList {
    /// Claims task `id` for `owner` under the task's lock: sets `owner` and `in_progress`.
    /// With `check_busy`, fails when `owner` already has another unfinished (non-internal) task.
    /// Claiming a task one already owns again succeeds.
    pub fn claim(&self, id: &str, owner: &str, check_busy: bool) -> Result<Task, ClaimError> {
        self.claim_marked(id, owner, check_busy, None)
    }

    /// [`TaskList::claim`], and with `mark`, [`CLAIM_KEY`] set to it in the same locked write.
    pub fn claim_marked(
        &self,
        id: &str,
        owner: &str,
        check_busy: bool,
        mark: Option<&str>,
    ) -> Result<Task, ClaimError> {
        let all = self.list()?.tasks;
        if check_busy
            && let Some(busy) = all.iter().find(|t| {
                t.id != id
                    && !t.is_internal()
                    && t.owner.as_deref() == Some(owner)
                    && t.status != TaskStatus::Completed
            })
        {
            return Err(ClaimError::AgentBusy {
                task: busy.id.clone(),
            });
        }
        let result = self.update(id, |task| {
            Ok(claim_checks(task, owner, &all).map(|()| {
                task.owner = Some(owner.to_string());
                task.status = TaskStatus::InProgress;
                if let Some(mark) = mark {
                    task.extra.insert(
                        CLAIM_KEY.to_string(),
                        serde_json::Value::String(mark.into()),
                    );
                }
                task.clone()
            }))
        });
        match result {
            Ok(inner) => inner,
            Err(StoreError::NotFound { .. }) => {
                Err(ClaimError::TaskNotFound { id: id.to_string() })
            }
            Err(e) => Err(ClaimError::Store(e)),
        }
    }
}

fn claim_checks(task: &Task, owner: &str, all: &[Task]) -> Result<(), ClaimError> {
    if task.status == TaskStatus::Completed {
        return Err(ClaimError::AlreadyResolved);
    }
    if let Some(current) = &task.owner
        && current != owner
    {
        return Err(ClaimError::AlreadyClaimed {
            owner: current.clone(),
        });
    }
    let blockers = unfinished_blockers(task, all);
    if !blockers.is_empty() {
        return Err(ClaimError::Blocked { by: blockers });
    }
    Ok(())
}
