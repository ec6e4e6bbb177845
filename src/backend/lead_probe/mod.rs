//! Is a team's lead running? [`probe`] answers for any team, teamlead's own or a Claude Code
//! lead's (which holds no teamlead lock), with the evidence as text, and never blocks: the
//! process table is read by a bounded scan ([`procs`]) and tmux is asked with a timeout
//! ([`pane`]).
//!
//! The rules (docs/DESIGN.md, "Teams of other leads are never swept"):
//! - A team is **teamlead's** when `teams/<t>/.teamlead/lead.lock` is a regular file. Its lead
//!   is alive while some process holds that file's flock (the kernel drops it however the lead
//!   dies), and dead when the flock is free, unless another lead has claimed the team since
//!   (below). Teammate processes still running with `--parent-session-id <leadSessionId>` are
//!   named in the evidence; they go with the team.
//! - Any team is **alive** when one of these holds: `leadProcess.pid` runs and started before
//!   `leadProcess.claimedAt` (a later start means the pid was reused); a process other than a
//!   teammate mentions `leadSessionId` in its command line or environment. For a team that is
//!   not teamlead's, also: a process runs with `--parent-session-id <leadSessionId>` (a
//!   teammate of that lead); a Claude Code process runs in the lead member's `cwd`; the lead
//!   member's `tmuxPaneId` is a `%N` pane open on the user's tmux server whose program is
//!   Claude Code or whose directory is the lead's `cwd`.
//! - A team that is not teamlead's is **dead** only when `leadProcess` names a pid that no
//!   longer runs (or was reused) and nothing above holds. Without `leadProcess` (Claude Code
//!   before it wrote one) its lead's death cannot be proven from this machine: **unknown**.
//! - Absence proves nothing unless the process scan finished: an unfinished scan gives
//!   unknown, never dead.

pub mod pane;
pub mod procs;

use std::path::Path;

use serde_json::Value;

use crate::protocol::{LEAD_NAME, TeamFile};
use crate::store::safe_file::{FileKind, MAX_FILE_BYTES, read_regular};
use crate::store::{self, Home};
use pane::PaneState;
use procs::{ProcInfo, ProcTable};

/// Is the lead of a team running?
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeadStatus {
    /// Something on this machine shows it runs.
    Alive { evidence: Vec<String> },
    /// It is provably gone.
    Dead { evidence: Vec<String> },
    /// Neither can be proven; the evidence says why.
    Unknown { evidence: Vec<String> },
}

impl LeadStatus {
    /// `alive`, `dead` or `unknown`.
    pub fn label(&self) -> &'static str {
        match self {
            LeadStatus::Alive { .. } => "alive",
            LeadStatus::Dead { .. } => "dead",
            LeadStatus::Unknown { .. } => "unknown",
        }
    }

    pub fn evidence(&self) -> &[String] {
        match self {
            LeadStatus::Alive { evidence }
            | LeadStatus::Dead { evidence }
            | LeadStatus::Unknown { evidence } => evidence,
        }
    }

    pub fn is_alive(&self) -> bool {
        matches!(self, LeadStatus::Alive { .. })
    }

    pub fn is_dead(&self) -> bool {
        matches!(self, LeadStatus::Dead { .. })
    }
}

/// Who leads a team, as far as the files tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// A teamlead lead made it (it has `.teamlead/lead.lock`).
    Teamlead,
    /// Claude Code, or another program speaking the protocol.
    Other,
}

/// What [`probe`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub owner: Owner,
    pub status: LeadStatus,
    /// The lead's pid when known: the holder of teamlead's lock (`0` when unreadable), or a
    /// running `leadProcess.pid`. Only set while the lead is alive.
    pub pid: Option<u32>,
    /// The pid written in teamlead's lock file, whether or not it still runs.
    pub recorded_pid: Option<u32>,
}

/// Probes the lead of `team` (reads its files, the process table and tmux; writes nothing).
pub fn probe(home: &Home, team: &str) -> Probe {
    probe_with(home, team, &ProcTable::shared())
}

