//! How the permission dialog draws: the title with the teammate's badge, the tool and "1 of
//! N"; the description, a note when the input is shown only in part (its size and the file
//! that holds it whole), and the tool's input (cut with "… N more lines" when the screen is
//! short); the options in one row when they fit (no option marked until the person moves the
//! selection), or the "always" rule waiting for its confirmation, or the feedback line; the
//! hints of the keymap context in use.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use super::{Choice, PermissionDialog, View, body, options};
use crate::lead::approval_text;
use crate::lead::contract::PendingPermission;
use crate::protocol::display::visible_line;
use crate::ui::keymap::Context;
use crate::ui::modal::context::ApprovalContext;
use crate::ui::modal::{bottom_box, frame, hints_or_note, pick_title};
use crate::ui::palette::{dim, teammate_color};
use crate::ui::transcript::wrap::{sanitize, str_width, wrap_line};

impl PermissionDialog {
    /// Draws the dialog for the head of the queue (`context.request`) at the bottom of `area`.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        context: ApprovalContext<'_, PendingPermission>,
    ) {
        let head = context.request;
        let keymap = context.keymap;
        let View {
            selected,
            feedback,
            confirming,
        } = self.view(head.key);
        let inner_width = area.width.saturating_sub(2).max(1);

        // Fixed rows: options (or feedback, or the rule to confirm) and hints; the rest is
        // description and input.
        let opts = options(head);
        let option_lines = match confirming.and_then(|i| opts.get(i)) {
            Some((_, Choice::Always { what, meaning, .. })) => {
                confirm_lines(what, meaning, inner_width)
            }
            _ => option_lines(&opts, selected, inner_width, feedback.is_some()),
        };
        let hints = hints_or_note(
            &self.guard,
            &if feedback.is_some() {
                keymap.hints(Context::Feedback)
            } else if confirming.is_some() {
                keymap.hints_with_every_key(Context::AlwaysConfirm)
            } else {
                keymap.hints(Context::Permission)
            },
            inner_width,
        );
        let mut top: Vec<Line<'static>> = Vec::new();
        if body::carries_controls(head) {
            top.extend(wrap_line(
                &Line::from(Span::styled(
                    approval_text::CONTROLS_WARNING,
                    Style::default()
                        .fg(Color::Yellow)
                        .add_modifier(Modifier::BOLD),
                )),
                0,
                inner_width,
            ));
        }
        if !head.description.trim().is_empty() {
            top.extend(wrap_line(
                &Line::from(Span::styled(sanitize(&head.description), dim())),
                0,
                inner_width,
            ));
        }
        if let Some(part) = &head.in_part {
            top.extend(wrap_line(
                &Line::from(Span::styled(
                    approval_text::in_part_warning(part),
                    Style::default().fg(Color::Yellow),
                )),
                0,
                inner_width,
            ));
        }
        let body: Vec<Line<'static>> = body::input_lines(&head.tool_name, &head.input)
            .iter()
            .flat_map(|l| wrap_line(l, 2, inner_width.saturating_sub(2).max(1)))
            .map(|l| {
                let mut spans = vec![Span::raw("  ")];
                spans.extend(l.spans);
                Line::from(spans)
            })
            .collect();
        let fixed = option_lines.len() + 1 + hints.len() + usize::from(feedback.is_some());
        let max_inner = usize::from(area.height.saturating_sub(2));
        let room = max_inner.saturating_sub(fixed + top.len());
        let mut lines = top;
        if body.len() > room {
            let keep = room.saturating_sub(1);
            let more = body.len() - keep;
            lines.extend(body.into_iter().take(keep));
            lines.push(Line::from(Span::styled(
                format!("  … {more} more lines"),
                dim(),
            )));
        } else {
            lines.extend(body);
        }
        lines.push(Line::default());
        let feedback_row = feedback.map(|_| lines.len() + option_lines.len());
        lines.extend(option_lines);
        if feedback.is_some() {
            lines.push(Line::default());
        }
        lines.extend(hints);

        let height = (lines.len() as u16 + 2).min(area.height);
        let outer = bottom_box(area, height);
        let badge = Span::styled(
            match &head.host {
                Some(host) => format!(" @{} · {} ", visible_line(&head.worker), visible_line(host)),
                None => format!(" @{} ", visible_line(&head.worker)),
            },
            Style::default()
                .bg(teammate_color(head.color.as_deref()))
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        );
        let tool = Span::styled(
            visible_line(&head.tool_name).into_owned(),
            Style::default().add_modifier(Modifier::BOLD),
        );
        let counter = format!("1 of {}", context.approvals);
        let title = pick_title(
            vec![
                vec![
                    Span::raw(" "),
                    badge.clone(),
                    Span::raw(" needs permission ─ "),
                    tool.clone(),
                    Span::raw(" "),
                ],
                vec![Span::raw(" "), badge, Span::raw(" "), tool, Span::raw(" ")],
            ],
            area.width,
            counter.len() + 2,
        );
        let inner = frame(
            outer,
            buf,
            Style::default().fg(teammate_color(head.color.as_deref())),
            title,
            Some(counter),
        );
        Paragraph::new(lines).render(inner, buf);
        if let (Some(input), Some(row)) = (feedback, feedback_row) {
            let y = inner.y + row as u16;
            if y < inner.y + inner.height {
                let prompt = "› ";
                let x = inner.x + str_width(prompt) as u16;
                buf.set_string(inner.x, y, prompt, Style::default());
                input.render(
                    Rect {
                        x,
                        y,
                        width: inner.width.saturating_sub(2),
                        height: 1,
                    },
                    buf,
                );
            }
        }
    }
}

