//! The review dialog (`/review NAME`, `r` on a teammate in the teams dialog): the files a
//! teammate changed with their +/- counts and its commits above a scrollable unified diff of
//! the selected file, with syntax colours ([`highlight`]) and the words that changed within a
//! line marked. A file's diff is asked of the controller when it is first shown (lazy per
//! file); its lines are styled as far as the screen has scrolled, so a large review opens and
//! scrolls at once.

pub mod highlight;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::review::{DiffLine, FileDiff, LineKind, ReviewSummary};
use crate::lead::contract::LeadCommand;
use crate::ui::modal::context::DialogSender;
use crate::ui::modal::{DialogOutcome, fit_spans, frame, hint_lines, pick_title};
use crate::ui::palette::dim;
use crate::ui::transcript::wrap::{str_width, truncate};
use highlight::Highlighter;

const ADDED_BG: Color = Color::Rgb(0x1d, 0x3b, 0x23);
const ADDED_EMPH: Color = Color::Rgb(0x2f, 0x6f, 0x3a);
const REMOVED_BG: Color = Color::Rgb(0x44, 0x1c, 0x1f);
const REMOVED_EMPH: Color = Color::Rgb(0x8a, 0x2c, 0x33);

/// One row of a file's diff: a hunk header or a line.
enum Row {
    Hunk(String),
    Line(DiffLine),
}

/// A file's diff as rows, styled lazily.
struct Shown {
    rows: Vec<Row>,
    styled: RefCell<Vec<Line<'static>>>,
    highlighter: RefCell<Highlighter>,
    binary: bool,
}

impl Shown {
    fn new(diff: FileDiff) -> Shown {
        let mut rows = Vec::new();
        for hunk in diff.hunks {
            rows.push(Row::Hunk(hunk.header));
            rows.extend(hunk.lines.into_iter().map(Row::Line));
        }
        Shown {
            rows,
            styled: RefCell::new(Vec::new()),
            highlighter: RefCell::new(Highlighter::for_path(&diff.path)),
            binary: diff.binary,
        }
    }

    /// Rows `from..to`, styled (styling every row before them first, once).
    fn lines(&self, from: usize, to: usize) -> Vec<Line<'static>> {
        let to = to.min(self.rows.len());
        let mut styled = self.styled.borrow_mut();
        let mut h = self.highlighter.borrow_mut();
        while styled.len() < to {
            let line = match &self.rows[styled.len()] {
                Row::Hunk(header) => Line::from(Span::styled(
                    header.clone(),
                    Style::default().fg(Color::Cyan),
                )),
                Row::Line(line) => style_line(line, &mut h),
            };
            styled.push(line);
        }
        styled[from.min(to)..to].to_vec()
    }
}

/// `  12   13 + text`, coloured.
fn style_line(line: &DiffLine, h: &mut Highlighter) -> Line<'static> {
    let num = |n: Option<u32>| n.map_or_else(|| "    ".to_string(), |n| format!("{n:>4}"));
    let (marker, bg, emph_bg) = match line.kind {
        LineKind::Added => ('+', Some(ADDED_BG), ADDED_EMPH),
        LineKind::Removed => ('-', Some(REMOVED_BG), REMOVED_EMPH),
        LineKind::Context => (' ', None, Color::Reset),
    };
    let mut spans = vec![Span::styled(
        format!("{} {} ", num(line.old), num(line.new)),
        dim(),
    )];
    let base = bg.map_or_else(Style::default, |bg| Style::default().bg(bg));
    spans.push(Span::styled(marker.to_string(), base));
    let text = &line.text;
    // Cut points: token edges and emphasis edges.
    let tokens = h.line(text);
    for (s, e, fg) in tokens {
        let mut at = s;
        while at < e {
            let in_emph = line.emph.iter().find(|(a, b)| *a <= at && at < *b);
            let next_edge = line
                .emph
                .iter()
                .flat_map(|(a, b)| [*a, *b])
                .filter(|p| *p > at && *p < e)
                .min()
                .unwrap_or(e);
            let mut style = base;
            if let Some(fg) = fg {
                style = style.fg(fg);
            }
            if in_emph.is_some() {
                style = style.bg(emph_bg).add_modifier(Modifier::BOLD);
            }
            if let Some(piece) = text.get(at..next_edge) {
                spans.push(Span::styled(piece.replace('\t', "    "), style));
            }
            at = next_edge;
        }
    }
    Line::from(spans)
}

