//! The contract between the lead controller and the UI: what the UI may ask for
//! ([`LeadCommand`]) and what it is told ([`LeadEvent`]), with the plain data it renders. The
//! transcript arrives as appended items (it can be long); the team, the queues and the tasks
//! arrive as whole snapshots (they are small), built by [`super::view_builder`]. Every type is
//! serde: a lead server carries the same contract over its socket (`crate::server`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::{BackendKind, PermissionMode, PermissionUpdate};

/// What a teammate is doing, as the footer badge and the teams dialog show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum TeammateStatus {
    Working,
    /// Waiting for the lead to answer a permission or plan request.
    WaitingForApproval,
    /// A `claude` teammate whose pane waits on its client's own prompt (the bypass-permissions
    /// warning, the folder-trust dialog, …), which only a person at that pane can answer
    /// (`lead::client_prompt`): `title` is the prompt's first line, `choices` its choices.
    OnClientPrompt {
        title: String,
        choices: Vec<String>,
    },
    /// Idle since this epoch-ms time.
    Idle {
        since_ms: u64,
    },
    /// Asked to shut down at this epoch-ms time, and not gone yet.
    ShuttingDown {
        since_ms: u64,
    },
    Gone,
    /// It runs on `host`, whose link has been down since this epoch-ms time: it is not known
    /// to be dead or idle, and nothing is done to it until the link returns.
    Unreachable {
        host: String,
        since_ms: u64,
    },
    /// Its runtime ended without shutting down: `exited (127: claude not found)`,
    /// `crashed (…)`, `closed`, or why it did not survive its previous lead.
    Stopped {
        how: String,
    },
}

/// One teammate, everything the list and detail views show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TeammateView {
    pub name: String,
    pub agent_id: String,
    /// Palette color name (`blue`), if any.
    pub color: Option<String>,
    pub status: TeammateStatus,
    pub mode: PermissionMode,
    /// Where it runs (`None`: a backend this version does not know).
    pub backend: Option<BackendKind>,
    pub pane_id: String,
    /// The host it runs on (`None`: the lead's): shown `name · host`.
    #[serde(default)]
    pub host: Option<String>,
    pub hidden: bool,
    pub model: Option<String>,
    pub cwd: String,
    pub worktree: Option<String>,
    pub prompt: Option<String>,
    pub plan_mode_required: bool,
    /// The task it is working on: (id, subject).
    pub current_task: Option<(String, String)>,
    /// Every task it owns: (id, subject, status).
    pub owned_tasks: Vec<(String, String, String)>,
    /// The last few messages it sent, as one-liners.
    pub recent_messages: Vec<String>,
    /// What its model used so far; `None` when nothing (a `shell` teammate, a pane teammate
    /// whose meter lives in another process).
    pub usage: Option<UsageView>,
    /// A mode the lead asked for that the teammate has not confirmed (a `claude` teammate's
    /// mode is the one it reports in `config.json`): shown as `acceptEdits (default requested)`.
    #[serde(default)]
    pub mode_requested: Option<PermissionMode>,
    /// Until when (epoch ms) it is rate- or usage-limited (a `claude` teammate whose
    /// transcript recorded the limit; `None` once the time has passed or an answer came).
    #[serde(default)]
    pub rate_limited_until: Option<u64>,
    /// Parked at a usage limit (`lead::park`): what the lead sends it waits until it is
    /// resumed.
    #[serde(default)]
    pub parked: Option<ParkedView>,
    /// Its newest messages from the lead with their receipts, newest first.
    #[serde(default)]
    pub messages: Vec<MessageReceipt>,
    /// Since when (epoch ms) it has left a message unread while busy, once that is longer
    /// than the ledger's threshold (`lead::ledger::UNREAD_FLAG_MS`).
    #[serde(default)]
    pub unread_since: Option<u64>,
    /// Why it is paused by a budget (`over its budget ($5.02 of $5.00)`), if it is.
    #[serde(default)]
    pub over_budget: Option<String>,
    /// Its budget in force (its own, else every teammate's), micro-dollars; `None`: none.
    #[serde(default)]
    pub budget_micros: Option<u64>,
    /// It runs no model (a shell teammate): it costs nothing.
    #[serde(default)]
    pub costs_nothing: bool,
}

