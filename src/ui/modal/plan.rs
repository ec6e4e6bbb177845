//! The plan approval dialog: the head of the plan queue, its text scrollable, approve with a
//! chosen mode for the teammate (default / acceptEdits / bypassPermissions, ←/→) or reject with
//! typed feedback. Like permissions, each decision answers exactly the head and Esc keeps the
//! queue. Approving takes `y` (Enter does not approve), and keys are ignored during the
//! dialog's grace period ([`crate::ui::modal::guard`]), which starts again for each new plan.

use std::cell::Cell;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::{PendingPlan, PlanDecision};
use crate::protocol::PermissionMode;
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::context::{ApprovalContext, DialogAction, DialogSender};
use crate::ui::modal::feedback::FeedbackInput;
use crate::ui::modal::guard::Guard;
use crate::ui::modal::{DialogOutcome, bottom_box, frame, hints_or_note, pick_title};
use crate::ui::palette::{dim, teammate_color};
use crate::ui::transcript::wrap::{sanitize, str_width, wrap_line};

/// The modes a plan can be approved into.
pub const APPROVE_MODES: [PermissionMode; 3] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::BypassPermissions,
];

/// The dialog's own state; the plan itself is the queue's head.
pub struct PlanDialog {
    head: Option<String>,
    scroll: usize,
    initial_mode: usize,
    mode: usize,
    feedback: Option<FeedbackInput>,
    /// Rows of plan text the last frame could show, and how many there were.
    page: Cell<(usize, usize)>,
    pub guard: Guard,
}

impl PlanDialog {
    /// A dialog whose mode choice starts at the lead's mode (`plan` counts as `default`).
    pub fn new(lead_mode: PermissionMode, guard: Guard) -> PlanDialog {
        let initial_mode = APPROVE_MODES
            .iter()
            .position(|m| *m == lead_mode.for_teammate())
            .unwrap_or(0);
        PlanDialog {
            head: None,
            scroll: 0,
            initial_mode,
            mode: initial_mode,
            feedback: None,
            page: Cell::new((0, 0)),
            guard,
        }
    }

    /// The mode an approval would carry.
    pub fn mode(&self) -> PermissionMode {
        APPROVE_MODES[self.mode]
    }

    /// Follows the queue's head: a new plan resets the dialog and starts its grace period
    /// again.
    pub fn sync(&mut self, head: &str, now_ms: u64) {
        if self.head.as_deref() != Some(head) {
            if self.head.is_some() {
                self.guard.restart(now_ms);
            }
            self.head = Some(head.to_string());
            self.scroll = 0;
            self.mode = self.initial_mode;
            self.feedback = None;
        }
    }

    /// Answers the head (`context.request`); the dialog closes when it was the last plan.
    fn answer(
        &mut self,
        context: ApprovalContext<'_, PendingPlan>,
        sender: &mut DialogSender,
        decision: PlanDecision,
    ) -> DialogOutcome {
        sender.send(DialogAction::AnswerPlan {
            request_id: context.request.request_id.clone(),
            decision,
        });
        self.head = None;
        self.feedback = None;
        if context.queued <= 1 {
            DialogOutcome::Close
        } else {
            self.guard.restart(context.now_ms);
            DialogOutcome::Keep
        }
    }

    fn scroll_by(&mut self, rows: isize) {
        let (visible, total) = self.page.get();
        let max = total.saturating_sub(visible);
        self.scroll = self.scroll.saturating_add_signed(rows).min(max);
    }

    pub fn paste(&mut self, text: &str) {
        if let Some(input) = &mut self.feedback {
            input.paste(text);
        }
    }

    /// Whether a text input (the feedback line) is open: it takes typed and pasted text.
    pub fn has_input(&self) -> bool {
        self.feedback.is_some()
    }

    /// Whether `key` is text this dialog has no use for, for the head `context.request` (it
    /// was meant for the composer): a character that is none of its keys, while no text input
    /// is open.
    pub fn declines(&self, key: &KeyEvent, context: ApprovalContext<'_, PendingPlan>) -> bool {
        let fresh = self.head.as_deref() != Some(context.request.request_id.as_str());
        (fresh || self.feedback.is_none())
            && context.keymap.lookup(Context::Plan, key).is_none()
            && crate::ui::modal::is_text(key)
    }