/// The review of one teammate's work.
pub struct ReviewDialog {
    summary: ReviewSummary,
    selected: usize,
    scroll: usize,
    shown: HashMap<String, Shown>,
    asked: HashSet<String>,
    /// The diff's height at the last frame (a page).
    page: Cell<usize>,
}

impl ReviewDialog {
    pub fn new(summary: ReviewSummary) -> ReviewDialog {
        let mut asked = HashSet::new();
        if let Some(first) = summary.files.first() {
            asked.insert(first.path.clone());
        }
        ReviewDialog {
            summary,
            selected: 0,
            scroll: 0,
            shown: HashMap::new(),
            asked,
            page: Cell::new(10),
        }
    }

    /// Whose work it shows.
    pub fn name(&self) -> &str {
        &self.summary.name
    }

    /// The command that asks for the first file's diff (sent when the dialog opens).
    pub fn first_request(&self) -> Option<LeadCommand> {
        self.summary.files.first().map(|f| LeadCommand::ReviewFile {
            name: self.summary.name.clone(),
            path: f.path.clone(),
        })
    }

    /// A file's diff arrived.
    pub fn set_diff(&mut self, diff: FileDiff) {
        self.shown.insert(diff.path.clone(), Shown::new(diff));
    }

    fn rows(&self) -> usize {
        self.selected_path()
            .and_then(|p| self.shown.get(p))
            .map_or(0, |s| s.rows.len())
    }

    fn selected_path(&self) -> Option<&str> {
        self.summary
            .files
            .get(self.selected)
            .map(|f| f.path.as_str())
    }

    fn select(&mut self, index: usize, sender: &mut DialogSender) {
        self.selected = index;
        self.scroll = 0;
        if let Some(path) = self.selected_path().map(str::to_string)
            && self.asked.insert(path.clone())
        {
            sender.command(LeadCommand::ReviewFile {
                name: self.summary.name.clone(),
                path,
            });
        }
    }

