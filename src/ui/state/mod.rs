//! The UI's whole state and how controller events change it: transcripts (main and per
//! in-process teammate), the team, the permission and plan queues, tasks, the lead's mode and
//! backend, the modal stack, the composer, focus and the current view. Commands for the
//! controller are collected in an outbox the app loop sends.

pub mod approvals;
pub mod local_queue;
mod review_events;
pub mod waiting;

use std::collections::HashMap;

use crate::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PendingPlan, TaskView, TeammateView, TranscriptItem,
    UsageView, ViewTarget,
};
use crate::protocol::PermissionMode;
use crate::ui::colors::ColorMode;
use crate::ui::composer::Composer;
use crate::ui::keymap::Keymap;
use crate::ui::modal::Modal;
use crate::ui::modal::context::{DialogContext, QueueHead};
use crate::ui::transcript::Transcript;

use local_queue::LocalQueue;

/// Which part of the main screen has the keyboard when no dialog is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    Composer,
    /// The footer's team badge.
    Badge,
}

/// Where quitting stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuitState {
    Running,
    /// Ctrl+C pressed once; at this time (ms).
    Armed {
        at_ms: u64,
    },
    /// Quit sent; waiting for the controller to finish.
    Requested,
}

/// The most entries the main transcript keeps (the oldest go first).
pub const MAIN_TRANSCRIPT_ENTRIES: usize = 20_000;
/// The most entries an in-process teammate's inline view keeps.
pub const TEAMMATE_TRANSCRIPT_ENTRIES: usize = 2_000;

/// How long a first Ctrl+C waits for the second.
pub const QUIT_ARM_MS: u64 = 2_000;

/// Everything the screen shows.
pub struct AppState {
    pub team_name: String,
    pub backend: String,
    pub lead_mode: PermissionMode,
    pub busy: bool,
    /// What the lead model has used (none without one).
    pub lead_usage: Option<UsageView>,
    pub transcript: Transcript,
    /// In-process teammates' own transcripts, by name.
    pub inline: HashMap<String, Transcript>,
    pub team: Vec<TeammateView>,
    pub permissions: LocalQueue<PendingPermission>,
    pub plans: LocalQueue<PendingPlan>,
    pub tasks: Vec<TaskView>,
    /// Dialogs, bottom first; the last one has the keyboard.
    pub modals: Vec<Modal>,
    pub composer: Composer,
    pub focus: Focus,
    pub view: ViewTarget,
    pub show_tasks: bool,
    /// The wall clock, epoch ms (the app loop updates it; tests set it).
    pub now_ms: u64,
    /// When the last key or paste arrived (epoch ms), if any did.
    pub last_input_ms: Option<u64>,
    /// A request arrived that has not had the keyboard yet: the banner says so until it takes
    /// focus (see [`crate::ui::modal::guard`] for when).
    pub approvals_waiting: bool,
    /// Confirmations waiting behind the banner, oldest first: one that arrived by itself (the
    /// offer to retire a merged worktree) or stepped back because text was typed into it. They
    /// get the keyboard as waiting requests do, after them.
    pub questions: Vec<crate::ui::modal::confirm::ConfirmDialog>,
    pub quit: QuitState,
    /// Set when the UI should leave its loop.
    pub exit: bool,
    /// A program that wants the terminal (a jump to a pane of the private tmux server): the
    /// loop returns, the caller runs it, then resumes the loop.
    pub hand_over: Option<crate::lead::contract::HandOver>,
    /// Something changed since the last draw.
    pub dirty: bool,
    /// Frames drawn so far (the app loop counts them).
    pub frames: u64,
    /// `/` commands and their one-line help, for completion.
    pub slash_commands: &'static [(&'static str, &'static str)],
    /// The keys (the default table, or with the config file's keys).
    pub keymap: Keymap,
    /// How much colour the screen gets.
    pub colors: ColorMode,
    /// Whether the terminal window has the focus (as it reports it).
    pub terminal_focus: crate::ui::focus::TerminalFocus,
    /// Teammates whose messages the person has not answered, oldest first (see
    /// [`waiting`]).
    pub unanswered: Vec<String>,
    /// The teammate Ctrl+N opened last.
    pub last_waiting: Option<String>,
    /// The lead's last note since the teams dialog's last key: the dialog covers the
    /// transcript, so it shows the answer to what it did there (a jump, hide/show).
    pub dialog_notice: Option<String>,
    /// What the screen prints on the terminal once it has closed (the teammate worktrees a
    /// `/quit` kept or removed), so it stays there.
    pub farewell: Vec<String>,
    /// The teammate whose `/merge` was typed here last (its outcome offers to retire it).
    pub merge_asked: Option<String>,
    /// What this screen asked to see (`/review NAME`, `/merges`, typed or from a dialog): only
    /// the screen that asked opens the dialog (every attached screen gets the events).
    asked: review_events::Asked,
    outbox: Vec<LeadCommand>,
}

