//! The Anthropic Messages API: the request body (`model`, `max_tokens`, `system`, `messages`
//! of text / `tool_use` / `tool_result` blocks, `tools` with `input_schema`, `stream: true`)
//! and the streamed answer: `message_start` (input tokens), `content_block_start` (`text` or
//! `tool_use` with id and name), `content_block_delta` (`text_delta`, or `input_json_delta`
//! whose `partial_json` pieces make the tool input), `content_block_stop`, `message_delta`
//! (`stop_reason`, output tokens), `message_stop`, `ping`, and `error`. With prompt caching, the
//! system prompt (and with it the tools before it) and the conversation so far carry
//! `cache_control: {type: "ephemeral"}` breakpoints, so each step of a turn re-reads them from
//! the cache instead of paying for them again.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::agent::llm::conversation::{
    Block, Message, ModelResponse, Role, StopReason, StreamUpdate, TokenUsage, ToolSpec,
    alternating,
};
use crate::agent::llm::error::LlmError;
use crate::agent::llm::sse::SseEvent;

/// The request body; `cache` adds the prompt-caching breakpoints.
pub fn request_body(
    model: &str,
    max_tokens: u32,
    system: &str,
    messages: &[Message],
    tools: &[ToolSpec],
    cache: bool,
) -> Value {
    let breakpoint = || json!({"type": "ephemeral"});
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.is_empty() {
        let system = if cache {
            json!([{"type": "text", "text": system, "cache_control": breakpoint()}])
        } else {
            json!(system)
        };
        body.insert("system".into(), system);
    }
    let mut messages: Vec<Value> = alternating(messages).iter().map(message_json).collect();
    if cache
        && let Some(block) = messages
            .last_mut()
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|blocks| blocks.last_mut())
    {
        block["cache_control"] = breakpoint();
    }
    body.insert("messages".into(), Value::Array(messages));
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.input_schema,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn message_json(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message
        .content
        .iter()
        .map(|block| match block {
            Block::Text(text) => json!({"type": "text", "text": text}),
            Block::ToolUse { id, name, input } => {
                // An input that was not valid JSON is kept as text; the API wants an object.
                let input = if input.is_object() {
                    input.clone()
                } else {
                    json!({})
                };
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
            Block::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                let mut v = json!({
                    "type": "tool_result",
                    "tool_use_id": tool_use_id,
                    "content": content,
                });
                if *is_error {
                    v["is_error"] = json!(true);
                }
                v
            }
        })
        .collect();
    json!({"role": role, "content": content})
}

/// A content block being streamed.
#[derive(Debug)]
enum Partial {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
    /// `thinking`, `server_tool_use`, …: not kept.
    Other,
}

/// A streamed answer being read.
#[derive(Debug, Default)]
pub struct AnthropicStream {
    blocks: BTreeMap<u64, Partial>,
    usage: TokenUsage,
    stop: Option<String>,
    done: bool,
}

