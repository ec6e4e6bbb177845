//! The config file: `<config dir>/teamlead/config.json` (or `$TEAMLEAD_CONFIG`), whose `"llm"`
//! object names the provider, base URL, model, the variable holding the key (never the key),
//! and tuning (tokens, compaction, caching, retries). Unknown keys are refused, so a key pasted
//! into the file is an error rather than a secret at rest.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;
use crate::store::safe_file::{MAX_SMALL_FILE_BYTES, read_regular_following};

/// The `"llm"` object of the config file.
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

/// The `"retry"` object of the file's `"llm"` object.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRetry {
    pub max_attempts: Option<u32>,
    pub base_delay_ms: Option<u64>,
    pub max_delay_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct FileTop {
    llm: Option<FileSettings>,
}

/// `<config dir>/teamlead/config.json` (`$XDG_CONFIG_HOME` or `~/.config` on Linux), or
/// `$TEAMLEAD_CONFIG` when set.
pub fn config_file_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TEAMLEAD_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    use etcetera::BaseStrategy;
    etcetera::choose_base_strategy()
        .ok()
        .map(|s| s.config_dir().join("teamlead").join("config.json"))
}

/// The `"llm"` settings of a config file; `None` when the file does not exist.
pub fn load_file(path: &Path) -> Result<Option<FileSettings>, ConfigError> {
    // Never blocks on a FIFO, refuses what is not a regular file, bounded; a symbolic link
    // (a dotfiles setup) is followed.
    let bytes = match read_regular_following(path, MAX_SMALL_FILE_BYTES * 16) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(ConfigError::File {
                path: path.display().to_string(),
                detail: e.to_string(),
            });
        }
    };
    let top: FileTop = serde_json::from_slice(&bytes).map_err(|e| ConfigError::File {
        path: path.display().to_string(),
        detail: format!("not a valid teamlead config: {e}"),
    })?;
    Ok(top.llm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_parses_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        assert_eq!(load_file(&path).unwrap(), None);
        std::fs::write(
            &path,
            r#"{"llm": {"provider": "anthropic", "model": "sonnet"}, "other": 1}"#,
        )
        .unwrap();
        let s = load_file(&path).unwrap().unwrap();
        assert_eq!(s.provider.as_deref(), Some("anthropic"));
        std::fs::write(&path, r#"{"llm": {"api_key": "sk-inline"}}"#).unwrap();
        let err = load_file(&path).unwrap_err().to_string();
        assert!(err.contains("unknown field"), "{err}");
        assert!(!err.contains("sk-inline"), "{err}");
    }
}