impl Default for AppState {
    fn default() -> Self {
        AppState::new()
    }
}

impl AppState {
    pub fn new() -> AppState {
        AppState {
            team_name: String::new(),
            backend: String::new(),
            lead_mode: PermissionMode::Default,
            busy: false,
            lead_usage: None,
            transcript: Transcript::with_limit(MAIN_TRANSCRIPT_ENTRIES),
            inline: HashMap::new(),
            team: Vec::new(),
            permissions: LocalQueue::default(),
            plans: LocalQueue::default(),
            tasks: Vec::new(),
            modals: Vec::new(),
            composer: Composer::new(),
            focus: Focus::Composer,
            view: ViewTarget::Lead,
            show_tasks: false,
            now_ms: 0,
            last_input_ms: None,
            approvals_waiting: false,
            questions: Vec::new(),
            quit: QuitState::Running,
            exit: false,
            hand_over: None,
            dirty: true,
            frames: 0,
            slash_commands: crate::ui::slash_commands(),
            keymap: Keymap::default(),
            colors: ColorMode::Full,
            terminal_focus: crate::ui::focus::TerminalFocus::default(),
            unanswered: Vec::new(),
            last_waiting: None,
            dialog_notice: None,
            farewell: Vec::new(),
            merge_asked: None,
            asked: Default::default(),
            outbox: Vec::new(),
        }
    }

    /// Queues a command for the controller.
    pub fn send(&mut self, command: LeadCommand) {
        self.asked.note(&command);
        self.outbox.push(command);
    }

    /// Takes the queued commands (oldest first).
    pub fn take_commands(&mut self) -> Vec<LeadCommand> {
        std::mem::take(&mut self.outbox)
    }

