//! How an `llm` teammate's tool calls show in its inline transcript: each call as one line
//! (`Bash(cargo test)`, `SendMessage → team-lead: …`) and each result's first line (errors as
//! warnings). The model's text and the notices are shown by the agent loop's one printer
//! ([`agent_loop::Printer`](super::agent_loop::Printer)).

use serde_json::Value;

use super::agent_loop::{Call, ToolOutput};
use crate::agent::events::{EventSink, LogKind};
use crate::protocol::inbox::{clip, first_line, input_preview};

fn field<'a>(input: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter().find_map(|k| input.get(*k))
}

fn text_of(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// One line for a tool call.
pub fn call_line(call: &Call) -> String {
    let input = &call.input;
    let line = match call.name.as_str() {
        "SendMessage" => {
            let body = text_of(field(input, &["summary"]))
                .chars()
                .collect::<String>();
            let body = if body.is_empty() {
                first_line(&text_of(field(input, &["message"])))
            } else {
                body
            };
            format!("SendMessage → {}: {body}", text_of(field(input, &["to"])))
        }
        "TaskUpdate" | "TaskGet" => {
            let mut line = format!(
                "{} #{}",
                call.name,
                text_of(field(input, &["taskId", "task_id", "id"]))
            );
            for key in ["status", "owner"] {
                if let Some(v) = input.get(key) {
                    line.push_str(&format!(" {key}={}", text_of(Some(v))));
                }
            }
            line
        }
        "TaskCreate" => format!("TaskCreate \"{}\"", text_of(field(input, &["subject"]))),
        "TaskList" => "TaskList".to_string(),
        "SubmitPlan" => format!(
            "SubmitPlan: {}",
            first_line(&text_of(field(input, &["plan"])))
        ),
        name => format!("{name}({})", input_preview(name, input)),
    };
    clip(&line, 200)
}

/// Shows a call's result: errors as warnings; the first line of other results (Bash output
/// was already shown line by line).
pub fn show_result(events: &EventSink, call: &Call, output: &ToolOutput) {
    let first = clip(&first_line(&output.content), 160);
    if output.is_error {
        events.log(LogKind::Warning, format!("{}: {first}", call.name));
    } else if call.name != "Bash" {
        let more = output.content.lines().count().saturating_sub(1);
        let tail = if more > 0 {
            format!(" (+{more} lines)")
        } else {
            String::new()
        };
        events.log(LogKind::Output, format!("{first}{tail}"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_lines() {
        let call = |name: &str, input: Value| Call {
            id: "x".into(),
            name: name.into(),
            input,
        };
        assert_eq!(
            call_line(&call("Bash", json!({"command": "cargo test"}))),
            "Bash(cargo test)"
        );
        assert_eq!(
            call_line(&call(
                "SendMessage",
                json!({"to": "team-lead", "message": "All green.\nDetails…"})
            )),
            "SendMessage → team-lead: All green."
        );
        assert_eq!(
            call_line(&call(
                "TaskUpdate",
                json!({"taskId": "3", "status": "completed"})
            )),
            "TaskUpdate #3 status=completed"
        );
    }
}
