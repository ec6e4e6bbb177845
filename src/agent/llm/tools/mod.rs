//! The tools an `llm` teammate's model may call, with their JSON schemas, and running one call:
//! the input is read into the tool's own type (a bad input is a tool error the model sees),
//! the permission gate decides (asking the lead when it says so, through the teammate's
//! asker), then the tool runs. Files and commands: Bash, Read, Write, Edit, Glob, Grep. The
//! team: SendMessage, TaskList, TaskGet, TaskCreate, TaskUpdate, and SubmitPlan (plan mode).
//! Every result has the teammate's own key scrubbed out before the model or anyone sees it.
//! SendMessage, TaskList and TaskCreate have the schemas the lead model's tools share
//! ([`schema`]).

mod files;
mod plan;
pub mod schema;
mod search;
mod shell;
mod team;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::agent::events::{LogKind, TeammateEventKind};
use crate::agent::gate::ask::{AskContext, Authorization, authorize_call};
use crate::agent::gate::{ToolCall, ToolUse};
use crate::agent::llm::LlmConfig;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;

/// What a turn tracks across its calls.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnState {
    /// The teammate's model configuration (its keys are scrubbed out of every result).
    pub config: LlmConfig,
    /// The task the turn works on (id, subject), for the `Working` status.
    pub task: Option<(String, String)>,
    /// A task of this teammate it marked completed in this turn.
    pub completed: Option<String>,
}

impl TurnState {
    /// The state of a new turn of a teammate with this configuration.
    pub fn new(config: &LlmConfig) -> TurnState {
        TurnState {
            config: config.clone(),
            task: None,
            completed: None,
        }
    }
}

/// Every tool, in the order the model is shown them.
pub fn specs() -> Vec<ToolSpec> {
    let mut all = Vec::new();
    all.extend(shell::specs());
    all.extend(files::specs());
    all.extend(search::specs());
    all.extend(team::specs());
    all.extend(plan::specs());
    all
}

pub(crate) fn spec(name: &str, description: &str, input_schema: Value) -> ToolSpec {
    ToolSpec::new(name, description, input_schema)
}

/// The call's input as the tool's type; the error is what the model is told.
pub(crate) fn parse<T: DeserializeOwned>(call: &Call) -> Result<T, ToolOutput> {
    schema::read_input(call).map_err(ToolOutput::error)
}

/// The permission outcome of a call.
pub(crate) enum Permit {
    /// Go ahead; the lead may have edited the input.
    Go {
        updated_input: Option<Value>,
    },
    Refused(ToolOutput),
    Interrupted,
}

/// Asks the gate (and through it the lead) for `tool`, made by `call`.
pub(crate) async fn permit(
    tm: &mut Teammate,
    tool: &ToolUse,
    call: &Call,
    state: &TurnState,
    cancel: &CancellationToken,
) -> Permit {
    let authorization = {
        let ctx = AskContext {
            asker: &tm.asker,
            name: &tm.config.name,
            color: tm.config.color.as_deref(),
            events: &tm.events,
            cancel,
        };
        let details = ToolCall {
            tool_use_id: &call.id,
            input: &call.input,
        };
        authorize_call(&mut tm.gate, tool, Some(details), &ctx).await
    };
    match authorization {
        Authorization::Allowed {
            asked,
            updated_input,
            mode,
        } => {
            if asked {
                tm.events
                    .log(LogKind::Note, "permission granted by team-lead");
                tm.events.send(TeammateEventKind::Working {
                    task: state.task.clone(),
                });
            }
            if let Some(mode) = mode {
                tm.change_mode(mode, "team-lead").await;
            }
            Permit::Go { updated_input }
        }
        Authorization::Denied { asked, reason } => {
            if asked {
                tm.events.send(TeammateEventKind::Working {
                    task: state.task.clone(),
                });
            }
            let who = if asked {
                "team-lead denied it"
            } else {
                "not allowed"
            };
            Permit::Refused(ToolOutput::error(format!(
                "Permission to use {} was refused ({who}): {reason}. Do not retry the same call; change your approach or ask team-lead with SendMessage.",
                tool.tool_name()
            )))
        }
        Authorization::Interrupted => Permit::Interrupted,
    }
}

/// Runs one call: parse, permission, the tool itself; its result without the teammate's key
/// (the agent loop clips it before the model sees it).
pub(crate) async fn run(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let mut output = match call.name.as_str() {
        "Bash" => shell::bash(tm, call, state, cancel).await,
        "Read" => files::read(tm, call, state, cancel).await,
        "Write" => files::write(tm, call, state, cancel).await,
        "Edit" => files::edit(tm, call, state, cancel).await,
        "Glob" => search::glob(tm, call, state, cancel).await,
        "Grep" => search::grep(tm, call, state, cancel).await,
        "SendMessage" => team::send_message(tm, call, state, cancel).await,
        "TaskList" => team::task_list(tm, call, state, cancel).await,
        "TaskGet" => team::task_get(tm, call, state, cancel).await,
        "TaskCreate" => team::task_create(tm, call, state, cancel).await,
        "TaskUpdate" => team::task_update(tm, call, state, cancel).await,
        "SubmitPlan" => plan::submit_plan(tm, call, state, cancel).await,
        other => ToolOutput::error(format!(
            "There is no tool named `{other}`. Use one of: {}.",
            specs()
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    };
    output.content = scrub_secrets(state, &output.content);
    output
}

/// `text` without the teammate's own API key or token (a file or a command's output may hold
/// it: the model, the transcript and the messages never get it).
pub(crate) fn scrub_secrets(state: &TurnState, text: &str) -> String {
    state.config.scrub(text)
}

/// A team tool's permission (never asks; plan mode lets only the read-only ones through).
pub(crate) async fn permit_team(
    tm: &mut Teammate,
    call: &Call,
    read_only: bool,
    state: &TurnState,
    cancel: &CancellationToken,
) -> Result<(), ToolOutput> {
    let tool = ToolUse::Team {
        tool: call.name.clone(),
        read_only,
    };
    match permit(tm, &tool, call, state, cancel).await {
        Permit::Go { .. } => Ok(()),
        Permit::Refused(out) => Err(out),
        Permit::Interrupted => Err(ToolOutput::interrupted()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_an_object_schema_and_a_unique_name() {
        let all = specs();
        let mut names: Vec<&str> = all.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(
            names,
            vec![
                "Bash",
                "Read",
                "Write",
                "Edit",
                "Glob",
                "Grep",
                "SendMessage",
                "TaskList",
                "TaskGet",
                "TaskCreate",
                "TaskUpdate",
                "SubmitPlan"
            ]
        );
        names.sort();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for s in &all {
            assert_eq!(s.input_schema["type"], "object", "{}", s.name);
            assert!(s.input_schema.get("properties").is_some(), "{}", s.name);
            assert!(!s.description.is_empty());
        }
    }
}
