//! [`ConfigError`]: one line naming the file, the line and the key (`config.toml:7:
//! keys.teams.kill: …`), made from a TOML error's byte span or from a span the caller has.

use std::path::Path;

/// A config file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("{path}: {detail}")]
    Read { path: String, detail: String },
    /// Something in the file is wrong.
    #[error("{path}:{line}: {}{message}", key.as_ref().map(|k| format!("{k}: ")).unwrap_or_default())]
    Invalid {
        path: String,
        line: usize,
        key: Option<String>,
        message: String,
    },
}

impl ConfigError {
    pub fn read(path: &Path, detail: String) -> ConfigError {
        ConfigError::Read {
            path: path.display().to_string(),
            detail,
        }
    }

    /// An error at byte `offset` of `text`; without `key`, the key is read from the line.
    pub fn at(
        path: &Path,
        text: &str,
        offset: usize,
        key: Option<String>,
        message: String,
    ) -> ConfigError {
        let offset = offset.min(text.len());
        let line = text[..offset].matches('\n').count() + 1;
        ConfigError::Invalid {
            path: path.display().to_string(),
            line,
            key: key.or_else(|| key_at(text, line)),
            message,
        }
    }

    /// A TOML parse or schema error.
    pub fn from_toml(path: &Path, text: &str, error: &toml::de::Error) -> ConfigError {
        let message = error.message().trim().replace('\n', " ");
        match error.span() {
            Some(span) => ConfigError::at(path, text, span.start, None, message),
            None => ConfigError::Invalid {
                path: path.display().to_string(),
                line: 1,
                key: None,
                message,
            },
        }
    }
}

/// The dotted key of line `line` (1-based): the last `[table]` header above it and the key
/// before its `=` (`keys.teams.kill`), or the header itself on a header line.
fn key_at(text: &str, line: usize) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let here = lines.get(line.checked_sub(1)?)?.trim();
    let header = |l: &str| {
        let l = l.trim();
        (l.starts_with('[') && !l.starts_with("[[")).then(|| {
            l.trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
    };
    if let Some(h) = header(here) {
        return Some(h);
    }
    let key = here.split('=').next()?.trim().trim_matches('"').to_string();
    if key.is_empty() || here.starts_with('#') || !here.contains('=') {
        return None;
    }
    let table = lines[..line - 1].iter().rev().find_map(|l| header(l));
    Some(match table {
        Some(t) if !t.is_empty() => format!("{t}.{key}"),
        _ => key,
    })
}
