//! Which engine does a teammate's turns ([`EngineKind`], what `--engine` and the lead's
//! settings choose), and making it. This file is the one place that names the engines: the
//! runtime only knows the [`Engine`] trait, and each engine knows only the runtime.

use crate::agent::llm::{LlmConfig, LlmEngine};
use crate::agent::runtime::Engine;
use crate::agent::shell::ShellEngine;

/// Which engine does a teammate's turns.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EngineKind {
    /// Runs task commands (`metadata.command` or the first fenced code block) and fenced code
    /// blocks the lead sends; no model.
    #[default]
    Shell,
    /// A language model with tools (Anthropic or OpenAI-compatible).
    Llm(Box<LlmConfig>),
}

impl EngineKind {
    /// The `llm` engine with this configuration.
    pub fn llm(config: LlmConfig) -> EngineKind {
        EngineKind::Llm(Box::new(config))
    }

    /// `shell` or `llm`, as `--engine` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            EngineKind::Shell => "shell",
            EngineKind::Llm(_) => "llm",
        }
    }

    /// Uses `model` for an `llm` engine (the spawn request's model); nothing for `shell`.
    pub fn set_model(&mut self, model: Option<&str>) {
        if let (EngineKind::Llm(config), Some(model)) = (self, model) {
            **config = (**config).clone().with_model(model);
        }
    }

    /// A new engine of this kind, for one teammate (it keeps its state between turns).
    pub fn engine(&self) -> Box<dyn Engine> {
        match self {
            EngineKind::Shell => Box::new(ShellEngine::default()),
            EngineKind::Llm(config) => Box::new(LlmEngine::new((**config).clone())),
        }
    }
}
