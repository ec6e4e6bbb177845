//! The facts `inspect` reports, gathered read-only from the store: the teams of a home, or one
//! team's members, tasks (with what still blocks each), inboxes (unread counts and previews)
//! and the problems found on the way. The same structs are printed as text or as JSON.

use std::path::Path;
use std::time::SystemTime;

use serde::Serialize;

use crate::protocol::inbox::clip;
use crate::protocol::{InboxEntry, LEAD_NAME, Task, TeamFile};
use crate::store::tasks::{TaskList, available, is_available, unfinished_blockers};
use crate::store::{Home, StoreError, inbox, scan};

/// How many unread messages of each inbox are previewed.
pub const PREVIEWS_PER_INBOX: usize = 3;

/// `inspect` without a team: every team of the home.
#[derive(Debug, Clone, Serialize)]
pub struct HomeReport {
    pub home: String,
    pub teams: Vec<TeamRow>,
}

/// One line of the team list.
#[derive(Debug, Clone, Serialize)]
pub struct TeamRow {
    pub name: String,
    pub description: Option<String>,
    /// Members in the team file (the lead included); `None` when it cannot be read.
    pub members: Option<usize>,
    pub lead_alive: bool,
    pub lead_pid: Option<u32>,
    /// `alive`, `dead` or `unknown` (`backend::lead_probe`), and why.
    pub lead_status: &'static str,
    pub lead_evidence: Vec<String>,
    pub unread_for_lead: usize,
    pub tasks: usize,
    /// Why the team file could not be read, if it could not.
    pub problem: Option<String>,
}

