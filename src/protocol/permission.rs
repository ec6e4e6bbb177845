//! `PermissionUpdate` (PROTOCOL.md 3): the rule and mode changes a permission answer can carry,
//! and the suggestions a `permission_request` offers.

use serde::{Deserialize, Serialize};

use super::PermissionMode;

/// One permission rule: a tool and an optional pattern (`Bash` + `cargo test:*`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRule {
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_content: Option<String>,
}

impl PermissionRule {
    /// `Bash(cargo test:*)`, or just `Bash`.
    pub fn label(&self) -> String {
        match &self.rule_content {
            Some(c) => format!("{}({c})", self.tool_name),
            None => self.tool_name.clone(),
        }
    }
}

/// allow / deny / ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RuleBehavior {
    Allow,
    Deny,
    Ask,
}

/// Where an update applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Destination {
    UserSettings,
    ProjectSettings,
    LocalSettings,
    Session,
    CliArg,
}

/// One permission update.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PermissionUpdate {
    AddRules {
        rules: Vec<PermissionRule>,
        behavior: RuleBehavior,
        destination: Destination,
    },
    ReplaceRules {
        rules: Vec<PermissionRule>,
        behavior: RuleBehavior,
        destination: Destination,
    },
    RemoveRules {
        rules: Vec<PermissionRule>,
        behavior: RuleBehavior,
        destination: Destination,
    },
    SetMode {
        mode: PermissionMode,
        destination: Destination,
    },
    AddDirectories {
        directories: Vec<String>,
        destination: Destination,
    },
    RemoveDirectories {
        directories: Vec<String>,
        destination: Destination,
    },
}

impl PermissionUpdate {
    /// "Always allow this tool (with this pattern) for this session".
    pub fn allow_session(rule: PermissionRule) -> PermissionUpdate {
        PermissionUpdate::AddRules {
            rules: vec![rule],
            behavior: RuleBehavior::Allow,
            destination: Destination::Session,
        }
    }

    /// A short human label for an option in the permission dialog.
    pub fn label(&self) -> String {
        match self {
            PermissionUpdate::AddRules {
                rules, behavior, ..
            } => {
                let list: Vec<String> = rules.iter().map(PermissionRule::label).collect();
                match behavior {
                    RuleBehavior::Allow => format!("don't ask again for {}", list.join(", ")),
                    RuleBehavior::Deny => format!("always deny {}", list.join(", ")),
                    RuleBehavior::Ask => format!("always ask for {}", list.join(", ")),
                }
            }
            PermissionUpdate::ReplaceRules { rules, .. } => format!(
                "replace rules with {}",
                rules
                    .iter()
                    .map(PermissionRule::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            PermissionUpdate::RemoveRules { rules, .. } => format!(
                "remove rules {}",
                rules
                    .iter()
                    .map(PermissionRule::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            PermissionUpdate::SetMode { mode, .. } => format!("switch to {mode} mode"),
            PermissionUpdate::AddDirectories { directories, .. } => {
                format!("allow access to {}", directories.join(", "))
            }
            PermissionUpdate::RemoveDirectories { directories, .. } => {
                format!("remove access to {}", directories.join(", "))
            }
        }
    }
}

/// Parses a request's `permission_suggestions`, skipping entries of unknown shape.
pub fn parse_suggestions(values: &[serde_json::Value]) -> Vec<PermissionUpdate> {
    values
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}
