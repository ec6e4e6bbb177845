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

    // What the lines say is tested in `lead::approval_text`; here, that they keep it and are
    // styled by their kind.
    #[test]
    fn the_shared_lines_are_kept_and_styled() {
        let edit = json!({"file_path": "src/a.rs", "old_string": "a", "new_string": "c"});
        let lines = input_lines("Edit", &edit);
        let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        assert_eq!(text, vec!["src/a.rs", "- a", "+ c"]);
        assert_ne!(lines[1].spans[0].style, lines[2].spans[0].style);
    }
}
