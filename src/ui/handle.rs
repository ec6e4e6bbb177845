//! Input handling: terminal events to state changes and commands. Global keys first (Ctrl+C,
//! Ctrl+T, Ctrl+P), then the top dialog, then the focused part of the main screen (composer or
//! footer badge). Every binding is looked up in [`crate::ui::keymap`]. A dialog in its grace
//! period does not take the key (see [`crate::ui::modal::guard`]): the key is dropped and the
//! dialog says so, unless it is text the dialog has no use for: that goes to the composer (the
//! dialog steps back behind the banner), in its grace period too, and so does pasted text it
//! has no input for. Esc and a key typed right
//! after it, which a terminal sends as one Alt+key, are the two keys again. Every key reaches
//! the composer or an open dialog. A dialog reads a
//! [`crate::ui::modal::context::DialogContext`] of this state and sends [`DialogAction`]s,
//! which are applied here, in order, before its outcome.

use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEventKind};

use crate::lead::contract::{LeadCommand, TranscriptItem, ViewTarget};
use crate::ui::keymap::{Action, Context};
use crate::ui::modal::context::{DialogAction, DialogSender};
use crate::ui::modal::help::HelpDialog;
use crate::ui::modal::teams::TeamsDialog;
use crate::ui::modal::{DialogOutcome, Modal};
use crate::ui::state::{AppState, Focus, QuitState};

