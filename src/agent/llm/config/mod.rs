//! What an `llm` teammate talks to, and how that is decided: flags (`--model`), the
//! environment (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `ANTHROPIC_BASE_URL`,
//! `OPENAI_API_KEY`, `OPENAI_BASE_URL`, `TEAMLEAD_MODEL`, `TEAMLEAD_PROVIDER`) and the config
//! file ([`crate::config`]: its `[llm]` table: `provider`, `base_url`, `model`, `api_key_env`,
//! `max_tokens`, `context_tokens`, `keep_exchanges`, `prompt_caching`, `retry`).
//!
//! Order: a flag beats the environment, which beats the file. The provider is the explicit one
//! (`TEAMLEAD_PROVIDER` or the file), else the one whose base URL is set (Anthropic first),
//! else the one whose key is set (Anthropic first). Nothing configured is a one-line error.

use std::time::Duration;

use super::secret::ApiKey;

/// The wire format spoken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// The Anthropic Messages API (`POST {base}/v1/messages`).
    Anthropic,
    /// OpenAI-compatible Chat Completions (`POST {base}/v1/chat/completions`): OpenAI, Ollama,
    /// vLLM, llama.cpp's server, LM Studio, …
    OpenAi,
}

impl Provider {
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
        }
    }

    /// `anthropic`, or `openai` (also `openai-compatible`, `ollama`, `vllm`, `llama.cpp`).
    pub fn parse(text: &str) -> Option<Provider> {
        match text.trim().to_ascii_lowercase().as_str() {
            "anthropic" | "claude" => Some(Provider::Anthropic),
            "openai" | "openai-compatible" | "ollama" | "vllm" | "llama.cpp" | "llamacpp" => {
                Some(Provider::OpenAi)
            }
            _ => None,
        }
    }

    /// The service's address when no base URL is given.
    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com/v1",
        }
    }
}

impl std::fmt::Display for Provider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Retries of failed requests (429, 5xx, overloaded, network errors): exponential backoff from
/// `base_delay`, capped at `max_delay`, `retry-after` honored (up to `max_retry_after`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all (1 = no retry).
    pub max_attempts: u32,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `retry-after` waited for.
    pub max_retry_after: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            max_retry_after: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// The pause before attempt `next` (2, 3, …) without a `retry-after`: `base · 2^(next-2)`,
    /// capped, with up to a quarter taken off at random so many teammates do not retry at once.
    pub fn backoff(&self, next: u32) -> Duration {
        let exp = next.saturating_sub(2).min(20);
        let full = self
            .base_delay
            .saturating_mul(1u32 << exp)
            .min(self.max_delay);
        let jitter = rand::random_range(0.0..0.25);
        full.mul_f64(1.0 - jitter)
    }
}

/// How much conversation a teammate keeps before it compacts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContextBudget {
    /// Estimated tokens (characters / 4, or the last reported input) above which older
    /// exchanges are replaced by a summary.
    pub max_tokens: usize,
    /// Exchanges (a prompt and everything the turn did) always kept verbatim.
    pub keep_exchanges: usize,
}

impl Default for ContextBudget {
    fn default() -> Self {
        ContextBudget {
            max_tokens: 120_000,
            keep_exchanges: 4,
        }
    }
}

/// Everything the `llm` engine needs to reach a model. `Debug` never shows the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmConfig {
    pub provider: Provider,
    /// Without a trailing slash.
    pub base_url: String,
    pub model: String,
    /// `x-api-key` (Anthropic) or `Authorization: Bearer` (OpenAI-compatible).
    pub api_key: Option<ApiKey>,
    /// Anthropic only: `Authorization: Bearer` instead of `x-api-key` (`ANTHROPIC_AUTH_TOKEN`).
    pub auth_token: Option<ApiKey>,
    /// `max_tokens` of each answer (always sent to Anthropic; sent to OpenAI-compatible servers
    /// only when configured).
    pub max_tokens: u32,
    pub max_tokens_configured: bool,
    /// Anthropic only: mark the system prompt and the conversation as cacheable.
    pub prompt_caching: bool,
    pub retry: RetryPolicy,
    pub context: ContextBudget,
    /// The longest silence on a streaming answer before the attempt counts as a network error.
    pub read_timeout: Duration,
    /// Model calls in one turn before the turn is ended (a model that loops on tools).
    pub max_steps: usize,
}

/// What the command line gives (each beats the environment and the file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmOverrides {
    pub provider: Option<Provider>,
    pub model: Option<String>,
    pub base_url: Option<String>,
}

