//! The team tools: SendMessage (to a teammate, to `team-lead`, or `*` for everyone else; a
//! plain inbox entry with a summary, never a protocol frame) and the shared task list:
//! TaskList, TaskGet, TaskCreate, TaskUpdate (claiming goes through the store's claim, whose
//! failures — `task_not_found`, `already_claimed`, `already_resolved`, `blocked`,
//! `agent_busy` — come back as tool errors; completing, releasing and assigning check the
//! owner). Assigning a task to another member sends it a `task_assignment`.

use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Call, ToolOutput, TurnState, parse, permit_team, spec};
use crate::agent::error::blocking;
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::frames::{Frame, TaskAssignment};
use crate::protocol::inbox::{clip, first_line};
use crate::protocol::time::now_iso;
use crate::protocol::{LEAD_NAME, Task, TaskStatus};
use crate::store::tasks::{is_available, unfinished_blockers};
use crate::store::{self, StoreError};

pub fn specs() -> Vec<ToolSpec> {
    vec![
        spec(
            "SendMessage",
            "Sends a message to a teammate by name, to \"team-lead\", or to \"*\" (everyone in \
             the team but you). This is the only way anyone sees what you say: your plain text \
             reaches no one.",
            json!({
                "type": "object",
                "properties": {
                    "to": {"type": "string", "description": "A member name, \"team-lead\", or \"*\""},
                    "message": {"type": "string", "description": "The message (markdown)"},
                    "summary": {"type": "string", "description": "A 5-10 word preview shown in the recipient's list"}
                },
                "required": ["to", "message"]
            }),
        ),
        spec(
            "TaskList",
            "Lists the team's tasks: id, status, owner, and what blocks each. A task is \
             available when it is pending, has no owner and all its blockers are completed.",
            json!({"type": "object", "properties": {}}),
        ),
        spec(
            "TaskGet",
            "Shows one task in full: subject, description, status, owner, blockers.",
            json!({
                "type": "object",
                "properties": {"taskId": {"type": "string", "description": "The task id"}},
                "required": ["taskId"]
            }),
        ),
        spec(
            "TaskCreate",
            "Adds a pending task to the team's list (for work you find that someone should do).",
            json!({
                "type": "object",
                "properties": {
                    "subject": {"type": "string", "description": "A short imperative title"},
                    "description": {"type": "string", "description": "What to do and how to know it is done"},
                    "blockedBy": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that must be completed first"}
                },
                "required": ["subject", "description"]
            }),
        ),
        spec(
            "TaskUpdate",
            "Changes a task. status \"in_progress\" claims it for you (fails if someone else \
             owns it, it is completed or blocked, or you already work on another task); \
             \"completed\" marks your task done (only when it really is); \"pending\" gives \
             your task back. owner assigns it to another member (they are told).",
            json!({
                "type": "object",
                "properties": {
                    "taskId": {"type": "string", "description": "The task id"},
                    "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
                    "owner": {"type": "string", "description": "Assign to this member"},
                    "subject": {"type": "string"},
                    "description": {"type": "string"}
                },
                "required": ["taskId"]
            }),
        ),
    ]
}

#[derive(Debug, Deserialize)]
struct SendInput {
    to: String,
    message: String,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Debug, Deserialize)]
struct TaskIdInput {
    #[serde(rename = "taskId", alias = "task_id", alias = "id")]
    task_id: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct CreateInput {
    subject: String,
    #[serde(default)]
    description: String,
    #[serde(default, rename = "blockedBy", alias = "blocked_by")]
    blocked_by: Vec<serde_json::Value>,
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

/// A task id given as `"3"`, `3` or `"#3"`.
fn task_id(value: &serde_json::Value) -> Result<String, ToolOutput> {
    let text = match value {
        serde_json::Value::String(s) => s.trim().trim_start_matches('#').to_string(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    if text.is_empty() || crate::protocol::names::check_path_component(&text).is_err() {
        return Err(ToolOutput::error(format!("`{value}` is not a task id")));
    }
    Ok(text)
}

/// The team's members other than `me` (the lead included).
fn others(tm: &Teammate) -> Result<Vec<String>, ToolOutput> {
    let team = store::read_team(&tm.config.home, &tm.config.team)
        .map_err(|e| ToolOutput::error(format!("Cannot read the team file: {e}")))?;
    let mut names: Vec<String> = team
        .members
        .iter()
        .map(|m| m.name.clone())
        .filter(|n| n != &tm.config.name)
        .collect();
    if !names.iter().any(|n| n == LEAD_NAME) {
        names.insert(0, LEAD_NAME.to_string());
    }
    Ok(names)
}

pub(super) async fn send_message(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: SendInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    if let Err(out) = permit_team(tm, call, true, state, cancel).await {
        return out;
    }
    if input.message.trim().is_empty() {
        return ToolOutput::error("The message is empty.");
    }
    if Frame::parse(&input.message).is_some() {
        return ToolOutput::error(
            "Messages are plain text; protocol frames cannot be sent with SendMessage.",
        );
    }
    let members = match others(tm) {
        Ok(m) => m,
        Err(out) => return out,
    };
    let to = input.to.trim().trim_start_matches('@').to_string();
    let recipients: Vec<String> = if to == "*" {
        members.clone()
    } else if to == tm.config.name {
        return ToolOutput::error("That is you: send to a teammate, team-lead or *.");
    } else if members.contains(&to) {
        vec![to.clone()]
    } else {
        return ToolOutput::error(format!(
            "There is no member named `{to}`. Members: {}, or * for all.",
            members.join(", ")
        ));
    };
    let summary = input
        .summary
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| clip(s, 200))
        .unwrap_or_else(|| clip(&first_line(&input.message), 80));
    let mut sent = Vec::new();
    for name in &recipients {
        let entry = tm.mailroom.entry(input.message.clone(), Some(&summary));
        match tm.mailroom.send(name, entry).await {
            Ok(()) => sent.push(name.clone()),
            Err(e) => {
                return ToolOutput::error(format!(
                    "Could not deliver to {name}: {e}{}",
                    if sent.is_empty() {
                        String::new()
                    } else {
                        format!(" (delivered to {})", sent.join(", "))
                    }
                ));
            }
        }
    }
    if sent.is_empty() {
        return ToolOutput::ok("Nobody else is in the team: the message went nowhere.");
    }
    ToolOutput::ok(format!("Message sent to {}.", sent.join(", ")))
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
pub(super) fn list_text(all: &[Task], me: &str) -> String {
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
pub(super) fn task_text(task: &Task, all: &[Task], me: &str) -> String {
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

pub(super) async fn task_list(
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

pub(super) async fn task_get(
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

pub(super) async fn task_create(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: CreateInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    if let Err(out) = permit_team(tm, call, false, state, cancel).await {
        return out;
    }
    if input.subject.trim().is_empty() {
        return ToolOutput::error("The subject is empty.");
    }
    let mut blocked_by = Vec::new();
    for v in &input.blocked_by {
        match task_id(v) {
            Ok(id) => blocked_by.push(id),
            Err(out) => return out,
        }
    }
    let list = match tm.mailroom.tasks() {
        Ok(l) => l,
        Err(e) => return ToolOutput::error(format!("Cannot open the task list: {e}")),
    };
    let (subject, description) = (input.subject.trim().to_string(), input.description);
    match blocking(move || list.create(&subject, &description, blocked_by, None)).await {
        Ok(task) => ToolOutput::ok(format!("Created task #{}: {}", task.id, task.subject)),
        Err(e) => ToolOutput::error(format!("Cannot create the task: {e}")),
    }
}

pub(super) async fn task_update(
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
