//! The teams dialog's list: one row per teammate with its color dot, name, status, mode,
//! backend, tokens its model used (`12.3k tok`, when any) and current task; columns drop from
//! the right when the screen is narrow.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::TeammateView;
use crate::ui::keymap::Context;
use crate::ui::modal::context::TeamsContext;
use crate::ui::modal::{bottom_box, fit_spans, frame, hint_lines};
use crate::ui::palette::{dim, mode_style, name_style, status_style, status_text, teammate_color};
use crate::ui::transcript::wrap::{str_width, truncate};
use crate::ui::usage::tokens_short;

/// The narrowest task column worth giving up the backend column for the tokens.
const MIN_TASK_WIDTH: usize = 12;

fn pad(text: &str, width: usize) -> String {
    let cut = truncate(text, width);
    let fill = width.saturating_sub(str_width(&cut));
    format!("{cut}{}", " ".repeat(fill))
}

fn status_of(t: &TeammateView, now_ms: u64) -> String {
    // A budget's pause or a rate limit says more than how long the teammate has been idle.
    let mut status = if t.over_budget.is_some() {
        "paused: over budget".to_string()
    } else if let Some(parked) = crate::ui::palette::parked_text(t.parked.as_ref()) {
        parked
    } else {
        crate::ui::palette::rate_limit_text(t.rate_limited_until, now_ms)
            .map(|limited| limited.trim_start_matches(" · ").to_string())
            .unwrap_or_else(|| status_text(&t.status, now_ms))
    };
    if t.hidden {
        status.push_str(" · hidden");
    }
    if let Some(since) = t.unread_since {
        status.push_str(&format!(
            " · unread {}",
            crate::ui::palette::short_duration(now_ms.saturating_sub(since))
        ));
    }
    status
}

fn usage_of(t: &TeammateView) -> String {
    t.usage.as_ref().map(tokens_short).unwrap_or_default()
}

fn task_of(t: &TeammateView) -> String {
    t.current_task
        .as_ref()
        .map(|(id, subject)| format!("#{id} {subject}"))
        .unwrap_or_default()
}

/// Draws the list with row `selected` highlighted.
pub fn render(selected: usize, area: Rect, buf: &mut Buffer, context: &TeamsContext<'_>) {
    let team = context.team;
    let now_ms = context.now_ms;
    let rows = team.len().max(1);
    let left_out = team
        .get(selected)
        .map(super::pointless_for)
        .unwrap_or_default();
    let hints = hint_lines(
        &context.keymap.hints_without(Context::TeamsList, &left_out),
        area.width.saturating_sub(2),
    );
    let notice = super::notice_lines(context, area.width.saturating_sub(2));
    let height = (rows + 2 + notice.len() + hints.len()).min(usize::from(area.height)) as u16;
    let outer = bottom_box(area, height);
    let title = vec![Span::styled(
        format!(
            " Team {} · {} teammate{} ",
            context.team_name,
            team.len(),
            if team.len() == 1 { "" } else { "s" }
        ),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    let inner = frame(outer, buf, Style::default(), title, None);
    let width = usize::from(inner.width);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if team.is_empty() {
        lines.push(Line::from(Span::styled(
            "No teammates yet. /spawn NAME \"PROMPT\" starts one.",
            dim(),
        )));
    }
    // Column widths: name and status as wide as needed (capped), the task gets the rest.
    let name_w = team
        .iter()
        .map(|t| str_width(&t.shown_name()))
        .max()
        .unwrap_or(0)
        .min(16);
    let status_w = team
        .iter()
        .map(|t| str_width(&status_of(t, now_ms)))
        .max()
        .unwrap_or(0)
        // Wide enough for how a teammate stopped (`exited (127: claude not found)`), never
        // wider than the row.
        .min(32)
        .min(width.saturating_sub(4 + name_w + 2));
    let mode_w = team
        .iter()
        .map(|t| str_width(&t.mode_label()))
        .max()
        .unwrap_or(0);
    let backend_w = team
        .iter()
        .map(|t| str_width(t.backend_label()))
        .max()
        .unwrap_or(0);
    let usage_w = team
        .iter()
        .map(|t| str_width(&usage_of(t)))
        .max()
        .unwrap_or(0);
    let base = 4 + name_w + 2 + status_w;
    let show_mode = base + 2 + mode_w <= width;
    // Tokens rank above the backend: the backend goes first when the task would get too
    // narrow.
    let show_usage = show_mode && usage_w > 0 && base + 2 + mode_w + 2 + usage_w <= width;
    let usage_cols = if show_usage { 2 + usage_w } else { 0 };
    let mut show_backend = show_mode && base + 2 + mode_w + usage_cols + 2 + backend_w <= width;
    let has_tasks = team.iter().any(|t| t.current_task.is_some());
    if show_usage
        && show_backend
        && has_tasks
        && base + 2 + mode_w + usage_cols + 2 + backend_w + 2 + MIN_TASK_WIDTH > width
    {
        show_backend = false;
    }
    let used = base
        + if show_mode { 2 + mode_w } else { 0 }
        + if show_backend { 2 + backend_w } else { 0 }
        + if show_usage { 2 + usage_w } else { 0 };
    let task_w = width.saturating_sub(used + 2);
    let visible = usize::from(inner.height).saturating_sub(notice.len() + hints.len());
    let first = selected.saturating_sub(visible.saturating_sub(1));
    for (i, t) in team.iter().enumerate().skip(first).take(visible) {
        let is_selected = i == selected;
        let mut spans = vec![
            Span::raw(if is_selected { "❯ " } else { "  " }),
            Span::styled(
                "● ",
                Style::default().fg(teammate_color(t.color.as_deref())),
            ),
            Span::styled(pad(&t.shown_name(), name_w), name_style(t.color.as_deref())),
            Span::raw("  "),
            Span::styled(
                pad(&status_of(t, now_ms), status_w),
                status_style(&t.status),
            ),
        ];
        if show_mode {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(
                pad(&t.mode_label(), mode_w),
                mode_style(t.mode),
            ));
        }
        if show_backend {
            spans.push(Span::raw("  "));
            spans.push(Span::styled(pad(t.backend_label(), backend_w), dim()));
        }
        if show_usage {
            let usage = usage_of(t);
            let fill = usage_w.saturating_sub(str_width(&usage));
            spans.push(Span::raw("  "));
            spans.push(Span::styled(format!("{}{usage}", " ".repeat(fill)), dim()));
        }
        if task_w >= 6 {
            spans.push(Span::raw("  "));
            spans.push(Span::raw(truncate(&task_of(t), task_w)));
        }
        let mut line = Line::from(fit_spans(spans, width));
        if t.hidden {
            line = line.style(dim());
        }
        if is_selected {
            line = line.style(Style::default().add_modifier(Modifier::REVERSED));
        }
        lines.push(line);
    }
    while lines.len() < visible {
        lines.push(Line::default());
    }
    lines.extend(notice);
    lines.extend(hints);
    Paragraph::new(lines).render(inner, buf);
}
