//! How a tool's input reads to a human in the permission dialog: the command for Bash, a
//! `-`/`+` diff for Edit and MultiEdit, `+` lines for Write, the path for Read, pretty JSON
//! for anything else (and when the expected fields are missing).

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::lead::contract::PendingPermission;
use crate::protocol::display;
use crate::ui::transcript::wrap::sanitize;

fn str_field<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input.get(key).and_then(Value::as_str)
}

fn plain(text: &str, style: Style) -> Vec<Line<'static>> {
    sanitize(text)
        .lines()
        .map(|l| Line::from(Span::styled(l.to_string(), style)))
        .collect()
}

fn marked(text: &str, mark: &str, style: Style) -> Vec<Line<'static>> {
    let clean = sanitize(text);
    let mut lines: Vec<Line<'static>> = clean
        .lines()
        .map(|l| Line::from(Span::styled(format!("{mark}{l}"), style)))
        .collect();
    if lines.is_empty() {
        lines.push(Line::from(Span::styled(mark.to_string(), style)));
    }
    lines
}

fn path_line(path: &str) -> Line<'static> {
    Line::from(Span::styled(
        sanitize(path),
        Style::default().add_modifier(Modifier::BOLD),
    ))
}

fn removed() -> Style {
    Style::default().fg(Color::Red)
}

fn added() -> Style {
    Style::default().fg(Color::Green)
}

fn edit_lines(edit: &Value) -> Option<Vec<Line<'static>>> {
    let old = str_field(edit, "old_string")?;
    let new = str_field(edit, "new_string")?;
    let mut lines = marked(old, "- ", removed());
    lines.extend(marked(new, "+ ", added()));
    Some(lines)
}

fn tool_lines(tool: &str, input: &Value) -> Option<Vec<Line<'static>>> {
    match tool {
        "Bash" => Some(plain(str_field(input, "command")?, Style::default())),
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
            lines.extend(marked(str_field(input, "content")?, "+ ", added()));
            Some(lines)
        }
        "Read" => Some(vec![path_line(str_field(input, "file_path")?)]),
        "NotebookEdit" => {
            let mut lines = vec![path_line(str_field(input, "notebook_path")?)];
            lines.extend(marked(str_field(input, "new_source")?, "+ ", added()));
            Some(lines)
        }
        "WebFetch" => Some(plain(str_field(input, "url")?, Style::default())),
        _ => None,
    }
}

/// Did the request carry control sequences (in its teammate's name, tool, description or
/// input)? The dialog then says so above the input, which shows them escaped.
pub fn carries_controls(head: &PendingPermission) -> bool {
    [&head.worker, &head.tool_name, &head.description]
        .iter()
        .any(|t| display::carries_controls(t))
        || !display::controls_in_value(&head.input).is_empty()
}

/// The input of a tool use as lines for a human.
pub fn input_lines(tool: &str, input: &Value) -> Vec<Line<'static>> {
    tool_lines(tool, input).unwrap_or_else(|| {
        let pretty = serde_json::to_string_pretty(input).unwrap_or_else(|_| input.to_string());
        plain(&pretty, Style::default())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn bash_shows_the_command() {
        let lines = input_lines(
            "Bash",
            &json!({"command": "cargo test", "description": "x"}),
        );
        assert_eq!(text(&lines), vec!["cargo test"]);
    }

    #[test]
    fn edit_is_a_diff_and_write_is_additions() {
        let edit = json!({"file_path": "src/a.rs", "old_string": "a\nb", "new_string": "c"});
        assert_eq!(
            text(&input_lines("Edit", &edit)),
            vec!["src/a.rs", "- a", "- b", "+ c"]
        );
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
