//! The permission gate of a teammate: its mode, its session rules, and the verdict for one tool
//! use (allow, ask the lead, or deny). Modes: `default` asks for Bash and edits; `acceptEdits`
//! allows edits inside the working directories but asks for Bash; `plan` is read-only until a
//! plan is approved (the engine runs the plan handshake, the gate only refuses); and
//! `bypassPermissions` allows everything. Deny rules win in every mode, then ask rules, then
//! allow rules, then the mode. Searches (Glob, Grep) are reads. Team tools (messages, tasks,
//! plans) never ask; in plan mode only the read-only ones pass. Asking itself lives in [`ask`].

pub mod ask;
pub mod bash;
pub mod rules;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::protocol::frames::{PermissionRequest, request_id};
use crate::protocol::permission::{PermissionRule, PermissionUpdate};
use crate::protocol::team::AllowedPath;
use crate::protocol::{PermissionMode, inbox::clip};
use rules::{SessionRules, normalize};

/// One use of a tool a teammate wants to make.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolUse {
    /// `sh -c <command>` in the working directory.
    Bash {
        command: String,
        description: String,
    },
    /// Reads a file.
    Read { path: PathBuf },
    /// Changes an existing file.
    Edit { path: PathBuf },
    /// Creates or replaces a file.
    Write { path: PathBuf },
    /// Lists files matching a glob pattern under `path` (a read).
    Glob { pattern: String, path: PathBuf },
    /// Searches file contents under `path` (a read).
    Grep { pattern: String, path: PathBuf },
    /// A team tool (SendMessage, TaskList, TaskUpdate, SubmitPlan, …): never asks; refused in
    /// plan mode unless `read_only`.
    Team { tool: String, read_only: bool },
}

/// Why plan mode refuses a tool.
pub const PLAN_MODE_READ_ONLY: &str = "plan mode is read-only until a plan is approved";

impl ToolUse {
    /// The tool's name as the protocol writes it.
    pub fn tool_name(&self) -> &str {
        match self {
            ToolUse::Bash { .. } => "Bash",
            ToolUse::Read { .. } => "Read",
            ToolUse::Edit { .. } => "Edit",
            ToolUse::Write { .. } => "Write",
            ToolUse::Glob { .. } => "Glob",
            ToolUse::Grep { .. } => "Grep",
            ToolUse::Team { tool, .. } => tool,
        }
    }

    /// The tool input, as Claude Code shapes it.
    pub fn input(&self) -> Value {
        match self {
            ToolUse::Bash {
                command,
                description,
            } => json!({"command": command, "description": description}),
            ToolUse::Read { path } | ToolUse::Edit { path } | ToolUse::Write { path } => {
                json!({"file_path": path.to_string_lossy()})
            }
            ToolUse::Glob { pattern, path } | ToolUse::Grep { pattern, path } => {
                json!({"pattern": pattern, "path": path.to_string_lossy()})
            }
            ToolUse::Team { .. } => json!({}),
        }
    }

    /// A one-line description for the lead's dialog.
    pub fn description(&self) -> String {
        match self {
            ToolUse::Bash {
                command,
                description,
            } => {
                if description.is_empty() {
                    format!("Run `{}`", clip(command.lines().next().unwrap_or(""), 80))
                } else {
                    description.clone()
                }
            }
            ToolUse::Read { path } => format!("Read {}", path.display()),
            ToolUse::Edit { path } => format!("Edit {}", path.display()),
            ToolUse::Write { path } => format!("Write {}", path.display()),
            ToolUse::Glob { pattern, path } => {
                format!("Find files matching `{pattern}` in {}", path.display())
            }
            ToolUse::Grep { pattern, path } => {
                format!("Search for `{}` in {}", clip(pattern, 60), path.display())
            }
            ToolUse::Team { tool, .. } => tool.clone(),
        }
    }
}

