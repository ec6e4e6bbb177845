//! `PermissionUpdate` (PROTOCOL.md 3): the rule and mode changes a permission answer can carry,
//! and the suggestions a `permission_request` offers; which of them are well-formed enough to be
//! offered as "yes, and don't ask again" ([`PermissionUpdate::is_offerable`]), and the rule
//! built from a request's tool and input when it came without a usable one
//! ([`fallback_update`]).

pub mod bash;

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

/// The longest rule content or directory offered (longer ones are not shown as a rule).
pub(crate) const MAX_RULE_TEXT: usize = 500;

/// A tool name a rule can carry: an identifier (`Bash`, `mcp__my-server__query`).
pub(crate) fn valid_tool_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && name.len() <= 128
}

/// Rule content that reads as one rule: not blank, one line, no control characters, brackets
/// balanced (so `Tool(content)` parses back to the same content), not too long.
pub(crate) fn valid_rule_content(content: &str) -> bool {
    if content.trim().is_empty() || content.len() > MAX_RULE_TEXT {
        return false;
    }
    if content.chars().any(char::is_control) {
        return false;
    }
    let mut stack = Vec::new();
    for c in content.chars() {
        match c {
            '(' | '[' | '{' => stack.push(c),
            ')' | ']' | '}' => {
                let open = match c {
                    ')' => '(',
                    ']' => '[',
                    _ => '{',
                };
                if stack.pop() != Some(open) {
                    return false;
                }
            }
            _ => {}
        }
    }
    stack.is_empty()
}

impl PermissionRule {
    /// Whether the rule is well-formed: a valid tool name and, if any, valid content; a Bash
    /// prefix rule must name a prefix (`:*` or `*` alone would allow every command under the
    /// look of a narrow rule).
    pub(crate) fn is_valid(&self) -> bool {
        if !valid_tool_name(&self.tool_name) {
            return false;
        }
        let Some(content) = &self.rule_content else {
            return true;
        };
        if !valid_rule_content(content) {
            return false;
        }
        if self.tool_name == "Bash" {
            let c = content.trim();
            let prefix = c
                .strip_suffix(":*")
                .or_else(|| c.strip_suffix(" *"))
                .unwrap_or(c);
            return !prefix.trim().is_empty() && prefix.trim() != "*";
        }
        true
    }

    /// Whether the rule allows only what its text shows. For Bash: an exact command, or a
    /// prefix rule on a safe prefix ([`bash::BashPattern::is_safe`]); never `Bash` alone, `*`,
    /// nor a prefix whose first word runs other commands (`env:*`, `bash:*`, `xargs:*`,
    /// `git:*`). Other tools' rules are safe.
    pub(crate) fn is_safe(&self) -> bool {
        self.tool_name != "Bash"
            || bash::BashPattern::from_rule(self.rule_content.as_deref()).is_safe()
    }

    /// What the rule allows, in words: `every command that starts with git status`,
    /// `exactly: echo a > out1`, `every Edit`, `Edit of src/**`.
    pub fn meaning(&self) -> String {
        match (&self.tool_name[..], &self.rule_content) {
            ("Bash", content) => bash::rule_meaning(content.as_deref()),
            (tool, None) => format!("every {tool}"),
            (tool, Some(content)) => format!("{tool} of {content}"),
        }
    }

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

