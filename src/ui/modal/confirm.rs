//! A yes/no confirmation for a destructive action. The action is a typed [`LeadCommand`] that
//! is sent only on `y`.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::lead::view::LeadCommand;
use crate::ui::keymap::{self, Action, Context};
use crate::ui::modal::{Outcome, centered_box, frame, hint_lines};
use crate::ui::state::AppState;
use crate::ui::transcript::wrap::str_width;

/// The question and what `y` sends.
pub struct ConfirmDialog {
    pub question: String,
    pub command: LeadCommand,
}

impl ConfirmDialog {
    /// "Kill @name?" with its consequence.
    pub fn kill(name: &str) -> ConfirmDialog {
        ConfirmDialog {
            question: format!(
                "Kill @{name}? It stops at once without finishing its turn; its unfinished tasks go back to pending."
            ),
            command: LeadCommand::Kill {
                name: name.to_string(),
            },
        }
    }

    pub fn handle(&mut self, key: &KeyEvent, state: &mut AppState) -> Outcome {
        match keymap::lookup(Context::Confirm, key) {
            Some(Action::Yes) => {
                state.send(self.command.clone());
                Outcome::Close
            }
            Some(Action::No) => Outcome::Close,
            _ => Outcome::Keep,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let width = (str_width(&self.question) as u16 + 4).clamp(30, 60);
        let text_width = width
            .saturating_sub(2)
            .min(area.width.saturating_sub(2))
            .max(1);
        let rows = str_width(&self.question).div_ceil(usize::from(text_width)) as u16 + 1;
        let outer = centered_box(area, width, rows + 4);
        let title = vec![Span::styled(
            " Confirm ",
            Style::default().add_modifier(Modifier::BOLD),
        )];
        let inner = frame(outer, buf, Style::default().fg(Color::Red), title, None);
        let mut lines = vec![Line::from(self.question.clone()), Line::default()];
        lines.extend(hint_lines(&keymap::hints(Context::Confirm), inner.width));
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .render(inner, buf);
    }
}