    pub fn handle(&mut self, key: &KeyEvent, sender: &mut DialogSender) -> DialogOutcome {
        let page = self.page.get().max(1);
        let last = self.rows().saturating_sub(page);
        let files = self.summary.files.len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return DialogOutcome::Close,
            KeyCode::Down | KeyCode::Char('j') => self.scroll = (self.scroll + 1).min(last),
            KeyCode::Up | KeyCode::Char('k') => self.scroll = self.scroll.saturating_sub(1),
            KeyCode::PageDown | KeyCode::Char(' ') => self.scroll = (self.scroll + page).min(last),
            KeyCode::Char('d') if ctrl => self.scroll = (self.scroll + page).min(last),
            KeyCode::PageUp => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Char('u') if ctrl => self.scroll = self.scroll.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => self.scroll = 0,
            KeyCode::End | KeyCode::Char('G') => self.scroll = last,
            KeyCode::Tab | KeyCode::Char('n') | KeyCode::Right if files > 0 => {
                self.select((self.selected + 1) % files, sender)
            }
            KeyCode::BackTab | KeyCode::Char('p') | KeyCode::Left if files > 0 => {
                self.select((self.selected + files - 1) % files, sender)
            }
            _ => {}
        }
        DialogOutcome::Keep
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        let s = &self.summary;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let right = if area.width >= 60 {
            format!(
                "base {} · {} files +{} -{}",
                s.base,
                s.files.len(),
                s.added(),
                s.removed()
            )
        } else {
            format!("{} files +{} -{}", s.files.len(), s.added(), s.removed())
        };
        let title = pick_title(
            vec![
                vec![
                    Span::styled(" Review ", bold),
                    Span::styled(format!("@{} ", s.name), bold),
                    Span::styled(format!("{} ", s.branch), dim()),
                ],
                vec![
                    Span::styled(" Review ", bold),
                    Span::styled(format!("@{} ", s.name), bold),
                ],
            ],
            area.width,
            str_width(&right) + 2,
        );
        let inner = frame(area, buf, Style::default(), title, Some(right));
        if inner.height == 0 || inner.width == 0 {
            return;
        }
        let width = usize::from(inner.width);
        let hints = hint_lines(
            "↑/↓ scroll · pgup/pgdn page · tab/shift+tab file · esc close",
            inner.width,
        );
        let mut top: Vec<Line<'static>> = Vec::new();
        // The file list: a window of rows around the selection.
        let list_rows = s.files.len().min((usize::from(inner.height) / 4).max(3));
        let first = self
            .selected
            .saturating_sub(list_rows / 2)
            .min(s.files.len().saturating_sub(list_rows));
        let count_width = s.files.iter().map(|f| counts(f).len()).max().unwrap_or(0);
        for (i, f) in s.files.iter().enumerate().skip(first).take(list_rows) {
            let mark = if i == self.selected { "▸ " } else { "  " };
            let c = counts(f);
            let path_room = width.saturating_sub(2 + 2 + count_width + 1);
            let path = truncate(&f.path, path_room);
            let pad = path_room.saturating_sub(str_width(&path));
            let style = if i == self.selected {
                Style::default().add_modifier(Modifier::BOLD | Modifier::REVERSED)
            } else {
                Style::default()
            };
            top.push(Line::from(fit_spans(
                vec![
                    Span::raw(mark),
                    Span::styled(format!("{} {path}", f.status), style),
                    Span::raw(" ".repeat(pad + 1)),
                    Span::styled(format!("{c:>count_width$}"), dim()),
                ],
                width,
            )));
        }
        if s.files.is_empty() {
            top.push(Line::from(Span::styled("No change since the base.", dim())));
        }
        let commits = if s.commits.is_empty() {
            "no commit yet".to_string()
        } else {
            s.commits
                .iter()
                .map(|c| format!("{} {}", c.id, c.subject))
                .collect::<Vec<_>>()
                .join(" · ")
        };
        let uncommitted = if s.uncommitted > 0 {
            format!(" · {} uncommitted", s.uncommitted)
        } else {
            String::new()
        };
        top.push(Line::from(Span::styled(
            truncate(
                &format!("{} commit(s){uncommitted}: {commits}", s.commits.len()),
                width,
            ),
            dim(),
        )));
        let body_height = usize::from(inner.height).saturating_sub(top.len() + 1 + hints.len());
        self.page.set(body_height.max(1));
        let mut lines = top;
        let file = self.selected_path().unwrap_or("");
        let rule = format!("── {file} ");
        lines.push(Line::from(Span::styled(
            format!(
                "{rule}{}",
                "─".repeat(width.saturating_sub(str_width(&rule)))
            ),
            dim(),
        )));
        match self.selected_path().and_then(|p| self.shown.get(p)) {
            Some(shown) if shown.binary => {
                lines.push(Line::from(Span::styled("Binary file.", dim())));
            }
            Some(shown) => {
                let from = self.scroll.min(shown.rows.len());
                lines.extend(shown.lines(from, from + body_height));
            }
            None if !s.files.is_empty() => {
                lines.push(Line::from(Span::styled("Loading…", dim())));
            }
            None => {}
        }
        let body_end = usize::from(inner.height).saturating_sub(hints.len());
        lines.truncate(body_end);
        while lines.len() < body_end {
            lines.push(Line::default());
        }
        lines.extend(hints);
        Paragraph::new(lines).render(inner, buf);
    }
}

fn counts(f: &crate::lead::review::ChangedFile) -> String {
    if f.binary {
        "binary".to_string()
    } else {
        format!("+{} -{}", f.added, f.removed)
    }
}