    /// What the dialogs may read of this state, for one key or one frame.
    pub fn dialog_context(&self) -> DialogContext<'_> {
        DialogContext {
            keymap: &self.keymap,
            now_ms: self.now_ms,
            team_name: &self.team_name,
            team: &self.team,
            permissions: self.permissions.head().map(|head| QueueHead {
                head,
                queued: self.permissions.len(),
            }),
            plans: self.plans.head().map(|head| QueueHead {
                head,
                queued: self.plans.len(),
            }),
            approvals: self.approvals_pending(),
            notice: self.dialog_notice.as_deref(),
        }
    }

    /// A teammate by name.
    pub fn teammate(&self, name: &str) -> Option<&TeammateView> {
        self.team.iter().find(|t| t.name == name)
    }

    /// A teammate's palette color name.
    pub fn color_of(&self, name: &str) -> Option<String> {
        self.teammate(name).and_then(|t| t.color.clone())
    }

    /// Whether a teammate runs in this process (and so has an inline view).
    pub fn is_in_process(&self, name: &str) -> bool {
        self.teammate(name).is_some_and(|t| t.in_process())
    }

    /// The views Shift+↓/↑ cycles through: the lead, then each in-process teammate.
    pub fn views(&self) -> Vec<ViewTarget> {
        std::iter::once(ViewTarget::Lead)
            .chain(
                self.team
                    .iter()
                    .filter(|t| t.in_process())
                    .map(|t| ViewTarget::Teammate(t.name.clone())),
            )
            .collect()
    }

    /// Moves to the next (`+1`) or previous (`-1`) view.
    pub fn cycle_view(&mut self, step: isize) {
        let views = self.views();
        let at = views.iter().position(|v| *v == self.view).unwrap_or(0);
        let n = views.len() as isize;
        let next = (at as isize + step).rem_euclid(n) as usize;
        self.view = views[next].clone();
    }

    /// The transcript of the current view.
    pub fn current_transcript(&mut self) -> &mut Transcript {
        match &self.view {
            ViewTarget::Lead => &mut self.transcript,
            ViewTarget::Teammate(name) => self
                .inline
                .entry(name.clone())
                .or_insert_with(|| Transcript::with_limit(TEAMMATE_TRANSCRIPT_ENTRIES)),
        }
    }

    /// Applies one controller event.
    pub fn apply(&mut self, event: LeadEvent) {
        self.dirty = true;
        match event {
            LeadEvent::Started {
                team,
                backend,
                lead_mode,
            } => {
                self.team_name = team;
                self.backend = backend.to_string();
                self.lead_mode = lead_mode;
            }
            LeadEvent::Transcript(item) => {
                if let TranscriptItem::Teammate { from, .. } = &item {
                    self.note_message_from(from);
                }
                if let TranscriptItem::System { text } = &item
                    && matches!(
                        self.modals.last(),
                        Some(Modal::Teams(_) | Modal::Review(_) | Modal::Merges(_))
                    )
                {
                    // The dialog hides the transcript: it shows the lead's answer itself.
                    self.dialog_notice = Some(text.clone());
                }
                let team = &self.team;
                self.transcript.push(&item, |name| {
                    team.iter()
                        .find(|t| t.name == name)
                        .and_then(|t| t.color.clone())
                });
            }
            LeadEvent::Receipt { id, state, .. } => self.transcript.set_receipt(id, state),
            LeadEvent::TeammateTranscript { name, item } => {
                let team = &self.team;
                let view = self
                    .inline
                    .entry(name)
                    .or_insert_with(|| Transcript::with_limit(TEAMMATE_TRANSCRIPT_ENTRIES));
                view.push(&item, |name| {
                    team.iter()
                        .find(|t| t.name == name)
                        .and_then(|t| t.color.clone())
                });
            }
            LeadEvent::LeadMode(mode) => self.lead_mode = mode,
            LeadEvent::Team(team) => {
                self.team = team;
                if let ViewTarget::Teammate(name) = &self.view
                    && !self.is_in_process(name)
                {
                    self.view = ViewTarget::Lead;
                }
            }
            LeadEvent::Permissions(queue) => {
                let fresh = self.permissions.replace(queue);
                self.queues_changed(fresh, false);
            }
            LeadEvent::Plans(queue) => {
                let fresh = self.plans.replace(queue);
                self.queues_changed(false, fresh);
            }
            LeadEvent::Tasks(tasks) => self.tasks = tasks,
            LeadEvent::Busy(busy) => self.busy = busy,
            LeadEvent::LeadUsage(usage) => self.lead_usage = Some(usage),
            LeadEvent::Exited => self.exit = true,
            // A command-line client's marker: nothing to show.
            LeadEvent::Barrier { .. } => self.dirty = false,
            LeadEvent::Review(summary) => {
                if !self.asked.take_review(&summary.name) {
                    return;
                }
                let dialog = crate::ui::modal::review::ReviewDialog::new(summary);
                self.modals
                    .retain(|m| !matches!(m, Modal::Review(d) if d.name() == dialog.name()));
                if let Some(ask) = dialog.first_request() {
                    self.send(ask);
                }
                self.modals.push(Modal::Review(Box::new(dialog)));
            }
            LeadEvent::ReviewFile { name, diff } => {
                for modal in &mut self.modals {
                    if let Modal::Review(d) = modal
                        && d.name() == name
                    {
                        d.set_diff(diff.clone());
                    }
                }
            }
            event @ (LeadEvent::ReviewPr { .. }
            | LeadEvent::MergeQueue(_)
            | LeadEvent::Merged(_)
            | LeadEvent::WorktreesAtQuit(_)) => self.apply_review_event(event),
            LeadEvent::HandOverTerminal(hand_over) => {
                self.hand_over = Some(hand_over);
                self.exit = true;
            }
        }
    }

    /// The terminal is back after a hand-over: the dialogs on screen are seen anew (some may
    /// have opened meanwhile), so each gets its grace period again.
    pub fn back_from_elsewhere(&mut self) {
        let now = self.now_ms;
        for modal in &mut self.modals {
            if let Some(guard) = modal.guard_mut() {
                guard.restart(now);
            }
        }
        self.dirty = true;
    }

    /// Switches to a teammate's inline view (in-process) — true — or asks the controller to
    /// jump to its pane — false.
    pub fn open_teammate(&mut self, name: &str) -> bool {
        self.answered(name);
        if self.is_in_process(name) {
            self.view = ViewTarget::Teammate(name.to_string());
            true
        } else {
            self.send(LeadCommand::Jump {
                name: name.to_string(),
            });
            false
        }
    }

    /// The clock moved: expire a lone Ctrl+C; give a waiting request the keyboard once typing
    /// has stopped; redraw when time is on screen.
    pub fn tick(&mut self, now_ms: u64) {
        let new_second = now_ms / 1000 != self.now_ms / 1000;
        self.now_ms = now_ms;
        self.focus_waiting_approvals();
        if let QuitState::Armed { at_ms } = self.quit
            && now_ms.saturating_sub(at_ms) >= QUIT_ARM_MS
        {
            self.quit = QuitState::Running;
            self.dirty = true;
        }
        // Idle times and the lead model's spinner move with the clock.
        let idle_shown = self.busy
            || matches!(self.view, ViewTarget::Teammate(_))
            || self.modals.iter().any(|m| matches!(m, Modal::Teams(_)));
        if idle_shown && new_second {
            self.dirty = true;
        }
    }
}
