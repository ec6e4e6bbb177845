//! The user's config file: TOML at `<config dir>/teamlead/config.toml`
//! (`$XDG_CONFIG_HOME/teamlead/config.toml`, usually `~/.config/teamlead/config.toml`), or the
//! file `$TEAMLEAD_CONFIG` names. It holds defaults for the session's flags (top-level keys),
//! key bindings (`[keys.<context>]`, checked by the UI's keymap), the `[llm]` settings and the
//! `[hosts.NAME]` other machines teammates may run on ([`hosts`]).
//! Every problem is one [`ConfigError`] naming the file, the line and the key. The old
//! `config.json` (only its `"llm"` object) is still read, with a deprecation note.

pub mod edit;
mod error;
pub mod hosts;
mod llm;

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

pub use error::ConfigError;
pub use hosts::HostConfig;
pub use llm::{FileRetry, FileSettings, is_loopback_url};

use crate::protocol::BackendRequest;
use crate::store::safe_file::{MAX_SMALL_FILE_BYTES, read_regular_following};

/// The commented example `teamlead config init` writes (also `assets/config.example.toml`).
pub const EXAMPLE: &str = include_str!("../../assets/config.example.toml");

/// What runs a teammate (`agent = …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Agent {
    Builtin,
    Claude,
}

/// What does a teammate's work (`engine = …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    Shell,
    Llm,
}

/// How much colour the TUI uses (`theme = …`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Theme {
    /// From `NO_COLOR`, `COLORTERM` and `TERM`.
    Auto,
    /// Every colour (256-colour palette included).
    Full,
    /// The 16 standard colours.
    Basic,
    /// No colour.
    None,
}

/// One key or several for one action.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Keys {
    One(String),
    Many(Vec<String>),
}

impl Keys {
    pub fn to_vec(&self) -> Vec<String> {
        match self {
            Keys::One(k) => vec![k.clone()],
            Keys::Many(ks) => ks.clone(),
        }
    }
}

/// The file as written: every top-level key is a default of a session flag.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FileTop {
    backend: Option<BackendRequest>,
    agent: Option<Agent>,
    engine: Option<Engine>,
    model: Option<String>,
    lead_model: Option<String>,
    worktree: Option<bool>,
    theme: Option<Theme>,
    permission_hook: Option<String>,
    shutdown_timeout: Option<f64>,
    shutdown_force: Option<bool>,
    retry_failed_tasks: Option<bool>,
    budget_teammate: Option<f64>,
    budget_team: Option<f64>,
    resume_after_limit: Option<bool>,
    resume_until: Option<String>,
    server_idle_exit: Option<String>,
    web_allow: Option<String>,
    #[serde(default)]
    keys: BTreeMap<String, BTreeMap<String, Spanned<Keys>>>,
    llm: Option<FileSettings>,
    #[serde(default)]
    prices: BTreeMap<String, crate::protocol::pricing::Price>,
    #[serde(default)]
    hosts: BTreeMap<String, Spanned<hosts::HostEntry>>,
    push: Option<FilePush>,
}

/// `[push]` as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct FilePush {
    url: String,
    token_env: Option<String>,
    after: Option<String>,
    web_url: Option<String>,
}

/// `[push]`: tell a phone about a request that waits with no screen attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushSettings {
    /// An ntfy-style topic URL (`http://` or `https://`).
    pub url: String,
    /// The environment variable that holds its token (never the token itself in the file).
    pub token_env: Option<String>,
    /// How long a request waits first (default 30 s).
    pub after: std::time::Duration,
    /// The web view as the phone reaches it (the notification's link).
    pub web_url: Option<String>,
}

/// One `[keys.<context>] <action> = …` entry, where it is in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyEntry {
    pub context: String,
    pub action: String,
    pub keys: Vec<String>,
    /// Byte range of the value in the file.
    pub span: Range<usize>,
}

