//! The facts `inspect` reports, gathered read-only by the store's audit (`store::audit`): the
//! teams of a home, or one team's members, tasks (with what still blocks each), inboxes (unread
//! counts and previews) and every problem found on the way; one bad file never hides the rest.
//! Strings are kept as the files hold them: the printers escape them. The same structs are printed as text or as JSON.

use std::sync::Arc;

use serde::Serialize;

use crate::protocol::pricing::PriceTable;

use crate::protocol::{InboxEntry, LEAD_NAME, Task};
use crate::store::audit::{self, Problem, TeamAudit};
use crate::store::tasks::{available, is_available, unfinished_blockers};
use crate::store::{Home, StoreError};

/// How many unread messages of each inbox are previewed.
pub const PREVIEWS_PER_INBOX: usize = 3;

/// `inspect` without a team: every team of the home.
#[derive(Debug, Clone, Serialize)]
pub struct HomeReport {
    pub home: String,
    pub teams: Vec<TeamRow>,
    /// Problems of the home and of every team, each with its path.
    pub problems: Vec<ProblemRow>,
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
    /// `alive`, `dead` or `unknown` (a Claude Code lead holds no teamlead lock: see
    /// `backend::lead_probe`).
    pub lead_status: String,
    /// What the lead's status was told from (process table, pane, lock).
    pub lead_evidence: Vec<String>,
    pub unread_for_lead: usize,
    pub tasks: usize,
    /// How many problems the team has (listed in the home's `problems`).
    pub problems: usize,
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
    /// `alive`, `dead` or `unknown`.
    pub lead_status: String,
    /// What the lead's status was told from.
    pub lead_evidence: Vec<String>,
    pub members: Vec<MemberRow>,
    pub tasks: Vec<TaskRow>,
    /// Ids of the tasks a teammate could claim now.
    pub available: Vec<String>,
    pub inboxes: Vec<InboxRow>,
    /// The team's cost so far: what its priced usage cost (a teammate's unpriced models, and
    /// teammates with no price at all, are left out: `unpriced` names them).
    pub cost_micros: u64,
    /// The teammates whose usage, or part of it, has no price, with the models.
    pub unpriced: Vec<UnpricedRow>,
    pub problems: Vec<ProblemRow>,
    /// What was moved to `<home>/quarantine/<team>/` (an unreadable inbox, bad entries).
    pub quarantined: Vec<QuarantineRow>,
}