/// `inspect TEAM`.
#[derive(Debug, Clone, Serialize)]
pub struct TeamReport {
    pub home: String,
    pub name: String,
    pub description: Option<String>,
    pub created_at: Option<String>,
    pub lead_agent_id: Option<String>,
    pub lead_session_id: Option<String>,
    pub lead_alive: bool,
    pub lead_pid: Option<u32>,
    /// `alive`, `dead` or `unknown` (`backend::lead_probe`), and why.
    pub lead_status: &'static str,
    pub lead_evidence: Vec<String>,
    pub members: Vec<MemberRow>,
    pub tasks: Vec<TaskRow>,
    /// Ids of the tasks a teammate could claim now.
    pub available: Vec<String>,
    pub inboxes: Vec<InboxRow>,
    pub problems: Vec<ProblemRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemberRow {
    pub name: String,
    pub agent_id: String,
    pub agent_type: String,
    pub lead: bool,
    /// `active` (working, or `isActive` absent) or `idle`.
    pub status: String,
    pub backend: Option<String>,
    pub pane: String,
    pub mode: String,
    pub color: Option<String>,
    pub model: Option<String>,
    pub plan_mode_required: bool,
    pub cwd: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskRow {
    pub id: String,
    pub subject: String,
    pub status: String,
    pub owner: Option<String>,
    /// A teammate's own lifecycle task (`metadata._internal`).
    pub internal: bool,
    pub available: bool,
    /// Every id in `blockedBy`.
    pub blocked_by: Vec<String>,
    /// The blockers that are not completed yet, with their status.
    pub waiting_on: Vec<Blocker>,
    pub blocks: Vec<String>,
    pub active_form: Option<String>,
    pub command: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Blocker {
    pub id: String,
    pub status: String,
    pub owner: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct InboxRow {
    pub member: String,
    pub total: usize,
    pub unread: usize,
    /// The last few unread messages, oldest first.
    pub recent_unread: Vec<MessageRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MessageRow {
    pub from: String,
    pub timestamp: String,
    /// `message`, or the frame's type (`permission_request`, …).
    pub kind: String,
    /// The readable one-liner.
    pub summary: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProblemRow {
    pub path: String,
    pub message: String,
}

impl ProblemRow {
    fn new(path: &Path, message: impl Into<String>) -> ProblemRow {
        ProblemRow {
            path: path.display().to_string(),
            message: message.into().replace(['\n', '\r'], " "),
        }
    }
}

/// Every team of the home.
pub fn home_report(home: &Home) -> Result<HomeReport, StoreError> {
    let mut teams = Vec::new();
    for name in home.list_teams()? {
        teams.push(team_row(home, &name));
    }
    Ok(HomeReport {
        home: home.root.display().to_string(),
        teams,
    })
}

fn team_row(home: &Home, name: &str) -> TeamRow {
    let file = crate::store::read_team(home, name);
    let unread_for_lead = inbox::read(home, name, LEAD_NAME)
        .map(|r| r.unread().count())
        .unwrap_or(0);
    let tasks = TaskList::new(home, name)
        .and_then(|l| l.list())
        .map(|l| l.tasks.len())
        .unwrap_or(0);
    let lead = crate::backend::lead_probe::probe(home, name);
    let lead_pid = lead.status.is_alive().then(|| lead.pid.unwrap_or(0));
    let (members, description, problem) = match file {
        Ok(f) => (Some(f.members.len()), f.description, None),
        Err(e) => (None, None, Some(e.to_string())),
    };
    TeamRow {
        name: name.to_string(),
        description,
        members,
        lead_alive: lead.status.is_alive(),
        lead_pid,
        lead_status: lead.status.label(),
        lead_evidence: lead.status.evidence().to_vec(),
        unread_for_lead,
        tasks,
        problem,
    }
}

/// One team. Fails only when the name is unusable or the team does not exist at all.
pub fn team_report(home: &Home, team: &str) -> Result<TeamReport, StoreError> {
    let team_dir = home.team_dir(team)?;
    let tasks_dir = home.tasks_dir(team)?;
    if !team_dir.is_dir() && !tasks_dir.is_dir() {
        return Err(StoreError::not_found(format!(
            "team `{team}` (no {} or {})",
            team_dir.display(),
            tasks_dir.display()
        )));
    }
    let mut problems = Vec::new();

    let file = match crate::store::read_team(home, team) {
        Ok(f) => Some(f),
        Err(e) => {
            let path = home.config_path(team)?;
            let message = match e {
                StoreError::NotFound { .. } => "no team file (config.json)".to_string(),
                StoreError::Parse { detail, .. } => detail,
                other => other.to_string(),
            };
            problems.push(ProblemRow::new(&path, message));
            None
        }
    };
    if let Some(f) = &file {
        member_problems(home, team, f, &mut problems)?;
    }
    let members = file
        .as_ref()
        .map(|f| f.members.iter().map(member_row).collect())
        .unwrap_or_default();

    let list = TaskList::new(home, team)?;
    let listing = list.list()?;
    for p in &listing.problems {
        problems.push(ProblemRow::new(&p.path, p.message.clone()));
    }
    let all = &listing.tasks;
    for task in all {
        dangling_problems(&list, task, all, &mut problems);
    }
    let tasks = all.iter().map(|t| task_row(t, all)).collect();
    let available_ids = available(all).into_iter().map(|t| t.id.clone()).collect();

    let mut inboxes = Vec::new();
    for member in scan::inbox_names(home, team)? {
        let path = home.inbox_path(team, &member)?;
        match inbox::read_path(&path) {
            Ok(read) => {
                if !read.bad.is_empty() {
                    problems.push(ProblemRow::new(
                        &path,
                        format!(
                            "{} entr{} without string from/text/timestamp",
                            read.bad.len(),
                            if read.bad.len() == 1 { "y" } else { "ies" }
                        ),
                    ));
                }
                inboxes.push(inbox_row(&member, &read.entries));
            }
            Err(e) => {
                let message = match e {
                    StoreError::Parse { detail, .. } => detail,
                    other => other.to_string(),
                };
                problems.push(ProblemRow::new(&path, message));
            }
        }
    }

    for lock in scan::stale_locks(home, team) {
        let age = std::fs::symlink_metadata(&lock)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .map(|d| format!(", untouched for {} s", d.as_secs()))
            .unwrap_or_default();
        problems.push(ProblemRow::new(
            &lock,
            format!("stale lock directory{age} (a writer died holding it)"),
        ));
    }

    let lead = crate::backend::lead_probe::probe(home, team);
    let lead_pid = lead.status.is_alive().then(|| lead.pid.unwrap_or(0));
    Ok(TeamReport {
        home: home.root.display().to_string(),
        name: team.to_string(),
        description: file.as_ref().and_then(|f| f.description.clone()),
        created_at: file
            .as_ref()
            .filter(|f| f.created_at > 0)
            .map(|f| crate::protocol::time::iso_from_ms(f.created_at)),
        lead_agent_id: file.as_ref().map(|f| f.lead_agent_id.clone()),
        lead_session_id: file.as_ref().map(|f| f.lead_session_id.clone()),
        lead_alive: lead.status.is_alive(),
        lead_pid,
        lead_status: lead.status.label(),
        lead_evidence: lead.status.evidence().to_vec(),
        members,
        tasks,
        available: available_ids,
        inboxes,
        problems,
    })
}

fn member_problems(
    home: &Home,
    team: &str,
    file: &TeamFile,
    problems: &mut Vec<ProblemRow>,
) -> Result<(), StoreError> {
    let path = home.config_path(team)?;
    for entry in &file.invalid_members {
        let text = serde_json::to_string(entry).unwrap_or_default();
        problems.push(ProblemRow::new(
            &path,
            format!(
                "member entry without a string agentId and name (ignored): {}",
                clip(&text, 80)
            ),
        ));
    }
    if file.name != team {
        problems.push(ProblemRow::new(
            &path,
            format!("the team file names the team `{}`", file.name),
        ));
    }
    Ok(())
}

fn dangling_problems(list: &TaskList, task: &Task, all: &[Task], problems: &mut Vec<ProblemRow>) {
    let exists = |id: &String| all.iter().any(|t| &t.id == id);
    let path = list
        .task_path(&task.id)
        .unwrap_or_else(|_| list.dir().to_path_buf());
    for id in task.blocked_by.iter().filter(|id| !exists(id)) {
        problems.push(ProblemRow::new(
            &path,
            format!(
                "task #{} is blocked by #{id}, which does not exist",
                task.id
            ),
        ));
    }
    for id in task.blocks.iter().filter(|id| !exists(id)) {
        problems.push(ProblemRow::new(
            &path,
            format!("task #{} blocks #{id}, which does not exist", task.id),
        ));
    }
}

fn member_row(m: &crate::protocol::Member) -> MemberRow {
    MemberRow {
        name: m.name.clone(),
        agent_id: m.agent_id.clone(),
        agent_type: m.agent_type.clone(),
        lead: m.is_lead(),
        status: if m.active() { "active" } else { "idle" }.to_string(),
        backend: m.backend_type.clone(),
        pane: m.tmux_pane_id.clone(),
        mode: m.mode.clone().unwrap_or_else(|| "default".to_string()),
        color: m.color.clone(),
        model: m.model.clone(),
        plan_mode_required: m.plan_mode_required == Some(true),
        cwd: m.cwd.clone(),
    }
}

fn task_row(task: &Task, all: &[Task]) -> TaskRow {
    let waiting_on = unfinished_blockers(task, all)
        .into_iter()
        .map(|id| {
            let blocker = all.iter().find(|t| t.id == id);
            Blocker {
                status: blocker
                    .map(|b| b.status.as_str().to_string())
                    .unwrap_or_default(),
                owner: blocker.and_then(|b| b.owner.clone()),
                id,
            }
        })
        .collect();
    TaskRow {
        id: task.id.clone(),
        subject: task.subject.clone(),
        status: task.status.as_str().to_string(),
        owner: task.owner.clone(),
        internal: task.is_internal(),
        available: !task.is_internal() && is_available(task, all),
        blocked_by: task.blocked_by.clone(),
        waiting_on,
        blocks: task.blocks.clone(),
        active_form: task.active_form.clone(),
        command: task
            .metadata
            .as_ref()
            .and_then(|m| m.get("command"))
            .and_then(|c| c.as_str())
            .map(str::to_string),
    }
}

fn inbox_row(member: &str, entries: &[InboxEntry]) -> InboxRow {
    let unread: Vec<&InboxEntry> = entries.iter().filter(|e| e.is_unread()).collect();
    let start = unread.len().saturating_sub(PREVIEWS_PER_INBOX);
    InboxRow {
        member: member.to_string(),
        total: entries.len(),
        unread: unread.len(),
        recent_unread: unread[start..].iter().map(|e| message_row(e)).collect(),
    }
}

/// A message as `inspect` and `monitor` show it.
pub fn message_row(entry: &InboxEntry) -> MessageRow {
    MessageRow {
        from: entry.from.clone(),
        timestamp: entry.timestamp.clone(),
        kind: entry
            .parse_frame()
            .map(|f| f.kind().to_string())
            .unwrap_or_else(|| "message".to_string()),
        summary: entry.one_liner(),
    }
}
