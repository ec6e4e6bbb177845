//! Completion for the composer: `/command` at the start of the text (from the lead's command
//! list, each with its one-line help) and `@name` anywhere (from the team's names, each in its
//! color). Pure: it looks at the word before the cursor and returns what matches.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

use crate::ui::palette::{dim, name_style};
use crate::ui::transcript::wrap::{str_width, truncate};

/// Most rows the popup shows.
pub const MAX_ROWS: usize = 8;

/// One completion candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The text that replaces the word (`/spawn`, `@builder`).
    pub insert: String,
    /// One-line help (commands) or empty.
    pub help: String,
    /// The teammate's palette color (names).
    pub color: Option<String>,
}

/// The open popup: what matched the word and which is selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub candidates: Vec<Candidate>,
    pub selected: usize,
    /// The word being completed, as typed.
    pub word: String,
}

impl Completion {
    /// The selected candidate.
    pub fn current(&self) -> Option<&Candidate> {
        self.candidates.get(self.selected)
    }

    /// Whether the typed word already is the selected candidate.
    pub fn is_exact(&self) -> bool {
        self.current().is_some_and(|c| c.insert == self.word)
    }

    pub fn up(&mut self) {
        let n = self.candidates.len().max(1);
        self.selected = (self.selected + n - 1) % n;
    }

    pub fn down(&mut self) {
        let n = self.candidates.len().max(1);
        self.selected = (self.selected + 1) % n;
    }

    /// Rows the popup needs.
    pub fn height(&self) -> u16 {
        self.candidates.len().min(MAX_ROWS) as u16
    }

    /// Draws the popup into `area` (its bottom rows), clearing what is under it.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let rows = usize::from(self.height().min(area.height));
        if rows == 0 {
            return;
        }
        let popup = Rect {
            y: area.y + area.height - rows as u16,
            height: rows as u16,
            ..area
        };
        Clear.render(popup, buf);
        // Keep the selected row visible.
        let first = self.selected.saturating_sub(rows - 1);
        let name_width = self
            .candidates
            .iter()
            .map(|c| str_width(&c.insert))
            .max()
            .unwrap_or(0)
            .min(usize::from(area.width) / 2);
        for (i, (y, candidate)) in (popup.y..)
            .zip(self.candidates.iter().skip(first).take(rows))
            .enumerate()
        {
            let selected = first + i == self.selected;
            let name_style = if candidate.color.is_some() {
                name_style(candidate.color.as_deref())
            } else {
                Style::default().add_modifier(Modifier::BOLD)
            };
            let marker = if selected { "❯ " } else { "  " };
            let name = format!("{:<name_width$}", truncate(&candidate.insert, name_width));
            let help_width = usize::from(area.width).saturating_sub(name_width + 4);
            let mut line = Line::from(vec![
                Span::raw(marker),
                Span::styled(name, name_style),
                Span::raw("  "),
                Span::styled(truncate(&candidate.help, help_width), dim()),
            ]);
            if selected {
                line = line.style(Style::default().add_modifier(Modifier::REVERSED));
            }
            buf.set_line(popup.x, y, &line, popup.width);
        }
    }
}

/// A command's help without the command's own name in front (`/spawn NAME …` → `NAME …`).
fn command_help(name: &str, help: &str) -> String {
    help.strip_prefix(name)
        .map(str::trim_start)
        .filter(|rest| !rest.is_empty())
        .unwrap_or(help)
        .to_string()
}

/// The completion for `line` (the cursor's line, up to the cursor) on row `row`, if any.
pub fn complete(
    row: usize,
    before_cursor: &str,
    commands: &[(&str, &str)],
    names: &[(String, Option<String>)],
) -> Option<Completion> {
    // Commands may have several words (`/task add`): match the whole text before the cursor.
    if row == 0 && before_cursor.starts_with('/') {
        let candidates: Vec<Candidate> = commands
            .iter()
            .filter(|(name, _)| name.starts_with(before_cursor))
            .map(|(name, help)| Candidate {
                insert: (*name).to_string(),
                help: command_help(name, help),
                color: None,
            })
            .collect();
        if !candidates.is_empty() {
            return Some(Completion {
                candidates,
                selected: 0,
                word: before_cursor.to_string(),
            });
        }
    }
    let start = before_cursor
        .char_indices()
        .rev()
        .find(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before_cursor[start..];
    let candidates: Vec<Candidate> = match word.strip_prefix('@') {
        Some(prefix) => {
            let prefix = prefix.to_lowercase();
            names
                .iter()
                .filter(|(name, _)| name.to_lowercase().starts_with(&prefix))
                .map(|(name, color)| Candidate {
                    insert: format!("@{name}"),
                    help: String::new(),
                    color: color.clone(),
                })
                .collect()
        }
        None => Vec::new(),
    };
    if candidates.is_empty() {
        return None;
    }
    Some(Completion {
        candidates,
        selected: 0,
        word: word.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMANDS: &[(&str, &str)] = &[
        ("/spawn", "start a teammate"),
        ("/task add", "add a task"),
        ("/task list", "list tasks"),
        ("/shutdown", "ask a teammate to stop"),
        ("/quit", "quit"),
    ];

    fn names() -> Vec<(String, Option<String>)> {
        vec![
            ("builder".to_string(), Some("blue".to_string())),
            ("Tester".to_string(), None),
        ]
    }

    #[test]
    fn commands_complete_only_at_the_start() {
        let c = complete(0, "/s", COMMANDS, &names()).expect("popup");
        let inserts: Vec<_> = c.candidates.iter().map(|c| c.insert.as_str()).collect();
        assert_eq!(inserts, vec!["/spawn", "/shutdown"]);
        assert!(complete(0, "say /s", COMMANDS, &names()).is_none());
        assert!(complete(1, "/s", COMMANDS, &names()).is_none());
        assert!(complete(0, "/x", COMMANDS, &names()).is_none());
        // Several words: the whole text before the cursor is the word.
        let task = complete(0, "/task a", COMMANDS, &names()).expect("popup");
        assert_eq!(
            command_help("/task add", "/task add SUBJECT — add"),
            "SUBJECT — add"
        );
        assert_eq!(command_help("/quit", "quit"), "quit");
        assert_eq!(task.candidates.len(), 1);
        assert_eq!(task.word, "/task a");
        // Past the command, names still complete.
        let msg = complete(0, "/spawn x @b", COMMANDS, &names()).expect("popup");
        assert_eq!(msg.candidates[0].insert, "@builder");
    }

    #[test]
    fn names_complete_anywhere_ignoring_case() {
        let c = complete(0, "/msg @t", COMMANDS, &names()).expect("popup");
        assert_eq!(c.candidates[0].insert, "@Tester");
        let all = complete(2, "hi @", COMMANDS, &names()).expect("popup");
        assert_eq!(all.candidates.len(), 2);
        assert!(!all.is_exact());
        let exact = complete(0, "@builder", COMMANDS, &names()).expect("popup");
        assert!(exact.is_exact());
    }
}
