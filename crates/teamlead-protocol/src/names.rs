//! Team and member names, and agent ids (PROTOCOL.md 1). teamlead only creates names matching
//! `^[a-z0-9][a-z0-9-]{0,63}$`, so Claude Code's two sanitizers (team directory, inbox file)
//! agree on them; paths are never built from an unchecked name.

use std::fmt;

/// The lead's member name; its inbox is `inboxes/team-lead.json`.
pub const LEAD_NAME: &str = "team-lead";

/// Names no teammate may take.
pub(crate) const RESERVED_NAMES: [&str; 4] = [LEAD_NAME, "user", "system", "main"];

/// Why a name cannot be used as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("the name is empty")]
    Empty,
    #[error(
        "`{0}` is not a valid name: use lower-case letters, digits and `-` (at most 64, not starting with `-`)"
    )]
    Invalid(String),
    #[error("`{0}` is reserved")]
    Reserved(String),
}

/// Maps a requested name onto `[a-z0-9-]`: lower-case, every other character becomes `-`,
/// leading dashes dropped, at most 64 characters. Empty results are an error.
pub fn sanitize(requested: &str) -> Result<String, NameError> {
    let mapped: String = requested
        .trim()
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed: String = mapped.trim_start_matches('-').chars().take(64).collect();
    let trimmed = trimmed.trim_end_matches('-').to_string();
    if trimmed.is_empty() {
        return Err(NameError::Empty);
    }
    Ok(trimmed)
}

/// True when `name` is already in the canonical form `^[a-z0-9][a-z0-9-]{0,63}$`.
pub(crate) fn is_canonical(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 64
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
}

/// A name read from a file or the command line that will be used to build a path: it must
/// be a single safe path component (no separators, no `..`, no NUL). Claude Code's own inbox
/// names keep case and `_`, so this accepts `[A-Za-z0-9_.-]` but never `.`/`..`.
pub fn check_path_component(name: &str) -> Result<&str, NameError> {
    if name.is_empty() {
        return Err(NameError::Empty);
    }
    let ok = name.len() <= 128
        && name != "."
        && name != ".."
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(name)
    } else {
        Err(NameError::Invalid(name.to_string()))
    }
}

/// A new teammate name: sanitized, not reserved, and unique among `taken` (a clash gets
/// `-2`, `-3`, …).
pub fn unique_member_name(requested: &str, taken: &[&str]) -> Result<String, NameError> {
    let base = sanitize(requested)?;
    if RESERVED_NAMES.contains(&base.as_str()) {
        return Err(NameError::Reserved(base));
    }
    if !taken.contains(&base.as_str()) {
        return Ok(base);
    }
    let mut n = 2;
    loop {
        let candidate = format!("{base}-{n}");
        if !taken.contains(&candidate.as_str()) {
            return Ok(candidate);
        }
        n += 1;
    }
}

/// `<name>@<team>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentId {
    pub name: String,
    pub team: String,
}

impl AgentId {
    pub fn new(name: impl Into<String>, team: impl Into<String>) -> AgentId {
        AgentId {
            name: name.into(),
            team: team.into(),
        }
    }

    /// The lead of `team`.
    pub fn lead(team: &str) -> AgentId {
        AgentId::new(LEAD_NAME, team)
    }

    /// Parses `name@team`.
    pub fn parse(s: &str) -> Option<AgentId> {
        let (name, team) = s.split_once('@')?;
        if name.is_empty() || team.is_empty() || team.contains('@') {
            return None;
        }
        Some(AgentId::new(name, team))
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}@{}", self.name, self.team)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_hostile_names() {
        assert_eq!(sanitize("../../etc").unwrap(), "etc");
        assert_eq!(sanitize("My Team").unwrap(), "my-team");
        assert_eq!(sanitize("Front_End!").unwrap(), "front-end");
        assert_eq!(sanitize("---"), Err(NameError::Empty));
        assert!(is_canonical("codebase-research"));
        assert!(!is_canonical("../x"));
        assert!(check_path_component("..").is_err());
        assert!(check_path_component("a/b").is_err());
        assert!(check_path_component("worker").is_ok());
    }

    #[test]
    fn unique_names_get_suffixes() {
        assert_eq!(unique_member_name("a", &["a", "a-2"]).unwrap(), "a-3");
        assert!(matches!(
            unique_member_name("Team Lead", &[]),
            Err(NameError::Reserved(_))
        ));
    }

    #[test]
    fn agent_ids_round_trip() {
        let id = AgentId::parse("worker@session-abc12345").unwrap();
        assert_eq!(id.to_string(), "worker@session-abc12345");
        assert!(AgentId::parse("nope").is_none());
    }
}
