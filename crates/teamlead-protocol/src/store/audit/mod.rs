//! A read-only, never-blocking problem finder for a home and for one team: everything a person
//! debugging a stuck team needs to see, as typed [`Problem`]s (a [`ProblemKind`], the path, a
//! one-line detail). It reads only through [`safe_file`](super::safe_file) (no symlink is
//! followed, a FIFO is never opened for reading, sizes are bounded), looks with
//! `symlink_metadata`, never follows a symbolic link out of the home (nor in it), and bounds
//! every directory walk. Nothing here writes, moves, locks or creates.
//!
//! Details hold text from files as it is: whoever prints them escapes them
//! (`protocol::display::visible_line`).

mod controls;
mod look;
mod tasks;
mod team;

use std::path::{Path, PathBuf};

use serde::Serialize;

pub use look::{Look, look};
pub use tasks::highwatermark_problem;
pub use team::{InboxAudit, audit_team};

use super::home::{DELETED_MARKER, Home};
use crate::names::check_path_component;
use crate::{InboxEntry, Task, TeamFile};

/// The kinds of problem the audit finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProblemKind {
    /// An operating-system error while looking or reading.
    Unreadable,
    /// Larger than the reader accepts.
    TooLarge,
    /// Bytes that are not UTF-8.
    NotUtf8,
    /// Not JSON (including nesting past the parser's limit and lone surrogates).
    NotJson,
    /// JSON, but not the shape the protocol says.
    Schema,
    /// A directory, FIFO, socket or device where a file should be, or a file where a directory
    /// should be.
    WrongKind,
    /// A symbolic link inside the home (not followed).
    Symlink,
    /// A symbolic link leading out of the home (not followed).
    SymlinkOutsideHome,
    /// A `*.lock` that is not a directory (a lock directory is what Claude Code and teamlead make).
    StrayLockFile,
    /// A lock directory older than the stale limit (a writer died holding it).
    StaleLock,
    /// The task list lock (`tasks/<team>/.lock`) is not an empty regular file.
    BadTasksLock,
    /// A team, member or inbox name that cannot be used as a path or shows unsafe characters.
    UnsafeName,
    /// Two members with the same name (or names differing only in case).
    DuplicateMember,
    /// More than one member is a lead.
    TwoLeads,
    /// A member entry without a string `agentId` and `name`.
    MemberWithoutId,
    /// The team file names another team.
    TeamNameMismatch,
    /// No `config.json` in the team directory.
    MissingTeamFile,
    /// A task's id does not match its file name.
    TaskIdMismatch,
    /// `blockedBy`/`blocks` naming a task that does not exist.
    DanglingDependency,
    /// Tasks blocking each other in a cycle.
    DependencyCycle,
    /// A task blocking itself.
    SelfBlock,
    /// `.highwatermark` that is not a usable decimal id.
    BadHighwatermark,
    /// A member, message (frame) or task whose text holds control characters, escape
    /// sequences, bidi or invisible characters (shown escaped).
    ControlSequences,
}

impl ProblemKind {
    /// The kebab-case name used in `--json` output.
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Unreadable => "unreadable",
            ProblemKind::TooLarge => "too-large",
            ProblemKind::NotUtf8 => "not-utf8",
            ProblemKind::NotJson => "not-json",
            ProblemKind::Schema => "schema",
            ProblemKind::WrongKind => "wrong-kind",
            ProblemKind::Symlink => "symlink",
            ProblemKind::SymlinkOutsideHome => "symlink-outside-home",
            ProblemKind::StrayLockFile => "stray-lock-file",
            ProblemKind::StaleLock => "stale-lock",
            ProblemKind::BadTasksLock => "bad-tasks-lock",
            ProblemKind::UnsafeName => "unsafe-name",
            ProblemKind::DuplicateMember => "duplicate-member",
            ProblemKind::TwoLeads => "two-leads",
            ProblemKind::MemberWithoutId => "member-without-id",
            ProblemKind::TeamNameMismatch => "team-name-mismatch",
            ProblemKind::MissingTeamFile => "missing-team-file",
            ProblemKind::TaskIdMismatch => "task-id-mismatch",
            ProblemKind::DanglingDependency => "dangling-dependency",
            ProblemKind::DependencyCycle => "dependency-cycle",
            ProblemKind::SelfBlock => "self-block",
            ProblemKind::BadHighwatermark => "bad-highwatermark",
            ProblemKind::ControlSequences => "control-sequences",
        }
    }

    /// Would a writer that relies on this file corrupt or block on it?
    pub fn blocks_writers(self) -> bool {
        !matches!(
            self,
            ProblemKind::StaleLock
                | ProblemKind::UnsafeName
                | ProblemKind::DuplicateMember
                | ProblemKind::TwoLeads
                | ProblemKind::MemberWithoutId
                | ProblemKind::TeamNameMismatch
                | ProblemKind::MissingTeamFile
                | ProblemKind::TaskIdMismatch
                | ProblemKind::DanglingDependency
                | ProblemKind::DependencyCycle
                | ProblemKind::SelfBlock
                | ProblemKind::ControlSequences
        )
    }
}

