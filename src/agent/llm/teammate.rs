//! What an `llm` teammate keeps between turns ([`LlmState`]: its model [`Session`] and the
//! tasks it has already been told to work on), and choosing the task a turn starts with: one it
//! owns and has not been given yet (claimed if it was only assigned), else an available one it
//! claims. A task it owns stays its own after a turn that did not finish it, and is not offered
//! again (it claims nothing else meanwhile) until it completes it, gives it back, or the lead
//! reassigns it.

use std::collections::HashSet;

use super::config::LlmConfig;
use super::error::LlmError;
use super::session::Session;
use crate::agent::events::LogKind;
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::{Task, TaskStatus};
use crate::store::ClaimError;
use crate::store::tasks::{available, unfinished_blockers};

/// One `llm` teammate's state between turns.
#[derive(Debug)]
pub(crate) struct LlmState {
    pub session: Session,
    /// Tasks it has been given in a turn (and still owns).
    pub offered: HashSet<String>,
}

impl LlmState {
    /// The state of a teammate of `team`: its session shares rate-limit pauses with the team.
    pub fn new(config: &LlmConfig, tm: &Teammate) -> Result<LlmState, LlmError> {
        let mut session = Session::new(config)?;
        session.share_rate_limits(&tm.config.home, &tm.config.team);
        Ok(LlmState {
            session,
            offered: HashSet::new(),
        })
    }
}

/// A task to start the turn with, and whether it was claimed just now (from the available
/// ones) rather than already its own.
pub(crate) async fn pick_task(tm: &mut Teammate, state: &mut LlmState) -> Option<(Task, bool)> {
    let all = match tm.mailroom.list_tasks() {
        Ok(listing) => listing.tasks,
        Err(e) => {
            tm.events
                .log(LogKind::Warning, format!("cannot read the task list: {e}"));
            return None;
        }
    };
    let me = tm.config.name.clone();
    let mine: Vec<&Task> = all
        .iter()
        .filter(|t| {
            t.owner.as_deref() == Some(me.as_str())
                && t.status != TaskStatus::Completed
                && !t.is_internal()
        })
        .collect();
    state.offered.retain(|id| mine.iter().any(|t| &t.id == id));
    for task in &mine {
        if state.offered.contains(&task.id) || !unfinished_blockers(task, &all).is_empty() {
            continue;
        }
        if task.status == TaskStatus::InProgress {
            return match tm.mailroom.ready_to_work(task).await {
                Ok(t) => Some((t, false)),
                Err(e) => {
                    tm.events.log(
                        LogKind::Note,
                        format!("not starting task #{} yet: {e}", task.id),
                    );
                    None
                }
            };
        }
        match tm.mailroom.claim(&task.id, false).await {
            Ok(t) => return Some((t, false)),
            Err(e) => tm.events.log(
                LogKind::Warning,
                format!("cannot start task #{} assigned to me: {e}", task.id),
            ),
        }
    }
    if !mine.is_empty() {
        return None;
    }
    for task in available(&all) {
        if tm.declined.contains(&task.id) {
            continue;
        }
        match tm.mailroom.claim(&task.id, true).await {
            Ok(claimed) => return Some((claimed, true)),
            Err(ClaimError::AgentBusy { .. }) => return None,
            Err(e) => tracing::debug!(teammate = %me, "claim #{}: {e}", task.id),
        }
    }
    None
}

/// The task it works on now, for its status: the first unfinished one it owns.
pub(crate) fn current_task(tm: &Teammate) -> Option<(String, String)> {
    let me = tm.config.name.as_str();
    tm.mailroom.list_tasks().ok().and_then(|listing| {
        listing
            .tasks
            .into_iter()
            .find(|t| {
                t.owner.as_deref() == Some(me)
                    && t.status == TaskStatus::InProgress
                    && !t.is_internal()
            })
            .map(|t| (t.id, t.subject))
    })
}
