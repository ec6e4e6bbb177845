//! The teams dialog, two levels: a list of teammates (status, mode, backend, current task) and
//! one teammate's detail. It reads the team from its context at every key and frame, so `Team`
//! snapshots update it live; the selection follows the selected teammate's name. Killing, pruning,
//! and moving a teammate that requires plan mode out of it, ask for a confirmation first.

pub mod detail;
pub mod list;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use crate::lead::contract::{LeadCommand, TeammateView};
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::confirm::{self, ConfirmDialog, ModeChange};
use crate::ui::modal::context::{DialogAction, DialogSender, TeamsContext};
use crate::ui::modal::{DialogOutcome, Modal};
use crate::ui::transcript::wrap::{sanitize, wrap_line};

/// The dialog's state.
#[derive(Debug, Default, Clone)]
pub struct TeamsDialog {
    selected: usize,
    selected_name: Option<String>,
    /// The teammate whose detail is open.
    detail: Option<String>,
    prompt_expanded: bool,
}

impl TeamsDialog {
    pub fn new() -> TeamsDialog {
        TeamsDialog::default()
    }

    /// The selected row for this team (by name, else the nearest row).
    pub fn selected_index(&self, team: &[TeammateView]) -> usize {
        self.selected_name
            .as_ref()
            .and_then(|name| team.iter().position(|t| &t.name == name))
            .unwrap_or_else(|| self.selected.min(team.len().saturating_sub(1)))
    }

    /// The teammate whose detail is open, if it still exists.
    pub fn detail_name(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    fn select(&mut self, team: &[TeammateView], index: usize) {
        self.selected = index;
        self.selected_name = team.get(index).map(|t| t.name.clone());
    }

    pub fn handle(
        &mut self,
        key: &KeyEvent,
        context: &TeamsContext<'_>,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        if let Some(name) = self.detail.clone() {
            if let Some(teammate) = context.teammate(&name) {
                return self.handle_detail(teammate, key, context, sender);
            }
            self.detail = None;
        }
        let team = context.team;
        let index = self.selected_index(team);
        self.select(team, index);
        let selected = team.get(index).map(|t| t.name.clone());
        match (context.keymap.lookup(Context::TeamsList, key), &selected) {
            (Some(Action::Review), Some(name)) => return review(name, sender),
            (Some(Action::Merges), _) => {
                sender.command(LeadCommand::Submit {
                    target: crate::lead::contract::ViewTarget::Lead,
                    text: "/merges".to_string(),
                });
                return DialogOutcome::Keep;
            }
            _ => {}
        }
        match (context.keymap.lookup(Context::TeamsList, key), selected) {
            (Some(Action::Up), _) => {
                self.select(team, index.saturating_sub(1));
                DialogOutcome::Keep
            }
            (Some(Action::Down), _) => {
                let last = team.len().saturating_sub(1);
                self.select(team, (index + 1).min(last));
                DialogOutcome::Keep
            }
            (Some(Action::OpenDetail), Some(name)) => {
                self.detail = Some(name);
                self.prompt_expanded = false;
                DialogOutcome::Keep
            }
            (Some(Action::CycleAllModes), _) if !team.is_empty() => {
                mode_change(confirm::cycle_all_modes(team, context.now_ms), sender)
            }
            (Some(Action::Shutdown), Some(name)) => {
                sender.command(LeadCommand::Shutdown { name });
                DialogOutcome::Keep
            }
            (Some(Action::Kill), Some(name)) => DialogOutcome::Push(Box::new(Modal::Confirm(
                ConfirmDialog::kill(&name, context.now_ms),
            ))),
            (Some(Action::ToggleHidden), Some(name)) => {
                sender.command(LeadCommand::ToggleHidden { name });
                DialogOutcome::Keep
            }
            (Some(Action::PruneIdle), _) => {
                let include = context
                    .keymap
                    .key_label(Context::Confirm, Action::IncludeBusy);
                match ConfirmDialog::prune(team, &include, context.now_ms) {
                    Some(confirm) => DialogOutcome::Push(Box::new(Modal::Confirm(confirm))),
                    // Nothing to prune: the lead says so.
                    None => {
                        sender.command(LeadCommand::Prune {
                            shut_down: Vec::new(),
                            remove: Vec::new(),
                        });
                        DialogOutcome::Keep
                    }
                }
            }
            (Some(Action::Close), _) => DialogOutcome::Close,
            _ => DialogOutcome::Keep,
        }
    }

