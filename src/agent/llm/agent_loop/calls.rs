//! The loop's own types: one call the model made ([`Call`]), what running it gave
//! ([`ToolOutput`], with a [`Control`] that ends the turn), and the one cut of a result that is
//! too long ([`clip_result`]). They live beside the loop that uses them; the tools of a teammate
//! and of the lead model both make them.

use serde_json::Value;

use crate::protocol::frames::ShutdownRequest;

/// The most characters of one tool result sent to the model.
pub const RESULT_CHARS: usize = 30_000;

/// One call the model made.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub input: Value,
}

impl Call {
    /// The tool calls of an assistant message, in order.
    pub fn all_of(message: &crate::agent::llm::conversation::Message) -> Vec<Call> {
        message
            .tool_uses()
            .into_iter()
            .map(|(id, name, input)| Call {
                id: id.to_string(),
                name: name.to_string(),
                input: input.clone(),
            })
            .collect()
    }
}

/// What the turn must do after a call, besides sending its result.
#[derive(Debug, Clone, PartialEq)]
pub enum Control {
    /// The turn was interrupted while the call waited or ran.
    Interrupted,
    /// The lead asked for a shutdown while the call waited.
    Shutdown(Box<ShutdownRequest>),
}

/// The outcome of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    pub content: String,
    pub is_error: bool,
    pub control: Option<Control>,
}

impl ToolOutput {
    pub fn ok(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: false,
            control: None,
        }
    }

    pub fn error(content: impl Into<String>) -> ToolOutput {
        ToolOutput {
            content: content.into(),
            is_error: true,
            control: None,
        }
    }

    pub fn interrupted() -> ToolOutput {
        ToolOutput {
            content: "Interrupted by the user: not done.".to_string(),
            is_error: true,
            control: Some(Control::Interrupted),
        }
    }
}

/// A result cut to [`RESULT_CHARS`]: its start and its end, with a note of what was left out.
pub fn clip_result(text: &str) -> String {
    let count = text.chars().count();
    if count <= RESULT_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(RESULT_CHARS / 3).collect();
    let tail: String = text.chars().skip(count - RESULT_CHARS * 2 / 3).collect();
    format!(
        "{head}\n… [{} characters left out] …\n{tail}",
        count - head.chars().count() - tail.chars().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_results_keep_both_ends() {
        let text = format!("START{}END", "x".repeat(RESULT_CHARS * 2));
        let clipped = clip_result(&text);
        assert!(clipped.starts_with("START") && clipped.ends_with("END"));
        assert!(clipped.chars().count() < RESULT_CHARS + 100);
        assert!(clipped.contains("characters left out"));
    }
}
