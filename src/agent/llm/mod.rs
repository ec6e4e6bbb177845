//! The `llm` engine: a teammate whose turns are done by a language model with tools, over the
//! Anthropic Messages API or an OpenAI-compatible Chat Completions server (Ollama, vLLM,
//! llama.cpp, …), streaming. Configuration comes from flags, the environment and the config
//! file ([`config`]); keys never show ([`secret`]); the HTTP client retries what is worth
//! retrying ([`client`], pausing as [`retry`] says); answers are read from SSE ([`sse`], [`wire`]); the model's tools go
//! through the permission gate ([`tools`]); long conversations are compacted ([`compact`]).
//! [`turn`] is what the runtime calls for each turn of an `llm` teammate.

pub mod client;
pub mod compact;
pub mod config;
pub mod conversation;
pub mod error;
pub mod narrate;
pub mod prompt;
pub mod retry;
pub mod secret;
pub(crate) mod session;
pub mod sse;
pub mod tools;
pub(crate) mod turn;
pub mod wire;

pub use client::LlmClient;
pub use config::{
    ConfigError, ContextBudget, FileSettings, LlmConfig, LlmOverrides, Provider, RetryPolicy,
};
pub use error::LlmError;
pub use secret::ApiKey;