fn chosen() -> Style {
    Style::default()
        .add_modifier(Modifier::BOLD)
        .fg(Color::Cyan)
}

/// The second step of "always": the exact rule, marked, wrapped, then what it allows in words
/// (`allows every command that starts with cargo test`), when it says more than the rule.
fn confirm_lines(what: &str, meaning: &str, width: u16) -> Vec<Line<'static>> {
    let line = Line::from(vec![
        Span::styled("❯ ", chosen()),
        Span::styled("Always? ", Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(what.to_string(), chosen()),
    ]);
    let mut lines = wrap_line(&line, 2, width);
    if !meaning.is_empty() {
        let line = Line::from(vec![
            Span::raw("  "),
            Span::styled(format!("allows {meaning}"), Style::default()),
        ]);
        lines.extend(wrap_line(&line, 2, width));
    }
    lines
}

/// The options row(s): one row when they fit, else one per row. In feedback mode only the
/// chosen "No" stays, followed by the input row.
fn option_lines(
    opts: &[(String, Choice)],
    selected: Option<usize>,
    width: u16,
    asking_why: bool,
) -> Vec<Line<'static>> {
    let chosen = chosen();
    if asking_why {
        let label = opts.last().map(|(l, _)| l.clone()).unwrap_or_default();
        return vec![Line::from(vec![
            Span::styled("❯ ", chosen),
            Span::styled(label, chosen),
        ])];
    }
    let cells: Vec<Vec<Span<'static>>> = opts
        .iter()
        .enumerate()
        .map(|(i, (label, _))| {
            if Some(i) == selected {
                vec![
                    Span::styled("❯ ", chosen),
                    Span::styled(label.clone(), chosen),
                ]
            } else {
                vec![Span::raw("  "), Span::raw(label.clone())]
            }
        })
        .collect();
    let total: usize = opts.iter().map(|(l, _)| str_width(l) + 2).sum::<usize>()
        + 3 * opts.len().saturating_sub(1);
    if total <= usize::from(width) {
        let mut spans = Vec::new();
        for (i, cell) in cells.into_iter().enumerate() {
            if i > 0 {
                spans.push(Span::raw("   "));
            }
            spans.extend(cell);
        }
        vec![Line::from(spans)]
    } else {
        cells
            .into_iter()
            .flat_map(|cell| wrap_line(&Line::from(cell), 2, width))
            .collect()
    }
}
