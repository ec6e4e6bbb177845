//! A yes/no confirmation for a destructive or risky action. The action is a typed
//! [`LeadCommand`] that is sent only on `y`, and it has every protection of the approval
//! dialogs ([`crate::ui::modal::guard`]): keys in its grace period are dropped with a note;
//! text it has no use for goes back to the composer, and the box closes with nothing done (one
//! that arrived by itself, the offer to retire a merged worktree, steps back behind the banner
//! instead, [`crate::ui::state::AppState::park_question`]); and one that arrives by itself
//! waits there until the person opens it or stops typing. It is drawn at the bottom, right above the composer, where the person looks.
//! Killing a teammate and moving a teammate that requires plan mode out of it (its own
//! Shift+Tab, or "cycle all") ask here first, and so does pruning, which names whom it shuts
//! down and removes, and keeps idle teammates with unfinished tasks unless a second key
//! ([`Action::IncludeBusy`]) includes them.

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::lead::contract::{LeadCommand, TeammateStatus, TeammateView};
use crate::protocol::PermissionMode;
use crate::protocol::display::visible_line;
use crate::ui::keymap::{Action, Context, Keymap};
use crate::ui::modal::context::DialogSender;
use crate::ui::modal::guard::{Focused, Guard};
use crate::ui::modal::{DialogOutcome, bottom_box, frame, hints_or_note};
use crate::ui::transcript::wrap::wrap_line;

/// The question and what `y` sends.
pub struct ConfirmDialog {
    /// What it asks in a few words, for the banner while it waits (`retire @bob's worktree`).
    pub title: String,
    pub question: String,
    pub command: LeadCommand,
    /// What [`Action::IncludeBusy`] sends instead, when the dialog offers it.
    pub include_busy: Option<LeadCommand>,
    /// Whether `y` does anything: not when there is nothing to do but what the second key
    /// offers (a prune with only busy teammates), so `y` is neither shown nor taken.
    pub yes_offered: bool,
    /// It arrived by itself (the offer to retire a merged worktree), not by a key: text typed
    /// into it sends it back behind the banner, where it waits; a box opened by a key closes
    /// instead, with nothing done.
    pub arrived: bool,
    pub guard: Guard,
}

impl ConfirmDialog {
    /// A confirmation opened by a key at `now_ms`.
    pub fn new(
        title: String,
        question: String,
        command: LeadCommand,
        now_ms: u64,
    ) -> ConfirmDialog {
        ConfirmDialog {
            title,
            question,
            command,
            include_busy: None,
            yes_offered: true,
            arrived: false,
            guard: Guard::new(now_ms, Focused::OnPurpose),
        }
    }

