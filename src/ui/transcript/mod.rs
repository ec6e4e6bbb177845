//! The transcript: an append-only list of styled entries (one per [`TranscriptItem`]) with a
//! scroll position counted in rows from the bottom. Rendering walks from the newest entry up
//! and wraps only what is visible; wrapped rows are cached per entry for the current width, so a
//! frame costs the same with ten or ten thousand entries. A transcript made
//! [`with_limit`](Transcript::with_limit) keeps only its newest entries, so memory stays bounded
//! however long the session runs.

pub mod wrap;

use std::collections::VecDeque;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

use crate::lead::contract::TranscriptItem;
use crate::lead::ledger::Receipt;
use crate::ui::palette::{dim, name_style};

use wrap::{sanitize, wrap_line};

/// One logical line of an entry and the indent of its continuation rows.
type LogicalLine = (Line<'static>, u16);

struct Entry {
    lines: Vec<LogicalLine>,
    /// Wrapped rows for one width.
    wrapped: Option<(u16, Vec<Line<'static>>)>,
    /// A message to a teammate whose receipt is shown after its last line: its ledger id,
    /// and that line as it was pushed.
    receipt: Option<(u64, Line<'static>)>,
}

impl Entry {
    fn rows(&mut self, width: u16) -> &[Line<'static>] {
        let stale = !matches!(&self.wrapped, Some((w, _)) if *w == width);
        if stale {
            let rows = self
                .lines
                .iter()
                .flat_map(|(line, hang)| wrap_line(line, *hang, width))
                .collect();
            self.wrapped = Some((width, rows));
        }
        match &self.wrapped {
            Some((_, rows)) => rows,
            None => &[],
        }
    }

    fn height(&mut self, width: u16) -> usize {
        self.rows(width).len()
    }
}

/// A scrollable transcript.
#[derive(Default)]
pub struct Transcript {
    entries: VecDeque<Entry>,
    /// The most entries kept (the oldest go first); `None` keeps everything.
    limit: Option<usize>,
    last_kind: Option<Kind>,
    /// Rows scrolled up from the bottom; 0 follows new output.
    scroll: usize,
    /// The width of the last render (0 before the first).
    last_width: u16,
    last_height: u16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Turn,
    Note,
}

impl Transcript {
    pub fn new() -> Transcript {
        Transcript::default()
    }

    /// A transcript that keeps only its newest `limit` entries (at least one).
    pub fn with_limit(limit: usize) -> Transcript {
        Transcript {
            limit: Some(limit.max(1)),
            ..Transcript::default()
        }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Appends an item; `color_of` resolves a teammate name to its palette color (for
    /// `@name` in messages the user sent). A scrolled-up view stays where it is.
    pub fn push(&mut self, item: &TranscriptItem, color_of: impl Fn(&str) -> Option<String>) {
        let kind = match item {
            TranscriptItem::Frame { .. } | TranscriptItem::System { .. } => Kind::Note,
            _ => Kind::Turn,
        };
        let mut lines = Vec::new();
        let separate = match self.last_kind {
            None => false,
            Some(prev) => !(prev == Kind::Note && kind == Kind::Note),
        };
        if separate {
            lines.push((Line::default(), 0));
        }
        lines.extend(item_lines(item, &color_of));
        self.last_kind = Some(kind);
        let receipt = match item {
            TranscriptItem::ToTeammate {
                receipt: Some(id), ..
            } => lines.last().map(|(line, _)| (*id, line.clone())),
            _ => None,
        };
        let mut entry = Entry {
            lines,
            wrapped: None,
            receipt,
        };
        if self.scroll > 0 && self.last_width > 0 {
            self.scroll += entry.height(self.last_width);
        }
        self.entries.push_back(entry);
        if let Some(limit) = self.limit {
            while self.entries.len() > limit {
                self.entries.pop_front();
            }
        }
    }

    /// Shows how far the message with ledger id `id` got, after its last line (`· read`).
    pub fn set_receipt(&mut self, id: u64, state: Receipt) {
        let Some(entry) = self
            .entries
            .iter_mut()
            .rev()
            .find(|e| e.receipt.as_ref().is_some_and(|(r, _)| *r == id))
        else {
            return;
        };
        let Some((_, base)) = &entry.receipt else {
            return;
        };
        let style = match state {
            Receipt::Failed | Receipt::ReplyLost => Style::default().fg(ratatui::style::Color::Red),
            _ => dim(),
        };
        let mut line = base.clone();
        line.spans
            .push(Span::styled(format!("  · {}", state.as_str()), style));
        if let Some(last) = entry.lines.last_mut() {
            last.0 = line;
        }
        entry.wrapped = None;
    }

    /// Rows scrolled up from the bottom.
    pub fn scroll(&self) -> usize {
        self.scroll
    }

    /// Scrolls up one page (the last rendered height, less one row of context).
    pub fn page_up(&mut self) {
        let page = usize::from(self.last_height.max(2) - 1);
        self.scroll += page;
    }

    /// Scrolls down one page; at the bottom the view follows new output again.
    pub fn page_down(&mut self) {
        let page = usize::from(self.last_height.max(2) - 1);
        self.scroll = self.scroll.saturating_sub(page);
    }

    /// Back to the bottom, following new output.
    pub fn follow(&mut self) {
        self.scroll = 0;
    }

    /// Scrolls by `rows` (positive: up).
    pub fn scroll_by(&mut self, rows: isize) {
        self.scroll = self.scroll.saturating_add_signed(rows);
    }

    /// Draws the visible rows into `area`: the newest at the bottom, or the scrolled window.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        self.last_width = area.width;
        self.last_height = area.height;
        let height = usize::from(area.height);
        let need = self.scroll + height;
        // Pass 1: wrap entries from the newest up until the window is covered.
        let mut first = self.entries.len();
        let mut covered = 0;
        while first > 0 && covered < need {
            first -= 1;
            covered += self.entries[first].height(area.width);
        }
        if covered < need {
            // Scrolled past the top: clamp.
            self.scroll = covered.saturating_sub(height);
        }
        // Pass 2: the window [covered - scroll - height, covered - scroll).
        let end = covered - self.scroll;
        let start = end.saturating_sub(height);
        let rows = self
            .entries
            .range(first..)
            .filter_map(|e| e.wrapped.as_ref().map(|(_, rows)| rows))
            .flatten()
            .skip(start)
            .take(end - start);
        // Short content sits at the top.
        for (y, row) in (area.y..).zip(rows) {
            buf.set_line(area.x, y, row, area.width);
        }
        if self.scroll > 0 {
            let note = " ↓ more · pgdn ";
            let width = wrap::str_width(note) as u16;
            if width <= area.width {
                let x = area.x + area.width - width;
                buf.set_span(
                    x,
                    area.y + area.height - 1,
                    &Span::styled(note, Style::default().add_modifier(Modifier::REVERSED)),
                    width,
                );
            }
        }
    }
}

fn text_lines(text: &str) -> Vec<String> {
    let clean = sanitize(text);
    let lines: Vec<String> = clean.lines().map(str::to_string).collect();
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

/// `first` prefixed on the first line, `rest` on the others, each with `style`.
fn prefixed(head: Vec<Span<'static>>, text: &str, style: Style, hang: u16) -> Vec<LogicalLine> {
    let indent = " ".repeat(usize::from(hang));
    text_lines(text)
        .into_iter()
        .enumerate()
        .map(|(i, line)| {
            let mut spans = if i == 0 {
                head.clone()
            } else {
                vec![Span::raw(indent.clone())]
            };
            spans.push(Span::styled(line, style));
            (Line::from(spans), hang)
        })
        .collect()
}

/// The styled lines of one item.
fn item_lines(
    item: &TranscriptItem,
    color_of: &impl Fn(&str) -> Option<String>,
) -> Vec<LogicalLine> {
    let prompt = Style::default().add_modifier(Modifier::BOLD);
    match item {
        TranscriptItem::User { text } => {
            prefixed(vec![Span::styled("> ", prompt)], text, Style::default(), 2)
        }
        TranscriptItem::Ctl { text } => prefixed(
            vec![Span::styled("ctl> ", prompt.add_modifier(Modifier::DIM))],
            text,
            Style::default().add_modifier(Modifier::DIM),
            5,
        ),
        TranscriptItem::ToTeammate { to, text, .. } => {
            let color = color_of(to);
            prefixed(
                vec![
                    Span::styled("> ", prompt),
                    Span::styled(format!("@{to}"), name_style(color.as_deref())),
                    Span::raw(" "),
                ],
                text,
                Style::default(),
                2,
            )
        }
        TranscriptItem::Lead { text } => {
            prefixed(vec![Span::styled("⏺ ", prompt)], text, Style::default(), 2)
        }
        TranscriptItem::Teammate {
            from,
            color,
            summary,
            text,
        } => {
            let badge = Span::styled(format!("●{}", sanitize(from)), name_style(color.as_deref()));
            match summary.as_deref().filter(|s| !s.trim().is_empty()) {
                Some(summary) => {
                    let mut lines = vec![(
                        Line::from(vec![
                            badge,
                            Span::raw(" "),
                            Span::styled(
                                sanitize(summary).replace('\n', " "),
                                Style::default().add_modifier(Modifier::BOLD),
                            ),
                        ]),
                        2,
                    )];
                    if text.trim() != summary.trim() {
                        lines.extend(prefixed(vec![Span::raw("  ")], text, Style::default(), 2));
                    }
                    lines
                }
                None => prefixed(vec![badge, Span::raw(" ")], text, Style::default(), 2),
            }
        }
        TranscriptItem::Frame { from, color, line } => vec![(
            Line::from(vec![
                Span::styled(
                    format!("  ●{}", sanitize(from)),
                    Style::default().fg(crate::ui::palette::teammate_color(color.as_deref())),
                ),
                Span::raw(" "),
                Span::styled(sanitize(line).replace('\n', " "), dim()),
            ]),
            4,
        )],
        TranscriptItem::System { text } => prefixed(vec![Span::raw("  ")], text, dim(), 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(text: &str) -> TranscriptItem {
        TranscriptItem::User {
            text: text.to_string(),
        }
    }

    fn screen(t: &mut Transcript, w: u16, h: u16) -> Vec<String> {
        let area = Rect::new(0, 0, w, h);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf);
        (0..h)
            .map(|y| {
                (0..w)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn shows_the_tail_and_scrolls_by_pages() {
        let mut t = Transcript::new();
        for i in 0..20 {
            t.push(&user(&format!("line {i}")), |_| None);
        }
        let rows = screen(&mut t, 20, 4);
        assert_eq!(rows, vec!["", "> line 18", "", "> line 19"]);
        assert_eq!(rows[3], "> line 19");
        assert_eq!(rows[1], "> line 18");
        t.page_up();
        let up = screen(&mut t, 20, 4);
        assert!(up.iter().any(|r| r.contains("line 17")), "{up:?}");
        assert!(up[3].contains("↓ more"));
        // New output does not move a scrolled-up view.
        t.push(&user("line 20"), |_| None);
        assert_eq!(screen(&mut t, 20, 4)[..3], up[..3]);
        t.page_down();
        t.page_down();
        assert_eq!(t.scroll(), 0);
        assert_eq!(screen(&mut t, 20, 4)[3], "> line 20");
    }

    #[test]
    fn a_limited_transcript_keeps_only_its_newest_entries() {
        let mut t = Transcript::with_limit(3);
        for i in 0..10 {
            t.push(&user(&format!("line {i}")), |_| None);
        }
        assert_eq!(t.len(), 3);
        let rows = screen(&mut t, 20, 8);
        let text = rows.join("\n");
        assert!(text.contains("line 7") && text.contains("line 9"), "{text}");
        assert!(!text.contains("line 6"), "{text}");
        // Scrolled to the top, the oldest kept entry (after its separator) is on top.
        t.scroll_by(100);
        let rows = screen(&mut t, 40, 3);
        assert_eq!(rows[..2], ["", "> line 7"]);
    }

    #[test]
    fn scrolling_past_the_top_clamps() {
        let mut t = Transcript::new();
        t.push(&user("only"), |_| None);
        t.scroll_by(100);
        let rows = screen(&mut t, 20, 3);
        assert_eq!(rows[0], "> only");
        assert_eq!(t.scroll(), 0);
    }
}
