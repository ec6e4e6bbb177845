//! The task tools: TaskList and TaskGet (read-only), TaskCreate, and TaskUpdate, whose claim is
//! the store's claim (its failure codes become tool errors) and whose completing, giving back
//! and assigning check the owner under the task's lock.

use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::{others, task_id};
use crate::agent::error::blocking;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::tools::schema::TaskCreateInput;
use crate::agent::llm::tools::{TurnState, parse, permit_team};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::frames::{Frame, TaskAssignment};
use crate::protocol::time::now_iso;
use crate::protocol::{Task, TaskStatus};
use crate::store::tasks::{is_available, unfinished_blockers};
use crate::store::{self, StoreError};

#[derive(Debug, Deserialize)]
struct TaskIdInput {
    #[serde(rename = "taskId", alias = "task_id", alias = "id")]
    task_id: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct UpdateInput {
    #[serde(rename = "taskId", alias = "task_id", alias = "id")]
    task_id: serde_json::Value,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    owner: Option<String>,
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

fn status_word(task: &Task, all: &[Task]) -> String {
    let blockers = unfinished_blockers(task, all);
    match task.status {
        TaskStatus::Pending if !blockers.is_empty() => format!(
            "pending, blocked by {}",
            blockers
                .iter()
                .map(|b| format!("#{b}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        TaskStatus::Pending if is_available(task, all) => "pending, available".to_string(),
        other => other.as_str().to_string(),
    }
}

fn owner_word(task: &Task, me: &str) -> String {
    match task.owner.as_deref() {
        Some(o) if o == me => "you".to_string(),
        Some(o) => o.to_string(),
        None => "nobody".to_string(),
    }
}

/// One line per task (internal lifecycle tasks left out).
fn list_text(all: &[Task], me: &str) -> String {
    let lines: Vec<String> = all
        .iter()
        .filter(|t| !t.is_internal())
        .map(|t| {
            format!(
                "#{} [{}] {} (owner: {})",
                t.id,
                status_word(t, all),
                t.subject,
                owner_word(t, me)
            )
        })
        .collect();
    if lines.is_empty() {
        "The task list is empty.".to_string()
    } else {
        lines.join("\n")
    }
}

/// A task in full.
fn task_text(task: &Task, all: &[Task], me: &str) -> String {
    let mut text = format!(
        "Task #{}: {}\nStatus: {}\nOwner: {}\n",
        task.id,
        task.subject,
        status_word(task, all),
        owner_word(task, me)
    );
    if !task.blocked_by.is_empty() {
        let ids: Vec<String> = task.blocked_by.iter().map(|b| format!("#{b}")).collect();
        text.push_str(&format!("Blocked by: {}\n", ids.join(", ")));
    }
    if !task.blocks.is_empty() {
        let ids: Vec<String> = task.blocks.iter().map(|b| format!("#{b}")).collect();
        text.push_str(&format!("Blocks: {}\n", ids.join(", ")));
    }
    if let Some(meta) = task.metadata.as_ref().filter(|m| !m.is_empty()) {
        text.push_str(&format!(
            "Metadata: {}\n",
            serde_json::Value::Object(meta.clone())
        ));
    }
    text.push_str(&format!(
        "\nDescription:\n{}",
        if task.description.trim().is_empty() {
            "(none)"
        } else {
            &task.description
        }
    ));
    text
}

pub(in crate::agent::llm::tools) async fn task_list(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    if let Err(out) = permit_team(tm, call, true, state, cancel).await {
        return out;
    }
    match tm.mailroom.list_tasks() {
        Ok(listing) => ToolOutput::ok(list_text(&listing.tasks, &tm.config.name)),
        Err(e) => ToolOutput::error(format!("Cannot read the task list: {e}")),
    }
}

pub(in crate::agent::llm::tools) async fn task_get(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: TaskIdInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let id = match task_id(&input.task_id) {
        Ok(id) => id,
        Err(out) => return out,
    };
    if let Err(out) = permit_team(tm, call, true, state, cancel).await {
        return out;
    }
    let all = match tm.mailroom.list_tasks() {
        Ok(l) => l.tasks,
        Err(e) => return ToolOutput::error(format!("Cannot read the task list: {e}")),
    };
    match all.iter().find(|t| t.id == id) {
        Some(task) => ToolOutput::ok(task_text(task, &all, &tm.config.name)),
        None => ToolOutput::error(format!("There is no task #{id}.")),
    }
}

pub(in crate::agent::llm::tools) async fn task_create(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: TaskCreateInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    if let Err(out) = permit_team(tm, call, false, state, cancel).await {
        return out;
    }
    let (subject, blocked_by) = match (input.subject(), input.blockers()) {
        (Ok(subject), Ok(blocked_by)) => (subject, blocked_by),
        (Err(e), _) | (_, Err(e)) => return ToolOutput::error(e),
    };
    let metadata = input.command().map(|command| {
        let mut m = serde_json::Map::new();
        m.insert("command".to_string(), serde_json::Value::from(command));
        m
    });
    let list = match tm.mailroom.tasks() {
        Ok(l) => l,
        Err(e) => return ToolOutput::error(format!("Cannot open the task list: {e}")),
    };
    let description = input.description.unwrap_or_default();
    match blocking(move || list.create(&subject, &description, blocked_by, metadata)).await {
        Ok(task) => ToolOutput::ok(format!("Created task #{}: {}", task.id, task.subject)),
        Err(e) => ToolOutput::error(format!("Cannot create the task: {e}")),
    }
}

pub(in crate::agent::llm::tools) async fn task_update(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: UpdateInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let id = match task_id(&input.task_id) {
        Ok(id) => id,
        Err(out) => return out,
    };
    let status = match input.status.as_deref().map(str::trim) {
        None | Some("") => None,
        Some("pending") => Some(TaskStatus::Pending),
        Some("in_progress") => Some(TaskStatus::InProgress),
        Some("completed") => Some(TaskStatus::Completed),
        Some(other) => {
            return ToolOutput::error(format!(
                "Unknown status `{other}`: use pending, in_progress or completed."
            ));
        }
    };
    if let Err(out) = permit_team(tm, call, false, state, cancel).await {
        return out;
    }
    let me = tm.config.name.clone();
    let owner = input
        .owner
        .as_deref()
        .map(|o| o.trim().trim_start_matches('@').to_string());
    let assign_to = owner.clone().filter(|o| !o.is_empty() && o != &me);
    if let Some(name) = &assign_to {
        match others(tm) {
            Ok(members) if members.contains(name) => {}
            Ok(members) => {
                return ToolOutput::error(format!(
                    "There is no member named `{name}`. Members: {}.",
                    members.join(", ")
                ));
            }
            Err(out) => return out,
        }
    }
    let list = match tm.mailroom.tasks() {
        Ok(l) => l,
        Err(e) => return ToolOutput::error(format!("Cannot open the task list: {e}")),
    };
    let mut notes = Vec::new();

    // Fields first.
    if input.subject.is_some() || input.description.is_some() {
        let (subject, description) = (input.subject.clone(), input.description.clone());
        let (l, i) = (list.clone(), id.clone());
        let edited = blocking(move || {
            l.update(&i, |t| {
                if let Some(s) = subject.filter(|s| !s.trim().is_empty()) {
                    t.subject = s;
                }
                if let Some(d) = description {
                    t.description = d;
                }
                Ok(())
            })
        })
        .await;
        if let Err(e) = edited {
            return ToolOutput::error(format!("Cannot update task #{id}: {e}"));
        }
        notes.push("updated its text".to_string());
    }

    // Claiming: the store's claim with its failure reasons.
    let claims = assign_to.is_none()
        && (status == Some(TaskStatus::InProgress)
            || (status.is_none() && owner.as_deref() == Some(me.as_str())));
    if claims {
        match tm.mailroom.claim(&id, true).await {
            Ok(task) => notes.push(format!(
                "claimed it: \"{}\" is in_progress and yours",
                task.subject
            )),
            Err(e) => {
                return ToolOutput::error(format!("Cannot claim task #{id}: {} ({e}).", e.code()));
            }
        }
    }

    // Assigning to someone else.
    if let Some(name) = assign_to.clone() {
        let (l, i, n, me2) = (list.clone(), id.clone(), name.clone(), me.clone());
        let assigned = blocking(move || -> Result<Result<Task, String>, StoreError> {
            l.update(&i, |t| {
                if t.status == TaskStatus::Completed {
                    return Ok(Err(format!("task #{} is already completed", t.id)));
                }
                match t.owner.as_deref() {
                    Some(o) if o != me2 && o != n => {
                        return Ok(Err(format!("task #{} is owned by {o}", t.id)));
                    }
                    _ => {}
                }
                t.owner = Some(n.clone());
                Ok(Ok(t.clone()))
            })
        })
        .await;
        match assigned {
            Ok(Ok(task)) => {
                let frame = Frame::TaskAssignment(TaskAssignment {
                    task_id: task.id.clone(),
                    subject: task.subject.clone(),
                    description: task.description.clone(),
                    assigned_by: me.clone(),
                    timestamp: now_iso(),
                });
                if let Err(e) = tm.mailroom.send_frame(&name, &frame).await {
                    notes.push(format!(
                        "assigned it to {name}, but could not tell them: {e}"
                    ));
                } else {
                    notes.push(format!("assigned it to {name} (they were told)"));
                }
            }
            Ok(Err(why)) => return ToolOutput::error(format!("Cannot assign: {why}.")),
            Err(e) => return ToolOutput::error(format!("Cannot update task #{id}: {e}")),
        }
    }

    if assign_to.is_none()
        && let Some(status @ (TaskStatus::Completed | TaskStatus::Pending)) = status
    {
        return finish_status(&list, &id, &me, status, state, notes).await;
    }
    if assign_to.is_none() && status.is_none() && owner.as_deref() == Some("") {
        // Clearing the owner is giving it back.
        return finish_status(&list, &id, &me, TaskStatus::Pending, state, notes).await;
    }
    if status.is_some() && assign_to.is_some() {
        notes.push("its status is left to its new owner".to_string());
    }
    if notes.is_empty() {
        return ToolOutput::error("Nothing to change: give status, owner, subject or description.");
    }
    ToolOutput::ok(format!("Task #{id}: {}.", notes.join("; ")))
}

/// Completes or gives back task `id` (only its owner, or anyone when it has none).
async fn finish_status(
    list: &store::TaskList,
    id: &str,
    me: &str,
    status: TaskStatus,
    state: &mut TurnState,
    mut notes: Vec<String>,
) -> ToolOutput {
    let (l, i, me2) = (list.clone(), id.to_string(), me.to_string());
    let changed = blocking(move || -> Result<Result<Task, String>, StoreError> {
        l.update(&i, |t| {
            match t.owner.as_deref() {
                Some(o) if o != me2 => {
                    return Ok(Err(format!(
                        "task #{} is owned by {o}; only its owner changes its status",
                        t.id
                    )));
                }
                _ => {}
            }
            match status {
                TaskStatus::Completed => {
                    t.status = TaskStatus::Completed;
                    if t.owner.is_none() {
                        t.owner = Some(me2.clone());
                    }
                }
                TaskStatus::Pending | TaskStatus::InProgress => {
                    if t.status == TaskStatus::Completed {
                        return Ok(Err(format!("task #{} is already completed", t.id)));
                    }
                    t.status = TaskStatus::Pending;
                    t.owner = None;
                }
            }
            Ok(Ok(t.clone()))
        })
    })
    .await;
    match changed {
        Ok(Ok(task)) => {
            if status == TaskStatus::Completed {
                state.completed = Some(task.id.clone());
                notes.push("marked it completed".to_string());
            } else {
                notes.push("gave it back: pending, no owner".to_string());
            }
            ToolOutput::ok(format!("Task #{id}: {}.", notes.join("; ")))
        }
        Ok(Err(why)) => ToolOutput::error(format!("Cannot change it: {why}.")),
        Err(e) => ToolOutput::error(format!("Cannot update task #{id}: {e}")),
    }
}
