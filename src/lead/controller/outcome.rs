//! Typed results of the team operations the slash commands and the lead model share (spawn,
//! respawn, tasks, shutdown, kill). Each operation returns an [`Outcome`] or an [`OpError`];
//! the slash commands show it as a note ([`std::fmt::Display`]), the lead model gets
//! [`Outcome::for_model`] as its tool result. Nothing is rebuilt from the transcript's prose.

use std::fmt;

use crate::protocol::{BackendKind, Color, PermissionMode};

/// Where an operation whose store work runs in the background reports its result, on the
/// loop, once that work is done: a note for a slash command, the tool result (and the note)
/// for the lead model.
pub(crate) type Done = Box<dyn FnOnce(&mut super::state::Controller, OpResult) + Send>;

/// The [`Done`] of a slash command: the result as a note.
pub(crate) fn reported() -> Done {
    Box::new(|c, result| c.report(result))
}

/// A teammate that was started.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Started {
    pub name: String,
    /// The name asked for (`name` differs when it was taken).
    pub requested: String,
    pub color: Color,
    pub kind: BackendKind,
    /// `tmuxPaneId` (a pane id, or `in-process`).
    pub pane_id: String,
    pub claude: bool,
    pub mode: PermissionMode,
    pub plan_mode_required: bool,
}

impl Started {
    fn place(&self) -> String {
        if self.kind.is_pane() {
            format!("{} pane {}", self.kind, self.pane_id)
        } else {
            self.kind.to_string()
        }
    }
}

/// What an operation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Spawned(Started),
    /// A teammate that had stopped runs again under its name.
    Respawned(Started),
    TaskAdded {
        id: String,
        subject: String,
        blocked_by: Vec<String>,
    },
    TaskAssigned {
        id: String,
        subject: String,
        owner: String,
    },
    /// `/task assign ID NAME` of a task `owner` already has: nothing was sent.
    TaskAlreadyOwned {
        id: String,
        subject: String,
        owner: String,
    },
    ShutdownAsked {
        name: String,
    },
    /// `/task done|reset|unassign|edit`: the task as it is now.
    TaskChanged {
        id: String,
        subject: String,
        /// `completed`, `pending, with no owner`, `unassigned`, `edited`.
        now: &'static str,
    },
}

impl Outcome {
    /// The tool result for the lead model: the note, plus what it needs to go on.
    pub fn for_model(&self) -> String {
        match self {
            Outcome::Spawned(s) | Outcome::Respawned(s) => {
                format!("{self}\nThe teammate's name is {}.", s.name)
            }
            Outcome::TaskAdded { id, .. } => format!("{self}\nThe task id is {id}."),
            Outcome::TaskAssigned { .. }
            | Outcome::TaskAlreadyOwned { .. }
            | Outcome::ShutdownAsked { .. }
            | Outcome::TaskChanged { .. } => self.to_string(),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Spawned(s) | Outcome::Respawned(s) => {
                let verb = if matches!(self, Outcome::Respawned(_)) {
                    "Respawned"
                } else {
                    "Spawned"
                };
                let renamed = if s.name != s.requested {
                    format!(" (as {})", s.name)
                } else {
                    String::new()
                };
                write!(
                    f,
                    "{verb} {}{renamed}: {}, {}{}, {} mode{}.",
                    s.name,
                    s.color.as_str(),
                    s.place(),
                    if s.claude { ", Claude Code" } else { "" },
                    s.mode,
                    if s.plan_mode_required {
                        ", plan approval required"
                    } else {
                        ""
                    }
                )
            }
            Outcome::TaskAdded {
                id,
                subject,
                blocked_by,
            } => {
                write!(f, "Added task #{id} \"{subject}\"")?;
                if !blocked_by.is_empty() {
                    let ids: Vec<String> = blocked_by.iter().map(|b| format!("#{b}")).collect();
                    write!(f, ", blocked by {}", ids.join(", "))?;
                }
                f.write_str(".")
            }
            Outcome::TaskAssigned { id, subject, owner } => {
                write!(f, "Assigned task #{id} \"{subject}\" to {owner}.")
            }
            Outcome::TaskAlreadyOwned { id, subject, owner } => write!(
                f,
                "Task #{id} \"{subject}\" is already {owner}'s: nothing was sent (another \
                 assignment would only make it start the task over)."
            ),
            Outcome::ShutdownAsked { name } => write!(f, "Asked {name} to shut down."),
            Outcome::TaskChanged { id, subject, now } => {
                write!(f, "Task #{id} \"{subject}\" is {now}.")
            }
        }
    }
}

