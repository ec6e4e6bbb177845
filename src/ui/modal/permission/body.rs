//! How a tool's input reads to a human in the permission dialog: the lines of
//! `lead::approval_text` (the command for Bash, a `-`/`+` diff for Edit and MultiEdit, `+`
//! lines for Write, the path for Read, pretty JSON for anything else), styled.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::lead::approval_text::{self, LineKind};
use crate::lead::contract::PendingPermission;

fn style_of(kind: LineKind) -> Style {
    match kind {
        LineKind::Plain => Style::default(),
        LineKind::Path => Style::default().add_modifier(Modifier::BOLD),
        LineKind::Removed => Style::default().fg(Color::Red),
        LineKind::Added => Style::default().fg(Color::Green),
    }
}

/// Did the request carry control sequences (in its teammate's name, tool, description or
/// input)? The dialog then says so above the input, which shows them escaped.
pub fn carries_controls(head: &PendingPermission) -> bool {
    approval_text::carries_controls(head)
}

/// The input of a tool use as lines for a human (the words are `lead::approval_text`'s, the
/// web view shows the same).
pub fn input_lines(tool: &str, input: &Value) -> Vec<Line<'static>> {
    approval_text::input_lines(tool, input)
        .into_iter()
        .map(|(kind, text)| Line::from(Span::styled(text, style_of(kind))))
        .collect()
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
