//! The help dialog: every context of the keymap with its keys, generated from the same table
//! that handles them.

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::ui::keymap::{Action, Context, Keymap};
use crate::ui::modal::{DialogOutcome, frame, hint_lines};
use crate::ui::palette::dim;
use crate::ui::transcript::wrap::{str_width, wrap_line};

/// The fewest columns a description gets beside its keys; narrower, it goes below them.
const MIN_TEXT: usize = 24;

/// Scroll position of the help text.
#[derive(Default)]
pub struct HelpDialog {
    scroll: usize,
    max_scroll: Cell<usize>,
}

/// The help text, one line per key binding under each context's heading, `width` wide: a
/// description too long for one row goes on in the next rows, under itself.
pub fn help_lines(keymap: &Keymap, width: u16) -> Vec<Line<'static>> {
    let sections = keymap.help_sections();
    let key_width = sections
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(k, _)| str_width(k)))
        .max()
        .unwrap_or(0);
    let mut lines = Vec::new();
    for (i, (title, rows)) in sections.into_iter().enumerate() {
        if i > 0 {
            lines.push(Line::default());
        }
        lines.push(Line::from(Span::styled(
            title,
            Style::default().add_modifier(Modifier::BOLD),
        )));
        for (keys, what) in rows {
            let column = key_width + 4;
            if usize::from(width) >= column + MIN_TEXT {
                // Keys, then the description in its column (continued under itself).
                let pad = key_width.saturating_sub(str_width(&keys));
                let row = Line::from(vec![
                    Span::raw("  "),
                    Span::raw(keys),
                    Span::raw(" ".repeat(pad + 2)),
                    Span::styled(what, dim()),
                ]);
                let hang = u16::try_from(column).unwrap_or(u16::MAX);
                lines.extend(wrap_line(&row, hang, width));
            } else {
                // Too narrow for two columns: the keys, then the description below them.
                lines.push(Line::from(vec![Span::raw("  "), Span::raw(keys)]));
                let row = Line::from(vec![Span::raw("    "), Span::styled(what, dim())]);
                lines.extend(wrap_line(&row, 4, width));
            }
        }
    }
    lines
}

impl HelpDialog {
    pub fn handle(&mut self, key: &KeyEvent, keymap: &Keymap) -> DialogOutcome {
        match keymap.lookup(Context::Help, key) {
            Some(Action::Up) => {
                self.scroll = self.scroll.saturating_sub(1);
                DialogOutcome::Keep
            }
            Some(Action::Down) => {
                self.scroll = (self.scroll + 1).min(self.max_scroll.get());
                DialogOutcome::Keep
            }
            Some(Action::Close) => DialogOutcome::Close,
            _ => DialogOutcome::Keep,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, keymap: &Keymap) {
        let title = vec![Span::styled(
            " Keys ",
            Style::default().add_modifier(Modifier::BOLD),
        )];
        let inner = frame(area, buf, Style::default(), title, None);
        let lines = help_lines(keymap, inner.width);
        let hints = hint_lines(
            &format!(
                "{}/{} scroll · {}",
                keymap.key_label(Context::Help, Action::Up),
                keymap.key_label(Context::Help, Action::Down),
                keymap.hints(Context::Help)
            ),
            inner.width,
        );
        let visible = usize::from(inner.height).saturating_sub(hints.len());
        self.max_scroll.set(lines.len().saturating_sub(visible));
        let scroll = self.scroll.min(self.max_scroll.get());
        let mut shown: Vec<Line<'static>> = lines.into_iter().skip(scroll).take(visible).collect();
        while shown.len() < visible {
            shown.push(Line::default());
        }
        shown.extend(hints);
        Paragraph::new(shown).render(inner, buf);
    }
}
