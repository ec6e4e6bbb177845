//! The lead model's tools, with their JSON schemas, and reading one call into a typed
//! [`LeadTool`]: SpawnTeammate, TaskCreate, TaskAssign, TaskList, SendMessage and
//! ShutdownTeammate. SendMessage, TaskCreate and TaskList are the teammates' tools, schema and
//! input alike (`agent::llm::tools::schema`); only their wording differs. The controller runs
//! them through the same code as the slash commands. There is deliberately no tool to answer a
//! permission request or a plan: those stay with the human.

use serde::Deserialize;
use serde_json::{Value, json};

use crate::agent::llm::agent_loop::Call;
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::llm::tools::schema::{
    self, Caller, SendMessageInput, TaskCreateInput, read_input, task_id,
};
use crate::protocol::PermissionMode;
use crate::protocol::inbox::{clip, first_line};

/// One call of the lead model, read and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeadTool {
    SpawnTeammate {
        name: String,
        prompt: String,
        plan_mode_required: bool,
        mode: Option<PermissionMode>,
    },
    TaskCreate {
        subject: String,
        description: String,
        blocked_by: Vec<String>,
        command: Option<String>,
    },
    TaskAssign {
        task_id: String,
        owner: String,
    },
    TaskList,
    SendMessage {
        /// A teammate's name, or `*` for every teammate.
        to: String,
        message: String,
        summary: Option<String>,
    },
    ShutdownTeammate {
        name: String,
    },
}

/// Every lead tool, in the order the model is shown them.
pub fn lead_tool_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec::new(
            "SpawnTeammate",
            "Starts a new teammate: another agent with its own context that works in parallel. \
             It does not see this conversation: the prompt must say everything it needs (the \
             goal, where to look, how to report back with SendMessage). Its name may get a \
             suffix when taken; the result says the name it got.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "A short lower-case name such as \"builder\" or \"tester\""},
                    "prompt": {"type": "string", "description": "Its instructions, self-contained"},
                    "plan_mode_required": {"type": "boolean", "description": "It must have a plan approved by the human before it changes anything"},
                    "mode": {"type": "string", "enum": ["default", "acceptEdits", "plan", "bypassPermissions"], "description": "Its permission mode (default: the lead's)"}
                },
                "required": ["name", "prompt"]
            }),
        ),
        schema::task_create(Caller::Lead),
        ToolSpec::new(
            "TaskAssign",
            "Gives a task to a teammate: it becomes the owner and is told with a task_assignment \
             message.",
            json!({
                "type": "object",
                "properties": {
                    "taskId": {"type": "string", "description": "The task id"},
                    "owner": {"type": "string", "description": "The teammate's name"}
                },
                "required": ["taskId", "owner"]
            }),
        ),
        schema::task_list(Caller::Lead),
        schema::send_message(Caller::Lead),
        ToolSpec::new(
            "ShutdownTeammate",
            "Asks a teammate to finish and leave the team (it may refuse while it works). Its \
             unfinished tasks go back to pending.",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "The teammate's name"}
                },
                "required": ["name"]
            }),
        ),
    ]
}

#[derive(Debug, Deserialize)]
struct SpawnInput {
    name: String,
    prompt: String,
    #[serde(default, alias = "planModeRequired")]
    plan_mode_required: Option<bool>,
    #[serde(default)]
    mode: Option<String>,
}

#[derive(Debug, Deserialize)]
struct AssignInput {
    #[serde(rename = "taskId", alias = "task_id", alias = "id")]
    task_id: Value,
    #[serde(alias = "name", alias = "to")]
    owner: String,
}

#[derive(Debug, Deserialize)]
struct NameInput {
    name: String,
}

/// Why a call of the lead model's tools cannot run: the sentence the model is told (and the
/// lead's note shows).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadCall(pub String);

impl From<String> for BadCall {
    fn from(text: String) -> BadCall {
        BadCall(text)
    }
}

impl From<&str> for BadCall {
    fn from(text: &str) -> BadCall {
        BadCall(text.to_string())
    }
}

/// A member name as the model may write it (`@builder`, ` builder `).
fn member_name(text: &str) -> Result<String, BadCall> {
    let name = text.trim().trim_start_matches('@').trim().to_string();
    if name.is_empty() {
        return Err(BadCall::from("the name is empty"));
    }
    Ok(name)
}

fn input<T: for<'de> Deserialize<'de>>(call: &Call) -> Result<T, BadCall> {
    read_input(call).map_err(BadCall)
}

