//! The sweep behind `teamlead clean` and the lead's `/clean`: only what is provably dead and
//! provably teamlead's. That is a team with teamlead's liveness file whose lead
//! [`lead_probe`](super::lead_probe) finds dead (the flock is free, no other lead claimed it, and
//! the process scan finished), and what each terminal of the registry says dead leads left in
//! it (`Terminal::leftovers`: a private tmux server `-L teamlead-<pid>` or a private Zellij
//! session `teamlead-<pid>` whose lead pid no longer runs, a pane on the user's tmux server that
//! runs, or ran, a `teamlead teammate` of this home whose team directory is gone). A dead
//! team's private servers are ended and its panes closed by each terminal
//! (`Terminal::end_private`, `Terminal::close_member_panes`: on the terminal `clean` runs in,
//! when they still carry their teammate's name or run it). A team of another lead (Claude
//! Code's, or a live teamlead session's) is never edited, swept or removed: [`survey`] lists it
//! as left alone, with the reason. On a host that runs teammates of a lead elsewhere, the
//! team's copy there is dead only once its lead has been away (no relay holding its lock) for
//! longer than the grace period (`hosts::on_host`); it goes with the team's private tmux
//! server there. Finding is read-only; removing is a separate step (which
//! probes again) so `--dry-run` can show it. A dead team whose team file cannot be read is moved
//! into quarantine, never deleted. No terminal CLI is run on a guess (each terminal says when
//! it may be asked).

use std::path::Path;

use super::hosts::on_host;
use super::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
use super::lead_probe::{self, LeadStatus, Owner};
use super::reap;
use super::terminals::{Leftover, TERMINALS, terminal};
use crate::protocol::Member;
use crate::store::{self, Home};

/// One thing left behind that may be removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Orphan {
    /// A team created by a teamlead lead that is provably no longer running.
    DeadTeam {
        team: String,
        lead_pid: Option<u32>,
        evidence: Vec<String>,
    },
    /// A dead teamlead team whose team file cannot be read: its members are unknown, so it is
    /// moved into `<home>/quarantine/<team>/` as it is, never deleted.
    BrokenTeam {
        team: String,
        lead_pid: Option<u32>,
        why: String,
    },
    /// What a dead lead left in a terminal (a private server or session, a teammate's pane).
    Left(Leftover),
}

impl Orphan {
    /// What removing it does, as `clean` says it: (dry run, done).
    pub fn verbs(&self) -> (&'static str, &'static str) {
        match self {
            Orphan::BrokenTeam { .. } => ("would move to quarantine", "moved to quarantine"),
            _ => ("would remove", "removed"),
        }
    }
}

impl std::fmt::Display for Orphan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Orphan::DeadTeam { team, lead_pid, .. } => match lead_pid {
                Some(pid) => write!(f, "team {team}: its lead (pid {pid}) is gone"),
                None => write!(f, "team {team}: its lead is gone"),
            },
            Orphan::BrokenTeam {
                team,
                lead_pid,
                why,
            } => write!(
                f,
                "team {team}: its lead{} is gone and its team file cannot be read ({why}); \
                 its files go to quarantine/{team}/ as they are, not deleted",
                lead_pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
            ),
            Orphan::Left(leftover) => leftover.fmt(f),
        }
    }
}

/// A team the sweep leaves alone, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub team: String,
    pub why: String,
}

impl std::fmt::Display for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "team {}: {}", self.team, self.why)
    }
}

/// What a sweep may remove, and what it leaves alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Survey {
    pub orphans: Vec<Orphan>,
    pub kept: Vec<Kept>,
}

/// Is a process with this pid running?
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as i32, 0) };
    let exists = r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    // A zombie is dead: its parent has not reaped it yet (a killed lead server whose parent
    // went first is reparented to init, which in a container may never reap it).
    exists && !is_zombie(pid)
}

/// Whether `/proc` says `pid` is a zombie (state `Z` after the command name in `stat`).
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|end| stat[end + 1..].split_whitespace().next())
            == Some("Z")
    })
}

/// Is `name` the private server or session name of a lead that no longer runs?
pub fn of_dead_lead(name: &str) -> bool {
    name.strip_prefix("teamlead-")
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| !pid_alive(pid))
}

/// The first piece of evidence, for a one-line reason.
fn first(evidence: &[String]) -> String {
    evidence.first().cloned().unwrap_or_default()
}

/// Why a team is left alone, or `None` when it may be removed.
fn keep_reason(owner: Owner, status: &LeadStatus) -> Option<String> {
    match (owner, status) {
        (Owner::Teamlead, LeadStatus::Dead { .. }) => None,
        (Owner::Teamlead, LeadStatus::Alive { evidence }) => {
            Some(format!("its lead is running ({})", first(evidence)))
        }
        (Owner::Teamlead, LeadStatus::Unknown { evidence }) => Some(format!(
            "its lead cannot be proven gone ({})",
            first(evidence)
        )),
        (Owner::Other, status) => Some(format!(
            "not a teamlead team (Claude Code's or another lead's), never removed; its lead is {} ({})",
            match status {
                LeadStatus::Alive { .. } => "running",
                LeadStatus::Dead { .. } => "gone",
                LeadStatus::Unknown { .. } => "of unknown state",
            },
            first(status.evidence())
        )),
    }
}

