//! How an `llm` teammate's work shows in its inline transcript: the model's text as it streams
//! (complete lines as notes), each tool call as one line (`Bash(cargo test)`,
//! `SendMessage → team-lead: …`), each result's first line (errors as warnings), and retries.

use serde_json::Value;

use super::conversation::StreamUpdate;
use super::tools::{Call, ToolOutput};
use crate::agent::events::{EventSink, LogKind, UsageMeter};
use crate::protocol::inbox::{clip, first_line, input_preview};

/// Turns stream updates into transcript lines: text is shown a whole line at a time.
#[derive(Debug)]
pub struct StreamPrinter {
    events: EventSink,
    usage: UsageMeter,
    pending: String,
}

impl StreamPrinter {
    pub fn new(events: &EventSink, usage: &UsageMeter) -> StreamPrinter {
        StreamPrinter {
            events: events.clone(),
            usage: usage.clone(),
            pending: String::new(),
        }
    }

    pub fn update(&mut self, update: StreamUpdate) {
        match update {
            StreamUpdate::Text(text) => {
                self.pending.push_str(&text);
                if let Some(end) = self.pending.rfind('\n') {
                    let lines: String = self.pending[..end].to_string();
                    self.pending = self.pending[end + 1..].to_string();
                    if !lines.trim().is_empty() {
                        self.events.log(LogKind::Note, lines.trim_end().to_string());
                    }
                }
            }
            StreamUpdate::ToolCall { .. } => self.flush(),
            StreamUpdate::Retrying {
                attempt,
                delay,
                error,
            } => {
                self.flush();
                self.usage.update(|u| u.retries += 1);
                self.events.log(
                    LogKind::Warning,
                    format!(
                        "{error}; trying again in {:.1} s (attempt {attempt})",
                        delay.as_secs_f64()
                    ),
                );
            }
        }
    }

    /// Shows the text not yet shown (the end of an answer, or before a retry).
    pub fn flush(&mut self) {
        let rest = std::mem::take(&mut self.pending);
        if !rest.trim().is_empty() {
            self.events.log(LogKind::Note, rest.trim_end().to_string());
        }
    }
}

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
