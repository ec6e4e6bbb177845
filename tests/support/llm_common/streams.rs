//! The real event streams of the two wire formats, built for the scripted server: Anthropic
//! Messages (`message_start` … `message_stop`, text deltas, tool calls as `input_json_delta`
//! pieces, the mid-stream `overloaded_error`) and OpenAI-compatible chunks (content pieces,
//! `tool_calls` deltas, `finish_reason`, a usage chunk, `[DONE]`).

use serde_json::{Value, json};

fn cut3(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let n = chars.len();
    let (a, b) = (n / 3, 2 * n / 3);
    vec![
        chars[..a].iter().collect(),
        chars[a..b].iter().collect(),
        chars[b..].iter().collect(),
    ]
}

/// The Anthropic Messages API's event stream.
pub mod anthropic {
    use super::{Value, cut3, json};

    fn event(name: &str, data: Value) -> String {
        format!("event: {name}\ndata: {data}\n\n")
    }

    /// An answer with optional text, then tool calls `(id, name, input)`.
    pub fn message(text: Option<&str>, calls: &[(&str, &str, Value)]) -> String {
        let mut s = event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 1200, "output_tokens": 1}}}),
        );
        s.push_str(&event("ping", json!({"type": "ping"})));
        let mut index = 0;
        if let Some(text) = text {
            s.push_str(&event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
            ));
            for piece in cut3(text) {
                s.push_str(&event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
                ));
            }
            s.push_str(&event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        for (id, name, input) in calls {
            s.push_str(&event(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            s.push_str(&event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            ));
            for piece in cut3(&input.to_string()) {
                s.push_str(&event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
                ));
            }
            s.push_str(&event(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
            index += 1;
        }
        let stop = if calls.is_empty() {
            "end_turn"
        } else {
            "tool_use"
        };
        s.push_str(&event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null}, "usage": {"output_tokens": 75}}),
        ));
        s.push_str(&event("message_stop", json!({"type": "message_stop"})));
        s
    }

    pub fn text(text: &str) -> String {
        message(Some(text), &[])
    }

    pub fn tool(id: &str, name: &str, input: Value) -> String {
        message(None, &[(id, name, input)])
    }

    /// The start of an answer that never ends (for interrupting).
    pub fn started(text: &str) -> String {
        let whole = message(Some(text), &[]);
        let cut = whole
            .find("event: content_block_stop")
            .unwrap_or(whole.len());
        whole[..cut].to_string()
    }

    /// An `error` event (what the API sends mid-stream when overloaded).
    pub fn overloaded() -> String {
        let mut s = event(
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_x", "type": "message", "role": "assistant", "content": [], "model": "claude-sonnet-4-5", "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}}),
        );
        s.push_str(&event(
            "error",
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ));
        s
    }
}

/// OpenAI-compatible Chat Completions' chunk stream.
pub mod openai {
    use super::{Value, cut3, json};

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        let data = json!({
            "id": "chatcmpl-9abc",
            "object": "chat.completion.chunk",
            "created": 1_763_700_000,
            "model": "qwen2.5-coder:7b",
            "system_fingerprint": "fp_ollama",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]
        });
        format!("data: {data}\n\n")
    }

    /// An answer with optional text, then tool calls `(id, name, input)`.
    pub fn message(text: Option<&str>, calls: &[(&str, &str, Value)]) -> String {
        let mut s = chunk(json!({"role": "assistant", "content": ""}), None);
        if let Some(text) = text {
            for piece in cut3(text) {
                s.push_str(&chunk(json!({"content": piece}), None));
            }
        }
        for (i, (id, name, input)) in calls.iter().enumerate() {
            s.push_str(&chunk(
                json!({"tool_calls": [{"index": i, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
                None,
            ));
            for piece in cut3(&input.to_string()) {
                s.push_str(&chunk(
                    json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                    None,
                ));
            }
        }
        let finish = if calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        s.push_str(&chunk(json!({}), Some(finish)));
        let usage = json!({
            "id": "chatcmpl-9abc", "object": "chat.completion.chunk", "created": 1_763_700_000,
            "model": "qwen2.5-coder:7b", "choices": [],
            "usage": {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940}
        });
        s.push_str(&format!("data: {usage}\n\n"));
        s.push_str("data: [DONE]\n\n");
        s
    }

    pub fn text(text: &str) -> String {
        message(Some(text), &[])
    }

    pub fn tool(id: &str, name: &str, input: Value) -> String {
        message(None, &[(id, name, input)])
    }
}
