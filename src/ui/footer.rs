//! The footer row: on the left the lead model's spinner while it thinks (`✻ thinking…`) and the
//! mode of the current view (`default mode · shift+tab to cycle`, `⏸ plan mode on …`), or a
//! hint (badge selected, Ctrl+C armed); on the right the team badge (`● 3 working · 1 waiting ·
//! 2 idle`, `○ no teammates` with none), pending approvals, `tasks done/total` and the tokens
//! the session's models used (`12.3k tok`, absent while zero).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::lead::contract::{TeammateStatus, ViewTarget};
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::{Modal, fit_spans};
use crate::ui::palette::{dim, mode_label, mode_line, mode_style};
use crate::ui::state::{AppState, Focus, QuitState};
use crate::ui::transcript::wrap::str_width;

/// Counts for the team badge.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TeamCounts {
    pub working: usize,
    pub waiting: usize,
    pub idle: usize,
    pub stopping: usize,
    pub gone: usize,
    /// Stopped without shutting down (exited, crashed, closed): `/respawn` starts them again.
    pub stopped: usize,
    /// On a host whose link is down.
    pub unreachable: usize,
}

/// Counts the team by status.
pub fn team_counts(state: &AppState) -> TeamCounts {
    let mut c = TeamCounts::default();
    for t in &state.team {
        match t.status {
            TeammateStatus::Working => c.working += 1,
            TeammateStatus::WaitingForApproval | TeammateStatus::OnClientPrompt { .. } => {
                c.waiting += 1
            }
            TeammateStatus::Idle { .. } => c.idle += 1,
            TeammateStatus::ShuttingDown { .. } => c.stopping += 1,
            TeammateStatus::Gone => c.gone += 1,
            TeammateStatus::Unreachable { .. } => c.unreachable += 1,
            TeammateStatus::Stopped { .. } => c.stopped += 1,
        }
    }
    c
}

/// What the badge says with no teammates (it is there all the same: ↓ selects it, and then
/// the footer says how to start one; Enter opens the teams dialog, which says so too).
pub const NO_TEAMMATES: &str = "○ no teammates";

/// The badge text (`● 3 working · 1 waiting · 2 idle`; [`NO_TEAMMATES`] with none).
pub fn badge_text(state: &AppState) -> Option<String> {
    if state.team.is_empty() {
        return Some(NO_TEAMMATES.to_string());
    }
    let c = team_counts(state);
    let parts: Vec<String> = [
        (c.working, "working"),
        (c.waiting, "waiting"),
        (c.idle, "idle"),
        (c.stopping, "stopping"),
        (c.unreachable, "unreachable"),
        (c.gone, "gone"),
        (c.stopped, "stopped"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    Some(format!("● {}", parts.join(" · ")))
}

/// Pending approvals: permissions plus plans.
pub fn approvals(state: &AppState) -> usize {
    state.approvals_pending()
}

/// (done, total) of the tasks a human sees (internal ones excluded).
pub fn task_progress(state: &AppState) -> (usize, usize) {
    let visible = state.tasks.iter().filter(|t| !t.internal);
    let (mut done, mut total) = (0, 0);
    for t in visible {
        total += 1;
        if t.status == "completed" {
            done += 1;
        }
    }
    (done, total)
}

/// The badge with its dot, full (`● 1 working · 2 idle`) or short (`● 3 teammates`).
fn badge_spans(state: &AppState, short: bool) -> Vec<Span<'static>> {
    let Some(badge) = badge_text(state) else {
        return Vec::new();
    };
    let c = team_counts(state);
    let dot = if c.waiting > 0 {
        Color::Yellow
    } else if c.working > 0 {
        Color::Green
    } else {
        Color::DarkGray
    };
    let selected = state.focus == Focus::Badge && state.modals.is_empty();
    let base = if selected {
        Style::default().add_modifier(Modifier::REVERSED)
    } else {
        Style::default()
    };
    if state.team.is_empty() {
        return vec![Span::styled(NO_TEAMMATES, base.fg(Color::DarkGray))];
    }
    let rest = if short {
        let n = state.team.len();
        format!(" {n} teammate{}", if n == 1 { "" } else { "s" })
    } else {
        badge.trim_start_matches('●').to_string()
    };
    vec![Span::styled("●", base.fg(dot)), Span::styled(rest, base)]
}

/// The right side: badge, approvals, tasks; `short` badge, and `with_tasks`.
fn right_spans(state: &AppState, short: bool, with_tasks: bool) -> Vec<Span<'static>> {
    right_spans_hinted(state, short, with_tasks, false)
}

/// [`right_spans`], with `(ctrl+p)` after the approvals when `hint`.
fn right_spans_hinted(
    state: &AppState,
    short: bool,
    with_tasks: bool,
    hint: bool,
) -> Vec<Span<'static>> {
    let mut spans = badge_spans(state, short);
    let pending = approvals(state);
    if pending > 0 {
        if !spans.is_empty() {
            spans.push(Span::raw("   "));
        }
        spans.push(Span::styled(
            format!("{pending} approval{}", if pending == 1 { "" } else { "s" }),
            Style::default()
                .fg(Color::Yellow)
                .add_modifier(Modifier::BOLD),
        ));
        let key = state
            .keymap
            .key_label(Context::Global, Action::OpenApprovals);
        if hint && !key.is_empty() {
            spans.push(Span::styled(format!(" ({key})"), dim()));
        }
    }
    let (done, total) = task_progress(state);
    if with_tasks && total > 0 {
        if !spans.is_empty() {
            spans.push(Span::raw("   "));
        }
        spans.push(Span::styled(format!("tasks {done}/{total}"), dim()));
    }
    if with_tasks && let Some(tokens) = crate::ui::usage::footer_text(state) {
        if !spans.is_empty() {
            spans.push(Span::raw("   "));
        }
        spans.push(Span::styled(tokens, dim()));
    }
    spans
}