/// A teammate parked at a usage limit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedView {
    /// When the limit resets (epoch ms).
    pub reset_ms: u64,
    /// When it is resumed (epoch ms); `None`: not by itself (past the cut-off).
    pub resume_at_ms: Option<u64>,
    /// How many messages and assignments wait for it.
    pub held: usize,
}

/// One message the lead sent, and how far it got (`lead::ledger`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageReceipt {
    pub id: u64,
    /// Its first characters.
    pub preview: String,
    pub state: crate::lead::ledger::Receipt,
    /// When it was sent, and when it reached its state (epoch ms).
    pub sent_ms: u64,
    pub since_ms: u64,
}

impl TeammateView {
    /// Its name as shown: `name · host` for a teammate on another host.
    pub fn shown_name(&self) -> String {
        match &self.host {
            Some(host) => format!("{} · {host}", self.name),
            None => self.name.clone(),
        }
    }

    /// The mode as shown: the one in force, and a requested one it has not confirmed.
    pub fn mode_label(&self) -> String {
        match self.mode_requested {
            Some(requested) if requested != self.mode => {
                format!("{} ({requested} requested)", self.mode)
            }
            _ => self.mode.to_string(),
        }
    }

    /// Its backend as shown (`tmux`, `iterm2`, `in-process`, or `unknown`).
    pub fn backend_label(&self) -> &'static str {
        self.backend.map_or("unknown", BackendKind::as_str)
    }

    /// Does it run in the lead's own process (and so have an inline view)?
    pub fn in_process(&self) -> bool {
        self.backend == Some(BackendKind::InProcess)
    }
}

/// What a model used: a teammate's, or the lead model's.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageView {
    /// Input tokens, cache reads and writes included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub tool_uses: u64,
    pub turns: u64,
    /// What its priced usage cost in micro-dollars (`protocol::pricing`, each message by its
    /// own model and tier when they are known); `None` when nothing it used has a price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micros: Option<u64>,
    /// Of the input tokens: cache reads, 5-minute and 1-hour cache writes.
    #[serde(default)]
    pub cache_read_tokens: u64,
    #[serde(default)]
    pub cache_write_5m_tokens: u64,
    #[serde(default)]
    pub cache_write_1h_tokens: u64,
    /// The models it used that have no price: their tokens are not in `cost_micros`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unpriced_models: Vec<String>,
}

impl UsageView {
    /// Input and output tokens.
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// Where a permission request came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PermissionSource {
    /// An in-process teammate through the leader permission bridge.
    Bridge,
    /// A pane teammate through a `permission_request` frame in the lead's inbox.
    Inbox,
}

/// One queued tool-use confirmation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingPermission {
    /// Queue-unique key used to answer.
    pub key: u64,
    pub request_id: String,
    pub worker: String,
    pub color: Option<String>,
    pub tool_name: String,
    pub description: String,
    pub input: Value,
    /// Rules the teammate suggested (from `permission_suggestions`).
    pub suggestions: Vec<PermissionUpdate>,
    pub source: PermissionSource,
    /// Set when `input` is only the head of a larger input (`lead::shown`): its full size and
    /// the file that holds it whole. An answer still binds to the whole input (its digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_part: Option<crate::lead::shown::InPart>,
    /// The host the teammate runs on when it is not the lead's (shown `@name · host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The human's answer to one permission request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PermissionDecision {
    AllowOnce,
    /// Allow and add these rules (a suggestion, or "always allow this tool for this teammate").
    AllowAlways(Vec<PermissionUpdate>),
    Deny {
        feedback: Option<String>,
    },
}

