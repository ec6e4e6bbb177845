//! The permission dialog: the head of the permission queue with "1 of N", the requesting
//! teammate's badge in its color, the tool's input for a human, and the options Yes /
//! Yes-and-don't-ask-again (one per suggestion, or "always allow <Tool> for @worker this
//! session") / No-and-say-why (then a feedback line). Each decision answers exactly the head,
//! which the local queue drops at once; Esc leaves every request queued.

pub mod body;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::view::{LeadCommand, PendingPermission, PermissionDecision};
use crate::protocol::PermissionUpdate;
use crate::protocol::permission::PermissionRule;
use crate::ui::keymap::{self, Action, Context};
use crate::ui::modal::feedback::FeedbackInput;
use crate::ui::modal::{Outcome, bottom_box, frame, hint_lines, pick_title};
use crate::ui::palette::{dim, teammate_color};
use crate::ui::state::AppState;
use crate::ui::transcript::wrap::{sanitize, str_width, wrap_line};

/// What an option does.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Once,
    Always(Vec<PermissionUpdate>),
    No,
}

/// The options for a request, labelled.
pub fn options(request: &PendingPermission) -> Vec<(String, Choice)> {
    let mut out = vec![("Yes".to_string(), Choice::Once)];
    if request.suggestions.is_empty() {
        out.push((
            format!(
                "Yes, and always allow {} for @{} this session",
                request.tool_name, request.worker
            ),
            Choice::Always(vec![PermissionUpdate::allow_session(PermissionRule {
                tool_name: request.tool_name.clone(),
                rule_content: None,
            })]),
        ));
    } else {
        for suggestion in &request.suggestions {
            out.push((
                format!("Yes, and {}", suggestion.label()),
                Choice::Always(vec![suggestion.clone()]),
            ));
        }
    }
    out.push((format!("No, and tell @{} why", request.worker), Choice::No));
    out
}

/// The dialog's own state; the request itself is the queue's head.
#[derive(Default)]
pub struct PermissionDialog {
    /// The key of the request the selection belongs to.
    head: Option<u64>,
    selected: usize,
    feedback: Option<FeedbackInput>,
}

impl PermissionDialog {
    /// Resets the selection when the head changed.
    fn follow(&mut self, head: u64) {
        if self.head != Some(head) {
            self.head = Some(head);
            self.selected = 0;
            self.feedback = None;
        }
    }

    fn answer(&mut self, state: &mut AppState, decision: PermissionDecision) -> Outcome {
        if let Some(head) = state.permissions.take_head() {
            state.send(LeadCommand::AnswerPermission {
                key: head.key,
                decision,
            });
        }
        self.head = None;
        self.feedback = None;
        if state.permissions.is_empty() {
            Outcome::Close
        } else {
            Outcome::Keep
        }
    }

    fn ask_why(&mut self, worker: &str) -> Outcome {
        self.feedback = Some(FeedbackInput::new(&format!(
            "tell @{worker} why (enter to send, empty for no reason)"
        )));
        Outcome::Keep
    }

    pub fn paste(&mut self, text: &str) {
        if let Some(input) = &mut self.feedback {
            input.paste(text);
        }
    }

    pub fn handle(&mut self, key: &KeyEvent, state: &mut AppState) -> Outcome {
        let Some(head) = state.permissions.head().cloned() else {
            return Outcome::Close;
        };
        self.follow(head.key);
        if let Some(input) = &mut self.feedback {
            return match keymap::lookup(Context::Feedback, key) {
                Some(Action::SendFeedback) => {
                    let text = input.text();
                    let feedback = (!text.is_empty()).then_some(text);
                    self.answer(state, PermissionDecision::Deny { feedback })
                }
                Some(Action::CancelFeedback) => {
                    self.feedback = None;
                    Outcome::Keep
                }
                _ => {
                    input.input(key);
                    Outcome::Keep
                }
            };
        }
        let opts = options(&head);
        match keymap::lookup(Context::Permission, key) {
            Some(Action::Allow) => self.answer(state, PermissionDecision::AllowOnce),
            Some(Action::AllowAlways) => match &opts[1].1 {
                Choice::Always(updates) => {
                    self.answer(state, PermissionDecision::AllowAlways(updates.clone()))
                }
                Choice::Once | Choice::No => Outcome::Keep,
            },
            Some(Action::Deny) => {
                self.selected = opts.len() - 1;
                self.ask_why(&head.worker)
            }
            Some(Action::PrevOption) => {
                self.selected = (self.selected + opts.len() - 1) % opts.len();
                Outcome::Keep
            }
            Some(Action::NextOption) => {
                self.selected = (self.selected + 1) % opts.len();
                Outcome::Keep
            }
            Some(Action::Choose) => match opts.get(self.selected).map(|(_, c)| c.clone()) {
                Some(Choice::Once) => self.answer(state, PermissionDecision::AllowOnce),
                Some(Choice::Always(updates)) => {
                    self.answer(state, PermissionDecision::AllowAlways(updates))
                }
                Some(Choice::No) => self.ask_why(&head.worker),
                None => Outcome::Keep,
            },
            Some(Action::OpenRequester) => {
                state.open_teammate(&head.worker);
                Outcome::Keep
            }
            Some(Action::Later) => Outcome::Close,
            _ => Outcome::Keep,
        }
    }

    /// Draws the dialog at the bottom of `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, state: &AppState) {
        let Some(head) = state.permissions.head() else {
            return;
        };
        let fresh = self.head != Some(head.key);
        let selected = if fresh { 0 } else { self.selected };
        let feedback = if fresh { None } else { self.feedback.as_ref() };
        let inner_width = area.width.saturating_sub(2).max(1);

        // Fixed rows: options (or feedback) and hints; the rest is description and input.
        let opts = options(head);
        let option_lines = option_lines(&opts, selected, inner_width, feedback.is_some());
        let hints = hint_lines(
            &if feedback.is_some() {
                keymap::hints(Context::Feedback)
            } else {
                keymap::hints(Context::Permission)
            },
            inner_width,
        );
        let mut top: Vec<Line<'static>> = Vec::new();
        if !head.description.trim().is_empty() {
            top.extend(wrap_line(
                &Line::from(Span::styled(sanitize(&head.description), dim())),
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
            format!(" @{} ", head.worker),
            Style::default()
                .bg(teammate_color(head.color.as_deref()))
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        );
        let tool = Span::styled(
            head.tool_name.clone(),
            Style::default().add_modifier(Modifier::BOLD),
        );
        let counter = format!("1 of {}", state.permissions.len());
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

/// The options row(s): one row when they fit, else one per row. In feedback mode only the
/// chosen "No" stays, followed by the input row.
fn option_lines(
    opts: &[(String, Choice)],
    selected: usize,
    width: u16,
    asking_why: bool,
) -> Vec<Line<'static>> {
    let chosen = Style::default()
        .add_modifier(Modifier::BOLD)
        .fg(Color::Cyan);
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
            if i == selected {
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