    /// Whether the dialog may offer this update as "yes, and don't ask again": it only widens
    /// what is allowed, in a way the dialog can show exactly (allow rules, `acceptEdits`,
    /// directories), and everything in it is well-formed and safe (a Bash rule allows only
    /// what it shows: [`PermissionRule::is_safe`]; a teammate's `Bash(env:*)` or `Bash` alone
    /// is never offered). Deny/ask/replace/remove rules, `bypassPermissions` and empty updates
    /// are not offered.
    pub fn is_offerable(&self) -> bool {
        match self {
            PermissionUpdate::AddRules {
                rules,
                behavior: RuleBehavior::Allow,
                ..
            } => !rules.is_empty() && rules.iter().all(|r| r.is_valid() && r.is_safe()),
            PermissionUpdate::SetMode {
                mode: PermissionMode::AcceptEdits,
                ..
            } => true,
            PermissionUpdate::AddDirectories { directories, .. } => {
                !directories.is_empty()
                    && directories.iter().all(|d| {
                        !d.trim().is_empty()
                            && d.len() <= MAX_RULE_TEXT
                            && !d.chars().any(char::is_control)
                    })
            }
            PermissionUpdate::AddRules { .. }
            | PermissionUpdate::ReplaceRules { .. }
            | PermissionUpdate::RemoveRules { .. }
            | PermissionUpdate::SetMode { .. }
            | PermissionUpdate::RemoveDirectories { .. } => false,
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
pub(crate) fn parse_suggestions(values: &[serde_json::Value]) -> Vec<PermissionUpdate> {
    values
        .iter()
        .filter_map(|v| serde_json::from_value(v.clone()).ok())
        .collect()
}

/// The "don't ask again" update for a request that came without a usable suggestion, built from
/// its tool and input: for Bash one safe `prefix:*` allow rule per simple command of a plain
/// command ([`bash::suggested_rule_contents`]: `cargo test:*`, `git status:*`; the exact
/// command when it has a redirection, a substitution, a launcher like `env`, …), for any other
/// tool the tool alone (`Edit`). `None` when no
/// well-formed rule can be built (a Bash request without a command, a tool name that is not
/// an identifier): then there is no "always" option, never a malformed or wider one.
pub fn fallback_update(tool_name: &str, input: &serde_json::Value) -> Option<PermissionUpdate> {
    if !valid_tool_name(tool_name) {
        return None;
    }
    let rules: Vec<PermissionRule> = if tool_name == "Bash" {
        let command = input.get("command")?.as_str()?;
        bash::suggested_rule_contents(command)
            .into_iter()
            .map(|content| PermissionRule {
                tool_name: tool_name.to_string(),
                rule_content: Some(content),
            })
            .collect()
    } else {
        vec![PermissionRule {
            tool_name: tool_name.to_string(),
            rule_content: None,
        }]
    };
    let update = PermissionUpdate::AddRules {
        rules,
        behavior: RuleBehavior::Allow,
        destination: Destination::Session,
    };
    update.is_offerable().then_some(update)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(tool: &str, content: Option<&str>) -> PermissionRule {
        PermissionRule {
            tool_name: tool.to_string(),
            rule_content: content.map(str::to_string),
        }
    }

    #[test]
    fn malformed_rules_are_not_valid() {
        assert!(rule("Bash", Some("cargo test:*")).is_valid());
        assert!(rule("Edit", None).is_valid());
        assert!(rule("mcp__my-server__query", None).is_valid());
        assert!(rule("Bash", Some("(cd x && make)")).is_valid());
        for (tool, content) in [
            ("Bash", Some("{:*")),
            ("Bash", Some("(cd:*")),
            ("Bash", Some(":*")),
            ("Bash", Some("*")),
            ("Bash", Some("  ")),
            ("Bash", Some("ls\nrm -rf ~")),
            ("Bash", Some("ls\u{1b}[2J")),
            ("Ba sh", None),
            ("", None),
            ("1Bash", None),
            ("Bash(", Some("x")),
        ] {
            assert!(!rule(tool, content).is_valid(), "{tool} {content:?}");
        }
        assert!(!rule("Bash", Some(&"x".repeat(MAX_RULE_TEXT + 1))).is_valid());
    }

    #[test]
    fn only_widening_well_formed_updates_are_offered() {
        assert!(PermissionUpdate::allow_session(rule("Bash", Some("make build:*"))).is_offerable());
        assert!(!PermissionUpdate::allow_session(rule("Bash", Some("{:*"))).is_offerable());
        // A teammate's suggestion that would allow any command is not offered as it is.
        for unsafe_rule in [
            Some("env:*"),
            Some("sudo:*"),
            Some("bash:*"),
            Some("xargs:*"),
            Some("find:*"),
            Some("python3:*"),
            Some("cd:*"),
            Some("git:*"),
            Some("git -c x=y status:*"),
            None,
        ] {
            assert!(
                !PermissionUpdate::allow_session(rule("Bash", unsafe_rule)).is_offerable(),
                "{unsafe_rule:?}"
            );
        }
        assert!(PermissionUpdate::allow_session(rule("Bash", Some("env X=1 true"))).is_offerable());
        assert!(PermissionUpdate::allow_session(rule("Edit", None)).is_offerable());
        let set = |mode| PermissionUpdate::SetMode {
            mode,
            destination: Destination::Session,
        };
        assert!(set(PermissionMode::AcceptEdits).is_offerable());
        assert!(!set(PermissionMode::BypassPermissions).is_offerable());
        let deny = PermissionUpdate::AddRules {
            rules: vec![rule("Bash", Some("rm:*"))],
            behavior: RuleBehavior::Deny,
            destination: Destination::Session,
        };
        assert!(!deny.is_offerable());
        let empty = PermissionUpdate::AddRules {
            rules: vec![],
            behavior: RuleBehavior::Allow,
            destination: Destination::Session,
        };
        assert!(!empty.is_offerable());
    }

    #[test]
    fn fallback_is_a_prefix_rule_for_bash_and_the_tool_otherwise() {
        let bash = |command: &str| fallback_update("Bash", &json!({ "command": command }));
        assert_eq!(
            bash("rm -rf build"),
            Some(PermissionUpdate::allow_session(rule("Bash", Some("rm:*"))))
        );
        // A tilde reaches outside the working directory: the exact command only.
        assert_eq!(
            bash("rm -rf ~/important"),
            Some(PermissionUpdate::allow_session(rule(
                "Bash",
                Some("rm -rf ~/important")
            )))
        );
        for (command, exact) in [("env X=1 true", true), ("echo a > out1", true)] {
            assert_eq!(
                bash(command),
                exact.then(|| PermissionUpdate::allow_session(rule("Bash", Some(command))))
            );
        }
        assert_eq!(
            bash("cargo test -p parser"),
            Some(PermissionUpdate::allow_session(rule(
                "Bash",
                Some("cargo test:*")
            )))
        );
        assert_eq!(bash("(echo x"), None);
        assert_eq!(fallback_update("Bash", &json!({"cmd": "ls"})), None);
        assert_eq!(
            fallback_update("Edit", &json!({"file_path": "a"})),
            Some(PermissionUpdate::allow_session(rule("Edit", None)))
        );
        assert_eq!(fallback_update("Bad Tool", &json!({})), None);
    }
}