/// The config file, read and checked (a missing file is the defaults).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// The file it came from (`None`: no file).
    pub path: Option<PathBuf>,
    /// The file's text (for error positions).
    pub text: String,
    pub backend: Option<BackendRequest>,
    pub agent: Option<Agent>,
    pub engine: Option<Engine>,
    pub model: Option<String>,
    pub lead_model: Option<String>,
    pub worktree: Option<bool>,
    pub theme: Option<Theme>,
    /// The permission policy hook's command (`permission-hook`).
    pub permission_hook: Option<String>,
    /// How long a `/shutdown` waits for a busy teammate before the lead says how to force it
    /// (`shutdown-timeout`, seconds).
    pub shutdown_timeout: Option<std::time::Duration>,
    /// Escalate a shutdown that outlasts the timeout to a kill (`shutdown-force`).
    pub shutdown_force: Option<bool>,
    /// A task a teammate reported failed or not run goes back to pending with no owner, for
    /// another teammate to try (`retry-failed-tasks`); otherwise the lead holds it until a
    /// person assigns it.
    pub retry_failed_tasks: Option<bool>,
    /// What each teammate, and the whole team, may cost before it is paused
    /// (`budget-teammate`, `budget-team`: dollars; here micro-dollars).
    pub budget_teammate: Option<u64>,
    pub budget_team: Option<u64>,
    /// Park the team at a usage limit and resume it at the reset (`resume-after-limit`).
    pub resume_after_limit: Option<bool>,
    /// No resume after a limit starts past this local clock time (`resume-until = "02:00"`).
    pub resume_until: Option<chrono::NaiveTime>,
    /// A lead server with no screen or `ctl` client connected for this long ends its team as
    /// `/quit` does (`server-idle-exit`; `None`: never).
    pub server_idle_exit: Option<std::time::Duration>,
    /// What the web view may do when no `--allow` / `--web-allow` says (`web-allow`: a list
    /// such as `read,answer,message,steer`; read by the web layer, which names this key when a
    /// word is wrong).
    pub web_allow: Option<String>,
    pub push: Option<PushSettings>,
    pub keys: Vec<KeyEntry>,
    pub llm: Option<FileSettings>,
    /// `[prices."model-prefix"]`: prices that extend or replace the built-in table.
    pub prices: BTreeMap<String, crate::protocol::pricing::Price>,
    /// `[hosts.NAME]`: the machines teammates may run on, by name.
    pub hosts: Vec<HostConfig>,
    /// A note for the person (the old `config.json` was read).
    pub deprecation: Option<String>,
}

/// The longest idle limit (a year): a longer one means "never", which `off` says, and a
/// deadline that far ahead could overflow the clock.
const MAX_IDLE_EXIT: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);

/// Checks `[push]`: a URL of the web, a duration, a variable name (not a token).
fn push_settings(path: &Path, p: FilePush) -> Result<PushSettings, ConfigError> {
    let web = |key: &str, url: &str| {
        if url.starts_with("http://") || url.starts_with("https://") {
            Ok(())
        } else {
            Err(ConfigError::read(
                path,
                format!("push.{key} = {url:?}: give an http:// or https:// URL"),
            ))
        }
    };
    web("url", &p.url)?;
    if let Some(w) = &p.web_url {
        web("web-url", w)?;
    }
    if let Some(name) = &p.token_env
        && (name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    {
        return Err(ConfigError::read(
            path,
            format!(
                "push.token-env = {name:?}: give the name of an environment variable that holds the token (the token itself never goes in this file)"
            ),
        ));
    }
    let after = match &p.after {
        Some(text) => humantime::parse_duration(text).map_err(|e| {
            ConfigError::read(
                path,
                format!("push.after = {text:?}: {e} (like \"30s\" or \"2m\")"),
            )
        })?,
        None => std::time::Duration::from_secs(30),
    };
    Ok(PushSettings {
        url: p.url,
        token_env: p.token_env,
        after,
        web_url: p.web_url,
    })
}

/// An idle limit as the config file's `server-idle-exit` and `serve --idle-exit` take it: a
/// duration like `8h`, `90m` or `1h 30m` (humantime's units), or `off` (also `never`) for
/// none. `Err` says what is wrong.
pub fn parse_idle_exit(text: &str) -> Result<Option<std::time::Duration>, String> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("off") || text.eq_ignore_ascii_case("never") {
        return Ok(None);
    }
    let limit = humantime::parse_duration(text).map_err(|e| {
        format!("{e}: give a duration like \"8h\", \"30m\" or \"1h 30m\", or \"off\"")
    })?;
    if limit.is_zero() {
        return Err("give a duration more than 0, or \"off\"".to_string());
    }
    if limit > MAX_IDLE_EXIT {
        return Err("at most a year; \"off\" for never".to_string());
    }
    Ok(Some(limit))
}

/// The config file's path: `$TEAMLEAD_CONFIG`, else `<config dir>/teamlead/config.toml`.
pub fn path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TEAMLEAD_CONFIG").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    use etcetera::BaseStrategy;
    etcetera::choose_base_strategy()
        .ok()
        .map(|s| s.config_dir().join("teamlead").join("config.toml"))
}

/// The file's bytes as text; `None` when it does not exist.
fn read(path: &Path) -> Result<Option<String>, ConfigError> {
    // Never blocks on a FIFO, refuses what is not a regular file, bounded; a symbolic link
    // (a dotfiles setup) is followed.
    let bytes = match read_regular_following(path, MAX_SMALL_FILE_BYTES * 16) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(e) => return Err(ConfigError::read(path, e.to_string())),
    };
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ConfigError::read(path, "not UTF-8 text".to_string()))
}

impl Config {
    /// The config of this process: the file [`path`] names, or the old `config.json` beside
    /// it (with a deprecation note) when only that exists.
    pub fn load() -> Result<Config, ConfigError> {
        let named = std::env::var_os("TEAMLEAD_CONFIG").is_some_and(|p| !p.is_empty());
        match path() {
            Some(p) => Config::load_from(&p, !named),
            None => Ok(Config::default()),
        }
    }

