//! `[hosts.NAME]`: the other machines teammates may run on, each reached with the user's own
//! `ssh` (DESIGN.md "Hosts"). Read and checked here; every problem is one [`ConfigError`]
//! naming the file, the line and the key (`config.toml:12: hosts.gpu.port: …`).

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::ConfigError;

/// One `[hosts.NAME]` table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HostEntry {
    destination: Spanned<String>,
    port: Option<Spanned<i64>>,
    #[serde(default)]
    options: Vec<Spanned<String>>,
    dir: Option<Spanned<String>>,
    home: Option<Spanned<String>>,
    claude: Option<Spanned<String>>,
    #[serde(rename = "forward-model")]
    forward_model: Option<bool>,
}

/// A host teammates may run on.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HostConfig {
    /// Its name in teamlead (checked like a member name).
    pub name: String,
    /// What `ssh` connects to: `[user@]host` (a name of `~/.ssh/config` works too).
    pub destination: String,
    /// `ssh -p`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// More `ssh -o` options, each `Key=Value`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    /// The working directory of its teammates (on that host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// The teamlead home on that host [default: the host's own default].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The `claude` that runs Claude Code teammates there [default: `~/.local/bin/claude`,
    /// else `claude` on the host's PATH].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claude: Option<String>,
    /// `forward-model = true`: Claude Code teammates there reach the model through the lead
    /// (its key stays on the lead's host) instead of the host's own Claude Code login.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub forward_model: bool,
}

/// The `ssh -o` options teamlead sets itself: a host may not change them.
const OWN_OPTIONS: [&str; 4] = [
    "batchmode",
    "controlmaster",
    "controlpath",
    "controlpersist",
];

/// Why `name` cannot name a host (`None`: it can). Host names follow member names:
/// `^[a-z0-9][a-z0-9-]{0,63}$`.
pub fn host_name_problem(name: &str) -> Option<String> {
    match crate::protocol::names::sanitize(name) {
        Ok(clean) if clean == name => None,
        _ => Some(format!(
            "`{name}` is not a valid host name: use lower-case letters, digits and `-` (at most 64, not starting with `-`)"
        )),
    }
}

/// Why `destination` is not `[user@]host` (`None`: it is).
pub fn destination_problem(destination: &str) -> Option<String> {
    let bad = destination.is_empty()
        || destination.starts_with('-')
        || destination
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || c == '/' || c == '\'')
        || destination.matches('@').count() > 1
        || destination.starts_with('@')
        || destination.ends_with('@');
    bad.then(|| format!("`{destination}` is not an ssh destination: give [user@]host"))
}

/// Why `option` cannot be passed as `ssh -o OPTION` (`None`: it can).
pub fn option_problem(option: &str) -> Option<String> {
    let (key, value) = option
        .split_once('=')
        .or_else(|| option.split_once(' '))
        .unwrap_or((option, ""));
    let key = key.trim();
    if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric()) || value.is_empty() {
        return Some(format!("`{option}` is not an ssh option: give Key=Value"));
    }
    if option.chars().any(char::is_control) {
        return Some(format!("`{option}`: no control characters"));
    }
    let lower = key.to_ascii_lowercase();
    if OWN_OPTIONS.contains(&lower.as_str()) {
        return Some(format!(
            "`{key}` is set by teamlead itself (one private connection per host)"
        ));
    }
    let value = value.trim().to_ascii_lowercase();
    if lower == "stricthostkeychecking" && matches!(value.as_str(), "no" | "off") {
        return Some(
            "teamlead never turns host key checking off: run `ssh HOST` once to accept the key"
                .to_string(),
        );
    }
    None
}

/// Why `path` cannot be a remote directory (`None`: it can).
fn path_problem(path: &str) -> Option<String> {
    (path.trim().is_empty() || path.chars().any(char::is_control))
        .then(|| format!("`{path}` is not a directory path"))
}

/// The `[hosts]` of the file at `path` (text `text`), checked.
pub(super) fn check(
    path: &Path,
    text: &str,
    entries: std::collections::BTreeMap<String, Spanned<HostEntry>>,
) -> Result<Vec<HostConfig>, ConfigError> {
    let mut hosts = Vec::new();
    for (name, entry) in entries {
        let at = |offset: usize, key: &str, message: String| {
            ConfigError::at(
                path,
                text,
                offset,
                Some(format!("hosts.{name}{key}")),
                message,
            )
        };
        let span = entry.span();
        let entry = entry.into_inner();
        if let Some(why) = host_name_problem(&name) {
            return Err(at(span.start, "", why));
        }
        let destination = entry.destination.get_ref().clone();
        if let Some(why) = destination_problem(&destination) {
            return Err(at(entry.destination.span().start, ".destination", why));
        }
        let port = match entry.port {
            Some(p) => match u16::try_from(*p.get_ref()) {
                Ok(port) if port > 0 => Some(port),
                _ => {
                    return Err(at(
                        p.span().start,
                        ".port",
                        format!("{} is not a port: give 1 to 65535", p.get_ref()),
                    ));
                }
            },
            None => None,
        };
        let mut options = Vec::new();
        for option in entry.options {
            if let Some(why) = option_problem(option.get_ref()) {
                return Err(at(option.span().start, ".options", why));
            }
            options.push(option.into_inner());
        }
        let mut dirs = [None, None, None];
        for (slot, (key, value)) in dirs.iter_mut().zip([
            (".dir", entry.dir),
            (".home", entry.home),
            (".claude", entry.claude),
        ]) {
            if let Some(value) = value {
                if let Some(why) = path_problem(value.get_ref()) {
                    return Err(at(value.span().start, key, why));
                }
                *slot = Some(value.into_inner());
            }
        }
        let [dir, home, claude] = dirs;
        hosts.push(HostConfig {
            name,
            destination,
            port,
            options,
            dir,
            home,
            claude,
            forward_model: entry.forward_model.unwrap_or(false),
        });
    }
    Ok(hosts)
}
