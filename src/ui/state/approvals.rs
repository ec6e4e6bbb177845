//! When approval dialogs and waiting confirmations get the keyboard (the policy is in
//! [`crate::ui::modal::guard`]): a request that arrives, or a confirmation that arrives by
//! itself or stepped back ([`AppState::park_question`]), waits, with a banner, until the person
//! opens it (Ctrl+P) or stops typing; dialogs follow their queue's head (a new head restarts
//! the grace period); a dialog whose queue is empty closes. Also Shift+Tab on a teammate from its view (the check before
//! a mode change that would take a teammate that requires plan mode out of it is
//! [`crate::ui::modal::confirm::cycle_teammate_mode`]).

use crate::ui::modal::Modal;
use crate::ui::modal::confirm::{ConfirmDialog, ModeChange, cycle_teammate_mode};
use crate::ui::modal::guard::{Focused, Guard, typing_paused};
use crate::ui::modal::permission::PermissionDialog;
use crate::ui::modal::plan::PlanDialog;
use crate::ui::state::AppState;

impl AppState {
    /// After a queue snapshot: close dialogs of empty queues, remember what newly arrived
    /// without a dialog to show it, follow the heads, and focus a waiting request if typing
    /// has stopped.
    pub(crate) fn queues_changed(&mut self, fresh_permissions: bool, fresh_plans: bool) {
        let before = self.modals.len();
        if self.permissions.is_empty() {
            self.modals.retain(|m| !matches!(m, Modal::Permission(_)));
        }
        if self.plans.is_empty() {
            self.modals.retain(|m| !matches!(m, Modal::Plan(_)));
        }
        if self.modals.len() != before {
            self.unshown_requests_wait();
        }
        let shown = |state: &AppState, permission: bool| {
            state.modals.iter().any(|m| match m {
                Modal::Permission(_) => permission,
                Modal::Plan(_) => !permission,
                _ => false,
            })
        };
        if (fresh_permissions && !shown(self, true)) || (fresh_plans && !shown(self, false)) {
            self.approvals_waiting = true;
        }
        if self.approvals_pending() == 0 {
            self.approvals_waiting = false;
        }
        self.sync_dialogs();
        self.focus_waiting_approvals();
    }

    /// A dialog closed because its queue is empty: requests of the other kind that no dialog
    /// shows (they arrived while it had the keyboard) wait for the keyboard again.
    pub(crate) fn unshown_requests_wait(&mut self) {
        let shown = |permission: bool| {
            self.modals.iter().any(|m| match m {
                Modal::Permission(_) => permission,
                Modal::Plan(_) => !permission,
                _ => false,
            })
        };
        if (!self.permissions.is_empty() && !shown(true))
            || (!self.plans.is_empty() && !shown(false))
        {
            self.approvals_waiting = true;
        }
    }

    /// Requests (permissions and plans) not answered yet.
    pub fn approvals_pending(&self) -> usize {
        self.permissions.len() + self.plans.len()
    }

    /// Lets each approval dialog follow its queue's head.
    pub(crate) fn sync_dialogs(&mut self) {
        let now = self.now_ms;
        let permission = self.permissions.head().map(|h| h.key);
        let plan = self.plans.head().map(|h| h.request_id.clone());
        for modal in &mut self.modals {
            match modal {
                Modal::Permission(d) => {
                    if let Some(key) = permission {
                        d.sync(key, now);
                    }
                }
                Modal::Plan(d) => {
                    if let Some(id) = &plan {
                        d.sync(id, now);
                    }
                }
                Modal::Teams(_)
                | Modal::Confirm(_)
                | Modal::Help(_)
                | Modal::Review(_)
                | Modal::Merges(_) => {}
            }
        }
    }

    /// The dialog for the oldest kind of waiting request: permissions first, then plans.
    fn approval_dialog(&self, focused: Focused) -> Option<Modal> {
        let guard = Guard::new(self.now_ms, focused);
        if !self.permissions.is_empty() {
            Some(Modal::Permission(PermissionDialog::new(guard)))
        } else if !self.plans.is_empty() {
            Some(Modal::Plan(PlanDialog::new(self.lead_mode, guard)))
        } else {
            None
        }
    }

    /// Gives a waiting request (else the oldest waiting confirmation) the keyboard if typing
    /// has stopped: no dialog open, the composer empty, and the last key or paste at least
    /// `TYPING_PAUSE_MS` ago.
    pub fn focus_waiting_approvals(&mut self) {
        if self.approvals_pending() == 0 {
            self.approvals_waiting = false;
        }
        if !self.approvals_waiting && self.questions.is_empty() {
            return;
        }
        if !self.modals.is_empty()
            || !self.composer.is_empty()
            || !typing_paused(self.last_input_ms, self.now_ms)
        {
            return;
        }
        if self.approvals_waiting
            && let Some(modal) = self.approval_dialog(Focused::ByPause)
        {
            self.modals.push(modal);
            self.approvals_waiting = false;
            self.dirty = true;
            self.sync_dialogs();
            return;
        }
        self.open_question(Focused::ByPause);
    }

    /// A confirmation that waits behind the banner: it arrived by itself, or text was typed
    /// into it. It gets the keyboard like a waiting request (Ctrl+P, or a pause in typing).
    pub fn park_question(&mut self, mut question: ConfirmDialog) {
        question.guard.ignored = None;
        self.questions.push(question);
        self.dirty = true;
        self.focus_waiting_approvals();
    }

    /// Brings up the oldest waiting confirmation, its grace period starting now.
    fn open_question(&mut self, focused: Focused) -> bool {
        if self.questions.is_empty() {
            return false;
        }
        let mut question = self.questions.remove(0);
        question.guard = Guard::new(self.now_ms, focused);
        self.modals.push(Modal::Confirm(question));
        self.dirty = true;
        true
    }

    /// Ctrl+P: opens the approvals dialog (permissions first, then plans) if anything waits, or
    /// brings it to the top of the stack; with no request queued, the oldest waiting
    /// confirmation. Either way it got the keyboard on purpose, and its grace period starts
    /// now.
    pub fn open_approvals(&mut self) {
        let permissions = !self.permissions.is_empty();
        let is_it = |m: &Modal| match m {
            Modal::Permission(_) => permissions,
            Modal::Plan(_) => !permissions,
            _ => false,
        };
        let modal = match self.modals.iter().position(is_it) {
            Some(at) if at + 1 == self.modals.len() => {
                if let Some(guard) = self.modals[at].guard_mut() {
                    guard.used();
                }
                return;
            }
            Some(at) => {
                let mut modal = self.modals.remove(at);
                if let Some(guard) = modal.guard_mut() {
                    *guard = Guard::new(self.now_ms, Focused::OnPurpose);
                }
                modal
            }
            None => match self.approval_dialog(Focused::OnPurpose) {
                Some(modal) => modal,
                None => {
                    self.open_question(Focused::OnPurpose);
                    return;
                }
            },
        };
        self.modals.push(modal);
        self.approvals_waiting = false;
        self.sync_dialogs();
    }

    /// Shift+Tab on one teammate: the command at once, or — when the teammate requires plan
    /// mode and is in it — a confirmation that says so.
    pub fn cycle_teammate_mode(&mut self, name: &str) -> Option<Modal> {
        match cycle_teammate_mode(&self.team, name, self.now_ms) {
            ModeChange::Now(command) => {
                self.send(command);
                None
            }
            ModeChange::AskFirst(confirm) => Some(Modal::Confirm(confirm)),
        }
    }
}
