//! The permission dialog: the head of the permission queue with "1 of N", the requesting
//! teammate's badge in its color, the tool's input for a human, and the options Yes /
//! Yes-and-don't-ask-again (one per well-formed suggestion, or a rule built from the tool and
//! the command's prefix) / No-and-say-why (then a feedback line). Each decision answers exactly
//! the head, which the local queue drops at once; Esc leaves every request queued.
//!
//! Nothing is answered by accident: keys are ignored during the dialog's grace period
//! ([`crate::ui::modal::guard`]); Enter alone chooses nothing until the selection was moved on
//! purpose (approving takes `y`); "always" is two steps, the second showing the exact rule.

pub mod body;
pub mod render;

use crossterm::event::KeyEvent;

use crate::lead::approval_text::always_updates;
use crate::lead::contract::{PendingPermission, PermissionDecision};
use crate::protocol::PermissionUpdate;
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::DialogOutcome;
use crate::ui::modal::context::{ApprovalContext, DialogAction, DialogSender};
use crate::ui::modal::feedback::FeedbackInput;
use crate::ui::modal::guard::Guard;

/// What an option does.
#[derive(Debug, Clone, PartialEq)]
pub enum Choice {
    Once,
    /// Allow, and apply these updates; the text says exactly what they do, and `meaning`
    /// what their rules allow in words (empty when the text says it all).
    Always {
        updates: Vec<PermissionUpdate>,
        what: String,
        meaning: String,
    },
    No,
}

pub use crate::lead::approval_text::{describe, meaning};

/// The "always" choices of a request (`lead::approval_text::always_updates`), each with what
/// it does in words.
pub fn always_choices(request: &PendingPermission) -> Vec<Choice> {
    always_updates(request)
        .into_iter()
        .map(|u| Choice::Always {
            what: describe(&u, &request.worker),
            meaning: meaning(&u),
            updates: vec![u],
        })
        .collect()
}

/// The options for a request, labelled.
pub fn options(request: &PendingPermission) -> Vec<(String, Choice)> {
    let mut out = vec![("Yes".to_string(), Choice::Once)];
    for choice in always_choices(request) {
        if let Choice::Always { what, .. } = &choice {
            out.push((format!("Yes, and {what}"), choice.clone()));
        }
    }
    out.push((format!("No, and tell @{} why", request.worker), Choice::No));
    out
}

/// The dialog's own state; the request itself is the queue's head.
pub struct PermissionDialog {
    /// The key of the request the state belongs to.
    head: Option<u64>,
    /// The option moved to with the arrows; none until the person moves it.
    selected: Option<usize>,
    feedback: Option<FeedbackInput>,
    /// The "always" option waiting for its confirmation (second step).
    confirming: Option<usize>,
    pub guard: Guard,
}

impl PermissionDialog {
    pub fn new(guard: Guard) -> PermissionDialog {
        PermissionDialog {
            head: None,
            selected: None,
            feedback: None,
            confirming: None,
            guard,
        }
    }

    /// Follows the queue's head: a new head resets the dialog and starts its grace period
    /// again (it is new content under the person's eyes).
    pub fn sync(&mut self, head: u64, now_ms: u64) {
        if self.head != Some(head) {
            if self.head.is_some() {
                self.guard.restart(now_ms);
            }
            self.head = Some(head);
            self.selected = None;
            self.feedback = None;
            self.confirming = None;
        }
    }

