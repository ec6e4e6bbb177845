//! OpenAI-compatible Chat Completions: the request body (`model`, `messages` with a `system`
//! message, assistant `tool_calls` and `tool` results, `tools` of `type: "function"`,
//! `stream: true`, `stream_options: {include_usage: true}`, `max_tokens` only when configured)
//! and the streamed answer: chunks whose `choices[0].delta` carries `content` pieces and
//! `tool_calls[{index, id, type, function: {name, arguments}}]` pieces (the arguments string
//! arrives in parts), a `finish_reason` (`stop`, `tool_calls`, `length`), a last chunk with
//! `usage`, then `data: [DONE]`. Works with OpenAI, Ollama, vLLM and llama.cpp's server.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::agent::llm::conversation::{
    Block, Message, ModelResponse, Role, StopReason, StreamUpdate, TokenUsage, ToolSpec,
    alternating,
};
use crate::agent::llm::error::LlmError;
use crate::agent::llm::sse::SseEvent;

/// The request body.
pub fn request_body(
    model: &str,
    max_tokens: Option<u32>,
    system: &str,
    messages: &[Message],
    tools: &[ToolSpec],
) -> Value {
    let mut out = Vec::new();
    if !system.is_empty() {
        out.push(json!({"role": "system", "content": system}));
    }
    for message in alternating(messages) {
        push_message(&mut out, &message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(out));
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.input_schema,
                    }
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(max) = max_tokens {
        body.insert("max_tokens".into(), json!(max));
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    Value::Object(body)
}

fn push_message(out: &mut Vec<Value>, message: &Message) {
    let text = message.text();
    match message.role {
        Role::User => {
            // Tool results first: they must follow the assistant message that called.
            for block in &message.content {
                if let Block::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } = block
                {
                    let content = if *is_error {
                        format!("Error: {content}")
                    } else {
                        content.clone()
                    };
                    out.push(
                        json!({"role": "tool", "tool_call_id": tool_use_id, "content": content}),
                    );
                }
            }
            if message.content.iter().any(|b| matches!(b, Block::Text(_))) {
                out.push(json!({"role": "user", "content": text}));
            }
        }
        Role::Assistant => {
            let calls: Vec<Value> = message
                .tool_uses()
                .into_iter()
                .map(|(id, name, input)| {
                    let arguments = if input.is_object() {
                        input.to_string()
                    } else {
                        "{}".to_string()
                    };
                    json!({
                        "id": id,
                        "type": "function",
                        "function": {"name": name, "arguments": arguments},
                    })
                })
                .collect();
            let mut m = json!({"role": "assistant"});
            if calls.is_empty() {
                m["content"] = json!(text);
            } else {
                m["content"] = if text.is_empty() {
                    Value::Null
                } else {
                    json!(text)
                };
                m["tool_calls"] = Value::Array(calls);
            }
            out.push(m);
        }
    }
}

/// A tool call being streamed.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// A streamed answer being read.
#[derive(Debug, Default)]
pub struct OpenAiStream {
    text: String,
    calls: BTreeMap<u64, PartialCall>,
    finish: Option<String>,
    usage: TokenUsage,
    done: bool,
}

