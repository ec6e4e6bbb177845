//! The words of a waiting request, the same on every screen (the terminal's dialogs and the web
//! view): a tool's input for a human (the command for Bash, a `-`/`+` diff for Edit and
//! MultiEdit, `+` lines for Write, the path for Read, pretty JSON for anything else), the
//! warnings (control sequences shown escaped, an input shown in part), and the "always" rules
//! offered with exactly what they do. Every string from a teammate is escaped here
//! ([`crate::protocol::display`]); a screen only styles the lines.

use serde_json::Value;

use super::contract::PendingPermission;
use crate::protocol::PermissionUpdate;
use crate::protocol::display::{self, visible_text};
use crate::protocol::permission::{Destination, PermissionRule, RuleBehavior, fallback_update};

/// The warning above a request that carried control sequences.
pub const CONTROLS_WARNING: &str = "⚠ This request carried control sequences: every one is shown as an escape (\\e[8m), never applied.";

/// The warning above a request shown only in part (its size, and where it is whole).
pub fn in_part_warning(part: &super::shown::InPart) -> String {
    visible_text(&format!("⚠ This request is {}", part.note())).into_owned()
}

/// What a line of a tool's input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Plain,
    /// The file a tool touches.
    Path,
    Removed,
    Added,
}

impl LineKind {
    pub fn as_str(self) -> &'static str {
        match self {
            LineKind::Plain => "plain",
            LineKind::Path => "path",
            LineKind::Removed => "removed",
            LineKind::Added => "added",
        }
    }
}

/// One line of a tool's input, escaped.
pub type InputLine = (LineKind, String);

fn str_field<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

fn plain(text: &str) -> Vec<InputLine> {
    visible_text(text)
        .lines()
        .map(|l| (LineKind::Plain, l.to_string()))
        .collect()
}

fn marked(text: &str, mark: &str, kind: LineKind) -> Vec<InputLine> {
    let clean = visible_text(text);
    let mut lines: Vec<InputLine> = clean
        .lines()
        .map(|l| (kind, format!("{mark}{l}")))
        .collect();
    if lines.is_empty() {
        lines.push((kind, mark.to_string()));
    }
    lines
}

fn path_line(path: &str) -> InputLine {
    (LineKind::Path, visible_text(path).into_owned())
}

fn edit_lines(edit: &Value) -> Option<Vec<InputLine>> {
    let old = str_field(edit, "old_string")?;
    let new = str_field(edit, "new_string")?;
    let mut lines = marked(old, "- ", LineKind::Removed);
    lines.extend(marked(new, "+ ", LineKind::Added));
    Some(lines)
}

fn tool_lines(tool: &str, input: &Value) -> Option<Vec<InputLine>> {
    match tool {
        "Bash" => Some(plain(str_field(input, "command")?)),
        "Edit" => {
            let mut lines = vec![path_line(str_field(input, "file_path")?)];
            lines.extend(edit_lines(input)?);
            Some(lines)
        }
        "MultiEdit" => {
            let mut lines = vec![path_line(str_field(input, "file_path")?)];
            for edit in input.get("edits")?.as_array()? {
                lines.extend(edit_lines(edit)?);
            }
            Some(lines)
        }
        "Write" => {
            let mut lines = vec![path_line(str_field(input, "file_path")?)];
            lines.extend(marked(str_field(input, "content")?, "+ ", LineKind::Added));
            Some(lines)
        }
        "Read" => Some(vec![path_line(str_field(input, "file_path")?)]),
        "NotebookEdit" => {
            let mut lines = vec![path_line(str_field(input, "notebook_path")?)];
            lines.extend(marked(
                str_field(input, "new_source")?,
                "+ ",
                LineKind::Added,
            ));
            Some(lines)
        }
        "WebFetch" => Some(plain(str_field(input, "url")?)),
        _ => None,
    }
}

/// The input of a tool use as lines for a human (escaped).
pub fn input_lines(tool: &str, input: &Value) -> Vec<InputLine> {
    tool_lines(tool, input).unwrap_or_else(|| {
        let pretty = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
        plain(&pretty)
    })
}

