//! The teams dialog, two levels: a list of teammates (status, mode, backend, current task) and
//! one teammate's detail. It reads the team from the state at every frame, so `Team` snapshots
//! update it live; the selection follows the selected teammate's name. Killing, and moving a
//! teammate that requires plan mode out of it, ask for a confirmation first.

pub mod detail;
pub mod list;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::lead::view::{LeadCommand, TeammateView};
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::confirm::ConfirmDialog;
use crate::ui::modal::{Modal, Outcome};
use crate::ui::state::AppState;

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

    pub fn handle(&mut self, key: &KeyEvent, state: &mut AppState) -> Outcome {
        if let Some(name) = self.detail.clone() {
            if state.teammate(&name).is_some() {
                return self.handle_detail(&name, key, state);
            }
            self.detail = None;
        }
        let index = self.selected_index(&state.team);
        self.select(&state.team, index);
        let selected = state.team.get(index).map(|t| t.name.clone());
        match (state.keymap.lookup(Context::TeamsList, key), selected) {
            (Some(Action::Up), _) => {
                self.select(&state.team, index.saturating_sub(1));
                Outcome::Keep
            }
            (Some(Action::Down), _) => {
                let last = state.team.len().saturating_sub(1);
                self.select(&state.team, (index + 1).min(last));
                Outcome::Keep
            }
            (Some(Action::OpenDetail), Some(name)) => {
                self.detail = Some(name);
                self.prompt_expanded = false;
                Outcome::Keep
            }
            (Some(Action::CycleAllModes), _) if !state.team.is_empty() => {
                match state.cycle_all_modes() {
                    Some(confirm) => Outcome::Push(confirm),
                    None => Outcome::Keep,
                }
            }
            (Some(Action::Shutdown), Some(name)) => {
                state.send(LeadCommand::Shutdown { name });
                Outcome::Keep
            }
            (Some(Action::Kill), Some(name)) => {
                Outcome::Push(Modal::Confirm(ConfirmDialog::kill(&name, state.now_ms)))
            }
            (Some(Action::ToggleHidden), Some(name)) => {
                state.send(LeadCommand::ToggleHidden { name });
                Outcome::Keep
            }
            (Some(Action::PruneIdle), _) => {
                state.send(LeadCommand::PruneIdle);
                Outcome::Keep
            }
            (Some(Action::Close), _) => Outcome::Close,
            _ => Outcome::Keep,
        }
    }

    fn handle_detail(&mut self, name: &str, key: &KeyEvent, state: &mut AppState) -> Outcome {
        let name = name.to_string();
        match state.keymap.lookup(Context::TeamsDetail, key) {
            Some(Action::CycleMode) => match state.cycle_teammate_mode(&name) {
                Some(confirm) => Outcome::Push(confirm),
                None => Outcome::Keep,
            },
            Some(Action::Jump) => {
                if state.open_teammate(&name) {
                    Outcome::Close
                } else {
                    Outcome::Keep
                }
            }
            Some(Action::Shutdown) => {
                state.send(LeadCommand::Shutdown { name });
                Outcome::Keep
            }
            Some(Action::Kill) => {
                Outcome::Push(Modal::Confirm(ConfirmDialog::kill(&name, state.now_ms)))
            }
            Some(Action::ToggleHidden) => {
                state.send(LeadCommand::ToggleHidden { name });
                Outcome::Keep
            }
            Some(Action::ExpandPrompt) => {
                self.prompt_expanded = !self.prompt_expanded;
                Outcome::Keep
            }
            Some(Action::Back) => {
                self.detail = None;
                Outcome::Keep
            }
            Some(Action::Close) => Outcome::Close,
            _ => Outcome::Keep,
        }
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, state: &AppState) {
        match self.detail.as_deref().and_then(|n| state.teammate(n)) {
            Some(teammate) => detail::render(teammate, self.prompt_expanded, area, buf, state),
            None => list::render(self.selected_index(&state.team), area, buf, state),
        }
    }
}
