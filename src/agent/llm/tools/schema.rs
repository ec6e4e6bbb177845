//! The tools a teammate's model and the lead model are both offered, each defined once: its
//! JSON schema ([`send_message`], [`task_create`], [`task_list`]) and the type its input is read
//! into ([`SendMessageInput`], [`TaskCreateInput`]), with the field names of Claude Code's own
//! tools (SendMessage is `{to, message, summary}`, TaskCreate `{subject, description}`, task
//! references `taskId`). Only the wording for who calls it ([`Caller`]) differs. Reading a
//! call's input ([`read_input`]) and a task id ([`task_id`]) are shared too.

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::agent::llm::agent_loop::Call;
use crate::agent::llm::conversation::ToolSpec;
use crate::protocol::inbox::clip;

/// Who the tool is offered to (the wording of its description depends on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A teammate: it writes to members, `team-lead` or `*`.
    Teammate,
    /// The lead model: it writes to teammates or `*`, as `team-lead`.
    Lead,
}

/// SendMessage's schema.
pub fn send_message(caller: Caller) -> ToolSpec {
    let (description, to) = match caller {
        Caller::Teammate => (
            "Sends a message to a teammate by name, to \"team-lead\", or to \"*\" (everyone in \
             the team but you). This is the only way anyone sees what you say: your plain text \
             reaches no one.",
            "A member name, \"team-lead\", or \"*\"",
        ),
        Caller::Lead => (
            "Sends a message to a teammate by name, or to \"*\" (every teammate). This is the \
             only way to reach a teammate after it was spawned: your answers are seen by the \
             human only.",
            "A teammate's name, or \"*\"",
        ),
    };
    ToolSpec::new(
        "SendMessage",
        description,
        json!({
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": to},
                "message": {"type": "string", "description": "The message (markdown)"},
                "summary": {"type": "string", "description": "A 5-10 word preview shown in the recipient's list"}
            },
            "required": ["to", "message"]
        }),
    )
}

/// SendMessage's input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct SendMessageInput {
    pub to: String,
    /// `content` and `text` are read too (older Claude Code and other models' habits).
    #[serde(alias = "content", alias = "text")]
    pub message: String,
    #[serde(default)]
    pub summary: Option<String>,
}

impl SendMessageInput {
    /// The recipient as the model may write it (`@builder`, ` builder `).
    pub fn recipient(&self) -> String {
        self.to.trim().trim_start_matches('@').trim().to_string()
    }

    /// The summary given, trimmed and at most 200 characters; `None` when blank.
    pub fn summary(&self) -> Option<String> {
        self.summary
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| clip(s, 200))
    }
}

/// TaskCreate's schema.
pub fn task_create(caller: Caller) -> ToolSpec {
    let description = match caller {
        Caller::Teammate => {
            "Adds a pending task to the team's list (for work you find that someone should do)."
        }
        Caller::Lead => {
            "Adds a pending task to the team's shared task list. An idle teammate claims an \
             available task by itself (pending, no owner, every blocker completed), or you \
             give it to one with TaskAssign."
        }
    };
    ToolSpec::new(
        "TaskCreate",
        description,
        json!({
            "type": "object",
            "properties": {
                "subject": {"type": "string", "description": "A short imperative title"},
                "description": {"type": "string", "description": "What to do and how to know it is done"},
                "blockedBy": {"type": "array", "items": {"type": "string"}, "description": "Ids of tasks that must be completed first"},
                "command": {"type": "string", "description": "A shell command that does the task (shell teammates run it)"}
            },
            "required": ["subject", "description"]
        }),
    )
}

/// TaskCreate's input.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TaskCreateInput {
    pub subject: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, rename = "blockedBy", alias = "blocked_by")]
    pub blocked_by: Option<Vec<Value>>,
    #[serde(default)]
    pub command: Option<String>,
}

impl TaskCreateInput {
    /// The subject, trimmed; an error when it is blank.
    pub fn subject(&self) -> Result<String, String> {
        let subject = self.subject.trim();
        if subject.is_empty() {
            return Err("The subject is empty.".to_string());
        }
        Ok(subject.to_string())
    }

