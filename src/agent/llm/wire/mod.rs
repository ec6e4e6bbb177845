//! The two wire formats: how a [`ModelRequest`](super::conversation::ModelRequest) becomes a
//! request body, and how a streamed answer (SSE events) becomes a
//! [`ModelResponse`](super::conversation::ModelResponse), for the Anthropic Messages API and
//! OpenAI-compatible Chat Completions. Also reading the error body of a failed request.

pub mod anthropic;
pub mod openai;

use serde_json::Value;

use super::conversation::{ModelResponse, StreamUpdate};
use super::error::LlmError;
use super::sse::SseEvent;
use crate::protocol::inbox::clip;

/// A streamed answer being read, in either format.
#[derive(Debug)]
pub enum StreamReader {
    Anthropic(anthropic::AnthropicStream),
    OpenAi(openai::OpenAiStream),
}

impl StreamReader {
    /// Takes one event; updates go to `out` as they come.
    pub fn on_event(
        &mut self,
        event: &SseEvent,
        out: &mut dyn FnMut(StreamUpdate),
    ) -> Result<(), LlmError> {
        match self {
            StreamReader::Anthropic(s) => s.on_event(event, out),
            StreamReader::OpenAi(s) => s.on_event(event, out),
        }
    }

    /// The answer's end marker (`message_stop`, `[DONE]`) has come.
    pub fn is_done(&self) -> bool {
        match self {
            StreamReader::Anthropic(s) => s.is_done(),
            StreamReader::OpenAi(s) => s.is_done(),
        }
    }

    /// The complete answer (an error when the stream ended too early).
    pub fn finish(self) -> Result<ModelResponse, LlmError> {
        match self {
            StreamReader::Anthropic(s) => s.finish(),
            StreamReader::OpenAi(s) => s.finish(),
        }
    }
}

/// The error type and message of a failed request's body, in either format
/// (`{"type":"error","error":{"type","message"}}` or `{"error":{"message","type","code"}}`),
/// else the body's start.
pub fn error_from_body(body: &str) -> (Option<String>, String) {
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let error = value.get("error").unwrap_or(&value);
        let text = |k: &str| error.get(k).and_then(Value::as_str).map(str::to_string);
        let message = text("message").or_else(|| match error {
            Value::String(s) => Some(s.clone()),
            _ => None,
        });
        if let Some(message) = message {
            let kind = text("type").or_else(|| text("code"));
            return (kind, clip(&message, 500));
        }
    }
    (None, clip(body.trim(), 300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_of_both_formats() {
        assert_eq!(
            error_from_body(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            (
                Some("authentication_error".into()),
                "invalid x-api-key".into()
            )
        );
        assert_eq!(
            error_from_body(
                r#"{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}"#
            ),
            (
                Some("invalid_request_error".into()),
                "Incorrect API key provided".into()
            )
        );
        assert_eq!(
            error_from_body(r#"{"error":"model not found"}"#).1,
            "model not found"
        );
        assert_eq!(
            error_from_body("Bad Gateway\n"),
            (None, "Bad Gateway".into())
        );
    }
}