/// [`probe`] with a given process table.
pub fn probe_with(home: &Home, team: &str, table: &ProcTable) -> Probe {
    let owner = match home.lead_lock_path(team).map(|p| FileKind::at(&p)) {
        Ok(Ok(Some(FileKind::Regular))) => Owner::Teamlead,
        _ => Owner::Other,
    };
    let recorded_pid = match owner {
        Owner::Teamlead => recorded_lock_pid(home, team),
        Owner::Other => None,
    };
    let mut alive = Vec::new();
    let mut dead = Vec::new();
    let mut notes = Vec::new();
    if owner == Owner::Teamlead {
        if let Some(pid) = store::liveness::lead_pid(home, team) {
            let who = if pid == 0 {
                "a teamlead lead".to_string()
            } else {
                format!("the teamlead lead (pid {pid})")
            };
            return Probe {
                owner,
                status: LeadStatus::Alive {
                    evidence: vec![format!("{who} holds .teamlead/lead.lock")],
                },
                pid: Some(pid),
                recorded_pid,
            };
        }
        dead.push(match recorded_pid {
            Some(pid) => format!("nothing holds .teamlead/lead.lock (its last lead was pid {pid})"),
            None => "nothing holds .teamlead/lead.lock".to_string(),
        });
    }
    let file = read_config(home, team);
    let mut pid = None;
    let claim = file
        .as_ref()
        .and_then(|f| LeadClaim::of(f.lead_process.as_ref()?));
    if let Some(claim) = &claim {
        match claim.check(table) {
            Ok(text) => {
                pid = Some(claim.pid);
                alive.push(text);
            }
            Err(text) => dead.push(text),
        }
    }
    if let Some(file) = &file {
        process_evidence(file, owner, table, &mut alive, &mut notes);
        if owner == Owner::Other {
            pane_evidence(file, table, &mut alive, &mut notes);
        }
    } else {
        notes.push("config.json cannot be read, so its lead session is unknown".to_string());
    }
    let status = if !alive.is_empty() {
        alive.extend(notes);
        LeadStatus::Alive { evidence: alive }
    } else if !table.complete {
        let mut evidence = vec![
            table
                .incomplete_why
                .clone()
                .unwrap_or_else(|| "the process scan did not finish".to_string()),
        ];
        evidence.extend(dead);
        LeadStatus::Unknown { evidence }
    } else if owner == Owner::Teamlead || claim.is_some() {
        dead.extend(notes);
        LeadStatus::Dead { evidence: dead }
    } else {
        let mut evidence = vec![
            "no process on this machine holds its lead session, but no leadProcess is recorded: a lead in a container, under another user or on another machine cannot be ruled out"
                .to_string(),
        ];
        evidence.extend(notes);
        LeadStatus::Unknown { evidence }
    };
    Probe {
        owner,
        status,
        pid,
        recorded_pid,
    }
}

/// The pid written in teamlead's lock file.
fn recorded_lock_pid(home: &Home, team: &str) -> Option<u32> {
    let path = home.lead_lock_path(team).ok()?;
    let bytes = read_regular(&path, store::safe_file::MAX_SMALL_FILE_BYTES).ok()??;
    String::from_utf8_lossy(&bytes).trim().parse().ok()
}

