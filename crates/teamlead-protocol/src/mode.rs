//! Permission modes and their Shift+Tab cycle order (PROTOCOL.md 7).

use std::fmt;
use std::str::FromStr;

/// A permission mode of the lead or of a teammate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PermissionMode {
    #[default]
    Default,
    AcceptEdits,
    Plan,
    BypassPermissions,
    /// Claude Code's own classifier mode (`auto`, 2.1.284 and later): a claude teammate can be
    /// in it (its Shift+Tab passes through it), teamlead never chooses it and is never in it.
    Auto,
}

impl PermissionMode {
    /// Every mode in cycle order.
    pub const ALL: [PermissionMode; 4] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
    ];

    /// The name written to files and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::Auto => "auto",
        }
    }

    /// default → acceptEdits → plan → bypassPermissions → default.
    pub fn next(self) -> PermissionMode {
        match self {
            PermissionMode::Default => PermissionMode::AcceptEdits,
            PermissionMode::AcceptEdits => PermissionMode::Plan,
            PermissionMode::Plan => PermissionMode::BypassPermissions,
            PermissionMode::BypassPermissions | PermissionMode::Auto => PermissionMode::Default,
        }
    }

    /// "Cycle all": every mode equal → all to the next; mixed (or none) → all `default`.
    pub fn cycle_all(modes: &[PermissionMode]) -> PermissionMode {
        match modes.split_first() {
            Some((first, rest)) if rest.iter().all(|m| m == first) => first.next(),
            _ => PermissionMode::Default,
        }
    }

    /// The lead's mode as handed to a teammate: `plan` maps to `default`.
    pub fn for_teammate(self) -> PermissionMode {
        match self {
            PermissionMode::Plan | PermissionMode::Auto => PermissionMode::Default,
            other => other,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error for a string that is not a permission mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode `{0}` (expected default, acceptEdits, plan or bypassPermissions)")]
pub struct UnknownMode(pub String);

impl FromStr for PermissionMode {
    type Err = UnknownMode;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .chain([PermissionMode::Auto])
            .find(|m| m.as_str() == s || m.as_str().eq_ignore_ascii_case(s))
            .ok_or_else(|| UnknownMode(s.to_string()))
    }
}

impl serde::Serialize for PermissionMode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for PermissionMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PermissionMode::*;

    #[test]
    fn cycle_order_and_cycle_all() {
        assert_eq!(Default.next(), AcceptEdits);
        assert_eq!(BypassPermissions.next(), Default);
        assert_eq!(PermissionMode::cycle_all(&[Plan, Plan]), BypassPermissions);
        assert_eq!(PermissionMode::cycle_all(&[Plan, AcceptEdits]), Default);
        assert_eq!(Plan.for_teammate(), Default);
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
