//! The screen layout: (teammate view header) / transcript / (task panel) / (approvals banner)
//! / composer / footer, then the completion popup and the dialogs on top. The banner shows
//! while a request waits without the keyboard (see [`crate::ui::modal::guard`]).

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::lead::contract::ViewTarget;
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::{Areas, fit_spans};
use crate::ui::palette::{dim, status_text, teammate_color};
use crate::ui::state::{AppState, Focus};
use crate::ui::transcript::wrap::str_width;
use crate::ui::{footer, tasks};

/// Draws the whole screen into a frame.
pub fn render(frame: &mut Frame<'_>, state: &mut AppState) {
    let area = frame.area();
    draw(area, frame.buffer_mut(), state);
}

/// Draws the whole screen into `area` of `buf`.
pub fn draw(area: Rect, buf: &mut Buffer, state: &mut AppState) {
    if area.height < 3 || area.width < 10 {
        buf.set_string(area.x, area.y, "teamlead: terminal too small", dim());
        return;
    }
    let footer_height = footer::height(state, area.width);
    let footer_area = Rect {
        y: area.y + area.height - footer_height,
        height: footer_height,
        ..area
    };
    let mut above_footer = Rect {
        height: area.height - footer_height,
        ..area
    };
    let composer_height = state
        .composer
        .height(area.width)
        .min(above_footer.height / 2)
        .max(3.min(above_footer.height));
    let composer_area = Rect {
        y: above_footer.y + above_footer.height - composer_height,
        height: composer_height,
        ..area
    };
    let mut above_composer = Rect {
        height: above_footer.height - composer_height,
        ..area
    };
    // The banner takes the row above the composer; dialogs draw above it, so it stays seen.
    if banner_shown(state) && above_composer.height > 2 {
        above_composer.height -= 1;
        let row = Rect {
            y: above_composer.y + above_composer.height,
            height: 1,
            ..area
        };
        banner(row, buf, state);
        above_footer.height = above_composer.height;
    }
    let mut body = above_composer;
    if state.show_tasks {
        let h = tasks::height(state).min(body.height / 2);
        let panel = Rect {
            y: body.y + body.height - h,
            height: h,
            ..body
        };
        tasks::render(panel, buf, state);
        body.height -= h;
    }
    if let ViewTarget::Teammate(name) = state.view.clone()
        && body.height > 1
    {
        header(Rect { height: 1, ..body }, buf, state, &name);
        body.y += 1;
        body.height -= 1;
        above_composer.y += 1;
        above_composer.height -= 1;
    }
    let empty_lead = state.view == ViewTarget::Lead && state.transcript.is_empty();
    if empty_lead {
        welcome(body, buf, state);
    } else if state.current_transcript().is_empty() {
        if let ViewTarget::Teammate(name) = &state.view {
            let note = format!("Nothing from @{name} yet.");
            buf.set_line(
                body.x,
                body.y,
                &Line::from(fit_spans(
                    vec![Span::styled(note, dim())],
                    usize::from(body.width),
                )),
                body.width,
            );
        }
    } else {
        state.current_transcript().render(body, buf);
    }

    let composer_focused = state.modals.is_empty() && state.focus == Focus::Composer;
    let (accent, placeholder) = match &state.view {
        ViewTarget::Lead => (
            Color::DarkGray,
            "message the lead · / for commands · @name to address a teammate".to_string(),
        ),
        ViewTarget::Teammate(name) => (
            teammate_color(state.color_of(name).as_deref()),
            format!("message @{name}"),
        ),
    };
    state
        .composer
        .render(composer_area, buf, composer_focused, accent, &placeholder);
    footer::render(footer_area, buf, state);

    if composer_focused && let Some(popup) = state.composer.completion() {
        popup.render(above_composer, buf);
    }
    let context = state.dialog_context();
    for (i, modal) in state.modals.iter().enumerate() {
        let areas = Areas {
            above_composer,
            above_footer,
            over_dialog: i > 0,
        };
        modal.render(areas, buf, &context);
    }
    crate::ui::colors::adapt(buf, state.colors);
}

/// Whether the banner shows: a request waits without the keyboard, or a confirmation does.
pub fn banner_shown(state: &AppState) -> bool {
    (state.approvals_waiting && state.approvals_pending() > 0) || !state.questions.is_empty()
}