/// Why an operation was not done: what went wrong, as data; the sentence a person reads is
/// made once, by [`fmt::Display`] below (the note, and the lead model's tool result).
/// `why` fields carry the lower layer's own words (a store or backend error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpError {
    NoSuchTeammate {
        name: String,
        known: Vec<String>,
    },
    /// The lead is quitting.
    ShuttingDown,
    /// The lead is quitting: no teammate is started.
    NoNewTeammates,
    /// A Claude Code teammate needs a pane backend and this session runs teammates in-process;
    /// `respawn` names the teammate when it was a `/respawn`.
    ClaudeNeedsPanes {
        respawn: Option<String>,
    },
    /// The name asked for cannot be a teammate's.
    BadName {
        requested: String,
        why: String,
    },
    /// The teammate still runs (`how`: where the lead found it, when it looked).
    StillRuns {
        name: String,
        how: Option<String>,
    },
    /// The teammate stopped (exited, crashed, its pane closed) and was not respawned: `what`
    /// was not done.
    Stopped {
        name: String,
        how: String,
        what: String,
    },
    /// A task was not assigned to a teammate that is not running.
    NotRunning {
        name: String,
        how: String,
    },
    /// A task was not assigned to a teammate its budget paused.
    Paused {
        name: String,
        why: String,
        task: String,
    },
    /// The worktree the teammate was to get could not be made.
    NoWorktree {
        name: String,
        why: String,
    },
    /// The program the teammate would run is not there (`respawn`: it was a `/respawn`).
    NoProgram {
        name: String,
        respawn: bool,
        why: crate::backend::program::ProgramError,
    },
    /// A respawn could not replace the teammate's old member entry.
    MemberNotReplaced {
        name: String,
        why: String,
    },
    /// The teammate's member entry could not be added to the team file.
    MemberNotAdded {
        name: String,
        why: String,
    },
    /// The executor could not start the teammate.
    NotStarted {
        name: String,
        why: String,
    },
    /// A task could not be changed in the task list (`id`: none when it was being added).
    Task {
        step: TaskStep,
        id: Option<String>,
        why: String,
    },
    /// The shutdown request could not be written.
    NotAskedToShutDown {
        name: String,
    },
}

/// What was being done to a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskStep {
    Add,
    Assign,
    Change,
    Edit,
}

impl fmt::Display for OpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpError::NoSuchTeammate { name, known } if known.is_empty() => write!(
                f,
                "There is no teammate named {name} (the team has none yet: /spawn NAME PROMPT)."
            ),
            OpError::NoSuchTeammate { name, known } => write!(
                f,
                "There is no teammate named {name} (teammates: {}).",
                known.join(", ")
            ),
            OpError::ShuttingDown => f.write_str("The lead is shutting down: nothing was done."),
            OpError::NoNewTeammates => f.write_str("The lead is shutting down: no new teammates."),
            OpError::ClaudeNeedsPanes { respawn: None } => write!(
                f,
                "Claude Code teammates need a pane backend ({}); this session runs teammates in-process.",
                BackendKind::pane_terminals()
            ),
            OpError::ClaudeNeedsPanes {
                respawn: Some(name),
            } => write!(
                f,
                "{name} is a Claude Code teammate and this session runs teammates in-process."
            ),
            OpError::BadName { requested, why } => write!(f, "Cannot spawn `{requested}`: {why}"),
            OpError::StillRuns { name, how: None } => {
                write!(
                    f,
                    "{name} is running: /kill {name} first to start it again."
                )
            }
            OpError::StillRuns {
                name,
                how: Some(how),
            } => write!(
                f,
                "{name} still runs ({how}): /kill {name} first to start it again."
            ),
            OpError::Stopped { name, how, what } => {
                write!(f, "{name} {how}: {what}. /respawn {name} starts it again.")
            }
            OpError::NotRunning { name, how } => {
                write!(f, "{name} is not running ({how}): /respawn {name} first.")
            }
            OpError::Paused { name, why, task } => write!(
                f,
                "{name} is paused: {why}. Task #{task} was not assigned; /budget {name} DOLLARS raises it."
            ),
            OpError::NoWorktree { name, why } => {
                write!(f, "Cannot give {name} a worktree: {why}")
            }
            OpError::NoProgram { name, respawn, why } => {
                let verb = if *respawn { "respawn" } else { "spawn" };
                write!(f, "Cannot {verb} {name}: {why}")
            }
            OpError::MemberNotReplaced { name, why } => write!(
                f,
                "Cannot respawn {name}: its member entry cannot be replaced: {why}"
            ),
            OpError::MemberNotAdded { name, why } => {
                write!(f, "Cannot add {name} to the team: {why}")
            }
            OpError::NotStarted { name, why } => write!(f, "Could not start {name}: {why}"),
            OpError::Task { step, id, why } => {
                let verb = match step {
                    TaskStep::Add => "add",
                    TaskStep::Assign => "assign",
                    TaskStep::Change => "change",
                    TaskStep::Edit => "edit",
                };
                match id {
                    Some(id) => write!(f, "Cannot {verb} task #{id}: {why}"),
                    None => write!(f, "Cannot {verb} the task: {why}"),
                }
            }
            OpError::NotAskedToShutDown { name } => {
                write!(f, "{name} was not asked to shut down.")
            }
        }
    }
}

/// What an operation returns.
pub type OpResult = Result<Outcome, OpError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_and_model_results() {
        let started = Started {
            name: "builder-2".into(),
            requested: "builder".into(),
            color: Color::Blue,
            kind: BackendKind::Tmux,
            pane_id: "%4".into(),
            claude: true,
            mode: PermissionMode::AcceptEdits,
            plan_mode_required: false,
        };
        let spawned = Outcome::Spawned(started);
        assert_eq!(
            spawned.to_string(),
            "Spawned builder-2 (as builder-2): blue, tmux pane %4, Claude Code, acceptEdits mode."
        );
        assert!(
            spawned
                .for_model()
                .ends_with("The teammate's name is builder-2.")
        );
        let added = Outcome::TaskAdded {
            id: "3".into(),
            subject: "test".into(),
            blocked_by: vec!["1".into(), "2".into()],
        };
        assert_eq!(
            added.to_string(),
            "Added task #3 \"test\", blocked by #1, #2."
        );
    }
}