    /// Handles a key for the head of the queue (`context.request`).
    pub fn handle(
        &mut self,
        key: &KeyEvent,
        context: ApprovalContext<'_, PendingPlan>,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        let head = context.request;
        self.sync(&head.request_id, context.now_ms);
        if let Some(input) = &mut self.feedback {
            return match context.keymap.lookup(Context::Feedback, key) {
                Some(Action::SendFeedback) => {
                    let feedback = input.text();
                    if feedback.is_empty() {
                        DialogOutcome::Keep
                    } else {
                        self.answer(context, sender, PlanDecision::Reject { feedback })
                    }
                }
                Some(Action::CancelFeedback) => {
                    self.feedback = None;
                    DialogOutcome::Keep
                }
                _ => {
                    input.input(key);
                    DialogOutcome::Keep
                }
            };
        }
        let page = self.page.get().0.max(2) as isize - 1;
        match context.keymap.lookup(Context::Plan, key) {
            Some(Action::Approve) => {
                let mode = self.mode();
                self.answer(context, sender, PlanDecision::Approve { mode })
            }
            Some(Action::Reject) => {
                self.feedback = Some(FeedbackInput::new(&format!(
                    "tell @{} what to change (enter to send)",
                    head.from
                )));
                DialogOutcome::Keep
            }
            Some(Action::PrevOption) => {
                self.mode = (self.mode + APPROVE_MODES.len() - 1) % APPROVE_MODES.len();
                DialogOutcome::Keep
            }
            Some(Action::NextOption) => {
                self.mode = (self.mode + 1) % APPROVE_MODES.len();
                DialogOutcome::Keep
            }
            Some(Action::Up) => {
                self.scroll_by(-1);
                DialogOutcome::Keep
            }
            Some(Action::Down) => {
                self.scroll_by(1);
                DialogOutcome::Keep
            }
            Some(Action::PageUp) => {
                self.scroll_by(-page);
                DialogOutcome::Keep
            }
            Some(Action::PageDown) => {
                self.scroll_by(page);
                DialogOutcome::Keep
            }
            Some(Action::Later) => DialogOutcome::Close,
            None if crate::ui::modal::is_text(key) => DialogOutcome::Decline,
            _ => DialogOutcome::Keep,
        }
    }

    /// Draws the dialog for the head of the queue (`context.request`) over the bottom of
    /// `area` (at most all of it).
    pub fn render(&self, area: Rect, buf: &mut Buffer, context: ApprovalContext<'_, PendingPlan>) {
        let head = context.request;
        let keymap = context.keymap;
        let fresh = self.head.as_deref() != Some(head.request_id.as_str());
        let (scroll, mode, feedback) = if fresh {
            (0, self.initial_mode, None)
        } else {
            (self.scroll, self.mode, self.feedback.as_ref())
        };
        let inner_width = area.width.saturating_sub(2).max(1);
        let mut text: Vec<Line<'static>> = Vec::new();
        if let Some(part) = &head.in_part {
            text.extend(wrap_line(
                &Line::from(Span::styled(
                    sanitize(&format!("⚠ This plan is {}", part.note())),
                    Style::default().fg(Color::Yellow),
                )),
                0,
                inner_width,
            ));
        }
        text.extend(
            sanitize(&head.plan)
                .lines()
                .flat_map(|l| wrap_line(&Line::from(l.to_string()), 0, inner_width)),
        );
        let hints = hints_or_note(
            &self.guard,
            &if feedback.is_some() {
                keymap.hints(Context::Feedback)
            } else {
                keymap.hints(Context::Plan)
            },
            inner_width,
        );
        // Rows below the text: blank, choice (or feedback input), blank, hints.
        let fixed = 3 + hints.len();
        let max_text = usize::from(area.height.saturating_sub(2)).saturating_sub(fixed);
        let visible = text.len().min(max_text);
        self.page.set((visible, text.len()));
        let scroll = scroll.min(text.len().saturating_sub(visible));
        let height = (visible + fixed + 2) as u16;
        let outer = bottom_box(area, height);
        let color = teammate_color(head.color.as_deref());
        let mut right = format!("1 of {}", context.approvals);
        if text.len() > visible {
            right = format!(
                "{}–{}/{} · {right}",
                scroll + 1,
                scroll + visible,
                text.len()
            );
        }
        let badge = Span::styled(
            match &head.host {
                Some(host) => format!(
                    " @{} · {} ",
                    head.from,
                    crate::protocol::display::visible_line(host)
                ),
                None => format!(" @{} ", head.from),
            },
            Style::default()
                .bg(color)
                .fg(Color::Black)
                .add_modifier(Modifier::BOLD),
        );
        let title = pick_title(
            vec![
                vec![
                    Span::raw(" "),
                    badge.clone(),
                    Span::raw(" wants to proceed with this plan "),
                ],
                vec![Span::raw(" "), badge, Span::raw(" plan ")],
            ],
            area.width,
            right.chars().count() + 2,
        );
        let inner = frame(outer, buf, Style::default().fg(color), title, Some(right));
        let mut lines: Vec<Line<'static>> = text.into_iter().skip(scroll).take(visible).collect();
        lines.push(Line::default());
        let chosen = Style::default()
            .fg(Color::Cyan)
            .add_modifier(Modifier::BOLD);
        let input_row = lines.len();
        if feedback.is_some() {
            lines.push(Line::from(Span::styled("› ", chosen)));
        } else {
            let approve = keymap.key_label(Context::Plan, Action::Approve);
            let reject = keymap.key_label(Context::Plan, Action::Reject);
            let mut choice = vec![
                Span::styled(format!("{approve} approve"), chosen),
                Span::raw(" · mode "),
                Span::styled(
                    format!("◂ {} ▸", APPROVE_MODES[mode]),
                    Style::default().add_modifier(Modifier::BOLD),
                ),
            ];
            let reject = format!("   {reject} reject with feedback");
            let used: usize = choice.iter().map(|s| str_width(&s.content)).sum();
            if used + str_width(&reject) <= usize::from(inner.width) {
                choice.push(Span::styled(reject, dim()));
            }
            lines.push(Line::from(choice));
        }
        lines.push(Line::default());
        lines.extend(hints);
        Paragraph::new(lines).render(inner, buf);
        if let Some(input) = feedback {
            let y = inner.y + input_row as u16;
            if y < inner.y + inner.height {
                input.render(
                    Rect {
                        x: inner.x + 2,
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