/// The gate's decision before asking anyone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Ask the lead.
    Ask,
    /// Refused without asking, and why.
    Deny(String),
}

/// A teammate's mode and session rules.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionGate {
    mode: PermissionMode,
    cwd: PathBuf,
    rules: SessionRules,
}

impl PermissionGate {
    /// A gate in `mode` for a teammate working in `cwd`.
    pub fn new(mode: PermissionMode, cwd: impl Into<PathBuf>) -> PermissionGate {
        PermissionGate {
            mode,
            cwd: normalize(&cwd.into()),
            rules: SessionRules::default(),
        }
    }

    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    pub fn set_mode(&mut self, mode: PermissionMode) {
        self.mode = mode;
    }

    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn rules(&self) -> &SessionRules {
        &self.rules
    }

    /// The team's `teamAllowedPaths` as session allow rules (`/<abs>/**` or `<rel>/**`).
    pub fn add_team_allowed_paths(&mut self, paths: &[AllowedPath]) {
        let updates: Vec<PermissionUpdate> = paths
            .iter()
            .map(|p| {
                PermissionUpdate::allow_session(PermissionRule {
                    tool_name: p.tool_name.clone(),
                    rule_content: Some(p.rule_content()),
                })
            })
            .collect();
        self.rules.apply(&updates, &self.cwd);
    }

    /// Applies a lead's `permission_updates`; a `setMode` among them changes the mode, which is
    /// returned when it changed.
    pub fn apply_updates(&mut self, updates: &[PermissionUpdate]) -> Option<PermissionMode> {
        let mode = self.rules.apply(updates, &self.cwd)?;
        if mode == self.mode {
            return None;
        }
        self.mode = mode;
        Some(mode)
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        normalize(&self.cwd.join(path))
    }

    /// The verdict for one tool use.
    pub fn check(&self, tool: &ToolUse) -> Verdict {
        match tool {
            ToolUse::Bash { command, .. } => self.check_bash(command),
            ToolUse::Read { path } => self.check_file("Read", path, false),
            ToolUse::Edit { path } => self.check_file("Edit", path, true),
            ToolUse::Write { path } => self.check_file("Write", path, true),
            ToolUse::Glob { path, .. } | ToolUse::Grep { path, .. } => {
                self.check_file("Read", path, false)
            }
            ToolUse::Team { tool, read_only } => self.check_team(tool, *read_only),
        }
    }

    fn check_team(&self, tool: &str, read_only: bool) -> Verdict {
        if self
            .rules
            .deny
            .iter()
            .any(|r| r.tool_name == tool && r.rule_content.is_none())
        {
            return Verdict::Deny(format!("a deny rule forbids {tool}"));
        }
        if self.mode == PermissionMode::Plan && !read_only {
            return Verdict::Deny(format!(
                "{PLAN_MODE_READ_ONLY}: submit your plan with SubmitPlan first"
            ));
        }
        Verdict::Allow
    }

    fn check_bash(&self, command: &str) -> Verdict {
        if self.rules.denies_bash(command) {
            return Verdict::Deny(format!(
                "a deny rule forbids `{}`",
                clip(command.lines().next().unwrap_or(""), 60)
            ));
        }
        match self.mode {
            PermissionMode::BypassPermissions => Verdict::Allow,
            PermissionMode::Plan => Verdict::Deny(PLAN_MODE_READ_ONLY.to_string()),
            PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Auto => {
                if self.rules.asks_bash(command) {
                    Verdict::Ask
                } else if self.rules.allows_bash(command) {
                    Verdict::Allow
                } else {
                    Verdict::Ask
                }
            }
        }
    }

