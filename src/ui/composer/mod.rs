//! The composer: a multi-line ratatui-textarea in a rounded box with a `>` prompt, plus the
//! completion popup state. Keys reach it only after the keymap had its say (Enter submits,
//! Alt/Shift+Enter break the line, Tab completes).

pub mod completion;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use ratatui::widgets::{Block, BorderType, Widget};
use ratatui_textarea::{CursorMove, TextArea, WrapMode};

use completion::Completion;

use crate::ui::transcript::wrap::str_width;

/// Most text rows the composer grows to.
pub const MAX_ROWS: u16 = 8;

/// The composer's text and popup.
pub struct Composer {
    textarea: TextArea<'static>,
    completion: Option<Completion>,
    /// The text when the user closed the popup with Esc: it stays closed until the text changes.
    dismissed_at: Option<String>,
}

impl Default for Composer {
    fn default() -> Self {
        Composer::new()
    }
}

fn new_textarea(lines: Vec<String>) -> TextArea<'static> {
    let mut textarea = TextArea::new(lines);
    textarea.set_wrap_mode(WrapMode::WordOrGlyph);
    textarea.set_cursor_line_style(Style::default());
    textarea.set_placeholder_style(Style::default().fg(Color::DarkGray));
    textarea.move_cursor(CursorMove::Bottom);
    textarea.move_cursor(CursorMove::End);
    textarea
}

impl Composer {
    pub fn new() -> Composer {
        Composer {
            textarea: new_textarea(vec![String::new()]),
            completion: None,
            dismissed_at: None,
        }
    }

    /// The text, lines joined with `\n`.
    pub fn text(&self) -> String {
        self.textarea.lines().join("\n")
    }

    pub fn is_empty(&self) -> bool {
        self.textarea.is_empty()
    }

    /// Replaces the text (cursor at the end).
    pub fn set_text(&mut self, text: &str) {
        self.textarea = new_textarea(text.split('\n').map(str::to_string).collect());
        self.completion = None;
        self.dismissed_at = None;
    }

    /// Empties the composer and closes the popup.
    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Ctrl+U, as in shells: deletes from the cursor to the start of its line.
    pub fn clear_line(&mut self) {
        self.textarea.delete_line_by_head();
    }

    /// Takes the text out (for submitting).
    pub fn take(&mut self) -> String {
        let text = self.text();
        self.clear();
        text
    }

    /// Plain typing and editing keys.
    pub fn input(&mut self, key: KeyEvent) {
        self.textarea.input(key);
    }

    /// Inserts pasted or programmatic text at the cursor.
    pub fn insert_str(&mut self, text: &str) {
        let clean: String = text.replace("\r\n", "\n").replace('\r', "\n");
        self.textarea.insert_str(clean);
    }

    pub fn newline(&mut self) {
        self.textarea.insert_newline();
    }

    /// The open popup, if any.
    pub fn completion(&self) -> Option<&Completion> {
        self.completion.as_ref()
    }

    pub fn completion_mut(&mut self) -> Option<&mut Completion> {
        self.completion.as_mut()
    }

    /// Closes the popup until the text changes.
    pub fn dismiss_completion(&mut self) {
        self.completion = None;
        self.dismissed_at = Some(self.text());
    }

    /// Recomputes the popup from the word before the cursor, keeping the selection when the
    /// candidates did not change.
    pub fn refresh_completion(
        &mut self,
        commands: &[(&str, &str)],
        names: &[(String, Option<String>)],
    ) {
        if self.dismissed_at.as_deref() == Some(self.text().as_str()) {
            self.completion = None;
            return;
        }
        self.dismissed_at = None;
        let cursor = self.textarea.cursor();
        let line = self
            .textarea
            .lines()
            .get(cursor.0)
            .map(String::as_str)
            .unwrap_or("");
        let before: String = line.chars().take(cursor.1).collect();
        let mut next = completion::complete(cursor.0, &before, commands, names);
        if let (Some(next), Some(prev)) = (next.as_mut(), self.completion.as_ref())
            && next.candidates == prev.candidates
        {
            next.selected = prev.selected;
        }
        self.completion = next;
    }

    /// Replaces the word before the cursor with the selected candidate and a space.
    pub fn accept_completion(&mut self) {
        let Some(popup) = self.completion.take() else {
            return;
        };
        let Some(candidate) = popup.current() else {
            return;
        };
        for _ in 0..popup.word.chars().count() {
            self.textarea.delete_char();
        }
        self.textarea.insert_str(format!("{} ", candidate.insert));
    }

    /// Rows the box needs at this width (text rows, borders included).
    pub fn height(&self, width: u16) -> u16 {
        let inner = usize::from(width.saturating_sub(4).max(1));
        let rows: usize = self
            .textarea
            .lines()
            .iter()
            .map(|l| str_width(l).div_ceil(inner).max(1))
            .sum();
        (rows as u16).clamp(1, MAX_ROWS) + 2
    }

    /// Draws the box: border in `accent`, the `>` prompt and the text, the cursor only when
    /// `focused`; `placeholder` shows while empty.
    pub fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        focused: bool,
        accent: Color,
        placeholder: &str,
    ) {
        let block = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(Style::default().fg(accent));
        let inner = block.inner(area);
        block.render(area, buf);
        if inner.width < 3 || inner.height == 0 {
            return;
        }
        buf.set_span(
            inner.x,
            inner.y,
            &Span::styled("> ", Style::default().add_modifier(Modifier::BOLD)),
            2,
        );
        let text_area = Rect {
            x: inner.x + 2,
            width: inner.width - 2,
            ..inner
        };
        self.textarea.set_placeholder_text(placeholder);
        self.textarea.set_cursor_style(if focused {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        });
        (&self.textarea).render(text_area, buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMMANDS: &[(&str, &str)] = &[("/spawn", "start"), ("/quit", "quit")];

    #[test]
    fn tab_completion_replaces_the_word() {
        let mut c = Composer::new();
        c.insert_str("/sp");
        c.refresh_completion(COMMANDS, &[]);
        assert_eq!(c.completion().map(|p| p.candidates.len()), Some(1));
        c.accept_completion();
        assert_eq!(c.text(), "/spawn ");
        c.refresh_completion(COMMANDS, &[]);
        assert!(c.completion().is_none());
    }

    #[test]
    fn names_complete_after_other_words() {
        let mut c = Composer::new();
        c.insert_str("ask @bu");
        let names = vec![("builder".to_string(), Some("blue".to_string()))];
        c.refresh_completion(COMMANDS, &names);
        c.accept_completion();
        assert_eq!(c.text(), "ask @builder ");
    }

    #[test]
    fn dismissed_popup_stays_closed_until_the_text_changes() {
        let mut c = Composer::new();
        c.insert_str("/");
        c.refresh_completion(COMMANDS, &[]);
        assert!(c.completion().is_some());
        c.dismiss_completion();
        c.refresh_completion(COMMANDS, &[]);
        assert!(c.completion().is_none());
        c.insert_str("q");
        c.refresh_completion(COMMANDS, &[]);
        assert!(c.completion().is_some());
    }

    #[test]
    fn multi_line_text_and_height() {
        let mut c = Composer::new();
        c.insert_str("one");
        c.newline();
        c.insert_str("two");
        assert_eq!(c.text(), "one\ntwo");
        assert_eq!(c.height(40), 4);
        assert_eq!(c.take(), "one\ntwo");
        assert!(c.is_empty());
    }
}