    fn handle_detail(
        &mut self,
        teammate: &TeammateView,
        key: &KeyEvent,
        context: &TeamsContext<'_>,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        let name = teammate.name.clone();
        match context.keymap.lookup(Context::TeamsDetail, key) {
            Some(Action::Review) => review(&name, sender),
            Some(Action::CycleMode) => mode_change(
                confirm::cycle_teammate_mode(context.team, &name, context.now_ms),
                sender,
            ),
            Some(Action::Jump) => {
                sender.send(DialogAction::OpenTeammate(name));
                // An in-process teammate opens as the inline view, under no dialog.
                if teammate.in_process() {
                    DialogOutcome::Close
                } else {
                    DialogOutcome::Keep
                }
            }
            Some(Action::Shutdown) => {
                sender.command(LeadCommand::Shutdown { name });
                DialogOutcome::Keep
            }
            Some(Action::Kill) => DialogOutcome::Push(Box::new(Modal::Confirm(
                ConfirmDialog::kill(&name, context.now_ms),
            ))),
            Some(Action::ToggleHidden) => {
                sender.command(LeadCommand::ToggleHidden { name });
                DialogOutcome::Keep
            }
            Some(Action::ExpandPrompt) => {
                self.prompt_expanded = !self.prompt_expanded;
                DialogOutcome::Keep
            }
            Some(Action::Back) => {
                self.detail = None;
                DialogOutcome::Keep
            }
            Some(Action::Close) => DialogOutcome::Close,
            _ => DialogOutcome::Keep,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, context: &TeamsContext<'_>) {
        match self.detail.as_deref().and_then(|n| context.teammate(n)) {
            Some(teammate) => detail::render(teammate, self.prompt_expanded, area, buf, context),
            None => list::render(self.selected_index(context.team), area, buf, context),
        }
    }
}

/// The actions whose hints are left out for `t`: hide/show for an in-process teammate (it has
/// no pane to hide; the key says so when pressed).
pub(super) fn pointless_for(t: &TeammateView) -> Vec<Action> {
    if t.backend == Some(crate::protocol::BackendKind::InProcess) {
        vec![Action::ToggleHidden]
    } else {
        Vec::new()
    }
}

/// The row above the hints: blank, or the lead's notice about the dialog's last action,
/// wrapped to `width` (at most three rows).
pub(crate) fn notice_lines(context: &TeamsContext<'_>, width: u16) -> Vec<Line<'static>> {
    let Some(notice) = context.notice else {
        return vec![Line::default()];
    };
    let style = Style::default()
        .fg(Color::Yellow)
        .add_modifier(Modifier::BOLD);
    let text = sanitize(&notice.replace('\n', " "));
    let mut lines = wrap_line(&Line::from(Span::styled(text, style)), 0, width);
    lines.truncate(3);
    lines
}

/// A mode change: the command goes at once (the dialog stays), or its confirmation opens on
/// top.
fn mode_change(change: ModeChange, sender: &mut DialogSender) -> DialogOutcome {
    match change {
        ModeChange::Now(command) => {
            sender.command(command);
            DialogOutcome::Keep
        }
        ModeChange::AskFirst(confirm) => DialogOutcome::Push(Box::new(Modal::Confirm(confirm))),
    }
}

/// A teammate's review (`/review NAME`: its worktree's changes, or the files it wrote in the
/// lead's checkout).
fn review(name: &str, sender: &mut DialogSender) -> DialogOutcome {
    sender.command(LeadCommand::Submit {
        target: crate::lead::contract::ViewTarget::Lead,
        text: format!("/review {name}"),
    });
    DialogOutcome::Keep
}