/// The lead model's spinner: one glyph per second while it is mid-turn.
pub fn spinner(now_ms: u64) -> &'static str {
    const FRAMES: [&str; 4] = ["✻", "✶", "✳", "✢"];
    FRAMES[((now_ms / 1000) % FRAMES.len() as u64) as usize]
}

/// The left side, full or short.
fn left_spans(state: &AppState, short: bool) -> Vec<Span<'static>> {
    match state.quit {
        QuitState::Armed { .. } => {
            return vec![Span::styled(
                format!(
                    "press {} again to quit",
                    state.keymap.key_label(Context::Global, Action::Quit)
                ),
                Style::default().fg(Color::Yellow),
            )];
        }
        QuitState::Requested => {
            return vec![Span::styled(
                format!(
                    "quitting… ({} to force)",
                    state.keymap.key_label(Context::Global, Action::Quit)
                ),
                Style::default().fg(Color::Yellow),
            )];
        }
        QuitState::Running => {}
    }
    if state.focus == Focus::Badge && state.modals.is_empty() {
        let mut hints = state.keymap.hints(Context::Badge);
        if state.team.is_empty() {
            hints = format!("/spawn NAME \"PROMPT\" starts a teammate · {hints}");
        }
        return vec![Span::styled(hints, dim())];
    }
    let mut spans = Vec::new();
    if state.busy {
        let glyph = spinner(state.now_ms);
        let text = match (&state.view, short) {
            (_, true) => format!("{glyph} "),
            (ViewTarget::Lead, false) => format!(
                "{glyph} thinking… ({} to interrupt) ",
                state.keymap.key_label(Context::Composer, Action::Interrupt)
            ),
            (ViewTarget::Teammate(_), false) => format!("{glyph} lead thinking… "),
        };
        spans.push(Span::styled(text, Style::default().fg(Color::Yellow)));
    }
    let cycle = state.keymap.key_label(Context::Composer, Action::CycleMode);
    let line = |mode| {
        if short {
            mode_label(mode).to_string()
        } else {
            mode_line(mode, &cycle)
        }
    };
    match &state.view {
        ViewTarget::Lead => {
            spans.push(Span::styled(
                line(state.lead_mode),
                mode_style(state.lead_mode),
            ));
        }
        ViewTarget::Teammate(name) => {
            if let Some(t) = state.teammate(name) {
                spans.push(Span::styled(format!("@{name}: "), dim()));
                spans.push(Span::styled(line(t.mode), mode_style(t.mode)));
            }
        }
    }
    spans
}

fn width_of(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| str_width(&s.content)).sum()
}

/// The footer's rows: one (left and right) when they fit, else the left above the right.
fn layout(state: &AppState, width: u16) -> Vec<(Vec<Span<'static>>, Vec<Span<'static>>)> {
    let width = usize::from(width);
    let full_right = right_spans(state, false, true);
    if full_right.is_empty() {
        return vec![(left_spans(state, false), Vec::new())];
    }
    // While the approvals are waiting with their dialog closed, say how to reopen it.
    let dialog_open = state
        .modals
        .iter()
        .any(|m| matches!(m, Modal::Permission(_) | Modal::Plan(_)));
    let mut candidates = Vec::new();
    if approvals(state) > 0 && !dialog_open {
        candidates.push(right_spans_hinted(state, false, true, true));
    }
    candidates.push(full_right.clone());
    candidates.push(right_spans(state, false, false));
    for right in candidates {
        for short in [false, true] {
            let left = left_spans(state, short);
            if width_of(&left) + 2 + width_of(&right) <= width {
                return vec![(left, right)];
            }
        }
    }
    let right = [
        full_right,
        right_spans(state, false, false),
        right_spans(state, true, true),
        right_spans(state, true, false),
    ]
    .into_iter()
    .find(|r| width_of(r) <= width)
    .unwrap_or_else(|| fit_spans(right_spans(state, true, false), width));
    vec![(left_spans(state, false), Vec::new()), (Vec::new(), right)]
}

/// Rows the footer needs at this width (1 or 2).
pub fn height(state: &AppState, width: u16) -> u16 {
    layout(state, width).len() as u16
}

/// Draws the footer into `area` (as many rows as [`height`] said).
pub fn render(area: Rect, buf: &mut Buffer, state: &AppState) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let width = usize::from(area.width);
    for ((left, right), y) in layout(state, area.width)
        .into_iter()
        .zip(area.y..area.y + area.height)
    {
        let right_width = width_of(&right);
        let left = fit_spans(
            left,
            width
                .saturating_sub(right_width + 2)
                .max(if right.is_empty() { width } else { 0 }),
        );
        buf.set_line(area.x, y, &Line::from(left), area.width);
        if right_width > 0 {
            let x = area.x + (width - right_width.min(width)) as u16;
            buf.set_line(x, y, &Line::from(right), right_width as u16);
        }
    }
}