/// One problem: what, where, and a one-line detail (text from files kept as it is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub kind: ProblemKind,
    pub path: PathBuf,
    pub detail: String,
}

impl Problem {
    pub fn new(kind: ProblemKind, path: impl Into<PathBuf>, detail: impl Into<String>) -> Problem {
        Problem {
            kind,
            path: path.into(),
            detail: detail.into().replace(['\n', '\r'], " "),
        }
    }
}

/// The audit of a home: the teams that can be inspected, and the problems of the home itself
/// and of every team.
#[derive(Debug, Clone, Default)]
pub struct HomeAudit {
    /// Team directory names that are safe path components (sorted).
    pub teams: Vec<String>,
    /// Problems of `teams/`, `tasks/` and their entries (team audits are separate).
    pub problems: Vec<Problem>,
}

/// The audit of one team: the problems, and what could be read safely.
#[derive(Debug, Clone, Default)]
pub struct TeamAudit {
    /// Is there a team directory or a task list at all (as a real directory or a link)?
    pub exists: bool,
    pub problems: Vec<Problem>,
    /// The team file, when it is a regular file that parses.
    pub team_file: Option<TeamFile>,
    /// Every inbox file, read or not.
    pub inboxes: Vec<InboxAudit>,
    /// Valid tasks, sorted by numeric id.
    pub tasks: Vec<Task>,
    /// The running lead's pid (`Some(0)` when alive without a readable pid).
    pub lead_pid: Option<u32>,
}

impl TeamAudit {
    /// Unread entries of `member`'s inbox.
    pub fn unread_of(&self, member: &str) -> usize {
        self.inboxes
            .iter()
            .filter(|i| i.name == member)
            .filter_map(|i| i.entries.as_ref())
            .map(|e| e.iter().filter(|m| InboxEntry::is_unread(m)).count())
            .sum()
    }
}

/// Most entries looked at in one directory (a directory of millions is reported, not walked).
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// Audits the home: `teams/` and `tasks/` and the names in them. Never fails: what cannot be
/// looked at is a problem.
pub fn audit_home(home: &Home) -> HomeAudit {
    let mut audit = HomeAudit::default();
    let mut teams = Vec::new();
    for (root, what) in [(home.teams_dir(), "team"), (home.tasks_root(), "task list")] {
        match look::dir_entries(home, &root, &mut audit.problems) {
            None => {}
            Some(entries) => {
                for (name, path) in entries {
                    if let Some(team) = home_entry(home, &name, &path, what, &mut audit.problems)
                        && !teams.contains(&team)
                    {
                        teams.push(team);
                    }
                }
            }
        }
    }
    teams.sort();
    audit.teams = teams;
    audit.problems.sort_by(|a, b| a.path.cmp(&b.path));
    audit
}

