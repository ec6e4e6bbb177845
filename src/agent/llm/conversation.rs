//! The conversation a teammate keeps with its model, in a shape neither wire format owns:
//! user and assistant messages made of text, tool calls and tool results; a model request
//! (system prompt, messages, tools) and a model answer (content, why it stopped, tokens).

use serde_json::Value;

/// Who said it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    /// The model calls a tool.
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    /// What a tool call gave (sent back in a user message).
    ToolResult {
        tool_use_id: String,
        content: String,
        is_error: bool,
    },
}

impl Block {
    /// Characters it costs in the context (for the token estimate).
    pub fn chars(&self) -> usize {
        match self {
            Block::Text(t) => t.len(),
            Block::ToolUse { name, input, .. } => name.len() + input.to_string().len() + 20,
            Block::ToolResult { content, .. } => content.len() + 20,
        }
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub struct Message {
    pub role: Role,
    pub content: Vec<Block>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![Block::Text(text.into())],
        }
    }

    pub fn assistant(content: Vec<Block>) -> Message {
        Message {
            role: Role::Assistant,
            content,
        }
    }

    /// A user message that starts an exchange (it carries no tool result).
    pub fn is_prompt(&self) -> bool {
        self.role == Role::User
            && !self
                .content
                .iter()
                .any(|b| matches!(b, Block::ToolResult { .. }))
    }

    /// Its text blocks joined.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|b| match b {
                Block::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect();
        parts.join("\n")
    }

    /// Its tool calls: (id, name, input).
    pub fn tool_uses(&self) -> Vec<(&str, &str, &Value)> {
        self.content
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
                _ => None,
            })
            .collect()
    }

    pub fn chars(&self) -> usize {
        self.content.iter().map(Block::chars).sum::<usize>() + 10
    }
}

/// Messages with consecutive messages of one role merged (both wire formats want turns to
/// alternate) and empty messages dropped.
pub fn alternating(messages: &[Message]) -> Vec<Message> {
    let mut out: Vec<Message> = Vec::new();
    for m in messages.iter().filter(|m| !m.content.is_empty()) {
        match out.last_mut() {
            Some(last) if last.role == m.role => last.content.extend(m.content.iter().cloned()),
            _ => out.push(m.clone()),
        }
    }
    out
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of its input (an object).
    pub input_schema: Value,
}

impl ToolSpec {
    pub fn new(name: &str, description: &str, input_schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.to_string(),
            description: description.to_string(),
            input_schema,
        }
    }
}

/// One request to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopReason {
    /// It finished (`end_turn`, `stop`, `stop_sequence`).
    EndTurn,
    /// It wants tool results (`tool_use`, `tool_calls`).
    ToolUse,
    /// It ran out of `max_tokens` (`max_tokens`, `length`).
    MaxTokens,
    /// Anything else the service said (`refusal`, `content_filter`, `pause_turn`, …).
    Other(String),
}

impl StopReason {
    /// From Anthropic's `stop_reason` or OpenAI's `finish_reason`.
    pub fn parse(text: &str) -> StopReason {
        match text {
            "end_turn" | "stop" | "stop_sequence" => StopReason::EndTurn,
            "tool_use" | "tool_calls" | "function_call" => StopReason::ToolUse,
            "max_tokens" | "length" => StopReason::MaxTokens,
            other => StopReason::Other(other.to_string()),
        }
    }
}

/// Tokens one request used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

impl TokenUsage {
    /// Adds this request to a usage meter and returns the context it filled (input, cache
    /// and output tokens), which the compaction budget compares against.
    pub fn record(&self, meter: &crate::agent::events::UsageMeter) -> usize {
        meter.update(|u| {
            u.requests += 1;
            u.input_tokens += self.input_tokens;
            u.output_tokens += self.output_tokens;
            u.cache_read_input_tokens += self.cache_read_input_tokens;
            u.cache_creation_input_tokens += self.cache_creation_input_tokens;
        });
        (self.input_tokens
            + self.cache_read_input_tokens
            + self.cache_creation_input_tokens
            + self.output_tokens) as usize
    }
}

/// The model's complete answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelResponse {
    pub content: Vec<Block>,
    pub stop: StopReason,
    pub usage: TokenUsage,
}

/// What the stream shows while it comes.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamUpdate {
    /// More answer text.
    Text(String),
    /// The model started a tool call.
    ToolCall { name: String },
    /// An attempt failed and another follows after `delay`.
    Retrying {
        attempt: u32,
        delay: std::time::Duration,
        error: String,
    },
    /// The next attempt waits `wait` first: the service rate-limited this endpoint and key
    /// (in another session of the team, or in this one before a retry it already told).
    RateLimited { wait: std::time::Duration },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_roles_merge() {
        let msgs = vec![
            Message::user("a"),
            Message::user("b"),
            Message::assistant(vec![]),
            Message::assistant(vec![Block::Text("c".into())]),
        ];
        let merged = alternating(&msgs);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].text(), "a\nb");
        assert!(merged[0].is_prompt());
    }
}