/// Did the request carry control sequences (in its teammate's name, tool, description or
/// input)? A screen then says so ([`CONTROLS_WARNING`]) above the input, shown escaped.
pub fn carries_controls(head: &PendingPermission) -> bool {
    [&head.worker, &head.tool_name, &head.description]
        .iter()
        .any(|t| display::carries_controls(t))
        || !display::controls_in_value(&head.input).is_empty()
}

fn where_it_applies(destination: &Destination) -> &'static str {
    match destination {
        Destination::Session => "this session",
        Destination::LocalSettings => "in its local settings",
        Destination::ProjectSettings => "in its project settings",
        Destination::UserSettings => "in its user settings",
        Destination::CliArg => "for this run",
    }
}

fn rules_text(rules: &[PermissionRule]) -> String {
    rules
        .iter()
        .map(|r| visible_text(&r.label()).into_owned())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What an offered update does, for a human: `allow Bash(cargo test:*) for @alpha this
/// session`.
pub fn describe(update: &PermissionUpdate, worker: &str) -> String {
    match update {
        PermissionUpdate::AddRules {
            rules,
            behavior: RuleBehavior::Allow,
            destination,
        } => format!(
            "allow {} for @{worker} {}",
            rules_text(rules),
            where_it_applies(destination)
        ),
        PermissionUpdate::SetMode { mode, destination } => {
            format!(
                "switch @{worker} to {mode} {}",
                where_it_applies(destination)
            )
        }
        PermissionUpdate::AddDirectories {
            directories,
            destination,
        } => format!(
            "allow @{worker} into {} {}",
            directories
                .iter()
                .map(|d| visible_text(d).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            where_it_applies(destination)
        ),
        other => visible_text(&other.label()).into_owned(),
    }
}

/// What an update's rules allow, in words, for the "always" confirmation: `every command that
/// starts with cargo test; exactly: echo a > out1` (escaped); empty for modes and
/// directories, whose text says it all.
pub fn meaning(update: &PermissionUpdate) -> String {
    match update {
        PermissionUpdate::AddRules { rules, .. } => rules
            .iter()
            .map(|r| visible_text(&r.meaning()).into_owned())
            .collect::<Vec<_>>()
            .join("; "),
        _ => String::new(),
    }
}

/// The "always" updates a request offers: each well-formed suggestion that only widens what is
/// allowed and whose rules allow only what they show (a teammate's `Bash(env:*)` is dropped,
/// see [`PermissionUpdate::is_offerable`]); without one, the rule built from the tool and its
/// input; without that, none.
pub fn always_updates(request: &PendingPermission) -> Vec<PermissionUpdate> {
    let mut offered: Vec<PermissionUpdate> = request
        .suggestions
        .iter()
        .filter(|s| s.is_offerable())
        .cloned()
        .collect();
    // A rule built from an input shown only in part could differ from the whole one's.
    if offered.is_empty() && request.in_part.is_none() {
        offered.extend(fallback_update(&request.tool_name, &request.input));
    }
    offered
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(lines: &[InputLine]) -> Vec<&str> {
        lines.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn bash_shows_the_command_escaped() {
        let lines = input_lines("Bash", &json!({"command": "cargo test\u{1b}[2J"}));
        assert_eq!(text(&lines), vec!["cargo test\\e[2J"]);
    }

    #[test]
    fn edit_is_a_diff_and_write_is_additions() {
        let edit = json!({"file_path": "src/a.rs", "old_string": "a\nb", "new_string": "c"});
        let lines = input_lines("Edit", &edit);
        assert_eq!(text(&lines), vec!["src/a.rs", "- a", "- b", "+ c"]);
        assert_eq!(lines[1].0, LineKind::Removed);
        let write = json!({"file_path": "b.txt", "content": "hi"});
        assert_eq!(text(&input_lines("Write", &write)), vec!["b.txt", "+ hi"]);
    }

    #[test]
    fn unknown_tools_and_odd_inputs_are_pretty_json() {
        let lines = input_lines("Grep", &json!({"pattern": "x"}));
        assert_eq!(text(&lines), vec!["{", "  \"pattern\": \"x\"", "}"]);
        let odd = input_lines("Bash", &json!({"cmd": 1}));
        assert_eq!(text(&odd)[0], "{");
    }
}