/// Why no configuration could be made (every message is one line and never holds a key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error(
        "no model configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) or OPENAI_BASE_URL/OPENAI_API_KEY, or pass --model with a provider set in {file}"
    )]
    NothingConfigured { file: String },
    #[error(
        "no model configured for the OpenAI-compatible server at {base_url}: pass --model MODEL (or set TEAMLEAD_MODEL, or \"model\" in {file})"
    )]
    NoModel { base_url: String, file: String },
    #[error("unknown provider `{0}`: use anthropic or openai")]
    UnknownProvider(String),
    /// The config file cannot be used (the message names the file, line and key).
    #[error("{0}")]
    File(String),
    #[error("{var} is not set (the config file names it as api_key_env)")]
    MissingKeyVariable { var: String },
    #[error("bad base URL `{0}`: it must start with http:// or https://")]
    BadBaseUrl(String),
}

/// Claude Code's model aliases, for `--model sonnet` and friends.
pub fn anthropic_alias(model: &str) -> &str {
    match model {
        "sonnet" => "claude-sonnet-4-5",
        "opus" => "claude-opus-4-1",
        "haiku" => "claude-haiku-4-5",
        other => other,
    }
}

/// The model used with Anthropic when none is configured.
pub const DEFAULT_ANTHROPIC_MODEL: &str = "claude-sonnet-4-5";

fn check_base_url(url: &str) -> Result<String, ConfigError> {
    let url = url.trim().trim_end_matches('/').to_string();
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(url)
    } else {
        Err(ConfigError::BadBaseUrl(url))
    }
}

impl LlmConfig {
    /// A configuration with the defaults (tests and callers set the rest).
    pub fn new(provider: Provider, base_url: &str, model: &str) -> LlmConfig {
        LlmConfig {
            provider,
            base_url: base_url.trim().trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key: None,
            auth_token: None,
            max_tokens: 8192,
            max_tokens_configured: false,
            prompt_caching: true,
            retry: RetryPolicy::default(),
            context: ContextBudget::default(),
            read_timeout: Duration::from_secs(600),
            max_steps: 100,
        }
    }

    /// Sets the key (builder style).
    pub fn with_api_key(mut self, key: Option<ApiKey>) -> LlmConfig {
        self.api_key = key;
        self
    }

    /// Uses `model` instead (Claude Code's aliases are mapped for Anthropic).
    pub fn with_model(mut self, model: &str) -> LlmConfig {
        let model = model.trim();
        if !model.is_empty() {
            self.model = match self.provider {
                Provider::Anthropic => anthropic_alias(model).to_string(),
                Provider::OpenAi => model.to_string(),
            };
        }
        self
    }