    /// The blockers' ids, each checked.
    pub fn blockers(&self) -> Result<Vec<String>, String> {
        self.blocked_by.iter().flatten().map(task_id).collect()
    }

    /// The command, when one is given.
    pub fn command(&self) -> Option<&str> {
        self.command.as_deref().filter(|c| !c.trim().is_empty())
    }
}

/// TaskList's schema.
pub fn task_list(caller: Caller) -> ToolSpec {
    let description = match caller {
        Caller::Teammate => {
            "Lists the team's tasks: id, status, owner, and what blocks each. A task is \
             available when it is pending, has no owner and all its blockers are completed."
        }
        Caller::Lead => {
            "Shows the task list (id, status, owner, blockers) and every teammate's status."
        }
    };
    ToolSpec::new(
        "TaskList",
        description,
        json!({"type": "object", "properties": {}}),
    )
}

/// The call's input as the tool's type; the error is what the model is told.
pub fn read_input<T: DeserializeOwned>(call: &Call) -> Result<T, String> {
    if let Value::String(raw) = &call.input {
        return Err(format!(
            "The input of {} was not valid JSON: {}",
            call.name,
            clip(raw, 200)
        ));
    }
    let input = if call.input.is_null() {
        json!({})
    } else {
        call.input.clone()
    };
    serde_json::from_value(input).map_err(|e| format!("Invalid input for {}: {e}", call.name))
}

/// A task id given as `"3"`, `3` or `"#3"`.
pub fn task_id(value: &Value) -> Result<String, String> {
    let text = match value {
        Value::String(s) => s.trim().trim_start_matches('#').to_string(),
        Value::Number(n) => n.to_string(),
        _ => String::new(),
    };
    if text.is_empty() || crate::protocol::names::check_path_component(&text).is_err() {
        return Err(format!("`{value}` is not a task id"));
    }
    Ok(text)
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
    fn both_callers_get_the_same_fields() {
        for spec in [send_message, task_create, task_list] {
            let (teammate, lead) = (spec(Caller::Teammate), spec(Caller::Lead));
            assert_eq!(teammate.name, lead.name);
            assert_ne!(teammate.description, lead.description);
            let fields = |s: &ToolSpec| {
                let mut props: Vec<String> = s.input_schema["properties"]
                    .as_object()
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default();
                props.sort();
                (props, s.input_schema["required"].clone())
            };
            assert_eq!(fields(&teammate), fields(&lead), "{}", teammate.name);
        }
        // Claude Code's SendMessage: to, message, summary.
        let send = send_message(Caller::Lead);
        assert_eq!(send.input_schema["required"], json!(["to", "message"]));
        assert!(send.input_schema["properties"].get("text").is_none());
    }

    #[test]
    fn inputs_are_read_leniently_and_checked() {
        let i: SendMessageInput = read_input(&call(
            "SendMessage",
            json!({"to": " @builder ", "text": "hi", "summary": "  "}),
        ))
        .expect("text is read as message");
        assert_eq!(
            (i.recipient().as_str(), i.message.as_str()),
            ("builder", "hi")
        );
        assert_eq!(i.summary(), None);
        let c: TaskCreateInput = read_input(&call(
            "TaskCreate",
            json!({"subject": " test ", "blocked_by": ["#1", 2], "command": " "}),
        ))
        .expect("read");
        assert_eq!(c.subject().as_deref(), Ok("test"));
        assert_eq!(c.blockers(), Ok(vec!["1".to_string(), "2".to_string()]));
        assert_eq!(c.command(), None);
        let bad: TaskCreateInput = read_input(&call(
            "TaskCreate",
            json!({"subject": "x", "blockedBy": ["../x"]}),
        ))
        .expect("read");
        assert!(bad.blockers().is_err());
        assert!(
            read_input::<SendMessageInput>(&call("SendMessage", Value::String("{".into())))
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
