//! The review dialog (`/review NAME`, `r` on a teammate in the teams dialog): the files a
//! teammate changed with their +/- counts, its commits and the pull request of its branch
//! above a scrollable unified diff of the selected file, with syntax colours ([`highlight`])
//! and the words that changed within a line marked. A file's diff is asked of the controller
//! when it is first shown (lazy per file); its lines are styled once, ahead of the screen on a
//! thread of their own, so a large review opens and scrolls at once. A cursor row moves through the diff:
//! `c` writes a comment on its line (on a hunk header, the hunk), `C` on its hunk; the comment
//! goes to the teammate as a message quoting the file, the line and the lines around it.

pub mod highlight;

use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::LeadCommand;
use crate::lead::review::{
    DiffLine, FileDiff, LineKind, PrState, ReviewComment, ReviewSummary, WorkPlace,
};
use crate::ui::keymap::{Action, Context, Keymap};
use crate::ui::modal::context::DialogSender;
use crate::ui::modal::feedback::FeedbackInput;
use crate::ui::modal::{DialogOutcome, fit_spans, frame, hint_lines, pick_title};
use crate::ui::palette::dim;
use crate::ui::transcript::wrap::{sanitize, str_width, truncate, wrap_line};
use highlight::Highlighter;

const ADDED_BG: Color = Color::Rgb(0x1d, 0x3b, 0x23);
const ADDED_EMPH: Color = Color::Rgb(0x2f, 0x6f, 0x3a);
const REMOVED_BG: Color = Color::Rgb(0x44, 0x1c, 0x1f);
const REMOVED_EMPH: Color = Color::Rgb(0x8a, 0x2c, 0x33);

/// One row of a file's diff: (hunk, line of the hunk; `None` for its header).
type RowAt = (usize, Option<usize>);

/// Rows styled in one go by the background styler between two looks at its stop flag (and
/// two chances for a frame to take the lock).
const STYLE_CHUNK: usize = 4;

/// A file's rows and their styled lines so far: syntax colours need every row before, in
/// order, so the styled rows are always a prefix.
struct Styler {
    diff: Arc<FileDiff>,
    rows: Arc<Vec<RowAt>>,
    styled: Vec<Line<'static>>,
    highlighter: Highlighter,
}

impl Styler {
    /// Styles rows until `to` are.
    fn style_to(&mut self, to: usize) {
        let to = to.min(self.rows.len());
        while self.styled.len() < to {
            let line = match self.rows[self.styled.len()] {
                (hunk, None) => Line::from(Span::styled(
                    self.diff.hunks[hunk].header.clone(),
                    Style::default().fg(Color::Cyan),
                )),
                (hunk, Some(l)) => {
                    style_line(&self.diff.hunks[hunk].lines[l], &mut self.highlighter)
                }
            };
            self.styled.push(line);
        }
    }

    fn done(&self) -> bool {
        self.styled.len() >= self.rows.len()
    }
}

/// A file's diff as rows, styled once: ahead of the screen by a thread of its own once the
/// file is shown (syntax colours cost a fraction of a millisecond a line), and by the frame
/// itself for any row the thread has not reached, so a frame never shows a row uncoloured.
struct Shown {
    diff: Arc<FileDiff>,
    rows: Arc<Vec<RowAt>>,
    styler: Arc<Mutex<Styler>>,
    /// The background styler's stop flag, once started.
    ahead: RefCell<Option<Arc<AtomicBool>>>,
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.stop_ahead();
    }
}

impl Shown {
    fn new(diff: FileDiff) -> Shown {
        let mut rows = Vec::new();
        for (h, hunk) in diff.hunks.iter().enumerate() {
            rows.push((h, None));
            rows.extend((0..hunk.lines.len()).map(|l| (h, Some(l))));
        }
        let (diff, rows) = (Arc::new(diff), Arc::new(rows));
        Shown {
            styler: Arc::new(Mutex::new(Styler {
                highlighter: Highlighter::for_path(&diff.path),
                diff: diff.clone(),
                rows: rows.clone(),
                styled: Vec::new(),
            })),
            diff,
            rows,
            ahead: RefCell::new(None),
        }
    }

