//! The `llm` engine: a teammate whose turns are done by a language model with tools, over the
//! Anthropic Messages API or an OpenAI-compatible Chat Completions server (Ollama, vLLM,
//! llama.cpp, …), streaming. Configuration comes from flags, the environment and the config
//! file ([`config`]); keys never show ([`secret`]); the HTTP client retries what is worth
//! retrying ([`client`], pausing as [`retry`] says, and as the team's rate-limit [`governor`]
//! says); answers are read from SSE ([`sse`], [`wire`]); the model's tools go through the
//! permission gate ([`tools`]); long conversations are compacted ([`compact`]). The one agent
//! loop is [`agent_loop`]: a model [`session`] and an [`agent_loop::Engine`], which a teammate
//! ([`turn`], what the runtime calls for each turn of an `llm` teammate, with its state between
//! turns in [`teammate`]) and the lead model (`lead::model`) each implement.

pub mod agent_loop;
pub mod client;
pub mod compact;
pub mod config;
pub mod conversation;
pub mod error;
pub mod governor;
pub mod narrate;
pub mod prompt;
pub mod retry;
pub mod secret;
pub mod session;
pub mod sse;
pub(crate) mod teammate;
pub mod tools;
pub mod turn;
pub mod wire;

pub use client::LlmClient;
pub use config::{
    ConfigError, ContextBudget, FileSettings, LlmConfig, LlmOverrides, Provider, RetryPolicy,
};
pub use error::LlmError;
pub use secret::ApiKey;
pub use turn::LlmEngine;