    fn check_file(&self, tool: &str, path: &Path, writes: bool) -> Verdict {
        let path = self.absolute(path);
        if self.rules.denies_path(tool, &path, &self.cwd) {
            return Verdict::Deny(format!("a deny rule forbids {tool} {}", path.display()));
        }
        if self.mode == PermissionMode::BypassPermissions {
            return Verdict::Allow;
        }
        if self.rules.asks_path(tool, &path, &self.cwd) {
            return Verdict::Ask;
        }
        if self.rules.allows_path(tool, &path, &self.cwd) {
            return Verdict::Allow;
        }
        let inside = self.rules.in_working_dirs(&path, &self.cwd);
        match (self.mode, writes) {
            (_, false) if inside => Verdict::Allow,
            (_, false) => Verdict::Ask,
            (PermissionMode::Plan, true) => Verdict::Deny(PLAN_MODE_READ_ONLY.to_string()),
            (PermissionMode::AcceptEdits, true) if inside => Verdict::Allow,
            _ => Verdict::Ask,
        }
    }

    /// The rules that would let this use through next time, offered to the lead.
    pub fn suggestions(&self, tool: &ToolUse) -> Vec<PermissionUpdate> {
        match tool {
            ToolUse::Bash { command, .. } => {
                let rules: Vec<PermissionRule> = bash::suggested_rule_contents(command)
                    .into_iter()
                    .map(|content| PermissionRule {
                        tool_name: "Bash".into(),
                        rule_content: Some(content),
                    })
                    .collect();
                if rules.is_empty() {
                    return Vec::new();
                }
                vec![PermissionUpdate::AddRules {
                    rules,
                    behavior: crate::protocol::permission::RuleBehavior::Allow,
                    destination: crate::protocol::permission::Destination::Session,
                }]
            }
            ToolUse::Edit { .. } | ToolUse::Write { .. } => {
                vec![PermissionUpdate::SetMode {
                    mode: PermissionMode::AcceptEdits,
                    destination: crate::protocol::permission::Destination::Session,
                }]
            }
            ToolUse::Read { path } => {
                let dir = self
                    .absolute(path)
                    .parent()
                    .map(|p| p.to_string_lossy().into_owned())
                    .unwrap_or_default();
                vec![PermissionUpdate::AddDirectories {
                    directories: vec![dir],
                    destination: crate::protocol::permission::Destination::Session,
                }]
            }
            ToolUse::Glob { path, .. } | ToolUse::Grep { path, .. } => {
                vec![PermissionUpdate::AddDirectories {
                    directories: vec![self.absolute(path).to_string_lossy().into_owned()],
                    destination: crate::protocol::permission::Destination::Session,
                }]
            }
            ToolUse::Team { .. } => Vec::new(),
        }
    }

    /// The `permission_request` for this use by teammate `name`: a fresh `perm-<ms>-<7 base36>`
    /// id, a fresh tool-use id, the input and the suggestions.
    pub fn request(&self, name: &str, tool: &ToolUse) -> PermissionRequest {
        self.request_for_call(name, tool, None)
    }

    /// [`request`](Self::request) for a model's tool call: its own tool-use id and its whole
    /// input (an Edit's old and new strings, …), so the lead sees what would happen.
    pub fn request_for_call(
        &self,
        name: &str,
        tool: &ToolUse,
        call: Option<&ToolCall<'_>>,
    ) -> PermissionRequest {
        let suggestions = self
            .suggestions(tool)
            .iter()
            .filter_map(|u| serde_json::to_value(u).ok())
            .collect();
        PermissionRequest {
            request_id: request_id("perm"),
            agent_id: name.to_string(),
            tool_name: tool.tool_name().to_string(),
            tool_use_id: Some(
                call.map(|c| c.tool_use_id.to_string())
                    .unwrap_or_else(tool_use_id),
            ),
            description: tool.description(),
            input: call
                .map(|c| c.input.clone())
                .unwrap_or_else(|| tool.input()),
            permission_suggestions: suggestions,
        }
    }
}

/// A model's tool call, as the permission request shows it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ToolCall<'a> {
    pub tool_use_id: &'a str,
    pub input: &'a Value,
}