/// One plan waiting for approval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingPlan {
    pub request_id: String,
    pub from: String,
    pub color: Option<String>,
    pub plan: String,
    /// Set when `plan` is only the head of a larger plan (`lead::shown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_part: Option<crate::lead::shown::InPart>,
    /// The host the teammate runs on when it is not the lead's (shown `@name · host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

/// The human's answer to a plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum PlanDecision {
    Approve { mode: PermissionMode },
    Reject { feedback: String },
}

/// One task, as the task list and the footer show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    pub id: String,
    pub subject: String,
    /// `pending`, `in_progress`, `completed`.
    pub status: String,
    pub owner: Option<String>,
    /// Blockers not yet completed.
    pub blocked_by: Vec<String>,
    pub internal: bool,
}

/// One line (or block) of the transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum TranscriptItem {
    /// What the user typed.
    User { text: String },
    /// A command `teamlead ctl` sent (a script's, not typed on any screen).
    Ctl { text: String },
    /// What the user sent to a teammate (`@name text`, `/msg`, `/broadcast`).
    ToTeammate {
        to: String,
        text: String,
        /// Its id in the lead's message ledger, when its receipts are followed
        /// ([`LeadEvent::Receipt`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        receipt: Option<u64>,
    },
    /// The lead model's answer (when there is one).
    Lead { text: String },
    /// A plain message from a teammate: a synthetic turn.
    Teammate {
        from: String,
        color: Option<String>,
        summary: Option<String>,
        text: String,
    },
    /// A protocol frame, as a readable one-liner (never raw JSON).
    Frame {
        from: String,
        color: Option<String>,
        line: String,
    },
    /// A note from teamlead itself (errors, shutdowns, help).
    System { text: String },
}

/// Which conversation the composer talks to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ViewTarget {
    Lead,
    /// An in-process teammate's inline view.
    Teammate(String),
}

/// A program that gets the terminal for a while (a jump to a pane on a private server).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandOver {
    pub argv: Vec<String>,
    /// How to come back to the lead (`detach with ctrl+b d to come back to the lead`), said
    /// before the terminal is handed over.
    #[serde(default)]
    pub back: String,
    /// The program itself shows the way back while it runs (tmux's status line); otherwise
    /// the screen asks for Enter first, so it is read before the program covers it.
    #[serde(default)]
    pub shown_inside: bool,
}

/// What the UI asks the controller to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LeadCommand {
    /// Composer text submitted in a view (slash commands, `@name text`, plain text).
    Submit {
        target: ViewTarget,
        text: String,
    },
    /// Shift+Tab in the main view.
    CycleLeadMode,
    /// Shift+Tab in the teams dialog list: all equal → next, mixed → default.
    CycleAllModes,
    /// Shift+Tab in a teammate's detail view.
    CycleTeammateMode {
        name: String,
    },
    SetTeammateMode {
        name: String,
        mode: PermissionMode,
    },
    Shutdown {
        name: String,
    },
    Kill {
        name: String,
    },
    /// Prune, as confirmed in the teams dialog: ask `shut_down` to shut down, and remove
    /// `remove` (teammates that exited or stopped) from the team.
    Prune {
        shut_down: Vec<String>,
        remove: Vec<String>,
    },
    ToggleHidden {
        name: String,
    },
    /// Jump to a teammate's pane (pane backends) — in-process jumps are UI-only.
    Jump {
        name: String,
    },
    AnswerPermission {
        key: u64,
        decision: PermissionDecision,
    },
    AnswerPlan {
        request_id: String,
        decision: PlanDecision,
    },
    /// Esc in a teammate's view: stop only its current turn.
    InterruptTeammate {
        name: String,
    },
    /// Esc in the lead's view while the lead model is mid-turn: stop that turn.
    InterruptLead,
    /// Graceful quit (what `/quit` does).
    Quit,
    /// Leave with the team kept for the next lead (`/quit --keep`).
    Detach,
    /// The screen went away (a hang-up, SIGTERM, SIGINT): a lead that lives in the UI's own
    /// process quits; a lead server forgets this screen and keeps running.
    ScreenClosed,
    /// `command`, sent by the caller of the barrier `token` (`teamlead ctl`): that barrier says
    /// whether it was refused, and no other command's refusal (a screen's) is charged to it.
    Tracked {
        token: u64,
        command: Box<LeadCommand>,
    },
    /// Answered by [`LeadEvent::Barrier`] with the same token once every command sent before
    /// it has been carried out (how `teamlead ctl` knows a command's outcome is complete).
    Barrier {
        token: u64,
    },
    /// The diff of one file of a teammate's review (answered by [`LeadEvent::ReviewFile`]).
    ReviewFile {
        name: String,
        path: String,
    },
    /// A comment on a line or hunk of a teammate's review: sent to it as a message (the path
    /// `/msg` takes, so it is echoed and tracked like one).
    ReviewComment {
        name: String,
        comment: Box<crate::lead::review::ReviewComment>,
    },
    /// A line for the lead's transcript from a client that acts for the person (the web view's
    /// audit line: `answered from the web (10.0.0.7)`), shown as teamlead's own note.
    Note {
        text: String,
    },
    /// Remove a merged teammate's worktree and branch (the screen's offer after a merge): a
    /// teammate that still runs is stopped first; kept when anything was added since.
    RetireWorktree {
        name: String,
    },
}