    /// Rows `from..to`, styled (styling every row before them first, once); starts styling
    /// the rest in the background.
    fn lines(&self, from: usize, to: usize) -> Vec<Line<'static>> {
        let to = to.min(self.rows.len());
        let lines = {
            let mut styler = self.styler.lock().unwrap_or_else(|e| e.into_inner());
            styler.style_to(to);
            styler.styled[from.min(to)..to].to_vec()
        };
        // After this frame's rows: the thread never competes with the first frame.
        self.start_ahead();
        lines
    }

    /// Styles the rest of the file on a thread of its own (once; again after a stop).
    fn start_ahead(&self) {
        let mut ahead = self.ahead.borrow_mut();
        if ahead.is_some() {
            return;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (styler, flag) = (self.styler.clone(), stop.clone());
        let started = std::thread::Builder::new()
            .name("review-styler".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let mut s = styler.lock().unwrap_or_else(|e| e.into_inner());
                    if s.done() {
                        break;
                    }
                    let to = s.styled.len() + STYLE_CHUNK;
                    s.style_to(to);
                    drop(s);
                    // A frame waiting for the lock gets it before the next chunk.
                    std::thread::yield_now();
                }
            });
        // Without a thread, frames style what they show, as before.
        if started.is_ok() {
            *ahead = Some(stop);
        }
    }

    /// Stops the background styler (another file is shown, or the dialog closed); a frame
    /// that shows this file again starts it again where it stopped.
    fn stop_ahead(&self) {
        if let Some(stop) = self.ahead.borrow_mut().take() {
            stop.store(true, Ordering::Relaxed);
        }
    }

    /// The row of the next (`forward`) or previous hunk header from row `at`.
    fn hunk_from(&self, at: usize, forward: bool) -> Option<usize> {
        let is_header = |i: &usize| self.rows[*i].1.is_none();
        if forward {
            (at + 1..self.rows.len()).find(is_header)
        } else {
            (0..at).rev().find(is_header)
        }
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

/// A comment being written: where it goes and the input.
struct Commenting {
    path: String,
    hunk: usize,
    /// The line of the hunk; `None`: the whole hunk.
    line: Option<usize>,
    /// `line 12`, `the hunk at lines 10-24`: what the prompt says.
    place: String,
    input: FeedbackInput,
}

/// The review of one teammate's work.
pub struct ReviewDialog {
    summary: ReviewSummary,
    selected: usize,
    scroll: usize,
    /// The cursor's row in the selected file's diff.
    cursor: usize,
    shown: HashMap<String, Shown>,
    asked: HashSet<String>,
    /// The diff's height at the last frame (a page).
    page: Cell<usize>,
    commenting: Option<Commenting>,
    /// What the dialog did last (a comment sent), until the next key.
    status: Option<String>,
    /// The width of the +/- column of the file list (the same for the whole review).
    count_width: usize,
}

impl ReviewDialog {
    pub fn new(summary: ReviewSummary) -> ReviewDialog {
        let mut asked = HashSet::new();
        if let Some(first) = summary.files.first() {
            asked.insert(first.path.clone());
        }
        let count_width = summary
            .files
            .iter()
            .map(|f| str_width(&counts(f)))
            .max()
            .unwrap_or(0);
        ReviewDialog {
            summary,
            selected: 0,
            scroll: 0,
            cursor: 0,
            shown: HashMap::new(),
            asked,
            page: Cell::new(10),
            commenting: None,
            status: None,
            count_width,
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

    /// The pull request of its branch arrived.
    pub fn set_pr(&mut self, pr: PrState) {
        self.summary.pr = Some(pr);
    }

    /// Whether a comment is being written (pasted text goes there).
    pub fn has_input(&self) -> bool {
        self.commenting.is_some()
    }

    /// Pasted text goes into a comment being written.
    pub fn paste(&mut self, text: &str) {
        if let Some(c) = &mut self.commenting {
            c.input.paste(text);
        }
    }

    fn rows(&self) -> usize {
        self.current().map_or(0, |s| s.rows.len())
    }

    fn current(&self) -> Option<&Shown> {
        self.selected_path().and_then(|p| self.shown.get(p))
    }

    fn selected_path(&self) -> Option<&str> {
        self.summary
            .files
            .get(self.selected)
            .map(|f| f.path.as_str())
    }

    fn select(&mut self, index: usize, sender: &mut DialogSender) {
        if let Some(shown) = self.current() {
            shown.stop_ahead();
        }
        self.selected = index;
        self.scroll = 0;
        self.cursor = 0;
        if let Some(path) = self.selected_path().map(str::to_string)
            && self.asked.insert(path.clone())
        {
            sender.command(LeadCommand::ReviewFile {
                name: self.summary.name.clone(),
                path,
            });
        }
    }

    /// Moves the cursor to `row` (within the file), scrolling so it stays on screen.
    fn move_cursor(&mut self, row: usize) {
        let page = self.page.get().max(1);
        let rows = self.rows();
        self.cursor = row.min(rows.saturating_sub(1));
        if self.cursor < self.scroll {
            self.scroll = self.cursor;
        } else if self.cursor >= self.scroll + page {
            self.scroll = self.cursor + 1 - page;
        }
        self.scroll = self.scroll.min(rows.saturating_sub(page));
    }

    /// A page down (or up): the view and the cursor move by a page.
    fn page_by(&mut self, down: bool) {
        let page = self.page.get().max(1);
        let last = self.rows().saturating_sub(page);
        if down {
            self.scroll = (self.scroll + page).min(last);
            self.cursor = (self.cursor + page).min(self.rows().saturating_sub(1));
        } else {
            self.scroll = self.scroll.saturating_sub(page);
            self.cursor = self.cursor.saturating_sub(page);
        }
        self.move_cursor(self.cursor);
    }

    /// Starts a comment on the cursor's line (`whole_hunk`: on its hunk).
    fn start_comment(&mut self, whole_hunk: bool) {
        let Some(shown) = self.current() else {
            self.status = Some("Nothing to comment on here: no diff is shown.".to_string());
            return;
        };
        let Some(&(hunk, line)) = shown.rows.get(self.cursor) else {
            self.status = Some("Nothing to comment on here: no diff is shown.".to_string());
            return;
        };
        let line = if whole_hunk { None } else { line };
        let place = match line {
            Some(l) => {
                let at = &shown.diff.hunks[hunk].lines[l];
                match (at.kind, at.new, at.old) {
                    (LineKind::Removed, _, Some(old)) => format!("removed line {old}"),
                    (_, Some(new), _) => format!("line {new}"),
                    _ => "this line".to_string(),
                }
            }
            None => {
                let first = shown.diff.hunks[hunk]
                    .lines
                    .iter()
                    .find_map(|l| l.new.or(l.old));
                match first {
                    Some(n) => format!("the hunk at line {n}"),
                    None => "the hunk".to_string(),
                }
            }
        };
        self.commenting = Some(Commenting {
            path: shown.diff.path.clone(),
            hunk,
            line,
            place,
            input: FeedbackInput::new("what should change here"),
        });
    }

    /// Sends the comment being written.
    fn send_comment(&mut self, sender: &mut DialogSender) {
        let Some(c) = self.commenting.take() else {
            return;
        };
        let text = c.input.text();
        if text.is_empty() {
            self.status = Some("Nothing written: no comment sent.".to_string());
            return;
        }
        let Some(diff) = self.shown.get(&c.path).map(|s| &s.diff) else {
            return;
        };
        let comment = match c.line {
            Some(l) => ReviewComment::on_line(diff, c.hunk, l, &text),
            None => ReviewComment::on_hunk(diff, c.hunk, &text),
        };
        if let Some(comment) = comment {
            self.status = Some(format!(
                "Comment on {} of {} sent to @{}.",
                c.place, c.path, self.summary.name
            ));
            sender.command(LeadCommand::ReviewComment {
                name: self.summary.name.clone(),
                comment: Box::new(comment),
            });
        }
    }

    pub fn handle(
        &mut self,
        key: &KeyEvent,
        keymap: &Keymap,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        self.status = None;
        if let Some(c) = &mut self.commenting {
            match keymap.lookup(Context::Feedback, key) {
                Some(Action::CancelFeedback) => self.commenting = None,
                Some(Action::SendFeedback) => self.send_comment(sender),
                _ => c.input.input(key),
            }
            return DialogOutcome::Keep;
        }
        let page = self.page.get().max(1);
        let files = self.summary.files.len();
        match keymap.lookup(Context::Review, key) {
            Some(Action::Close) => return DialogOutcome::Close,
            Some(Action::Down) => self.move_cursor(self.cursor + 1),
            Some(Action::Up) => self.move_cursor(self.cursor.saturating_sub(1)),
            Some(Action::PageDown) => self.page_by(true),
            Some(Action::PageUp) => self.page_by(false),
            Some(Action::Top) => self.move_cursor(0),
            Some(Action::Bottom) => {
                self.move_cursor(self.rows().saturating_sub(1));
                self.scroll = self.rows().saturating_sub(page);
            }
            Some(Action::NextHunk) => {
                if let Some(row) = self.current().and_then(|s| s.hunk_from(self.cursor, true)) {
                    self.move_cursor(row);
                }
            }
            Some(Action::PrevHunk) => {
                if let Some(row) = self.current().and_then(|s| s.hunk_from(self.cursor, false)) {
                    self.move_cursor(row);
                }
            }
            Some(Action::Comment) => self.start_comment(false),
            Some(Action::CommentHunk) => self.start_comment(true),
            Some(Action::NextFile) if files > 0 => self.select((self.selected + 1) % files, sender),
            Some(Action::PrevFile) if files > 0 => {
                self.select((self.selected + files - 1) % files, sender)
            }
            _ => {}
        }
        DialogOutcome::Keep
    }

    /// Draws the dialog; `notice` is the lead's last note since the dialog's last key (a
    /// comment it could not send).
    pub fn render(&self, area: Rect, buf: &mut Buffer, notice: Option<&str>, keymap: &Keymap) {
        let s = &self.summary;
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let pr = s.pr.as_ref().map(|p| format!("{} · ", p.label()));
        let right = if area.width >= 60 {
            format!(
                "{}base {} · {} files +{} -{}",
                pr.unwrap_or_default(),
                s.base,
                s.files.len(),
                s.added(),
                s.removed()
            )
        } else {
            format!("{} files +{} -{}", s.files.len(), s.added(), s.removed())
        };
        let place = match s.place {
            WorkPlace::Worktree => format!("{} ", s.branch),
            WorkPlace::Checkout | WorkPlace::Shared => {
                format!("in the lead's checkout ({}) ", s.branch)
            }
        };
        let title = pick_title(
            vec![
                vec![
                    Span::styled(" Review ", bold),
                    Span::styled(format!("@{} ", s.name), bold),
                    Span::styled(place, dim()),
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
        let mut bottom = self.bottom_lines(inner.width, notice, keymap);
        let mut top: Vec<Line<'static>> = Vec::new();
        // The file list: a window of rows around the selection.
        let list_rows = s.files.len().min((usize::from(inner.height) / 4).max(3));
        let first = self
            .selected
            .saturating_sub(list_rows / 2)
            .min(s.files.len().saturating_sub(list_rows));
        let count_width = self.count_width;
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
            let empty = match s.place {
                WorkPlace::Worktree => "No change since the base.",
                WorkPlace::Checkout => "No file written by its tool calls yet.",
                WorkPlace::Shared => "No uncommitted change in the lead's checkout.",
            };
            top.push(Line::from(Span::styled(empty, dim())));
        }
        let about = match s.place {
            WorkPlace::Worktree => {
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
                format!("{} commit(s){uncommitted}: {commits}", s.commits.len())
            }
            WorkPlace::Checkout => format!(
                "Files its tool calls wrote, as they differ from {} {} now (others' changes to them included)",
                s.branch, s.base
            ),
            WorkPlace::Shared => format!(
                "Its shell commands leave no record of what they write: every uncommitted change in the checkout against {} {}, whoever made it",
                s.branch, s.base
            ),
        };
        top.push(Line::from(Span::styled(truncate(&about, width), dim())));
        let body_height = usize::from(inner.height).saturating_sub(top.len() + 1 + bottom.len());
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
        match self.current() {
            Some(shown) if shown.diff.binary => {
                lines.push(Line::from(Span::styled("Binary file.", dim())));
            }
            Some(shown) if shown.rows.is_empty() => {
                lines.push(Line::from(Span::styled(
                    "No change in this file now.",
                    dim(),
                )));
            }
            Some(shown) => {
                let from = self.scroll.min(shown.rows.len());
                let mut rows = shown.lines(from, from + body_height);
                if let Some(row) = self.cursor.checked_sub(from).and_then(|i| rows.get_mut(i)) {
                    mark_cursor(row);
                }
                lines.extend(rows);
            }
            None if !s.files.is_empty() => {
                lines.push(Line::from(Span::styled("Loading…", dim())));
            }
            None => {}
        }
        let body_end = usize::from(inner.height).saturating_sub(bottom.len());
        lines.truncate(body_end);
        while lines.len() < body_end {
            lines.push(Line::default());
        }
        lines.append(&mut bottom);
        Paragraph::new(lines).render(inner, buf);
        if let Some(c) = &self.commenting {
            let row = Rect {
                y: inner.y + (body_end + 1).min(usize::from(inner.height) - 1) as u16,
                height: 1,
                ..inner
            };
            c.input.render(row, buf);
        }
    }

    /// Below the diff: the comment being written, or what happened last, and the hints.
    fn bottom_lines(
        &self,
        width: u16,
        notice: Option<&str>,
        keymap: &Keymap,
    ) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        let say = |text: &str| {
            let style = Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD);
            let mut lines = wrap_line(
                &Line::from(Span::styled(sanitize(&text.replace('\n', " ")), style)),
                0,
                width,
            );
            lines.truncate(2);
            lines
        };
        if let Some(c) = &self.commenting {
            out.push(Line::from(Span::styled(
                truncate(
                    &format!(
                        "Comment to @{} on {} of {}:",
                        self.summary.name, c.place, c.path
                    ),
                    usize::from(width),
                ),
                Style::default().add_modifier(Modifier::BOLD),
            )));
            // The input is drawn on this row ([`ReviewDialog::render`]).
            out.push(Line::default());
            let key = |a| keymap.key_label(Context::Feedback, a);
            let hints = format!(
                "{} send · {} cancel",
                key(Action::SendFeedback),
                key(Action::CancelFeedback)
            );
            out.extend(hint_lines(&hints, width));
            return out;
        }
        if let Some(text) = notice.or(self.status.as_deref()) {
            out.extend(say(text));
        }
        out.extend(hint_lines(&review_hints(keymap), width));
        out
    }
}

/// The review's hint line from the keymap in use: `↑/↓ line · pgup/pgdn page · [/] hunk · c
/// comment on line · C on hunk · tab/shift+tab file · esc close`.
fn review_hints(keymap: &Keymap) -> String {
    let key = |a| keymap.key_label(Context::Review, a);
    format!(
        "{}/{} line · {}/{} page · {}/{} hunk · {} comment on line · {} on hunk · {}/{} file · {} close",
        key(Action::Up),
        key(Action::Down),
        key(Action::PageUp),
        key(Action::PageDown),
        key(Action::PrevHunk),
        key(Action::NextHunk),
        key(Action::Comment),
        key(Action::CommentHunk),
        key(Action::NextFile),
        key(Action::PrevFile),
        key(Action::Close)
    )
}

/// The cursor's row: its line numbers reversed.
fn mark_cursor(row: &mut Line<'static>) {
    if let Some(first) = row.spans.first_mut() {
        first.style = first.style.add_modifier(Modifier::REVERSED);
    } else {
        row.spans.push(Span::styled(
            " ",
            Style::default().add_modifier(Modifier::REVERSED),
        ));
    }
}

fn counts(f: &crate::lead::review::ChangedFile) -> String {
    if f.binary {
        "binary".to_string()
    } else if f.status == '=' {
        "unchanged now".to_string()
    } else {
        format!("+{} -{}", f.added, f.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::review::parse_diff;

    fn diff() -> FileDiff {
        let mut text = String::from("@@ -1,40 +1,40 @@\n");
        for i in 0..40 {
            text.push_str(&format!(
                "-    let v{i} = f({i});\n+    let v{i} = g({i}); // \"{i}\"\n"
            ));
        }
        parse_diff("src/x.rs", &text)
    }

    /// The rows the thread styles are the rows a frame would have styled itself, in order.
    #[test]
    fn rows_styled_ahead_are_the_rows_a_frame_styles() {
        let shown = Shown::new(diff());
        let first = shown.lines(0, 3);
        assert_eq!(first.len(), 3);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !shown.styler.lock().unwrap().done() {
            assert!(std::time::Instant::now() < deadline, "the styler finishes");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let alone = Shown::new(diff());
        alone.ahead.replace(Some(Arc::new(AtomicBool::new(true))));
        let rows = shown.rows.len();
        assert_eq!(rows, 81);
        assert_eq!(shown.lines(0, rows), alone.lines(0, rows));
        assert_eq!(first, alone.lines(0, 3));
        // Another file shown: its thread stops.
        shown.stop_ahead();
        assert!(shown.ahead.borrow().is_none());
    }
}
