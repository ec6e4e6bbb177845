//! The teams dialog's detail of one teammate: agent id, status, mode, model, usage (tokens in
//! and out, tool uses and turns, when its model used any), backend and pane, cwd, worktree, the
//! spawn prompt (one line, or all of it with `e`), owned tasks and recent messages.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::TeammateView;
use crate::ui::keymap::Context;
use crate::ui::modal::context::TeamsContext;
use crate::ui::modal::{bottom_box, frame, hint_lines};
use crate::ui::palette::{dim, mode_style, status_style, status_text, teammate_color};
use crate::ui::transcript::wrap::{sanitize, truncate, wrap_line};

const LABEL_WIDTH: usize = 10;

fn row(label: &str, value: Vec<Span<'static>>, width: u16) -> Vec<Line<'static>> {
    let mut spans = vec![Span::styled(format!("{label:<LABEL_WIDTH$}"), dim())];
    spans.extend(value);
    wrap_line(&Line::from(spans), LABEL_WIDTH as u16, width)
}

fn text(value: impl Into<String>) -> Vec<Span<'static>> {
    vec![Span::raw(sanitize(&value.into()))]
}

/// Draws the detail of `t`.
pub fn render(
    t: &TeammateView,
    expanded: bool,
    area: Rect,
    buf: &mut Buffer,
    context: &TeamsContext<'_>,
) {
    let width = area.width.saturating_sub(2).max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    lines.extend(row("agent id", text(t.agent_id.clone()), width));
    let mut status = vec![Span::styled(
        status_text(&t.status, context.now_ms),
        status_style(&t.status),
    )];
    if t.hidden {
        status.push(Span::styled(" · hidden", dim()));
    }
    if let Some(limited) = crate::ui::palette::rate_limit_text(t.rate_limited_until, context.now_ms)
    {
        status.push(Span::styled(limited, Style::default().fg(Color::Yellow)));
    }
    lines.extend(row("status", status, width));
    if let Some(parked) = crate::ui::palette::parked_text(t.parked.as_ref()) {
        lines.extend(row(
            "limit",
            vec![Span::styled(
                format!("{parked} · /limits"),
                Style::default().fg(Color::Yellow),
            )],
            width,
        ));
    }
    if let Some(why) = &t.over_budget {
        lines.extend(row(
            "budget",
            vec![Span::styled(
                format!("paused: {why} · /budget {} DOLLARS", t.name),
                Style::default().fg(Color::Red),
            )],
            width,
        ));
    }
    let mut mode = vec![Span::styled(t.mode_label(), mode_style(t.mode))];
    if t.plan_mode_required {
        mode.push(Span::styled(" · plan mode required", dim()));
    }
    lines.extend(row("mode", mode, width));
    lines.extend(row(
        "model",
        text(t.model.clone().unwrap_or_else(|| "—".to_string())),
        width,
    ));
    if let Some(usage) = &t.usage {
        lines.extend(row(
            "usage",
            text(crate::ui::usage::detail_line(usage)),
            width,
        ));
        if let Some(cache) = crate::ui::usage::cache_line(usage) {
            lines.extend(row("cache", text(cache), width));
        }
        if let Some(unpriced) = crate::ui::usage::unpriced_line(usage) {
            lines.extend(row(
                "",
                vec![Span::styled(unpriced, Style::default().fg(Color::Yellow))],
                width,
            ));
        }
    }
    let pane = if t.pane_id.is_empty() || t.pane_id == t.backend_label() {
        t.backend_label().to_string()
    } else {
        format!("{} · pane {}", t.backend_label(), t.pane_id)
    };
    lines.extend(row("backend", text(pane), width));
    lines.extend(row("cwd", text(t.cwd.clone()), width));
    lines.extend(row(
        "worktree",
        text(t.worktree.clone().unwrap_or_else(|| "—".to_string())),
        width,
    ));
    match t.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
        None => lines.extend(row("prompt", text("—"), width)),
        Some(prompt) if expanded => {
            for (i, l) in sanitize(prompt).lines().enumerate() {
                let label = if i == 0 { "prompt" } else { "" };
                lines.extend(row(label, text(l), width));
            }
        }
        Some(prompt) => {
            let first = sanitize(prompt).lines().next().unwrap_or("").to_string();
            let room = usize::from(width).saturating_sub(LABEL_WIDTH + 16);
            lines.extend(row(
                "prompt",
                vec![
                    Span::raw(truncate(&first, room.max(8))),
                    Span::styled("  (e to expand)", dim()),
                ],
                width,
            ));
        }
    }
    if t.owned_tasks.is_empty() {
        lines.extend(row("tasks", text("—"), width));
    }
    for (i, (id, subject, status)) in t.owned_tasks.iter().enumerate() {
        let label = if i == 0 { "tasks" } else { "" };
        lines.extend(row(
            label,
            vec![
                Span::raw(format!("#{id} {}", sanitize(subject))),
                Span::styled(format!(" · {status}"), dim()),
            ],
            width,
        ));
    }
    if t.recent_messages.is_empty() {
        lines.extend(row("recent", text("—"), width));
    }
    for (i, message) in t.recent_messages.iter().enumerate() {
        let label = if i == 0 { "recent" } else { "" };
        lines.extend(row(label, text(message.replace('\n', " ")), width));
    }
    // What the lead sent it, newest first, with how far each got and since when.
    for (i, m) in t.messages.iter().enumerate() {
        let label = if i == 0 { "sent" } else { "" };
        let age = crate::ui::palette::short_duration(context.now_ms.saturating_sub(m.since_ms));
        let style = match m.state {
            crate::lead::ledger::Receipt::Failed | crate::lead::ledger::Receipt::ReplyLost => {
                Style::default().fg(Color::Red)
            }
            _ => dim(),
        };
        lines.extend(row(
            label,
            vec![
                Span::raw(sanitize(&m.preview).replace('\n', " ")),
                Span::styled(format!(" · {} {age} ago", m.state.as_str()), style),
            ],
            width,
        ));
    }

    let hints = hint_lines(
        &context
            .keymap
            .hints_without(Context::TeamsDetail, &super::pointless_for(t)),
        width,
    );
    let notice = super::notice_lines(context, width);
    let height =
        (lines.len() + 2 + notice.len() + hints.len()).min(usize::from(area.height)) as u16;
    let outer = bottom_box(area, height);
    let color = teammate_color(t.color.as_deref());
    let title = vec![
        Span::raw(" "),
        Span::styled(
            match &t.host {
                Some(host) => format!(" @{} · {host} ", t.name),
                None => format!(" @{} ", t.name),
            },
            Style::default()
                .bg(color)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        ),
        Span::raw(" "),
    ];
    let inner = frame(outer, buf, Style::default().fg(color), title, None);
    let visible = usize::from(inner.height).saturating_sub(notice.len() + hints.len());
    let mut shown: Vec<Line<'static>> = lines.into_iter().take(visible).collect();
    while shown.len() < visible {
        shown.push(Line::default());
    }
    shown.extend(notice);
    shown.extend(hints);
    Paragraph::new(shown).render(inner, buf);
}
