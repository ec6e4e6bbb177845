//! What a dialog gets instead of the UI's whole state: a borrowed view of what it shows
//! ([`DialogContext`], narrowed for each dialog to an [`ApprovalContext`] or a
//! [`TeamsContext`]) and a [`DialogSender`] for what it does ([`DialogAction`]s, which the UI
//! state applies, in order, once the dialog has handled its key). A dialog never sees the UI
//! state itself, so `ui::modal` does not depend on `ui::state`.

use crate::lead::contract::{
    LeadCommand, PendingPermission, PendingPlan, PermissionDecision, PlanDecision, TeammateView,
};
use crate::ui::keymap::Keymap;

/// The oldest unanswered request of a queue and how many wait (the head included).
#[derive(Debug)]
pub struct QueueHead<'a, T> {
    pub head: &'a T,
    pub queued: usize,
}

impl<T> Clone for QueueHead<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for QueueHead<'_, T> {}

/// Everything any dialog may read, borrowed from the UI state for one key or one frame.
#[derive(Clone, Copy)]
pub struct DialogContext<'a> {
    pub keymap: &'a Keymap,
    /// The app loop's clock (epoch ms).
    pub now_ms: u64,
    pub team_name: &'a str,
    pub team: &'a [TeammateView],
    pub permissions: Option<QueueHead<'a, PendingPermission>>,
    pub plans: Option<QueueHead<'a, PendingPlan>>,
    /// Every approval waiting, permissions and plans: the one count the banner, the footer
    /// and each dialog's `1 of N` show.
    pub approvals: usize,
    /// The lead's last note since the teams dialog's last key (it hides the transcript, so it
    /// shows the note itself).
    pub notice: Option<&'a str>,
}

impl<'a> DialogContext<'a> {
    /// What the permission dialog reads: the head of the permission queue (none when empty).
    pub fn permission(&self) -> Option<ApprovalContext<'a, PendingPermission>> {
        self.permissions.map(|q| self.approval(q))
    }

    /// What the plan dialog reads: the head of the plan queue (none when empty).
    pub fn plan(&self) -> Option<ApprovalContext<'a, PendingPlan>> {
        self.plans.map(|q| self.approval(q))
    }

    fn approval<T>(&self, queue: QueueHead<'a, T>) -> ApprovalContext<'a, T> {
        ApprovalContext {
            request: queue.head,
            queued: queue.queued,
            approvals: self.approvals,
            keymap: self.keymap,
            now_ms: self.now_ms,
        }
    }

    /// What the teams dialog reads.
    pub fn teams(&self) -> TeamsContext<'a> {
        TeamsContext {
            team_name: self.team_name,
            team: self.team,
            notice: self.notice,
            keymap: self.keymap,
            now_ms: self.now_ms,
        }
    }
}

/// What an approval dialog (permission, plan) reads: the request it answers, how many wait,
/// the keys and the clock.
pub struct ApprovalContext<'a, T> {
    pub request: &'a T,
    /// How many wait in this dialog's own queue (the head included).
    pub queued: usize,
    /// Every approval waiting, both queues (what `1 of N` shows).
    pub approvals: usize,
    pub keymap: &'a Keymap,
    pub now_ms: u64,
}

impl<T> Clone for ApprovalContext<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ApprovalContext<'_, T> {}

/// What the teams dialog reads: the team, the keys and the clock.
#[derive(Clone, Copy)]
pub struct TeamsContext<'a> {
    pub team_name: &'a str,
    pub team: &'a [TeammateView],
    /// What the lead said about the dialog's last action (a jump, hide/show), shown in it.
    pub notice: Option<&'a str>,
    pub keymap: &'a Keymap,
    pub now_ms: u64,
}

impl<'a> TeamsContext<'a> {
    /// A teammate by name.
    pub fn teammate(&self, name: &str) -> Option<&'a TeammateView> {
        self.team.iter().find(|t| t.name == name)
    }
}

/// What a dialog asks of the UI.
#[derive(Debug, Clone, PartialEq)]
pub enum DialogAction {
    /// A command for the controller.
    Command(LeadCommand),
    /// The head of the permission queue (`key`) is answered: the UI drops it from its queue
    /// and sends the answer.
    AnswerPermission {
        key: u64,
        decision: PermissionDecision,
    },
    /// The head of the plan queue (`request_id`) is answered, likewise.
    AnswerPlan {
        request_id: String,
        decision: PlanDecision,
    },
    /// Open a teammate: its inline view (in-process) or a jump to its pane.
    OpenTeammate(String),
}

/// Where a dialog sends its actions while it handles a key.
#[derive(Debug, Default)]
pub struct DialogSender {
    actions: Vec<DialogAction>,
}

impl DialogSender {
    pub fn send(&mut self, action: DialogAction) {
        self.actions.push(action);
    }

    /// Sends a command for the controller.
    pub fn command(&mut self, command: LeadCommand) {
        self.send(DialogAction::Command(command));
    }

    /// Takes the actions sent so far, oldest first.
    pub fn take(&mut self) -> Vec<DialogAction> {
        std::mem::take(&mut self.actions)
    }
}