/// The team file, read without following links or blocking (one retry for a torn write).
fn read_config(home: &Home, team: &str) -> Option<TeamFile> {
    let path = home.config_path(team).ok()?;
    for attempt in 0..2 {
        let bytes = read_regular(&path, MAX_FILE_BYTES).ok()??;
        if let Ok(file) = std::str::from_utf8(&bytes)
            .map_err(|_| ())
            .and_then(|t| TeamFile::parse(t).map_err(|_| ()))
        {
            return Some(file);
        }
        if attempt == 0 {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    None
}

/// `leadProcess: {pid, claimedAt}` of newer Claude Code leads.
struct LeadClaim {
    pid: u32,
    /// Epoch milliseconds.
    claimed_at: Option<u64>,
}

impl LeadClaim {
    fn of(value: &Value) -> Option<LeadClaim> {
        let pid = value
            .get("pid")?
            .as_u64()
            .filter(|p| *p > 0 && *p <= i32::MAX as u64)? as u32;
        let claimed_at = match value.get("claimedAt") {
            Some(Value::Number(n)) => n.as_u64(),
            Some(Value::String(s)) => chrono::DateTime::parse_from_rfc3339(s)
                .ok()
                .map(|t| t.timestamp_millis().max(0) as u64),
            _ => None,
        };
        Some(LeadClaim { pid, claimed_at })
    }

    /// Alive evidence, or dead evidence.
    fn check(&self, table: &ProcTable) -> Result<String, String> {
        let pid = self.pid;
        let seen = table.get(pid).map(|p| (p.start_ms, p.describe()));
        let seen = seen.or_else(|| {
            procs::stat(pid).map(|(_, start, comm)| (start, format!("pid {pid} ({comm})")))
        });
        let Some((start, who)) = seen else {
            return Err(format!("leadProcess pid {pid} is not running"));
        };
        // Start times are known to the second; allow for that and for clock steps.
        match (start, self.claimed_at) {
            (Some(start), Some(claimed)) if start > claimed + 2_000 => Err(format!(
                "leadProcess pid {pid} was reused: {who} started after the claim"
            )),
            _ => Ok(format!("leadProcess {who} is running")),
        }
    }
}

/// Processes that mention the lead session.
fn process_evidence(
    file: &TeamFile,
    owner: Owner,
    table: &ProcTable,
    alive: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let me = std::process::id();
    let session = file.lead_session_id.to_ascii_lowercase();
    let lead_cwd = file.member(LEAD_NAME).map(|m| m.cwd.as_str()).unwrap_or("");
    for p in table.procs.iter().filter(|p| p.pid != me) {
        if !session.is_empty() {
            let teammate = p
                .parent_session
                .as_deref()
                .is_some_and(|s| s.eq_ignore_ascii_case(&session));
            if teammate {
                let text = format!(
                    "{} runs with --parent-session-id {session} (a teammate of this lead)",
                    p.describe()
                );
                match owner {
                    Owner::Other => alive.push(text),
                    Owner::Teamlead => notes.push(format!("{text}; it goes with the team")),
                }
                continue;
            }
            if p.uuids.contains(&session) {
                alive.push(format!(
                    "{} mentions the lead session {session} in its command line or environment",
                    p.describe()
                ));
                continue;
            }
        }
        if owner == Owner::Other && !lead_cwd.is_empty() && p.is_claude() && same_dir(p, lead_cwd) {
            alive.push(format!(
                "Claude Code {} runs in the lead's directory {lead_cwd}",
                p.describe()
            ));
        }
    }
}

fn same_dir(p: &ProcInfo, dir: &str) -> bool {
    p.cwd.as_deref().is_some_and(|c| c == Path::new(dir))
}

/// The lead member's own tmux pane.
fn pane_evidence(
    file: &TeamFile,
    table: &ProcTable,
    alive: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    let Some(lead) = file.member(LEAD_NAME) else {
        return;
    };
    if !pane::is_tmux_pane_id(&lead.tmux_pane_id) {
        return;
    }
    let id = &lead.tmux_pane_id;
    match pane::pane_state(id) {
        PaneState::Open {
            pid,
            dead,
            command,
            path,
        } => {
            let claude_inside = table.tree(pid).iter().any(|p| p.is_claude());
            let in_cwd = !lead.cwd.is_empty() && Path::new(&path) == Path::new(&lead.cwd);
            if !dead && (claude_inside || command.starts_with("claude") || in_cwd) {
                alive.push(format!(
                    "the lead's tmux pane {id} is open, running {command} in {path}"
                ));
            } else {
                notes.push(format!(
                    "tmux pane {id} exists but runs {command} in {path}{} (not the lead's)",
                    if dead { ", exited" } else { "" }
                ));
            }
        }
        PaneState::Missing => notes.push(format!("the lead's tmux pane {id} is gone")),
        PaneState::NoAnswer(why) => notes.push(format!("the lead's tmux pane {id}: {why}")),
    }
}