impl OpenAiStream {
    pub fn new() -> OpenAiStream {
        OpenAiStream::default()
    }

    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Takes one SSE event (a chunk, or `[DONE]`).
    pub fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut dyn FnMut(StreamUpdate),
    ) -> Result<(), LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::Protocol(format!("a chunk that is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let text = |k: &str| error.get(k).and_then(Value::as_str).map(str::to_string);
            return Err(LlmError::Stream {
                kind: text("type")
                    .or_else(|| text("code"))
                    .unwrap_or_else(|| "error".to_string()),
                message: text("message").unwrap_or_else(|| error.to_string()),
            });
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let n = |k: &str| usage.get(k).and_then(Value::as_u64);
            self.usage.input_tokens = n("prompt_tokens").unwrap_or(self.usage.input_tokens);
            self.usage.output_tokens = n("completion_tokens").unwrap_or(self.usage.output_tokens);
            if let Some(cached) = usage
                .get("prompt_tokens_details")
                .and_then(|d| d.get("cached_tokens"))
                .and_then(Value::as_u64)
            {
                self.usage.cache_read_input_tokens = cached;
            }
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| {
                c.iter()
                    .find(|ch| ch.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
            })
        else {
            return Ok(());
        };
        if let Some(delta) = choice.get("delta") {
            if let Some(piece) = delta.get("content").and_then(Value::as_str)
                && !piece.is_empty()
            {
                self.text.push_str(piece);
                out(StreamUpdate::Text(piece.to_string()));
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    let index = call
                        .get("index")
                        .and_then(Value::as_u64)
                        .unwrap_or(position as u64);
                    let partial = self.calls.entry(index).or_default();
                    if let Some(id) = call.get("id").and_then(Value::as_str)
                        && !id.is_empty()
                    {
                        partial.id = id.to_string();
                    }
                    let function = call.get("function");
                    if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str)
                        && !name.is_empty()
                        && partial.name.is_empty()
                    {
                        partial.name = name.to_string();
                        out(StreamUpdate::ToolCall {
                            name: name.to_string(),
                        });
                    }
                    match function.and_then(|f| f.get("arguments")) {
                        Some(Value::String(piece)) => partial.arguments.push_str(piece),
                        // Some servers send the arguments as an object.
                        Some(v @ Value::Object(_)) => partial.arguments.push_str(&v.to_string()),
                        _ => {}
                    }
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_string());
        }
        Ok(())
    }

    /// The answer, once `[DONE]` (or at least a `finish_reason`) has come.
    pub fn finish(self) -> Result<ModelResponse, LlmError> {
        if !self.done && self.finish.is_none() {
            return Err(LlmError::Protocol(
                "the stream ended before a finish_reason or [DONE]".to_string(),
            ));
        }
        let mut content = Vec::new();
        if !self.text.trim().is_empty() {
            content.push(Block::Text(self.text));
        }
        for (index, call) in self.calls {
            let input = if call.arguments.trim().is_empty() {
                json!({})
            } else {
                serde_json::from_str(&call.arguments).unwrap_or(Value::String(call.arguments))
            };
            let id = if call.id.is_empty() {
                format!("call_{index}")
            } else {
                call.id
            };
            content.push(Block::ToolUse {
                id,
                name: call.name,
                input,
            });
        }
        let has_tools = content.iter().any(|b| matches!(b, Block::ToolUse { .. }));
        let stop = match self.finish.as_deref() {
            // Some servers say `stop` even when they called tools.
            Some(_) | None if has_tools => StopReason::ToolUse,
            Some(reason) => StopReason::parse(reason),
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

    const STREAM: &str = concat!(
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Checking.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_abc\",\"type\":\"function\",\"function\":{\"name\":\"Bash\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"command\\\":\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\" \\\"ls\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_def\",\"type\":\"function\",\"function\":{\"name\":\"TaskList\",\"arguments\":\"{}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[],\"usage\":{\"prompt_tokens\":120,\"completion_tokens\":30,\"total_tokens\":150}}\n\n",
        "data: [DONE]\n\n",
    );

    fn read(stream: &str) -> Result<ModelResponse, LlmError> {
        let mut decoder = SseDecoder::new();
        let mut reader = OpenAiStream::new();
        let mut events = decoder.feed(stream.as_bytes());
        events.extend(decoder.finish());
        for e in &events {
            reader.on_event(e, &mut |_| {})?;
        }
        reader.finish()
    }

    #[test]
    fn text_and_tool_calls_from_pieces() {
        let response = read(STREAM).unwrap();
        assert_eq!(
            response.content,
            vec![
                Block::Text("Checking.".into()),
                Block::ToolUse {
                    id: "call_abc".into(),
                    name: "Bash".into(),
                    input: json!({"command": "ls"})
                },
                Block::ToolUse {
                    id: "call_def".into(),
                    name: "TaskList".into(),
                    input: json!({})
                },
            ]
        );
        assert_eq!(response.stop, StopReason::ToolUse);
        assert_eq!(response.usage.input_tokens, 120);
        assert_eq!(response.usage.output_tokens, 30);
        let finish = STREAM
            .find("{\"index\":0,\"delta\":{},\"finish_reason\"")
            .unwrap();
        let cut = &STREAM[..STREAM[..finish].rfind("data:").unwrap()];
        assert!(matches!(read(cut), Err(LlmError::Protocol(_))));
    }

    #[test]
    fn the_body_has_tool_messages_and_stream_options() {
        let messages = vec![
            Message::user("go"),
            Message::assistant(vec![
                Block::Text("ok".into()),
                Block::ToolUse {
                    id: "call_1".into(),
                    name: "Bash".into(),
                    input: json!({"command": "ls"}),
                },
            ]),
            Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "a.txt".into(),
                    is_error: false,
                }],
            },
        ];
        let body = request_body("m", None, "sys", &messages, &[]);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": "ok", "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\":\"ls\"}"}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"}
                ],
                "stream": true,
                "stream_options": {"include_usage": true}
            })
        );
    }
}
