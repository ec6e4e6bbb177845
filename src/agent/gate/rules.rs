//! A teammate's session permission rules: allow / deny / ask rules per tool, and extra working
//! directories, fed by the `permission_updates` of the lead's answers (every destination is
//! applied to the session: a teamlead teammate keeps no settings files) and by the team's
//! `teamAllowedPaths`. Rules match Bash commands through [`super::bash`] and file tools by path.

use std::path::{Component, Path, PathBuf};

use super::bash::{self, BashPattern};
use crate::protocol::PermissionMode;
use crate::protocol::permission::{PermissionRule, PermissionUpdate, RuleBehavior};

/// The rules of one teammate's session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionRules {
    pub allow: Vec<PermissionRule>,
    pub deny: Vec<PermissionRule>,
    pub ask: Vec<PermissionRule>,
    /// Directories besides the working directory where edits count as "in the project".
    pub directories: Vec<PathBuf>,
}

impl SessionRules {
    fn list_mut(&mut self, behavior: RuleBehavior) -> &mut Vec<PermissionRule> {
        match behavior {
            RuleBehavior::Allow => &mut self.allow,
            RuleBehavior::Deny => &mut self.deny,
            RuleBehavior::Ask => &mut self.ask,
        }
    }

    /// Applies updates; returns the last mode a `setMode` update asked for.
    pub fn apply(&mut self, updates: &[PermissionUpdate], cwd: &Path) -> Option<PermissionMode> {
        let mut mode = None;
        for update in updates {
            match update {
                PermissionUpdate::AddRules {
                    rules, behavior, ..
                } => {
                    let list = self.list_mut(*behavior);
                    for rule in rules {
                        if !list.contains(rule) {
                            list.push(rule.clone());
                        }
                    }
                }
                PermissionUpdate::ReplaceRules {
                    rules, behavior, ..
                } => {
                    let list = self.list_mut(*behavior);
                    let tools: Vec<&str> = rules.iter().map(|r| r.tool_name.as_str()).collect();
                    list.retain(|r| !tools.contains(&r.tool_name.as_str()));
                    list.extend(rules.iter().cloned());
                }
                PermissionUpdate::RemoveRules {
                    rules, behavior, ..
                } => self.list_mut(*behavior).retain(|r| !rules.contains(r)),
                PermissionUpdate::SetMode { mode: m, .. } => mode = Some(*m),
                PermissionUpdate::AddDirectories { directories, .. } => {
                    for d in directories {
                        let dir = normalize(&cwd.join(d));
                        if !self.directories.contains(&dir) {
                            self.directories.push(dir);
                        }
                    }
                }
                PermissionUpdate::RemoveDirectories { directories, .. } => {
                    let gone: Vec<PathBuf> = directories
                        .iter()
                        .map(|d| normalize(&cwd.join(d)))
                        .collect();
                    self.directories.retain(|d| !gone.contains(d));
                }
            }
        }
        mode
    }

    /// Does a rule of `rules` catch this Bash command? (`deny`/`ask`: any simple command,
    /// nested ones too, is enough; `allow`: the whole command must be covered, see
    /// [`allows_bash`](Self::allows_bash).)
    fn any_part_matches(rules: &[PermissionRule], command: &str) -> bool {
        let reading = bash::read(command);
        rules
            .iter()
            .filter(|r| r.tool_name == "Bash")
            .any(|r| BashPattern::from_rule(r.rule_content.as_deref()).catches(command, &reading))
    }

    /// A deny rule covers some part of the command.
    pub fn denies_bash(&self, command: &str) -> bool {
        Self::any_part_matches(&self.deny, command)
    }

    /// An ask rule covers some part of the command.
    pub fn asks_bash(&self, command: &str) -> bool {
        Self::any_part_matches(&self.ask, command)
    }

    /// The allow rules cover the whole command: one rule alone (exact or any), or a plain
    /// command (no redirection, substitution, `&`, assignment, … see
    /// [`crate::protocol::permission::bash`]) whose every simple command starts with the words
    /// of a safe prefix rule. An unsafe prefix rule (`env:*`, `bash:*`) allows nothing.
    pub fn allows_bash(&self, command: &str) -> bool {
        let reading = bash::read(command);
        let patterns: Vec<BashPattern> = self
            .allow
            .iter()
            .filter(|r| r.tool_name == "Bash")
            .map(|r| BashPattern::from_rule(r.rule_content.as_deref()))
            .collect();
        if patterns
            .iter()
            .any(|p| !matches!(p, BashPattern::Prefix(_)) && p.allows(command, &reading))
        {
            return true;
        }
        let prefixes: Vec<Vec<String>> = patterns
            .iter()
            .filter_map(BashPattern::prefix_words)
            .filter(|w| bash::prefix_is_safe(w))
            .collect();
        reading.plain().is_some_and(|commands| {
            commands
                .iter()
                .all(|c| prefixes.iter().any(|p| bash::covers(p, c)))
        })
    }