fn num(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

impl AnthropicStream {
    pub fn new() -> AnthropicStream {
        AnthropicStream::default()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    fn read_usage(&mut self, usage: &Value) {
        if let Some(n) = num(usage, "input_tokens") {
            self.usage.input_tokens = n;
        }
        if let Some(n) = num(usage, "output_tokens") {
            self.usage.output_tokens = n;
        }
        if let Some(n) = num(usage, "cache_read_input_tokens") {
            self.usage.cache_read_input_tokens = n;
        }
        if let Some(n) = num(usage, "cache_creation_input_tokens") {
            self.usage.cache_creation_input_tokens = n;
        }
    }

    /// Takes one SSE event.
    pub fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut dyn FnMut(StreamUpdate),
    ) -> Result<(), LlmError> {
        let data: Value = match serde_json::from_str(&event.data) {
            Ok(v) => v,
            Err(e) => {
                if event.event == "ping" {
                    return Ok(());
                }
                return Err(LlmError::Protocol(format!(
                    "a `{}` event whose data is not JSON: {e}",
                    event.event
                )));
            }
        };
        let kind = data
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or(&event.event)
            .to_string();
        let index = num(&data, "index").unwrap_or(0);
        match kind.as_str() {
            "message_start" => {
                if let Some(usage) = data.get("message").and_then(|m| m.get("usage")) {
                    self.read_usage(usage);
                }
            }
            "content_block_start" => {
                let block = data.get("content_block").cloned().unwrap_or(Value::Null);
                let text = |k: &str| {
                    block
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                let partial = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let start = text("text");
                        if !start.is_empty() {
                            out(StreamUpdate::Text(start.clone()));
                        }
                        Partial::Text(start)
                    }
                    Some("tool_use") => {
                        let name = text("name");
                        out(StreamUpdate::ToolCall { name: name.clone() });
                        // A non-empty starting input is the whole input (no deltas follow).
                        let json = match block.get("input") {
                            Some(Value::Object(m)) if !m.is_empty() => {
                                Value::Object(m.clone()).to_string()
                            }
                            _ => String::new(),
                        };
                        Partial::Tool {
                            id: text("id"),
                            name,
                            json,
                        }
                    }
                    _ => Partial::Other,
                };
                self.blocks.insert(index, partial);
            }
            "content_block_delta" => {
                let delta = data.get("delta").cloned().unwrap_or(Value::Null);
                let piece = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or("");
                match (
                    delta.get("type").and_then(Value::as_str),
                    self.blocks.get_mut(&index),
                ) {
                    (Some("text_delta"), Some(Partial::Text(text))) => {
                        let t = piece("text");
                        text.push_str(t);
                        if !t.is_empty() {
                            out(StreamUpdate::Text(t.to_string()));
                        }
                    }
                    (Some("input_json_delta"), Some(Partial::Tool { json, .. })) => {
                        json.push_str(piece("partial_json"));
                    }
                    (Some("text_delta" | "input_json_delta"), None) => {
                        return Err(LlmError::Protocol(format!(
                            "a delta for content block {index}, which never started"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" | "ping" => {}
            "message_delta" => {
                if let Some(reason) = data
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop = Some(reason.to_string());
                }
                if let Some(usage) = data.get("usage") {
                    self.read_usage(usage);
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let error = data.get("error").cloned().unwrap_or(Value::Null);
                let text = |k: &str| {
                    error
                        .get(k)
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string()
                };
                return Err(LlmError::Stream {
                    kind: text("type"),
                    message: text("message"),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// The answer, once `message_stop` has come.
    pub fn finish(self) -> Result<ModelResponse, LlmError> {
        if !self.done {
            return Err(LlmError::Protocol(
                "the stream ended before message_stop".to_string(),
            ));
        }
        let content: Vec<Block> = self
            .blocks
            .into_values()
            .filter_map(|partial| match partial {
                // The API refuses blank text blocks when they are sent back.
                Partial::Text(t) if t.trim().is_empty() => None,
                Partial::Text(t) => Some(Block::Text(t)),
                Partial::Tool { id, name, json } => {
                    let input = if json.trim().is_empty() {
                        json!({})
                    } else {
                        serde_json::from_str(&json).unwrap_or(Value::String(json))
                    };
                    Some(Block::ToolUse { id, name, input })
                }
                Partial::Other => None,
            })
            .collect();
        let has_tools = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop = match self.stop.as_deref() {
            Some(reason) => StopReason::parse(reason),
            None if has_tools => StopReason::ToolUse,
            None => StopReason::EndTurn,
        };
        Ok(ModelResponse {
            content,
            stop,
            usage: self.usage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::sse::SseDecoder;

    /// An answer as the API streams it: text, then a tool call whose input comes in pieces.
    const STREAM: &str = concat!(
        "event: message_start\n",
        "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":472,\"output_tokens\":2}}}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: ping\n",
        "data: {\"type\": \"ping\"}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"look.\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: content_block_start\n",
        "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"Bash\",\"input\":{}}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"command\\\": \\\"ca\"}}\n\n",
        "event: content_block_delta\n",
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"rgo test\\\"}\"}}\n\n",
        "event: content_block_stop\n",
        "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
        "event: message_delta\n",
        "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":89}}\n\n",
        "event: message_stop\n",
        "data: {\"type\":\"message_stop\"}\n\n",
    );

    fn read(stream: &str) -> (Result<ModelResponse, LlmError>, Vec<StreamUpdate>) {
        let mut decoder = SseDecoder::new();
        let mut reader = AnthropicStream::new();
        let mut updates = Vec::new();
        let mut events = decoder.feed(stream.as_bytes());
        events.extend(decoder.finish());
        for e in &events {
            if let Err(err) = reader.on_event(e, &mut |u| updates.push(u)) {
                return (Err(err), updates);
            }
        }
        (reader.finish(), updates)
    }

    #[test]
    fn text_and_a_tool_call_from_json_pieces() {
        let (response, updates) = read(STREAM);
        let response = response.unwrap();
        assert_eq!(
            response.content,
            vec![
                Block::Text("Let me look.".into()),
                Block::ToolUse {
                    id: "toolu_01".into(),
                    name: "Bash".into(),
                    input: json!({"command": "cargo test"}),
                }
            ]
        );
        assert_eq!(response.stop, StopReason::ToolUse);
        assert_eq!(response.usage.input_tokens, 472);
        assert_eq!(response.usage.output_tokens, 89);
        assert_eq!(
            updates,
            vec![
                StreamUpdate::Text("Let me ".into()),
                StreamUpdate::Text("look.".into()),
                StreamUpdate::ToolCall {
                    name: "Bash".into()
                }
            ]
        );
    }

    #[test]
    fn an_error_event_and_a_cut_stream() {
        let overloaded = "event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", \"message\": \"Overloaded\"}}\n\n";
        let (response, _) = read(overloaded);
        let err = response.unwrap_err();
        assert!(err.is_retryable());
        assert!(err.to_string().contains("overloaded_error"));
        let cut = &STREAM[..STREAM.find("event: message_delta").unwrap()];
        let err = read(cut).0.unwrap_err();
        assert!(matches!(err, LlmError::Protocol(_)), "{err}");
    }

    #[test]
    fn the_body_has_blocks_tools_and_stream() {
        let messages = vec![
            Message::user("hi"),
            Message::assistant(vec![Block::ToolUse {
                id: "toolu_1".into(),
                name: "Read".into(),
                input: json!({"file_path": "a"}),
            }]),
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "no such file".into(),
                    is_error: true,
                }],
            },
        ];
        let tools = vec![ToolSpec {
            name: "Read".into(),
            description: "reads".into(),
            input_schema: json!({"type": "object"}),
        }];
        let body = request_body("m", 100, "sys", &messages, &tools, false);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "max_tokens": 100,
                "system": "sys",
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "no such file", "is_error": true}]}
                ],
                "tools": [{"name": "Read", "description": "reads", "input_schema": {"type": "object"}}],
                "stream": true
            })
        );
        let cached = request_body("m", 100, "sys", &messages, &tools, true);
        assert_eq!(
            cached["system"],
            json!([{"type": "text", "text": "sys", "cache_control": {"type": "ephemeral"}}])
        );
        assert_eq!(
            cached["messages"][2]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(
            cached["messages"][0]["content"][0]
                .get("cache_control")
                .is_none()
        );
    }
}