    /// The config in `path` (a `.json` path is read as the old format); with `legacy`, a
    /// missing `config.toml` falls back to the `config.json` beside it.
    pub fn load_from(path: &Path, legacy: bool) -> Result<Config, ConfigError> {
        if path.extension().is_some_and(|e| e == "json") {
            return load_legacy(path);
        }
        match read(path)? {
            Some(text) => Config::parse(path, text),
            None => {
                if legacy && path.with_file_name("config.json").exists() {
                    return load_legacy(&path.with_file_name("config.json"));
                }
                Ok(Config {
                    path: Some(path.to_path_buf()),
                    ..Config::default()
                })
            }
        }
    }

    /// Parses the text of the file at `path`.
    pub fn parse(path: &Path, text: String) -> Result<Config, ConfigError> {
        let top: FileTop =
            toml::from_str(&text).map_err(|e| ConfigError::from_toml(path, &text, &e))?;
        let shutdown_timeout = match top.shutdown_timeout {
            Some(s) if !(s.is_finite() && s > 0.0 && s <= 86_400.0) => {
                return Err(ConfigError::read(
                    path,
                    format!("shutdown-timeout = {s}: give seconds, more than 0 and at most 86400"),
                ));
            }
            Some(s) => Some(std::time::Duration::from_secs_f64(s)),
            None => None,
        };
        let dollars = |key: &str, v: Option<f64>| match v {
            Some(d) if !(d.is_finite() && d > 0.0) => Err(ConfigError::read(
                path,
                format!("{key} = {d}: give dollars, more than 0"),
            )),
            Some(d) => Ok(Some((d * 1_000_000.0).round() as u64)),
            None => Ok(None),
        };
        let budget_teammate = dollars("budget-teammate", top.budget_teammate)?;
        let budget_team = dollars("budget-team", top.budget_team)?;
        let resume_until = match &top.resume_until {
            Some(text) => Some(
                chrono::NaiveTime::parse_from_str(text.trim(), "%H:%M").map_err(|_| {
                    ConfigError::read(
                        path,
                        format!("resume-until = {text:?}: give a clock time as HH:MM (\"02:00\")"),
                    )
                })?,
            ),
            None => None,
        };
        let server_idle_exit = match &top.server_idle_exit {
            Some(text) => parse_idle_exit(text).map_err(|why| {
                ConfigError::read(path, format!("server-idle-exit = {text:?}: {why}"))
            })?,
            None => None,
        };
        for (prefix, price) in &top.prices {
            if price
                .figures()
                .into_iter()
                .flatten()
                .any(|v| !(v.is_finite() && v >= 0.0))
            {
                return Err(ConfigError::read(
                    path,
                    format!(
                        "[prices.\"{prefix}\"]: prices are dollars per million tokens, 0 or more"
                    ),
                ));
            }
        }
        let hosts = hosts::check(path, &text, top.hosts)?;
        let push = match top.push {
            Some(p) => Some(push_settings(path, p)?),
            None => None,
        };
        let keys = top
            .keys
            .into_iter()
            .flat_map(|(context, actions)| {
                actions.into_iter().map(move |(action, value)| KeyEntry {
                    context: context.clone(),
                    action,
                    keys: value.get_ref().to_vec(),
                    span: value.span(),
                })
            })
            .collect();
        Ok(Config {
            path: Some(path.to_path_buf()),
            backend: top.backend,
            agent: top.agent,
            engine: top.engine,
            model: top.model,
            lead_model: top.lead_model,
            worktree: top.worktree,
            theme: top.theme,
            permission_hook: top.permission_hook,
            shutdown_timeout,
            shutdown_force: top.shutdown_force,
            retry_failed_tasks: top.retry_failed_tasks,
            budget_teammate,
            budget_team,
            resume_after_limit: top.resume_after_limit,
            resume_until,
            server_idle_exit,
            web_allow: top.web_allow,
            push,
            keys,
            llm: top.llm,
            prices: top.prices,
            hosts,
            deprecation: None,
            text,
        })
    }

    /// An error about the `[keys]` entry `index` (its line and key named).
    pub fn key_error(&self, index: usize, message: &str) -> ConfigError {
        let entry = &self.keys[index];
        ConfigError::at(
            self.path.as_deref().unwrap_or(Path::new("config.toml")),
            &self.text,
            entry.span.start,
            Some(format!("keys.{}.{}", entry.context, entry.action)),
            message.to_string(),
        )
    }
}

/// The old `config.json`: only its `"llm"` object, with a deprecation note.
pub fn load_legacy(path: &Path) -> Result<Config, ConfigError> {
    #[derive(Deserialize)]
    struct LegacyTop {
        llm: Option<FileSettings>,
    }
    let Some(text) = read(path)? else {
        return Ok(Config::default());
    };
    let top: LegacyTop = serde_json::from_str(&text)
        .map_err(|e| ConfigError::read(path, format!("not a valid teamlead config: {e}")))?;
    let toml = path.with_file_name("config.toml");
    Ok(Config {
        path: Some(path.to_path_buf()),
        llm: top.llm,
        deprecation: Some(format!(
            "{} is deprecated: put its \"llm\" settings in the [llm] table of {} (`teamlead config init` writes an example)",
            path.display(),
            toml.display()
        )),
        ..Config::default()
    })
}

#[cfg(test)]
mod tests;