impl LeadCommand {
    /// The command itself, unwrapped from [`LeadCommand::Tracked`].
    pub fn inner(&self) -> &LeadCommand {
        match self {
            LeadCommand::Tracked { command, .. } => command.inner(),
            other => other,
        }
    }
}

/// What the controller tells the UI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum LeadEvent {
    /// The team name, the backend label and the lead's mode, once at start.
    Started {
        team: String,
        backend: BackendKind,
        lead_mode: PermissionMode,
    },
    /// Appended to the main transcript.
    Transcript(TranscriptItem),
    /// A message sent to a teammate got further (`lead::ledger`): the transcript's
    /// `ToTeammate` with this `receipt` id shows it.
    Receipt {
        id: u64,
        to: String,
        state: crate::lead::ledger::Receipt,
        at_ms: u64,
    },
    /// Appended to an in-process teammate's inline view.
    TeammateTranscript {
        name: String,
        item: TranscriptItem,
    },
    LeadMode(PermissionMode),
    Team(Vec<TeammateView>),
    Permissions(Vec<PendingPermission>),
    Plans(Vec<PendingPlan>),
    Tasks(Vec<TaskView>),
    /// The lead model is mid-turn (or not); the UI shows a spinner.
    Busy(bool),
    /// What the lead model has used so far (sent when it changes).
    LeadUsage(UsageView),
    /// Give the terminal to a program until it ends (attaching to the teammates' private tmux
    /// server or Zellij session on a jump); the UI says how to come back, leaves its screen,
    /// waits, then redraws.
    HandOverTerminal(HandOver),
    /// The controller has finished (after `/quit`); the UI exits.
    Exited,
    /// Every command sent before [`LeadCommand::Barrier`] `token` is done; `refused` says
    /// whether any of them was refused or failed (a bad command, an unknown teammate, an
    /// operation that did not happen).
    Barrier {
        token: u64,
        refused: bool,
    },
    /// What a teammate changed (`/review NAME`): the screen opens its review.
    Review(crate::lead::review::ReviewSummary),
    /// One file's diff of a teammate's review.
    ReviewFile {
        name: String,
        diff: crate::lead::review::FileDiff,
    },
    /// The pull request of a reviewed teammate's branch (`gh`), after its review.
    ReviewPr {
        name: String,
        pr: crate::lead::review::PrState,
    },
    /// The merge queue (`/merges` opens it; later ones update an open one).
    MergeQueue(crate::lead::review::MergeQueue),
    /// A teammate's branch was merged into the lead's (the screen offers to retire it).
    Merged(crate::lead::review::Merged),
    /// The teammate worktrees kept or removed at quit (the screen prints them after it
    /// closes, so they stay on the terminal).
    WorktreesAtQuit(crate::lead::review::WorktreeReport),
}
