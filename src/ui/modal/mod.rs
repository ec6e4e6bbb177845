//! The modal stack's dialogs: permission queue, plan approval, teams (list and detail),
//! confirmation, help, a teammate's review and the merge queue. Each dialog owns its small state, handles the keys of its keymap
//! context and draws itself; the top of the stack gets the keyboard. A dialog sees only what
//! it shows ([`context::DialogContext`], narrowed for each dialog) and sends what it does
//! through a [`context::DialogSender`]; it never sees the UI state. It says with an
//! [`DialogOutcome`] what becomes of it. Approval and confirmation dialogs carry a
//! [`guard::Guard`]: keys in their grace period are not answers.

pub mod confirm;
pub mod context;
pub mod feedback;
pub mod guard;
pub mod help;
pub mod merges;
pub mod permission;
pub mod plan;
pub mod review;
pub mod teams;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use context::{DialogContext, DialogSender};

use crate::ui::palette::dim;
use crate::ui::transcript::wrap::{str_width, truncate};

/// One dialog.
pub enum Modal {
    Permission(permission::PermissionDialog),
    Plan(plan::PlanDialog),
    Teams(teams::TeamsDialog),
    Confirm(confirm::ConfirmDialog),
    Help(help::HelpDialog),
    Review(Box<review::ReviewDialog>),
    Merges(Box<merges::MergesDialog>),
}

/// What becomes of a dialog after a key.
pub enum DialogOutcome {
    Keep,
    Close,
    /// Keep it and open another on top (a confirmation).
    Push(Box<Modal>),
    /// The key is text the dialog has no use for: it was meant for the composer. An approval
    /// dialog steps back to waiting (the banner) and the key goes to the composer.
    Decline,
}

/// Whether `key` types text (a character without Ctrl or Alt).
pub fn is_text(key: &KeyEvent) -> bool {
    use crossterm::event::{KeyCode, KeyModifiers};
    matches!(key.code, KeyCode::Char(_))
        && !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT | KeyModifiers::SUPER)
}

/// Where dialogs may draw: the screen above the composer (`above_composer`) and the screen
/// above the footer (`above_footer`); `over_dialog` when another dialog is under this one.
#[derive(Debug, Clone, Copy)]
pub struct Areas {
    pub above_composer: Rect,
    pub above_footer: Rect,
    pub over_dialog: bool,
}

impl Modal {
    /// Handles one key (not Ctrl+C and the other global keys: the caller did those); what it
    /// does goes to `sender`. An approval dialog whose queue is empty closes.
    pub fn handle(
        &mut self,
        key: &KeyEvent,
        context: &DialogContext<'_>,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        match self {
            Modal::Permission(d) => match context.permission() {
                Some(c) => d.handle(key, c, sender),
                None => DialogOutcome::Close,
            },
            Modal::Plan(d) => match context.plan() {
                Some(c) => d.handle(key, c, sender),
                None => DialogOutcome::Close,
            },
            Modal::Teams(d) => d.handle(key, &context.teams(), sender),
            Modal::Confirm(d) => d.handle(key, context.keymap, sender),
            Modal::Help(d) => d.handle(key, context.keymap),
            Modal::Review(d) => d.handle(key, context.keymap, sender),
            Modal::Merges(d) => d.handle(key, context.keymap, context.now_ms, sender),
        }
    }

    /// The grace period of an approval or confirmation dialog.
    pub fn guard(&self) -> Option<&guard::Guard> {
        match self {
            Modal::Permission(d) => Some(&d.guard),
            Modal::Plan(d) => Some(&d.guard),
            Modal::Confirm(d) => Some(&d.guard),
            Modal::Teams(_) | Modal::Help(_) | Modal::Review(_) | Modal::Merges(_) => None,
        }
    }

    pub fn guard_mut(&mut self) -> Option<&mut guard::Guard> {
        match self {
            Modal::Permission(d) => Some(&mut d.guard),
            Modal::Plan(d) => Some(&mut d.guard),
            Modal::Confirm(d) => Some(&mut d.guard),
            Modal::Teams(_) | Modal::Help(_) | Modal::Review(_) | Modal::Merges(_) => None,
        }
    }

    /// Whether this is a request's dialog (permission or plan).
    pub fn is_approval(&self) -> bool {
        matches!(self, Modal::Permission(_) | Modal::Plan(_))
    }

    /// Whether `key` is text this approval or confirmation dialog has no use for (it was
    /// meant for the composer); never for other dialogs.
    pub fn declines(&self, key: &KeyEvent, context: &DialogContext<'_>) -> bool {
        match self {
            Modal::Permission(d) => context.permission().is_some_and(|c| d.declines(key, c)),
            Modal::Plan(d) => context.plan().is_some_and(|c| d.declines(key, c)),
            Modal::Confirm(d) => d.declines(key, context.keymap),
            Modal::Teams(_) | Modal::Help(_) | Modal::Review(_) | Modal::Merges(_) => false,
        }
    }

    /// What a guarded dialog shows, for the note about a key it ignored: `request` (an
    /// approval) or `question` (a confirmation).
    pub fn what_it_asks(&self) -> &'static str {
        match self {
            Modal::Confirm(_) => "question",
            _ => "request",
        }
    }

    /// Whether the dialog has a text input open (pasted text is for it).
    pub fn has_input(&self) -> bool {
        match self {
            Modal::Permission(d) => d.has_input(),
            Modal::Plan(d) => d.has_input(),
            Modal::Review(d) => d.has_input(),
            Modal::Teams(_) | Modal::Confirm(_) | Modal::Help(_) | Modal::Merges(_) => false,
        }
    }

    /// Pasted text (feedback inputs take it).
    pub fn paste(&mut self, text: &str) {
        match self {
            Modal::Permission(d) => d.paste(text),
            Modal::Plan(d) => d.paste(text),
            Modal::Review(d) => d.paste(text),
            Modal::Teams(_) | Modal::Confirm(_) | Modal::Help(_) | Modal::Merges(_) => {}
        }
    }

    /// Draws the dialog (an approval dialog whose queue is empty draws nothing).
    pub fn render(&self, areas: Areas, buf: &mut Buffer, context: &DialogContext<'_>) {
        match self {
            Modal::Permission(d) => {
                if let Some(c) = context.permission() {
                    d.render(areas.above_composer, buf, c);
                }
            }
            Modal::Plan(d) => {
                if let Some(c) = context.plan() {
                    d.render(areas.above_composer, buf, c);
                }
            }
            Modal::Teams(d) => d.render(areas.above_footer, buf, &context.teams()),
            // Right above the composer, where the person types; over another dialog (which
            // covers the composer), at that dialog's bottom, over its hints.
            Modal::Confirm(d) => {
                let area = if areas.over_dialog {
                    areas.above_footer
                } else {
                    areas.above_composer
                };
                d.render(area, buf, context.keymap)
            }
            Modal::Help(d) => d.render(areas.above_footer, buf, context.keymap),
            Modal::Review(d) => d.render(areas.above_footer, buf, context.notice, context.keymap),
            Modal::Merges(d) => d.render(areas.above_footer, buf, context.notice, context.keymap),
        }
    }
}