/// One entry of `teams/` or `tasks/`: its name when it is a usable team.
fn home_entry(
    home: &Home,
    name: &Result<String, String>,
    path: &Path,
    what: &str,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let name = match name {
        Ok(n) => n,
        Err(lossy) => {
            problems.push(Problem::new(
                ProblemKind::UnsafeName,
                path,
                format!("{what} directory name `{lossy}` is not UTF-8; teamlead skips it"),
            ));
            return None;
        }
    };
    if name.contains(DELETED_MARKER) || look::is_temp(name) {
        return None;
    }
    let kind = look::look(home, path);
    if name.starts_with('.') && matches!(kind, Look::File) {
        // Hidden files (`.DS_Store`) are not teams.
        return None;
    }
    if let Err(e) = check_path_component(name) {
        problems.push(Problem::new(
            ProblemKind::UnsafeName,
            path,
            format!("{what} directory name is not a safe name ({e}); teamlead skips it"),
        ));
        return None;
    }
    match kind {
        Look::Dir => Some(name.clone()),
        Look::Missing => None,
        other => {
            if let Some(p) = other.problem(path, &format!("the {what} directory `{name}`")) {
                problems.push(p);
            }
            // A link or a stray file still names a team worth inspecting.
            Some(name.clone())
        }
    }
}

/// What a writer expects to find in the file it is about to change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Anything (the content is not read).
    Anything,
    /// A JSON array (an inbox).
    JsonArray,
    /// A JSON object (a team file, a task).
    JsonObject,
}

/// The problems a writer about to change `path` (an inbox, a task, the task list lock, …)
/// would meet: every directory from the home down, the file, its lock directory and (as
/// `expect` says) its content, looked at without following links. Empty when it is safe.
pub fn before_write(home: &Home, path: &Path, expect: Expect) -> Vec<Problem> {
    let mut problems = Vec::new();
    // Every directory from the home down must be a real directory.
    if let Ok(rel) = path.strip_prefix(&home.root) {
        let mut current = home.root.clone();
        let comps: Vec<_> = rel.components().collect();
        for c in comps.iter().take(comps.len().saturating_sub(1)) {
            current.push(c);
            match look::look(home, &current) {
                Look::Dir | Look::Missing => {}
                other => {
                    if let Some(p) = other.problem(&current, "a directory of the path") {
                        problems.push(p);
                    }
                    return problems;
                }
            }
        }
    }
    match look::look(home, path) {
        Look::File | Look::Missing => {}
        other => problems.extend(other.problem(path, "the file")),
    }
    let lock = super::lock::lock_dir_of(path);
    match look::look(home, &lock) {
        Look::Dir | Look::Missing => {}
        other => {
            if let Some(mut p) = other.problem(&lock, "the lock directory") {
                p.kind = ProblemKind::StrayLockFile;
                problems.push(p);
            }
        }
    }
    if expect == Expect::JsonArray && problems.is_empty() && is_blank_file(path) {
        // Created with O_EXCL and not yet written, or truncated by an in-place writer that
        // has not written yet: an empty inbox, as the store's own readers take it.
        return problems;
    }
    if expect != Expect::Anything && problems.is_empty() {
        match look::read_json_opt(path) {
            Ok(None) => {}
            Ok(Some(value)) => {
                let fits = match expect {
                    Expect::JsonArray => value.is_array(),
                    _ => value.is_object(),
                };
                if !fits {
                    problems.push(Problem::new(
                        ProblemKind::Schema,
                        path,
                        format!(
                            "not a JSON {} (found {})",
                            if expect == Expect::JsonArray {
                                "array"
                            } else {
                                "object"
                            },
                            look::json_kind(&value)
                        ),
                    ));
                }
            }
            Err(p) => problems.push(p),
        }
    }
    problems
}

/// The problems `task add`/`delete` would meet in `team`'s task list before writing: the
/// directories, the list lock (`.lock` a file, `.lock.lock/` a directory) and `.highwatermark`.
pub fn before_task_list_write(home: &Home, team: &str) -> super::Result<Vec<Problem>> {
    let dir = home.tasks_dir(team)?;
    let mut problems = before_write(home, &dir.join(".lock"), Expect::Anything);
    for p in &mut problems {
        if p.path.ends_with(".lock") && p.kind == ProblemKind::WrongKind {
            p.kind = ProblemKind::BadTasksLock;
        }
    }
    if problems.is_empty() {
        problems.extend(tasks::highwatermark_at(&dir.join(".highwatermark")));
    }
    Ok(problems)
}

/// A regular file with nothing but whitespace in it (read through `safe_file`).
fn is_blank_file(path: &Path) -> bool {
    matches!(
        crate::store::safe_file::read_regular(path, 64),
        Ok(Some(bytes)) if bytes.iter().all(u8::is_ascii_whitespace)
    )
}