    /// The configuration from the process's environment and the default config file, with
    /// `model` (the `--model` flag) on top.
    pub fn from_environment(model: Option<&str>) -> Result<LlmConfig, ConfigError> {
        let loaded = crate::config::Config::load().map_err(|e| ConfigError::File(e.to_string()))?;
        if let Some(note) = &loaded.deprecation {
            tracing::warn!("{note}");
        }
        let path = loaded.path.clone().or_else(crate::config::path);
        let file = loaded.llm;
        let overrides = LlmOverrides {
            model: model.map(str::to_string),
            ..LlmOverrides::default()
        };
        let env = |k: &str| std::env::var(k).ok();
        let shown = path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "~/.config/teamlead/config.toml".to_string());
        LlmConfig::resolve(&overrides, &env, file.as_ref(), &shown)
    }

    /// Resolves flags over the environment (`env`) over the file's settings; `file_shown` is
    /// the file's path for error messages.
    pub fn resolve(
        overrides: &LlmOverrides,
        env: &dyn Fn(&str) -> Option<String>,
        file: Option<&FileSettings>,
        file_shown: &str,
    ) -> Result<LlmConfig, ConfigError> {
        let var = |k: &str| {
            env(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        let default_file = FileSettings::default();
        let file = file.unwrap_or(&default_file);

        let explicit = match (
            &overrides.provider,
            var("TEAMLEAD_PROVIDER"),
            &file.provider,
        ) {
            (Some(p), _, _) => Some(*p),
            (None, Some(text), _) => {
                Some(Provider::parse(&text).ok_or(ConfigError::UnknownProvider(text))?)
            }
            (None, None, Some(text)) => Some(
                Provider::parse(text).ok_or_else(|| ConfigError::UnknownProvider(text.clone()))?,
            ),
            (None, None, None) => None,
        };
        let provider = match explicit {
            Some(p) => p,
            None if var("ANTHROPIC_BASE_URL").is_some() => Provider::Anthropic,
            None if var("OPENAI_BASE_URL").is_some() => Provider::OpenAi,
            None if var("ANTHROPIC_API_KEY").is_some() || var("ANTHROPIC_AUTH_TOKEN").is_some() => {
                Provider::Anthropic
            }
            None if var("OPENAI_API_KEY").is_some() => Provider::OpenAi,
            None if file.base_url.is_some() || file.api_key_env.is_some() => {
                // A file with an address or a key but no provider: the address decides.
                if file
                    .base_url
                    .as_deref()
                    .is_some_and(|u| u.contains("anthropic"))
                {
                    Provider::Anthropic
                } else {
                    Provider::OpenAi
                }
            }
            None => {
                return Err(ConfigError::NothingConfigured {
                    file: file_shown.to_string(),
                });
            }
        };

        let (url_var, key_var) = match provider {
            Provider::Anthropic => ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
            Provider::OpenAi => ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
        };
        let base_url = overrides
            .base_url
            .clone()
            .or_else(|| var(url_var))
            .or_else(|| file.base_url.clone())
            .unwrap_or_else(|| provider.default_base_url().to_string());
        let base_url = check_base_url(&base_url)?;

        let api_key = match &file.api_key_env {
            Some(name) => match var(name) {
                Some(v) => ApiKey::new(v),
                None if var(key_var).is_some() => var(key_var).and_then(ApiKey::new),
                None => {
                    return Err(ConfigError::MissingKeyVariable { var: name.clone() });
                }
            },
            None => var(key_var).and_then(ApiKey::new),
        };
        let auth_token = match provider {
            Provider::Anthropic => var("ANTHROPIC_AUTH_TOKEN").and_then(ApiKey::new),
            Provider::OpenAi => None,
        };

        let model = overrides
            .model
            .clone()
            .filter(|m| !m.trim().is_empty())
            .or_else(|| var("TEAMLEAD_MODEL"))
            .or_else(|| file.model.clone());
        let model = match (provider, model) {
            (_, Some(m)) => m,
            (Provider::Anthropic, None) => DEFAULT_ANTHROPIC_MODEL.to_string(),
            (Provider::OpenAi, None) => {
                return Err(ConfigError::NoModel {
                    base_url,
                    file: file_shown.to_string(),
                });
            }
        };

        let mut config = LlmConfig::new(provider, &base_url, "").with_model(&model);
        config.api_key = api_key;
        config.auth_token = auth_token;
        if let Some(max) = file.max_tokens {
            config.max_tokens = max.max(1);
            config.max_tokens_configured = true;
        }
        if let Some(tokens) = file.context_tokens {
            config.context.max_tokens = tokens.max(1000);
        }
        if let Some(keep) = file.keep_exchanges {
            config.context.keep_exchanges = keep.max(1);
        }
        if let Some(cache) = file.prompt_caching {
            config.prompt_caching = cache;
        }
        if let Some(retry) = &file.retry {
            if let Some(n) = retry.max_attempts {
                config.retry.max_attempts = n.max(1);
            }
            if let Some(ms) = retry.base_delay_ms {
                config.retry.base_delay = Duration::from_millis(ms);
            }
            if let Some(ms) = retry.max_delay_ms {
                config.retry.max_delay = Duration::from_millis(ms);
            }
        }
        Ok(config)
    }

    /// `{base}/v1/messages` or `{base}/v1/chat/completions` (`{base}/chat/completions` when
    /// the base already ends in `/v1`).
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let tail = match self.provider {
            Provider::Anthropic => "messages",
            Provider::OpenAi => "chat/completions",
        };
        if base.ends_with("/v1") {
            format!("{base}/{tail}")
        } else {
            format!("{base}/v1/{tail}")
        }
    }

    /// `anthropic claude-sonnet-4-5 at https://api.anthropic.com` (never the key).
    pub fn describe(&self) -> String {
        format!("{} {} at {}", self.provider, self.model, self.base_url)
    }

    /// `text` without this configuration's key or token (each replaced by `<redacted>`): the
    /// one scrubber of everything a model session lets out (server errors, the model's text,
    /// notices, tool results).
    pub fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        for key in [&self.api_key, &self.auth_token].into_iter().flatten() {
            text = key.scrub(&text);
        }
        text
    }
}

#[cfg(test)]
mod tests;

pub use crate::config::{FileRetry, FileSettings};
