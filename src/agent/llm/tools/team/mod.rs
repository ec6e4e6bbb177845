//! The team tools (SendMessage, TaskList and TaskCreate with the schemas in [`schema`], which
//! the lead model's tools share): SendMessage (to a teammate, to `team-lead`, or `*` for
//! everyone else; a plain inbox entry with a summary, never a protocol frame) and the shared task list:
//! TaskList, TaskGet, TaskCreate, TaskUpdate (claiming goes through the store's claim, whose
//! failures — `task_not_found`, `already_claimed`, `already_resolved`, `blocked`,
//! `agent_busy` — come back as tool errors; completing, releasing and assigning check the
//! owner). Assigning a task to another member sends it a `task_assignment`.

mod tasks;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::schema::{self, Caller, SendMessageInput};
use super::{TurnState, parse, permit_team, spec};
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::LEAD_NAME;
use crate::protocol::frames::Frame;
use crate::protocol::inbox::{clip, first_line};
use crate::store;

pub(super) use tasks::{task_create, task_get, task_list, task_update};

pub fn specs() -> Vec<ToolSpec> {
    vec![
        schema::send_message(Caller::Teammate),
        schema::task_list(Caller::Teammate),
        spec(
            "TaskGet",
            "Shows one task in full: subject, description, status, owner, blockers.",
            json!({
                "type": "object",
                "properties": {"taskId": {"type": "string", "description": "The task id"}},
                "required": ["taskId"]
            }),
        ),
        schema::task_create(Caller::Teammate),
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

/// A task id given as `"3"`, `3` or `"#3"`.
pub(super) fn task_id(value: &serde_json::Value) -> Result<String, ToolOutput> {
    schema::task_id(value).map_err(ToolOutput::error)
}

/// The team's members other than `me` (the lead included).
pub(super) fn others(tm: &Teammate) -> Result<Vec<String>, ToolOutput> {
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
    let input: SendMessageInput = match parse(call) {
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
    let to = input.recipient();
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
        .summary()
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
