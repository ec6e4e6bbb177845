//! The task list panel (Ctrl+T): every task a human sees with its status, owner and what still
//! blocks it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::TaskView;
use crate::ui::footer::task_progress;
use crate::ui::modal::{fit_spans, frame};
use crate::ui::palette::{dim, name_style};
use crate::ui::state::AppState;

/// Most task rows the panel shows.
pub const MAX_ROWS: u16 = 8;

/// Rows the panel needs (borders included).
pub fn height(state: &AppState) -> u16 {
    let n = state.tasks.iter().filter(|t| !t.internal).count().max(1) as u16;
    n.min(MAX_ROWS) + 2
}

fn task_line(t: &TaskView, state: &AppState) -> Line<'static> {
    let (icon, style) = match t.status.as_str() {
        "completed" => ("✔", Style::default().fg(Color::Green)),
        "in_progress" => ("◼", Style::default().fg(Color::Yellow)),
        _ => ("◻", Style::default()),
    };
    let subject_style = if t.status == "completed" {
        dim().add_modifier(Modifier::CROSSED_OUT)
    } else {
        Style::default()
    };
    let mut spans = vec![
        Span::styled(format!("{icon} "), style),
        Span::styled(format!("#{} ", t.id), dim()),
        Span::styled(t.subject.replace('\n', " "), subject_style),
    ];
    if let Some(owner) = &t.owner {
        spans.push(Span::raw(" "));
        spans.push(Span::styled(
            format!("@{owner}"),
            name_style(state.color_of(owner).as_deref()),
        ));
    }
    if !t.blocked_by.is_empty() {
        let ids: Vec<String> = t.blocked_by.iter().map(|id| format!("#{id}")).collect();
        spans.push(Span::styled(
            format!(" · blocked by {}", ids.join(", ")),
            dim(),
        ));
    }
    Line::from(spans)
}

/// Draws the panel into `area`. Unfinished tasks come first when they do not all fit.
pub fn render(area: Rect, buf: &mut Buffer, state: &AppState) {
    let (done, total) = task_progress(state);
    let title = vec![Span::styled(
        format!(" Tasks {done}/{total} "),
        Style::default().add_modifier(Modifier::BOLD),
    )];
    let inner = frame(
        area,
        buf,
        dim(),
        title,
        Some(format!(
            "{} to hide",
            state.keymap.key_label(
                crate::ui::keymap::Context::Global,
                crate::ui::keymap::Action::ToggleTasks
            )
        )),
    );
    let mut tasks: Vec<&TaskView> = state.tasks.iter().filter(|t| !t.internal).collect();
    let rows = usize::from(inner.height);
    if tasks.len() > rows {
        tasks.sort_by_key(|t| t.status == "completed");
    }
    let width = usize::from(inner.width);
    let lines: Vec<Line<'static>> = if tasks.is_empty() {
        vec![Line::from(Span::styled("No tasks.", dim()))]
    } else {
        tasks
            .into_iter()
            .take(rows)
            .map(|t| Line::from(fit_spans(task_line(t, state).spans, width)))
            .collect()
    };
    Paragraph::new(lines).render(inner, buf);
}