    /// `p` in the teams list: shut down the idle teammates and remove the exited ones from the
    /// team, naming each. Idle teammates with unfinished tasks are listed apart and kept, unless
    /// the `include_key` (its label) is pressed. `None` when there is nothing to prune.
    pub fn prune(team: &[TeammateView], include_key: &str, now_ms: u64) -> Option<ConfirmDialog> {
        let names = |list: &[&TeammateView]| {
            list.iter()
                .map(|t| format!("@{}", visible_line(&t.name)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let unfinished = |t: &TeammateView| {
            t.owned_tasks
                .iter()
                .filter(|(_, _, status)| status != "completed")
                .map(|(id, _, _)| format!("#{}", visible_line(id)))
                .collect::<Vec<_>>()
        };
        let idle: Vec<&TeammateView> = team
            .iter()
            .filter(|t| matches!(t.status, TeammateStatus::Idle { .. }))
            .collect();
        let (busy, free): (Vec<&TeammateView>, Vec<&TeammateView>) =
            idle.into_iter().partition(|t| !unfinished(t).is_empty());
        let exited: Vec<&TeammateView> = team
            .iter()
            .filter(|t| {
                matches!(
                    t.status,
                    TeammateStatus::Gone | TeammateStatus::Stopped { .. }
                )
            })
            .collect();
        if free.is_empty() && busy.is_empty() && exited.is_empty() {
            return None;
        }
        let mut parts = Vec::new();
        if !free.is_empty() {
            parts.push(format!("shut down idle {}", names(&free)));
        }
        if !exited.is_empty() {
            parts.push(format!("remove exited {} from the team", names(&exited)));
        }
        let mut question = if parts.is_empty() {
            "Prune: nothing is free to prune.".to_string()
        } else {
            format!("Prune: {}?", parts.join("; "))
        };
        let list = |l: &[&TeammateView]| l.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        let command = LeadCommand::Prune {
            shut_down: list(&free),
            remove: list(&exited),
        };
        let include_busy = if busy.is_empty() {
            None
        } else {
            let held = busy
                .iter()
                .map(|t| format!("@{} ({})", visible_line(&t.name), unfinished(t).join(", ")))
                .collect::<Vec<_>>()
                .join(", ");
            question.push_str(&format!(
                "\nKept, with unfinished tasks: {held}.\n{include_key}: shut them down too."
            ));
            let mut shut_down = list(&free);
            shut_down.extend(list(&busy));
            Some(LeadCommand::Prune {
                shut_down,
                remove: list(&exited),
            })
        };
        let nothing_free = parts.is_empty();
        let mut dialog =
            ConfirmDialog::new("prune the team".to_string(), question, command, now_ms);
        dialog.include_busy = include_busy;
        dialog.yes_offered = !nothing_free;
        Some(dialog)
    }

    /// "Kill @name?" with its consequence.
    pub fn kill(name: &str, now_ms: u64) -> ConfirmDialog {
        ConfirmDialog::new(
            format!("kill @{name}"),
            format!(
                "Kill @{name}? It stops at once without finishing its turn; its unfinished tasks go back to pending."
            ),
            LeadCommand::Kill {
                name: name.to_string(),
            },
            now_ms,
        )
    }

    /// Shift+Tab on a teammate that requires plan mode and is in it.
    pub fn leave_plan_mode(name: &str, to: PermissionMode, now_ms: u64) -> ConfirmDialog {
        ConfirmDialog::new(
            format!("move @{name} out of plan mode"),
            format!(
                "@{name} requires plan mode: it must have its plan approved before it changes anything. Move it to {to} anyway, without a plan?"
            ),
            LeadCommand::CycleTeammateMode {
                name: name.to_string(),
            },
            now_ms,
        )
    }

    /// "Cycle all" when it would move teammates that require plan mode out of it.
    pub fn cycle_all_leaving_plan_mode(
        names: &[String],
        to: PermissionMode,
        now_ms: u64,
    ) -> ConfirmDialog {
        let list = names
            .iter()
            .map(|n| format!("@{n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let verb = if names.len() == 1 {
            "requires"
        } else {
            "require"
        };
        ConfirmDialog::new(
            "move every teammate out of plan mode".to_string(),
            format!(
                "{list} {verb} plan mode: plans must be approved before changes. Move every teammate to {to} anyway, without a plan?"
            ),
            LeadCommand::CycleAllModes,
            now_ms,
        )
    }

    pub fn handle(
        &mut self,
        key: &KeyEvent,
        keymap: &Keymap,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        match keymap.lookup(Context::Confirm, key) {
            Some(Action::Yes) if self.yes_offered => {
                sender.command(self.command.clone());
                DialogOutcome::Close
            }
            Some(Action::Yes) => DialogOutcome::Keep,
            Some(Action::No) => DialogOutcome::Close,
            Some(Action::IncludeBusy) => match &self.include_busy {
                Some(command) => {
                    sender.command(command.clone());
                    DialogOutcome::Close
                }
                None => DialogOutcome::Keep,
            },
            None if crate::ui::modal::is_text(key) => DialogOutcome::Decline,
            _ => DialogOutcome::Keep,
        }
    }

    /// Whether `key` is text this box has no use for (a character that is none of its keys):
    /// it was meant for the composer.
    pub fn declines(&self, key: &KeyEvent, keymap: &Keymap) -> bool {
        keymap.lookup(Context::Confirm, key).is_none() && crate::ui::modal::is_text(key)
    }

    /// Draws the box at the bottom of `area` (the screen above the composer), full width:
    /// right above where the person types.
    pub fn render(&self, area: Rect, buf: &mut Buffer, keymap: &Keymap) {
        let text_width = area.width.saturating_sub(2).max(1);
        // The question may hold line breaks (each part of it on its own line).
        let mut lines: Vec<Line<'static>> = self
            .question
            .split('\n')
            .flat_map(|p| wrap_line(&Line::from(p.to_string()), 0, text_width))
            .collect();
        lines.push(Line::default());
        let hints = if self.yes_offered {
            keymap.hints(Context::Confirm)
        } else {
            keymap.hints_without(Context::Confirm, &[Action::Yes])
        };
        lines.extend(hints_or_note(&self.guard, &hints, text_width));
        let outer = bottom_box(area, lines.len() as u16 + 2);
        let title = vec![Span::styled(
            " Confirm ",
            Style::default().add_modifier(Modifier::BOLD),
        )];
        let inner = frame(outer, buf, Style::default().fg(Color::Red), title, None);
        Paragraph::new(lines).render(inner, buf);
    }
}

/// A mode change asked for in a dialog or a teammate's view: sent at once, or confirmed first.
pub enum ModeChange {
    Now(LeadCommand),
    AskFirst(ConfirmDialog),
}

/// Shift+Tab on one teammate: the command at once, or — when the teammate requires plan mode
/// and is in it — a confirmation that says so.
pub fn cycle_teammate_mode(team: &[TeammateView], name: &str, now_ms: u64) -> ModeChange {
    match team.iter().find(|t| t.name == name) {
        Some(t) if t.plan_mode_required && t.mode == PermissionMode::Plan => {
            ModeChange::AskFirst(ConfirmDialog::leave_plan_mode(name, t.mode.next(), now_ms))
        }
        _ => ModeChange::Now(LeadCommand::CycleTeammateMode {
            name: name.to_string(),
        }),
    }
}

/// Shift+Tab in the teams list (every teammate's mode): the command at once, or a
/// confirmation naming the teammates that require plan mode and would leave it.
pub fn cycle_all_modes(team: &[TeammateView], now_ms: u64) -> ModeChange {
    let modes: Vec<PermissionMode> = team.iter().map(|t| t.mode).collect();
    let to = PermissionMode::cycle_all(&modes);
    let leaving: Vec<String> = team
        .iter()
        .filter(|t| t.plan_mode_required && t.mode == PermissionMode::Plan)
        .map(|t| t.name.clone())
        .collect();
    if to == PermissionMode::Plan || leaving.is_empty() {
        return ModeChange::Now(LeadCommand::CycleAllModes);
    }
    ModeChange::AskFirst(ConfirmDialog::cycle_all_leaving_plan_mode(
        &leaving, to, now_ms,
    ))
}