    /// A rule of `rules` for `tool` covers `path` (absolute, normalized).
    fn path_rule_matches(rules: &[PermissionRule], tool: &str, path: &Path, cwd: &Path) -> bool {
        rules
            .iter()
            .filter(|r| r.tool_name == tool)
            .any(|r| match r.rule_content.as_deref() {
                None | Some("") | Some("*") => true,
                Some(glob) => path_glob_matches(glob, path, cwd),
            })
    }

    /// Allow / deny / ask rule lookups for a file tool.
    pub fn allows_path(&self, tool: &str, path: &Path, cwd: &Path) -> bool {
        Self::path_rule_matches(&self.allow, tool, path, cwd)
    }
    pub fn denies_path(&self, tool: &str, path: &Path, cwd: &Path) -> bool {
        Self::path_rule_matches(&self.deny, tool, path, cwd)
    }
    pub fn asks_path(&self, tool: &str, path: &Path, cwd: &Path) -> bool {
        Self::path_rule_matches(&self.ask, tool, path, cwd)
    }

    /// Is `path` inside the working directory or an added directory?
    pub fn in_working_dirs(&self, path: &Path, cwd: &Path) -> bool {
        let cwd = normalize(cwd);
        path.starts_with(&cwd) || self.directories.iter().any(|d| path.starts_with(d))
    }
}

/// `//abs/dir/**` (absolute), `/dir/**` and `dir/**` (relative to the working directory),
/// `**` suffix for "anything below", otherwise the exact path.
fn path_glob_matches(glob: &str, path: &Path, cwd: &Path) -> bool {
    let (base, below) = match glob.strip_suffix("/**") {
        Some(b) => (b, true),
        None => (glob, false),
    };
    let base = if let Some(abs) = base.strip_prefix("//") {
        PathBuf::from(format!("/{abs}"))
    } else if let Some(home) = base.strip_prefix("~/") {
        match etcetera::home_dir() {
            Ok(h) => h.join(home),
            Err(_) => return false,
        }
    } else {
        cwd.join(base.trim_start_matches('/'))
    };
    let base = normalize(&base);
    if below {
        path.starts_with(&base)
    } else {
        path == base
    }
}

/// A path with `.` and `..` resolved lexically (no file system access).
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::permission::Destination;

    fn rule(tool: &str, content: Option<&str>) -> PermissionRule {
        PermissionRule {
            tool_name: tool.into(),
            rule_content: content.map(str::to_string),
        }
    }

    #[test]
    fn updates_add_replace_remove_and_set_mode() {
        let cwd = Path::new("/w");
        let mut rules = SessionRules::default();
        let mode = rules.apply(
            &[
                PermissionUpdate::allow_session(rule("Bash", Some("cargo test:*"))),
                PermissionUpdate::SetMode {
                    mode: PermissionMode::AcceptEdits,
                    destination: Destination::Session,
                },
                PermissionUpdate::AddDirectories {
                    directories: vec!["../other".into()],
                    destination: Destination::Session,
                },
            ],
            cwd,
        );
        assert_eq!(mode, Some(PermissionMode::AcceptEdits));
        assert!(rules.allows_bash("cargo test -q"));
        assert!(!rules.allows_bash("cargo build"));
        assert!(rules.in_working_dirs(Path::new("/other/x"), cwd));
        rules.apply(
            &[PermissionUpdate::RemoveRules {
                rules: vec![rule("Bash", Some("cargo test:*"))],
                behavior: RuleBehavior::Allow,
                destination: Destination::Session,
            }],
            cwd,
        );
        assert!(!rules.allows_bash("cargo test -q"));
    }

    #[test]
    fn deny_rules_catch_any_part_and_paths_match_globs() {
        let cwd = Path::new("/w");
        let rules = SessionRules {
            deny: vec![rule("Bash", Some("rm:*"))],
            allow: vec![
                rule("Edit", Some("//srv/x/**")),
                rule("Edit", Some("src/**")),
            ],
            ..SessionRules::default()
        };
        assert!(rules.denies_bash("ls && rm -rf x"));
        assert!(!rules.denies_bash("ls"));
        assert!(rules.allows_path("Edit", Path::new("/srv/x/a/b"), cwd));
        assert!(rules.allows_path("Edit", Path::new("/w/src/main.rs"), cwd));
        assert!(!rules.allows_path("Edit", Path::new("/w/Cargo.toml"), cwd));
        assert_eq!(
            normalize(Path::new("/a/b/../c/./d")),
            PathBuf::from("/a/c/d")
        );
    }
}