/// Reads one call; the error is what the model is told.
pub fn parse_call(call: &Call) -> Result<LeadTool, BadCall> {
    match call.name.as_str() {
        "SpawnTeammate" => {
            let i: SpawnInput = input(call)?;
            if i.prompt.trim().is_empty() {
                return Err(BadCall::from(
                    "the prompt is empty: say what the teammate should do",
                ));
            }
            let mode = match i.mode.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
                Some(m) => Some(
                    m.parse::<PermissionMode>()
                        .map_err(|e| BadCall(e.to_string()))?,
                ),
                None => None,
            };
            Ok(LeadTool::SpawnTeammate {
                name: member_name(&i.name)?,
                prompt: i.prompt,
                plan_mode_required: i.plan_mode_required.unwrap_or(false),
                mode,
            })
        }
        "TaskCreate" => {
            let i: TaskCreateInput = input(call)?;
            Ok(LeadTool::TaskCreate {
                subject: i.subject()?,
                blocked_by: i.blockers()?,
                command: i.command().map(str::to_string),
                description: i.description.unwrap_or_default(),
            })
        }
        "TaskAssign" => {
            let i: AssignInput = input(call)?;
            Ok(LeadTool::TaskAssign {
                task_id: task_id(&i.task_id)?,
                owner: member_name(&i.owner)?,
            })
        }
        "TaskList" => Ok(LeadTool::TaskList),
        "SendMessage" => {
            let i: SendMessageInput = input(call)?;
            if i.message.trim().is_empty() {
                return Err(BadCall::from("The message is empty."));
            }
            let to = i.recipient();
            if to.is_empty() {
                return Err(BadCall::from(
                    "Say who the message is for: a teammate's name or *.",
                ));
            }
            Ok(LeadTool::SendMessage {
                to,
                summary: i.summary(),
                message: i.message,
            })
        }
        "ShutdownTeammate" => {
            let i: NameInput = input(call)?;
            Ok(LeadTool::ShutdownTeammate {
                name: member_name(&i.name)?,
            })
        }
        other => Err(BadCall(format!(
            "there is no tool named `{other}`; use one of: {}",
            lead_tool_specs()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// One line for the transcript: what the lead model is doing.
pub fn call_line(tool: &LeadTool) -> String {
    let line = match tool {
        LeadTool::SpawnTeammate { name, prompt, .. } => {
            format!("SpawnTeammate {name}: {}", first_line(prompt))
        }
        LeadTool::TaskCreate { subject, .. } => format!("TaskCreate \"{subject}\""),
        LeadTool::TaskAssign { task_id, owner } => format!("TaskAssign #{task_id} → {owner}"),
        LeadTool::TaskList => "TaskList".to_string(),
        LeadTool::SendMessage {
            to,
            message,
            summary,
        } => format!(
            "SendMessage → {to}: {}",
            summary.clone().unwrap_or_else(|| first_line(message))
        ),
        LeadTool::ShutdownTeammate { name } => format!("ShutdownTeammate {name}"),
    };
    clip(&line, 160)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, input: Value) -> Call {
        Call {
            id: "toolu_1".into(),
            name: name.into(),
            input,
        }
    }

    #[test]
    fn every_tool_has_an_object_schema_and_none_answers_permissions() {
        let names: Vec<String> = lead_tool_specs().into_iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            [
                "SpawnTeammate",
                "TaskCreate",
                "TaskAssign",
                "TaskList",
                "SendMessage",
                "ShutdownTeammate"
            ]
        );
        for s in lead_tool_specs() {
            assert_eq!(s.input_schema["type"], "object");
            let name = s.name.to_lowercase();
            assert!(
                !name.contains("permission") && !name.contains("plan"),
                "{name}"
            );
        }
    }

    #[test]
    fn calls_are_read_leniently_and_checked() {
        assert_eq!(
            parse_call(&call(
                "SpawnTeammate",
                json!({"name": "@builder", "prompt": "build it", "mode": "acceptEdits"})
            )),
            Ok(LeadTool::SpawnTeammate {
                name: "builder".into(),
                prompt: "build it".into(),
                plan_mode_required: false,
                mode: Some(PermissionMode::AcceptEdits),
            })
        );
        assert_eq!(
            parse_call(&call(
                "TaskAssign",
                json!({"task_id": 3, "owner": "builder"})
            )),
            Ok(LeadTool::TaskAssign {
                task_id: "3".into(),
                owner: "builder".into()
            })
        );
        assert_eq!(
            parse_call(&call(
                "TaskCreate",
                json!({"subject": "test", "blocked_by": ["#1", 2]})
            )),
            Ok(LeadTool::TaskCreate {
                subject: "test".into(),
                description: String::new(),
                blocked_by: vec!["1".into(), "2".into()],
                command: None
            })
        );
        assert!(
            parse_call(&call(
                "TaskAssign",
                json!({"task_id": "../x", "owner": "b"})
            ))
            .is_err()
        );
        assert!(
            parse_call(&call(
                "SpawnTeammate",
                json!({"name": "b", "mode": "yolo", "prompt": "p"})
            ))
            .is_err()
        );
        assert!(parse_call(&call("SendMessage", json!({"to": "b", "message": "  "}))).is_err());
        // Claude Code's field names, as the teammates' SendMessage reads them.
        assert_eq!(
            parse_call(&call(
                "SendMessage",
                json!({"to": "@builder", "message": "Build it.", "summary": "build"})
            )),
            Ok(LeadTool::SendMessage {
                to: "builder".into(),
                message: "Build it.".into(),
                summary: Some("build".into()),
            })
        );
        assert!(
            parse_call(&call("AnswerPermission", json!({})))
                .unwrap_err()
                .0
                .contains("no tool named")
        );
        assert!(parse_call(&call("TaskAssign", Value::String("{".into()))).is_err());
    }
}