/// `toolu_` and 24 hex digits, as tool-use ids look.
pub fn tool_use_id() -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("toolu_{}", &hex[..24])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bash(c: &str) -> ToolUse {
        ToolUse::Bash {
            command: c.into(),
            description: String::new(),
        }
    }

    #[test]
    fn modes_decide_bash_and_edits() {
        let mut gate = PermissionGate::new(PermissionMode::Default, "/w");
        assert_eq!(gate.check(&bash("ls")), Verdict::Ask);
        assert_eq!(
            gate.check(&ToolUse::Read {
                path: "src/a.rs".into()
            }),
            Verdict::Allow
        );
        assert_eq!(
            gate.check(&ToolUse::Edit { path: "a".into() }),
            Verdict::Ask
        );
        gate.set_mode(PermissionMode::AcceptEdits);
        assert_eq!(
            gate.check(&ToolUse::Edit { path: "a".into() }),
            Verdict::Allow
        );
        assert_eq!(
            gate.check(&ToolUse::Edit {
                path: "../elsewhere/a".into()
            }),
            Verdict::Ask
        );
        assert_eq!(gate.check(&bash("ls")), Verdict::Ask);
        gate.set_mode(PermissionMode::Plan);
        assert!(matches!(gate.check(&bash("ls")), Verdict::Deny(_)));
        gate.set_mode(PermissionMode::BypassPermissions);
        assert_eq!(gate.check(&bash("rm -rf x")), Verdict::Allow);
    }

    #[test]
    fn searches_are_reads_and_team_tools_follow_plan_mode() {
        let mut gate = PermissionGate::new(PermissionMode::Plan, "/w");
        let grep = ToolUse::Grep {
            pattern: "fn main".into(),
            path: "src".into(),
        };
        assert_eq!(gate.check(&grep), Verdict::Allow);
        let outside = ToolUse::Glob {
            pattern: "*.rs".into(),
            path: "/etc".into(),
        };
        assert_eq!(gate.check(&outside), Verdict::Ask);
        let list = ToolUse::Team {
            tool: "TaskList".into(),
            read_only: true,
        };
        let update = ToolUse::Team {
            tool: "TaskUpdate".into(),
            read_only: false,
        };
        assert_eq!(gate.check(&list), Verdict::Allow);
        assert!(matches!(gate.check(&update), Verdict::Deny(why) if why.contains("SubmitPlan")));
        gate.set_mode(PermissionMode::Default);
        assert_eq!(gate.check(&update), Verdict::Allow);
        let input = json!({"file_path": "a.rs", "old_string": "x", "new_string": "y"});
        let call = ToolCall {
            tool_use_id: "toolu_model",
            input: &input,
        };
        let request = gate.request_for_call(
            "builder",
            &ToolUse::Edit {
                path: "a.rs".into(),
            },
            Some(&call),
        );
        assert_eq!(request.tool_use_id.as_deref(), Some("toolu_model"));
        assert_eq!(request.input["new_string"], "y");
    }

    #[test]
    fn an_accepted_suggestion_stops_the_next_ask() {
        let mut gate = PermissionGate::new(PermissionMode::Default, "/w");
        let tool = bash("cargo test -p parser && cargo test -p lexer");
        let request = gate.request("builder", &tool);
        assert!(request.request_id.starts_with("perm-"));
        assert_eq!(
            request.input["command"],
            "cargo test -p parser && cargo test -p lexer"
        );
        let suggestions = request.suggestions();
        assert_eq!(suggestions.len(), 1);
        assert_eq!(gate.check(&tool), Verdict::Ask);
        gate.apply_updates(&suggestions);
        assert_eq!(gate.check(&tool), Verdict::Allow);
        assert_eq!(gate.check(&bash("cargo test")), Verdict::Allow);
        assert_eq!(gate.check(&bash("cargo build")), Verdict::Ask);
    }
}
