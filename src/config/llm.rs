//! The `[llm]` table of the config file: the provider, base URL, model, the variable holding
//! the key (never the key), and tuning (tokens, compaction, caching, retries). Unknown keys are
//! refused, so a key pasted into the file is an error rather than a secret at rest. The same
//! object under `"llm"` in the old `config.json` is still read (see [`super::load_legacy`]).

use serde::Deserialize;

/// The `[llm]` table of the config file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The environment variable holding the key (the key itself never goes in the file).
    pub api_key_env: Option<String>,
    pub max_tokens: Option<u32>,
    pub context_tokens: Option<usize>,
    pub keep_exchanges: Option<usize>,
    /// Anthropic prompt caching (default true).
    pub prompt_caching: Option<bool>,
    pub retry: Option<FileRetry>,
}

/// The `[llm.retry]` table.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRetry {
    pub max_attempts: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_delay_ms: Option<u64>,
}

/// Whether a model's base URL is on this machine (its host a loopback address or
/// `localhost`): no proxy is ever used for it.
pub fn is_loopback_url(base_url: &str) -> bool {
    let Some(host) = reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
    else {
        return false;
    };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => bare.eq_ignore_ascii_case("localhost"),
    }
}
