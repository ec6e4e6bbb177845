//! A one-line text input for feedback (why a permission is denied, why a plan is rejected),
//! on ratatui-textarea. Enter and Esc are the dialog's (keymap context `Feedback`); every other
//! key edits the line.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::widgets::Widget;
use ratatui_textarea::TextArea;

/// The input line.
pub struct FeedbackInput {
    textarea: Box<TextArea<'static>>,
}

impl FeedbackInput {
    /// An empty input showing `placeholder`.
    pub fn new(placeholder: &str) -> FeedbackInput {
        let mut textarea = TextArea::default();
        textarea.set_cursor_line_style(Style::default());
        textarea.set_cursor_style(Style::default().add_modifier(Modifier::REVERSED));
        textarea.set_placeholder_text(placeholder);
        textarea.set_placeholder_style(Style::default().add_modifier(Modifier::DIM));
        FeedbackInput {
            textarea: Box::new(textarea),
        }
    }

    /// Edits the line; keys that would break it (Enter variants, Ctrl+J/M) are ignored.
    pub fn input(&mut self, key: &KeyEvent) {
        let newline = matches!(key.code, KeyCode::Enter)
            || (key.modifiers.contains(KeyModifiers::CONTROL)
                && matches!(key.code, KeyCode::Char('j' | 'm')));
        if !newline {
            self.textarea.input(*key);
        }
    }

    /// Inserts pasted text as one line.
    pub fn paste(&mut self, text: &str) {
        let line = text.replace(['\r', '\n'], " ");
        self.textarea.insert_str(line);
    }

    /// The typed text, trimmed.
    pub fn text(&self) -> String {
        self.textarea.lines().join(" ").trim().to_string()
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        self.textarea.as_ref().render(area, buf);
    }
}