/// A teammate whose usage (or part of it) the team's cost leaves out.
#[derive(Debug, Clone, Serialize)]
pub struct UnpricedRow {
    pub name: String,
    pub models: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QuarantineRow {
    pub path: String,
    pub origin: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MemberRow {
    pub name: String,
    /// The host it runs on when that is not the lead's (a teammate spawned with `--host`).
    pub host: Option<String>,
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
    /// What it used (its transcript for a `claude` teammate, its last idle report otherwise),
    /// and what that cost by the price table in force; `None` when nothing is known.
    pub usage: Option<UsageRow>,
    /// Until when its transcript says it is rate- or usage-limited (ISO 8601), when it is.
    pub limited_until: Option<String>,
}

/// A teammate's tokens and their cost.
#[derive(Debug, Clone, Serialize)]
pub struct UsageRow {
    /// Input tokens, cache reads and writes included.
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    /// Every cache write (5-minute and 1-hour).
    pub cache_write_tokens: u64,
    pub cache_write_5m_tokens: u64,
    pub cache_write_1h_tokens: u64,
    /// The model of its last answer (the transcript's, else the team file's).
    pub model: Option<String>,
    /// In millionths of a dollar, what its priced usage cost; `None` when nothing it used has
    /// a price.
    pub cost_micros: Option<u64>,
    /// The models it used that have no price (their tokens are not in `cost_micros`).
    pub unpriced_models: Vec<String>,
    /// Its usage by model, each message priced by its own model and tier (claude teammates;
    /// empty for a teammate known by its reported totals).
    pub by_model: Vec<ModelRow>,
}

/// One model's share of a teammate's usage.
#[derive(Debug, Clone, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub messages: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_5m_tokens: u64,
    pub cache_write_1h_tokens: u64,
    pub cost_micros: Option<u64>,
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
    /// Plain messages from the lead still in this inbox: read (taken by the teammate) and
    /// unread (the message ledger's receipts, as the files show them).
    pub from_lead_read: usize,
    pub from_lead_unread: usize,
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
    /// The audit's kind (`not-json`, `symlink-outside-home`, …).
    pub kind: String,
    pub path: String,
    pub message: String,
}

impl ProblemRow {
    fn from_audit(p: &Problem) -> ProblemRow {
        ProblemRow {
            kind: p.kind.as_str().to_string(),
            path: p.path.display().to_string(),
            message: p.detail.replace(['\n', '\r'], " "),
        }
    }
}

/// Every team of the home, and every problem found in the home and in its teams.
pub fn home_report(home: &Home) -> Result<HomeReport, StoreError> {
    let home_audit = audit::audit_home(home);
    let mut problems: Vec<ProblemRow> = home_audit
        .problems
        .iter()
        .map(ProblemRow::from_audit)
        .collect();
    let mut teams = Vec::new();
    for name in &home_audit.teams {
        let team = audit::audit_team(home, name)?;
        problems.extend(team.problems.iter().map(ProblemRow::from_audit));
        teams.push(team_row(home, name, &team));
    }
    Ok(HomeReport {
        home: home.root.display().to_string(),
        teams,
        problems,
    })
}

/// The lead's liveness as the probe tells it: `(alive, pid, status, evidence)`.
fn lead_facts(home: &Home, team: &str) -> (bool, Option<u32>, String, Vec<String>) {
    let lead = crate::backend::lead_probe::probe(home, team);
    let alive = lead.status.is_alive();
    (
        alive,
        alive.then(|| lead.pid.unwrap_or(0)),
        lead.status.label().to_string(),
        lead.status.evidence().to_vec(),
    )
}

fn team_row(home: &Home, name: &str, audit: &TeamAudit) -> TeamRow {
    // Why the team file could not be read: the first problem of the file or its directory.
    let problem = match &audit.team_file {
        Some(_) => None,
        None => audit
            .problems
            .iter()
            .find(|p| p.path.ends_with("config.json") || p.path.ends_with(name))
            .map(|p| p.detail.clone()),
    };
    let (lead_alive, lead_pid, lead_status, lead_evidence) = lead_facts(home, name);
    TeamRow {
        name: name.to_string(),
        description: audit.team_file.as_ref().and_then(|f| f.description.clone()),
        members: audit.team_file.as_ref().map(|f| f.members.len()),
        lead_alive,
        lead_pid,
        lead_status,
        lead_evidence,
        unread_for_lead: audit.unread_of(LEAD_NAME),
        tasks: audit.tasks.len(),
        problems: audit.problems.len(),
        problem,
    }
}

/// One team. Fails only when the name is unusable or the team does not exist at all; every
/// file that cannot be read is a problem of the report, never a failure.
pub fn team_report(
    home: &Home,
    team: &str,
    prices: &Arc<PriceTable>,
) -> Result<TeamReport, StoreError> {
    let audit = audit::audit_team(home, team)?;
    if !audit.exists {
        let kept = crate::store::quarantine::list(home, team);
        let moved = match kept.last() {
            Some(k) => format!("; what was kept of it is in {}", k.path.display()),
            None => String::new(),
        };
        return Err(StoreError::not_found(format!(
            "team `{team}` (no {} or {}{moved})",
            home.team_dir(team)?.display(),
            home.tasks_dir(team)?.display()
        )));
    }
    Ok(report_from(home, team, &audit, prices))
}

/// The report of an audited team, its usage priced by `prices`.
pub fn report_from(
    home: &Home,
    team: &str,
    audit: &TeamAudit,
    prices: &Arc<PriceTable>,
) -> TeamReport {
    let file = audit.team_file.as_ref();
    let used = crate::store::team_usage::team_usage(home, team, prices);
    let members: Vec<MemberRow> = file
        .map(|f| {
            f.members
                .iter()
                .map(|m| member_row(m, used.get(&m.name), prices))
                .collect()
        })
        .unwrap_or_default();
    let cost_micros = members
        .iter()
        .filter_map(|m| m.usage.as_ref()?.cost_micros)
        .sum();
    let unpriced = members
        .iter()
        .filter_map(|m| {
            let u = m.usage.as_ref()?;
            (!u.unpriced_models.is_empty()).then(|| UnpricedRow {
                name: m.name.clone(),
                models: u.unpriced_models.clone(),
            })
        })
        .collect();
    let all = &audit.tasks;
    let tasks = all.iter().map(|t| task_row(t, all)).collect();
    let available_ids = available(all).into_iter().map(|t| t.id.clone()).collect();
    let inboxes = audit
        .inboxes
        .iter()
        .filter_map(|i| i.entries.as_ref().map(|e| inbox_row(&i.name, e)))
        .collect();
    let (lead_alive, lead_pid, lead_status, lead_evidence) = lead_facts(home, team);
    TeamReport {
        home: home.root.display().to_string(),
        name: team.to_string(),
        description: file.and_then(|f| f.description.clone()),
        created_at: file
            .filter(|f| f.created_at > 0)
            .map(|f| crate::protocol::time::iso_from_ms(f.created_at)),
        lead_agent_id: file.map(|f| f.lead_agent_id.clone()),
        lead_session_id: file.map(|f| f.lead_session_id.clone()),
        lead_alive,
        lead_pid,
        lead_status,
        lead_evidence,
        members,
        tasks,
        available: available_ids,
        inboxes,
        cost_micros,
        unpriced,
        problems: audit.problems.iter().map(ProblemRow::from_audit).collect(),
        quarantined: crate::store::quarantine::list(home, team)
            .into_iter()
            .map(|k| QuarantineRow {
                path: k.path.display().to_string(),
                origin: k.origin,
                reason: k.reason,
            })
            .collect(),
    }
}

fn member_row(
    m: &crate::protocol::Member,
    used: Option<&crate::store::team_usage::MemberUsage>,
    prices: &PriceTable,
) -> MemberRow {
    let usage = used.map(|u| {
        let model = u.model.clone().or_else(|| m.model.clone());
        let tokens = u.usage.tokens();
        // Per message when the transcript is known; else the reported totals at the model's
        // standard rate.
        let (cost_micros, unpriced_models, by_model) = match &u.ledger {
            Some(ledger) => (
                ledger.cost_micros(),
                ledger.unpriced(),
                ledger.models.iter().map(model_row).collect(),
            ),
            None => {
                let cost = prices.cost_micros(model.as_deref(), &tokens);
                let unpriced = match (&cost, &model) {
                    (None, Some(m)) if tokens.total() > 0 => vec![m.clone()],
                    (None, None) if tokens.total() > 0 => vec!["unknown".to_string()],
                    _ => Vec::new(),
                };
                (cost, unpriced, Vec::new())
            }
        };
        UsageRow {
            input_tokens: u.usage.input_tokens,
            output_tokens: u.usage.output_tokens,
            cache_read_tokens: u.usage.cache_read_tokens,
            cache_write_tokens: u.usage.cache_write_tokens,
            cache_write_5m_tokens: tokens.cache_write_5m,
            cache_write_1h_tokens: tokens.cache_write_1h,
            cost_micros,
            unpriced_models,
            by_model,
            model,
        }
    });
    MemberRow {
        usage,
        limited_until: used
            .and_then(|u| u.limited_until_ms)
            .map(crate::protocol::time::iso_from_ms),
        name: m.name.clone(),
        host: m.host().map(str::to_string),
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

fn model_row(m: &crate::protocol::pricing::ModelUsage) -> ModelRow {
    ModelRow {
        model: m.model.clone(),
        messages: m.messages,
        input_tokens: m.tokens.input,
        output_tokens: m.tokens.output,
        cache_read_tokens: m.tokens.cache_read,
        cache_write_5m_tokens: m.tokens.cache_write_5m,
        cache_write_1h_tokens: m.tokens.cache_write_1h,
        cost_micros: m.micros.map(|c| c.round() as u64),
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
    let from_lead: Vec<&InboxEntry> = entries
        .iter()
        .filter(|e| e.from == LEAD_NAME && e.parse_frame().is_none())
        .collect();
    let start = unread.len().saturating_sub(PREVIEWS_PER_INBOX);
    InboxRow {
        member: member.to_string(),
        total: entries.len(),
        unread: unread.len(),
        recent_unread: unread[start..].iter().map(|e| message_row(e)).collect(),
        from_lead_read: from_lead.iter().filter(|e| !e.is_unread()).count(),
        from_lead_unread: from_lead.iter().filter(|e| e.is_unread()).count(),
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