    /// The state to draw for `head` (fresh when the dialog has not seen it yet).
    fn view(&self, head: u64) -> View<'_> {
        if self.head != Some(head) {
            return View::default();
        }
        View {
            selected: self.selected,
            feedback: self.feedback.as_ref(),
            confirming: self.confirming,
        }
    }

    /// Answers the head (`context.request`); the dialog closes when it was the last request.
    fn answer(
        &mut self,
        context: ApprovalContext<'_, PendingPermission>,
        sender: &mut DialogSender,
        decision: PermissionDecision,
    ) -> DialogOutcome {
        sender.send(DialogAction::AnswerPermission {
            key: context.request.key,
            decision,
        });
        self.head = None;
        self.feedback = None;
        self.confirming = None;
        if context.queued <= 1 {
            DialogOutcome::Close
        } else {
            // The next request is new content: it gets its own grace period.
            self.guard.restart(context.now_ms);
            DialogOutcome::Keep
        }
    }

    fn ask_why(&mut self, worker: &str) -> DialogOutcome {
        self.feedback = Some(FeedbackInput::new(&format!(
            "tell @{worker} why (enter to send, empty for no reason)"
        )));
        DialogOutcome::Keep
    }

    /// Second step of "always": show the exact rule and wait for a deliberate confirmation.
    fn confirm_always(&mut self, index: usize, now_ms: u64) -> DialogOutcome {
        self.selected = Some(index);
        self.confirming = Some(index);
        self.guard.restart(now_ms);
        DialogOutcome::Keep
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
    pub fn declines(
        &self,
        key: &KeyEvent,
        context: ApprovalContext<'_, PendingPermission>,
    ) -> bool {
        let fresh = self.head != Some(context.request.key);
        if !fresh && self.feedback.is_some() {
            return false;
        }
        let keys = if !fresh && self.confirming.is_some() {
            Context::AlwaysConfirm
        } else {
            Context::Permission
        };
        context.keymap.lookup(keys, key).is_none() && crate::ui::modal::is_text(key)
    }

    /// Handles a key for the head of the queue (`context.request`).
    pub fn handle(
        &mut self,
        key: &KeyEvent,
        context: ApprovalContext<'_, PendingPermission>,
        sender: &mut DialogSender,
    ) -> DialogOutcome {
        let head = context.request;
        let keymap = context.keymap;
        self.sync(head.key, context.now_ms);
        if let Some(input) = &mut self.feedback {
            return match keymap.lookup(Context::Feedback, key) {
                Some(Action::SendFeedback) => {
                    let text = input.text();
                    let feedback = (!text.is_empty()).then_some(text);
                    self.answer(context, sender, PermissionDecision::Deny { feedback })
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
        let opts = options(head);
        if let Some(index) = self.confirming {
            return match (keymap.lookup(Context::AlwaysConfirm, key), opts.get(index)) {
                (Some(Action::ConfirmAlways), Some((_, Choice::Always { updates, .. }))) => self
                    .answer(
                        context,
                        sender,
                        PermissionDecision::AllowAlways(updates.clone()),
                    ),
                (Some(Action::Back), _) => {
                    self.confirming = None;
                    DialogOutcome::Keep
                }
                (None, _) if crate::ui::modal::is_text(key) => DialogOutcome::Decline,
                _ => DialogOutcome::Keep,
            };
        }
        let first_always = opts
            .iter()
            .position(|(_, c)| matches!(c, Choice::Always { .. }));
        let last = opts.len() - 1;
        match keymap.lookup(Context::Permission, key) {
            Some(Action::Allow) => self.answer(context, sender, PermissionDecision::AllowOnce),
            Some(Action::AllowAlways) => match first_always {
                Some(index) => self.confirm_always(index, context.now_ms),
                None => DialogOutcome::Keep,
            },
            Some(Action::Deny) => {
                self.selected = Some(last);
                self.ask_why(&head.worker)
            }
            Some(Action::PrevOption) => {
                self.selected = Some(match self.selected {
                    None | Some(0) => last,
                    Some(i) => i - 1,
                });
                DialogOutcome::Keep
            }
            Some(Action::NextOption) => {
                self.selected = Some(match self.selected {
                    None => 0,
                    Some(i) => (i + 1) % opts.len(),
                });
                DialogOutcome::Keep
            }
            // Enter chooses only an option the person moved to.
            Some(Action::Choose) => match self.selected.and_then(|i| opts.get(i)) {
                Some((_, Choice::Once)) => {
                    self.answer(context, sender, PermissionDecision::AllowOnce)
                }
                Some((_, Choice::Always { .. })) => {
                    let index = self.selected.unwrap_or(0);
                    self.confirm_always(index, context.now_ms)
                }
                Some((_, Choice::No)) => self.ask_why(&head.worker),
                None => DialogOutcome::Keep,
            },
            Some(Action::OpenRequester) => {
                sender.send(DialogAction::OpenTeammate(head.worker.clone()));
                DialogOutcome::Keep
            }
            Some(Action::Later) => DialogOutcome::Close,
            None if crate::ui::modal::is_text(key) => DialogOutcome::Decline,
            _ => DialogOutcome::Keep,
        }
    }
}

/// What the dialog shows of its own state.
#[derive(Default)]
struct View<'a> {
    selected: Option<usize>,
    feedback: Option<&'a FeedbackInput>,
    confirming: Option<usize>,
}