/// A box of `height` rows at the bottom of `area`, full width.
pub fn bottom_box(area: Rect, height: u16) -> Rect {
    let height = height.min(area.height);
    Rect {
        y: area.y + area.height - height,
        height,
        ..area
    }
}

/// Clears `area`, draws a rounded frame with a left title (spans) and a right title, and
/// returns the inside.
pub fn frame(
    area: Rect,
    buf: &mut Buffer,
    border: Style,
    title: Vec<Span<'static>>,
    right: Option<String>,
) -> Rect {
    Clear.render(area, buf);
    let mut block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(border);
    // Keep room for the right title and the corners.
    let right_width = right.as_deref().map_or(0, |r| str_width(r) + 2);
    let room = usize::from(area.width).saturating_sub(right_width + 4);
    block = block.title(Line::from(fit_spans(title, room)));
    if let Some(right) = right {
        block = block.title_top(Line::from(format!(" {right} ")).right_aligned());
    }
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}

/// Cuts a row of spans to `width` columns.
pub fn fit_spans(spans: Vec<Span<'static>>, width: usize) -> Vec<Span<'static>> {
    let mut out = Vec::new();
    let mut used = 0;
    for span in spans {
        let w = str_width(&span.content);
        if used + w <= width {
            used += w;
            out.push(span);
        } else {
            let rest = width.saturating_sub(used);
            if rest > 0 {
                out.push(Span::styled(truncate(&span.content, rest), span.style));
            }
            break;
        }
    }
    out
}

/// Dim hint rows (`y yes · n no · esc later`), broken between hints to fit the width.
pub fn hint_lines(text: &str, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut rows: Vec<String> = Vec::new();
    let mut row = String::new();
    for hint in text.split(" · ") {
        if row.is_empty() {
            row = hint.to_string();
        } else if str_width(&row) + 3 + str_width(hint) <= width {
            row.push_str(" · ");
            row.push_str(hint);
        } else {
            rows.push(std::mem::replace(&mut row, hint.to_string()));
        }
    }
    rows.push(row);
    rows.into_iter()
        .map(|r| Line::from(Span::styled(truncate(&r, width), dim())))
        .collect()
}

/// The hint rows of a guarded dialog, or in their place the note about the key its grace
/// period just dropped (`y ignored: this request just appeared — press again`), so the person
/// sees at once that the key did nothing.
pub fn hints_or_note(guard: &guard::Guard, hints: &str, width: u16) -> Vec<Line<'static>> {
    match &guard.ignored {
        Some(note) => crate::ui::transcript::wrap::wrap_line(
            &Line::from(Span::styled(
                note.clone(),
                Style::default()
                    .fg(ratatui::style::Color::Yellow)
                    .add_modifier(ratatui::style::Modifier::BOLD),
            )),
            0,
            width.max(1),
        ),
        None => hint_lines(hints, width),
    }
}

/// The first title that fits in `width` columns with a right title of `right` columns
/// (the last one, cut, when none does).
pub fn pick_title(
    variants: Vec<Vec<Span<'static>>>,
    width: u16,
    right: usize,
) -> Vec<Span<'static>> {
    let room = usize::from(width).saturating_sub(right + 4);
    let fits = |spans: &Vec<Span<'static>>| {
        spans.iter().map(|s| str_width(&s.content)).sum::<usize>() <= room
    };
    let mut last = Vec::new();
    for variant in variants {
        if fits(&variant) {
            return variant;
        }
        last = variant;
    }
    last
}