impl AppState {
    /// Handles one terminal event.
    pub fn handle_event(&mut self, event: Event) {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Paste(text) => self.paste(&text),
            Event::Resize(_, _) => self.dirty = true,
            Event::FocusGained => self.terminal_focus.set(true),
            Event::FocusLost => self.terminal_focus.set(false),
            Event::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => {
                    self.current_transcript().scroll_by(3);
                    self.dirty = true;
                }
                MouseEventKind::ScrollDown => {
                    self.current_transcript().scroll_by(-3);
                    self.dirty = true;
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Pasted text goes to the top dialog's text input (the feedback line: only Enter sends
    /// it, so its grace period does not matter), else to the composer: a guarded dialog at the
    /// composer without one has no use for text and steps back to waiting (as for typed
    /// text); other dialogs take no text.
    pub fn paste(&mut self, text: &str) {
        self.dirty = true;
        self.last_input_ms = Some(self.now_ms);
        if let Some(modal) = self.modals.pop() {
            if modal.has_input() {
                let mut modal = modal;
                modal.paste(text);
                return self.modals.push(modal);
            }
            if !self.steps_back(&modal) {
                return self.modals.push(modal);
            }
            self.step_back(modal);
        }
        self.focus = Focus::Composer;
        self.composer.insert_str(text);
        self.refresh_completion();
    }
    /// A terminal sends Esc and a key typed right after it as one sequence, which reads as
    /// Alt+key: `Esc` then `/quit` arrived as Alt+/ and `quit`, the `/` lost. An Alt+character
    /// that is no letter or digit, that no row of the keymap and no editing key of the
    /// composer (Alt+< > [ ]) uses, is taken as the two keys that were typed.
    fn split_escape(&self, key: &KeyEvent) -> Option<(KeyEvent, KeyEvent)> {
        use crossterm::event::{KeyCode, KeyModifiers};
        let KeyCode::Char(c) = key.code else {
            return None;
        };
        if key.modifiers - KeyModifiers::SHIFT != KeyModifiers::ALT
            || c.is_alphanumeric()
            || c.is_control()
            || "<>[]".contains(c)
            || self.keymap.binds(key)
        {
            return None;
        }
        let esc = KeyEvent::new_with_kind(KeyCode::Esc, KeyModifiers::NONE, key.kind);
        let typed = KeyEvent::new_with_kind(key.code, key.modifiers - KeyModifiers::ALT, key.kind);
        Some((esc, typed))
    }

    /// Whether `modal` (just taken off the top of the stack) steps back when text it has no
    /// use for is typed or pasted into it: approval dialogs and confirmations do.
    fn steps_back(&self, modal: &Modal) -> bool {
        modal.is_approval() || matches!(modal, Modal::Confirm(_))
    }

    /// A guarded dialog (taken off the stack) steps back because text was typed into it. An
    /// approval's request waits behind the banner again. A confirmation's text is for the
    /// composer: the dialogs it was opened from close too (an approval under it waits), and
    /// it waits behind the banner if it arrived by itself, else it closes with nothing done,
    /// and the transcript says so.
    fn step_back(&mut self, modal: Modal) {
        match modal {
            Modal::Confirm(question) => {
                if self.modals.iter().any(Modal::is_approval) {
                    self.approvals_waiting = true;
                }
                self.modals.clear();
                self.dialog_notice = None;
                if question.arrived {
                    self.park_question(question);
                } else {
                    let note = TranscriptItem::System {
                        text: format!(
                            "Not done: {} (what you typed went to the composer).",
                            question.title
                        ),
                    };
                    // Where the person looks: the view they are in.
                    self.current_transcript().push(&note, |_| None);
                }
                self.sync_dialogs();
            }
            _ => {
                self.approvals_waiting = true;
                self.sync_dialogs();
            }
        }
    }

    /// A key a dialog did not take because it is text the dialog has no use for: the dialog
    /// waits behind the banner again and the text is typed where it belongs.
    fn decline_to_composer(&mut self, modal: Modal, key: KeyEvent) {
        self.step_back(modal);
        self.focus = Focus::Composer;
        self.handle_composer(key)
    }

    /// Handles one key press.
    pub fn handle_key(&mut self, key: KeyEvent) {
        if let Some((esc, typed)) = self.split_escape(&key) {
            self.handle_key(esc);
            return self.handle_key(typed);
        }
        self.dirty = true;
        self.last_input_ms = Some(self.now_ms);
        match self.keymap.lookup(Context::Global, &key) {
            Some(Action::Quit) => return self.ctrl_c(),
            Some(Action::ToggleTasks) => {
                self.show_tasks = !self.show_tasks;
                return;
            }
            Some(Action::OpenApprovals) => return self.open_approvals(),
            Some(Action::NextWaiting) => return self.open_next_waiting(),
            _ => {}
        }
        if let QuitState::Armed { .. } = self.quit {
            self.quit = QuitState::Running;
        }
        if let Some(mut modal) = self.modals.pop() {
            let in_grace = modal.guard().is_some_and(|g| g.in_grace(self.now_ms));
            if in_grace {
                // Not an answer: the dialog is newer than the key's intent. Text it has no
                // use for was meant for the composer, as after the grace period (a command
                // typed as the dialog shows up); any other key is dropped, and the dialog says
                // so, so it never becomes message text either.
                if self.steps_back(&modal) && modal.declines(&key, &self.dialog_context()) {
                    return self.decline_to_composer(modal, key);
                }
                let what = modal.what_it_asks();
                if let Some(guard) = modal.guard_mut() {
                    guard.ignore(&key, what);
                }
                self.modals.push(modal);
                return;
            }
            if let Some(guard) = modal.guard_mut() {
                guard.used();
            }
            if matches!(modal, Modal::Teams(_) | Modal::Review(_) | Modal::Merges(_)) {
                // A new key: what the lead says next answers it.
                self.dialog_notice = None;
            }
            let mut sender = DialogSender::default();
            let outcome = modal.handle(&key, &self.dialog_context(), &mut sender);
            for action in sender.take() {
                self.apply_dialog_action(action);
            }
            match outcome {
                DialogOutcome::Keep => self.modals.push(modal),
                DialogOutcome::Close => {
                    let answered_all = match &modal {
                        Modal::Permission(_) => self.permissions.is_empty(),
                        Modal::Plan(_) => self.plans.is_empty(),
                        _ => false,
                    };
                    if answered_all {
                        self.unshown_requests_wait();
                    }
                }
                DialogOutcome::Push(top) => {
                    self.modals.push(modal);
                    self.modals.push(*top);
                }
                DialogOutcome::Decline => {
                    if self.steps_back(&modal) {
                        return self.decline_to_composer(modal, key);
                    }
                    self.modals.push(modal);
                }
            }
            self.sync_dialogs();
            return;
        }
        match self.focus {
            Focus::Badge => self.handle_badge(key),
            Focus::Composer => self.handle_composer(key),
        }
    }

    /// Does what a dialog asked.
    fn apply_dialog_action(&mut self, action: DialogAction) {
        match action {
            DialogAction::Command(command) => self.send(command),
            DialogAction::AnswerPermission { key, decision } => {
                if self.permissions.head().is_some_and(|h| h.key == key)
                    && let Some(head) = self.permissions.take_head()
                {
                    self.send(LeadCommand::AnswerPermission {
                        key: head.key,
                        decision,
                    });
                }
            }
            DialogAction::AnswerPlan {
                request_id,
                decision,
            } => {
                if self
                    .plans
                    .head()
                    .is_some_and(|h| h.request_id == request_id)
                    && let Some(head) = self.plans.take_head()
                {
                    self.send(LeadCommand::AnswerPlan {
                        request_id: head.request_id,
                        decision,
                    });
                }
            }
            DialogAction::OpenTeammate(name) => {
                self.open_teammate(&name);
            }
        }
    }

    /// Ctrl+C: arm (and clear the composer), then quit, then force.
    fn ctrl_c(&mut self) {
        match self.quit {
            QuitState::Running => {
                self.composer.clear();
                self.quit = QuitState::Armed { at_ms: self.now_ms };
            }
            QuitState::Armed { .. } => {
                self.send(LeadCommand::Quit);
                self.quit = QuitState::Requested;
            }
            QuitState::Requested => self.exit = true,
        }
    }

    fn handle_badge(&mut self, key: KeyEvent) {
        match self.keymap.lookup(Context::Badge, &key) {
            Some(Action::OpenTeams) => {
                // The dialog has the keyboard; when it closes, the composer has it again.
                self.focus = Focus::Composer;
                self.dialog_notice = None;
                self.modals.push(Modal::Teams(TeamsDialog::new()));
            }
            Some(Action::BackToComposer) => self.focus = Focus::Composer,
            _ => {
                // Typing goes back to the composer.
                self.focus = Focus::Composer;
                self.handle_composer(key);
            }
        }
    }

    fn refresh_completion(&mut self) {
        let names: Vec<(String, Option<String>)> = self
            .team
            .iter()
            .map(|t| (t.name.clone(), t.color.clone()))
            .collect();
        self.composer
            .refresh_completion(self.slash_commands, &names);
    }

    fn handle_composer(&mut self, key: KeyEvent) {
        if self.composer.completion().is_some() {
            let handled = match self.keymap.lookup(Context::Completion, &key) {
                Some(Action::Complete) => {
                    self.composer.accept_completion();
                    true
                }
                Some(Action::CompletionUp) => {
                    self.composer.completion_mut().map(|c| c.up()).is_some()
                }
                Some(Action::CompletionDown) => {
                    self.composer.completion_mut().map(|c| c.down()).is_some()
                }
                Some(Action::CloseCompletion) => {
                    self.composer.dismiss_completion();
                    return;
                }
                _ => false,
            };
            if handled {
                self.refresh_completion();
                return;
            }
        }
        match self.keymap.lookup(Context::Composer, &key) {
            Some(Action::Submit) => {
                if self.composer.completion().is_some_and(|c| !c.is_exact()) {
                    self.composer.accept_completion();
                } else {
                    self.submit();
                }
            }
            Some(Action::Steer) => self.steer(),
            Some(Action::Newline) => self.composer.newline(),
            Some(Action::ClearLine) => self.composer.clear_line(),
            Some(Action::CycleMode) => match &self.view {
                ViewTarget::Lead => self.send(LeadCommand::CycleLeadMode),
                ViewTarget::Teammate(name) => {
                    let name = name.clone();
                    if let Some(confirm) = self.cycle_teammate_mode(&name) {
                        self.modals.push(confirm);
                    }
                }
            },
            Some(Action::NextView) => self.cycle_view(1),
            Some(Action::PrevView) => self.cycle_view(-1),
            Some(Action::PageUp) => self.current_transcript().page_up(),
            Some(Action::PageDown) => self.current_transcript().page_down(),
            Some(Action::SelectBadge) if self.composer.is_empty() => {
                self.focus = Focus::Badge;
            }
            Some(Action::Help) if self.composer.is_empty() => {
                self.modals.push(Modal::Help(HelpDialog::default()));
            }
            Some(Action::Interrupt) => match &self.view {
                ViewTarget::Teammate(name) => {
                    let name = name.clone();
                    self.send(LeadCommand::InterruptTeammate { name });
                }
                ViewTarget::Lead if self.busy => self.send(LeadCommand::InterruptLead),
                ViewTarget::Lead => {}
            },
            _ => self.composer.input(key),
        }
        self.refresh_completion();
    }

    /// Sends the composer's text to the current view's target.
    fn submit(&mut self) {
        let text = self.composer.text();
        let text = text.trim_end();
        if text.trim().is_empty() {
            return;
        }
        let text = text.to_string();
        self.composer.clear();
        if is_slash_command(&text) {
            // A slash command is the lead's from any view: its outcome shows in the lead's.
            self.view = ViewTarget::Lead;
        }
        self.current_transcript().follow();
        let target = self.view.clone();
        self.note_submitted(&target, &text);
        self.note_merge_asked(&text);
        self.send(LeadCommand::Submit {
            target: self.view.clone(),
            text,
        });
    }
}

impl AppState {
    /// The steer key: the composer's `@name text` (or the text, in a teammate's view) as
    /// `/steer`: the teammate's turn stops and the message goes in at once. Text for nobody in
    /// particular stays in the composer, with a note saying how.
    fn steer(&mut self) {
        let text = self.composer.text();
        let Some(line) = steer_line(&self.view, &text) else {
            if !text.trim().is_empty() {
                let key = self.keymap.key_label(Context::Composer, Action::Steer);
                let note = TranscriptItem::System {
                    text: format!(
                        "To steer a teammate, start the line with @name (or open its view), \
                         then press {key}."
                    ),
                };
                self.transcript.push(&note, |_| None);
            }
            return;
        };
        self.composer.set_text(&line);
        self.submit();
    }
}

/// The `/steer` line for composer `text` in `view` (read as the composer's Enter reads it),
/// or `None` when it names no teammate.
fn steer_line(view: &ViewTarget, text: &str) -> Option<String> {
    use crate::lead::commands::{Input, SlashCommand, parse_input};
    match parse_input(text) {
        Ok(Input::Slash(SlashCommand::Steer { .. })) => Some(text.trim().to_string()),
        Ok(Input::Mention { to, text }) if !text.trim().is_empty() => {
            Some(format!("/steer @{to} {}", text.trim()))
        }
        Ok(Input::Plain(text)) => match view {
            ViewTarget::Teammate(name) => Some(format!("/steer @{name} {}", text.trim())),
            ViewTarget::Lead => None,
        },
        _ => None,
    }
}

/// Whether composer text is a slash command (run by the lead whatever the view).
pub(crate) fn is_slash_command(text: &str) -> bool {
    text.trim_start().starts_with('/')
}