/// Everything under `home` (and on this machine's tmux) that may be removed, and every team
/// left alone with its reason.
pub fn survey(home: &Home) -> Survey {
    let mut out = Survey::default();
    for team in home.list_teams().unwrap_or_default() {
        let probe = lead_probe::probe(home, &team);
        match keep_reason(probe.owner, &probe.status).or_else(|| on_host::keep_reason(home, &team))
        {
            None => match unreadable_team_file(home, &team) {
                Some(why) => out.orphans.push(Orphan::BrokenTeam {
                    team,
                    lead_pid: probe.recorded_pid,
                    why,
                }),
                None => out.orphans.push(Orphan::DeadTeam {
                    // A copy for a lead on another host: the pid is its last relay's.
                    lead_pid: probe
                        .recorded_pid
                        .filter(|_| on_host::lead_away(home, &team).is_none()),
                    team,
                    evidence: probe.status.evidence().to_vec(),
                }),
            },
            Some(why) => out.kept.push(Kept { team, why }),
        }
    }
    for t in TERMINALS {
        out.orphans
            .extend(t.leftovers(home).into_iter().map(Orphan::Left));
    }
    out
}

/// Why the team file of `team` cannot be read (`None`: it can, or there is none).
fn unreadable_team_file(home: &Home, team: &str) -> Option<String> {
    match store::read_team(home, team) {
        Ok(_) | Err(store::StoreError::NotFound { .. }) => None,
        Err(store::StoreError::Parse { detail, .. }) => Some(detail),
        Err(e) => Some(e.to_string()),
    }
}

/// What may be removed (see [`survey`]).
pub fn find(home: &Home) -> Vec<Orphan> {
    survey(home).orphans
}

/// Closes the panes of a dead team's members, each terminal its own
/// (`Terminal::close_member_panes`).
fn close_member_panes(file: &crate::protocol::TeamFile, table: &ProcTable) {
    for t in TERMINALS {
        let kind = t.about().kind;
        let members: Vec<&Member> = file
            .teammates()
            .filter(|m| m.backend_kind() == Some(kind))
            .collect();
        if !members.is_empty() {
            t.close_member_panes(file, &members, table);
        }
    }
}

/// Removes one orphan. A team is probed again first and removed only if it is still a dead
/// teamlead team; its liveness lock is held while it goes, so no new lead can start on it
/// meanwhile. Errors are one-line messages.
pub fn remove(home: &Home, orphan: &Orphan) -> Result<(), String> {
    match orphan {
        Orphan::DeadTeam { team, lead_pid, .. } => {
            let probe = lead_probe::probe(home, team);
            if let Some(why) =
                keep_reason(probe.owner, &probe.status).or_else(|| on_host::keep_reason(home, team))
            {
                return Err(format!("left alone after all: {why}"));
            }
            let _hold = store::LeadLiveness::acquire(home, team).map_err(|e| e.to_string())?;
            if let Some(pid) = lead_pid {
                for t in TERMINALS {
                    t.end_private(home, team, *pid);
                }
            }
            // The copy of a team whose lead ran on another host: its private tmux server here.
            on_host::end_team_server(home, team);
            store::team::delete_team_with(home, team, |file| {
                // Its panes, then every process still running as one of its teammates (a
                // `claude` behind its guard, a `teamlead teammate`), with what they started.
                let table = ProcTable::scan(SCAN_DEADLINE);
                close_member_panes(file, &table);
                let table = ProcTable::scan(SCAN_DEADLINE);
                let pids: Vec<u32> = reap::team_processes(&table, &home.root, team)
                    .iter()
                    .map(|p| p.pid)
                    .collect();
                reap::stop_trees(&table, &pids, reap::TERM_WAIT);
                for (_, path) in store::SessionRecord::team_worktrees(home, team, file) {
                    let _ = super::worktree::remove(Path::new(&path));
                }
            })
            .map_err(|e| e.to_string())
        }
        Orphan::BrokenTeam { team, .. } => {
            let probe = lead_probe::probe(home, team);
            if let Some(why) = keep_reason(probe.owner, &probe.status) {
                return Err(format!("left alone after all: {why}"));
            }
            let Some(why) = unreadable_team_file(home, team) else {
                return Err("its team file can be read again: run clean again".to_string());
            };
            let _hold = store::LeadLiveness::acquire(home, team).map_err(|e| e.to_string())?;
            // Its members are unknown: nothing is killed here. Its teammates leave on their
            // own once the team directory is gone (`store::team::team_gone`), and `clean
            // --orphans` then finds their panes.
            store::quarantine::quarantine_team(
                home,
                team,
                &format!("its lead was gone and its team file could not be read: {why}"),
            )
            .map(|_| ())
            .map_err(|e| e.to_string())
        }
        Orphan::Left(leftover) => match terminal(leftover.kind()) {
            Some(t) => t.remove_leftover(home, leftover),
            None => Err(format!("{} leaves nothing to remove", leftover.kind())),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that exited and was not waited for is a zombie: not alive (a SIGKILLed lead
    /// whose parent went first stays one where init does not reap).
    #[test]
    fn a_zombie_is_not_alive() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !is_zombie(pid) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert!(is_zombie(pid));
        assert!(!pid_alive(pid));
        child.wait().unwrap();
        assert!(pid_alive(std::process::id()));
    }
}