/// The text of the approvals banner, longest first: `⚠ 1 approval waiting · @alpha asks for
/// Bash — ctrl+p to answer`, then shorter forms; a waiting confirmation is named after the
/// requests (`⚠ waiting: retire @bob's worktree? — ctrl+p to answer`).
pub fn banner_variants(state: &AppState) -> Vec<String> {
    let key = state
        .keymap
        .key_label(Context::Global, Action::OpenApprovals);
    let n = if state.approvals_waiting {
        state.approvals_pending()
    } else {
        0
    };
    let what = format!("{n} approval{} waiting", if n == 1 { "" } else { "s" });
    let who = if let Some(p) = state.permissions.head() {
        format!("@{} asks for {}", p.worker, p.tool_name)
    } else if let Some(p) = state.plans.head() {
        format!("@{} has a plan", p.from)
    } else {
        String::new()
    };
    let who = crate::ui::transcript::wrap::sanitize(&who);
    let q = state.questions.len();
    let question = state
        .questions
        .first()
        .map(|c| crate::ui::transcript::wrap::sanitize(&c.title))
        .unwrap_or_default();
    let questions = format!("{q} question{} waiting", if q == 1 { "" } else { "s" });
    match (n, q) {
        (_, 0) => vec![
            format!(" ⚠ {what} · {who} — {key} to answer "),
            format!(" ⚠ {what} — {key} to answer "),
            format!(" ⚠ {what} — {key} "),
        ],
        (0, _) => vec![
            format!(" ⚠ waiting: {question}? — {key} to answer "),
            format!(" ⚠ {questions} — {key} to answer "),
            format!(" ⚠ {questions} — {key} "),
        ],
        _ => vec![
            format!(" ⚠ {what} · {who} · then: {question}? — {key} to answer "),
            format!(" ⚠ {what}, {questions} — {key} to answer "),
            format!(" ⚠ {n} + {q} waiting — {key} "),
        ],
    }
}

/// The approvals banner: a request waits for the person to look at it.
fn banner(area: Rect, buf: &mut Buffer, state: &AppState) {
    let style = Style::default()
        .bg(Color::Yellow)
        .fg(Color::Black)
        .add_modifier(Modifier::BOLD);
    let width = usize::from(area.width);
    let variants = banner_variants(state);
    let text = variants
        .iter()
        .find(|v| str_width(v) <= width)
        .or(variants.last())
        .cloned()
        .unwrap_or_default();
    let line = Line::from(fit_spans(vec![Span::styled(text, style)], width));
    buf.set_line(area.x, area.y, &line, area.width);
}

/// The colored bar over a teammate's inline view.
fn header(area: Rect, buf: &mut Buffer, state: &AppState, name: &str) {
    let color = teammate_color(state.color_of(name).as_deref());
    let style = Style::default().bg(color).fg(Color::Black);
    buf.set_style(area, style);
    let status = state
        .teammate(name)
        .map(|t| status_text(&t.status, state.now_ms))
        .unwrap_or_default();
    let left = vec![
        Span::styled(format!(" ● @{name} "), style.add_modifier(Modifier::BOLD)),
        Span::styled(format!("· {status} "), style),
    ];
    let keys = &state.keymap;
    let right = format!(
        " {} interrupt · {} next view ",
        keys.key_label(Context::Composer, Action::Interrupt),
        keys.key_label(Context::Composer, Action::NextView)
    );
    let right = right.as_str();
    let width = usize::from(area.width);
    let left = fit_spans(left, width);
    let left_width: usize = left.iter().map(|s| str_width(&s.content)).sum();
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
    let right_width = str_width(right);
    if left_width + right_width <= width {
        let x = area.x + (width - right_width) as u16;
        buf.set_string(x, area.y, right, style);
    }
}

/// What an empty lead transcript shows.
fn welcome(area: Rect, buf: &mut Buffer, state: &AppState) {
    let mut lines = vec![Line::from(vec![
        Span::styled("teamlead", Style::default().add_modifier(Modifier::BOLD)),
        Span::styled(
            if state.team_name.is_empty() {
                String::new()
            } else {
                format!(" · team {}", state.team_name)
            },
            dim(),
        ),
        Span::styled(
            if state.backend.is_empty() {
                String::new()
            } else {
                format!(" · {}", state.backend)
            },
            dim(),
        ),
    ])];
    lines.push(Line::from(Span::styled(
        format!(
            "/spawn NAME \"PROMPT\" starts a teammate · {} for keys",
            state.keymap.key_label(Context::Composer, Action::Help)
        ),
        dim(),
    )));
    for (y, line) in (area.y..area.y + area.height).zip(lines) {
        let spans = fit_spans(line.spans, usize::from(area.width));
        buf.set_line(area.x, y, &Line::from(spans), area.width);
    }
}
