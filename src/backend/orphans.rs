//! The sweep behind `teamlead clean` and the lead's `/clean`: only what is provably dead and
//! provably teamlead's. That is a team with teamlead's liveness file whose lead
//! [`lead_probe`](super::lead_probe) finds dead (the flock is free, no other lead claimed it, and
//! the process scan finished), a private tmux server `-L teamlead-<pid>` or a private Zellij
//! session `teamlead-<pid>` whose lead pid no longer runs, and a pane on the user's tmux server
//! that runs (or ran: a dead pane) a `teamlead teammate` of this home whose team directory is
//! gone (nothing on disk names it any more; found by its start command, [`teammate_panes`]). A
//! dead team's panes are closed on the terminal `clean` runs in when they still carry their
//! teammate's name (tmux, Zellij, kitty; WezTerm panes close with their program). A team of
//! another lead (Claude Code's, or a live teamlead session's) is never
//! edited, swept or removed: [`survey`] lists it as left alone, with the reason. Finding is
//! read-only; removing is a separate step (which probes again) so `--dry-run` can show it. A
//! dead team whose team file cannot be read is moved into quarantine, never deleted. No
//! terminal CLI is run on a guess: `zellij` only when a team's records name Zellij, the
//! user's tmux only when its server may run.

use std::path::Path;

use std::sync::Arc;

use super::detect::{self, BackendChoice, CapturedEnv};
use super::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
use super::lead_probe::{self, LeadStatus, Owner};
use super::reap;
use super::tmux::teammate_panes::{TeammatePane, teammate_panes};
use super::tmux::{TmuxBackend, TmuxServer};
use super::{BackendKind, PaneBackend, zellij};
use crate::protocol::{BackendRequest, TeamFile};
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
    /// A private tmux server (`-L teamlead-<pid>`) whose lead process is gone.
    PrivateServer { socket: String },
    /// A private Zellij session (`teamlead-<pid>`) whose lead process is gone.
    PrivateZellij { session: String },
    /// A pane of a teamlead teammate of this home whose team is gone.
    TeammatePane {
        pane: String,
        team: String,
        name: String,
        dead: bool,
    },
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
            Orphan::PrivateServer { socket } => {
                write!(f, "tmux server -L {socket}: its lead is gone")
            }
            Orphan::PrivateZellij { session } => {
                write!(f, "zellij session {session}: its lead is gone")
            }
            Orphan::TeammatePane {
                pane,
                team,
                name,
                dead,
            } => write!(
                f,
                "tmux pane {pane} of teammate {name}{}: its team {team} is gone",
                if *dead { " (dead)" } else { "" }
            ),
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

/// Private servers of dead leads, from the socket directory.
fn dead_private_servers() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(TmuxServer::socket_dir()) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| {
            name.strip_prefix("teamlead-")
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| !pid_alive(pid))
        })
        .collect();
    found.sort();
    found
}

/// Is `name` the private server or session name of a lead that no longer runs?
fn of_dead_lead(name: &str) -> bool {
    name.strip_prefix("teamlead-")
        .and_then(|pid| pid.parse::<u32>().ok())
        .is_some_and(|pid| !pid_alive(pid))
}

/// The `zellij` on PATH, if any.
fn zellij_program() -> Option<String> {
    CapturedEnv::from_process().which("zellij")
}

/// Do teamlead's own records in `home` say a Zellij session of a lead may exist? A team whose
/// session record (`.teamlead/session.json`) or a member of whose `config.json` names Zellij.
/// Without such a record no private session of teamlead's can be there, and `zellij` is not
/// run: the CLI writes into the user's home (`~/.cache/zellij`) and its temporary directory
/// even to list sessions, which a dry run or a lead's start must not do.
pub fn zellij_recorded(home: &Home) -> bool {
    home.list_teams()
        .unwrap_or_default()
        .iter()
        .any(|team| team_used_zellij(home, team, store::read_team(home, team).ok().as_ref()))
}

/// Was `team` led with Zellij, by its records (session record or members)?
fn team_used_zellij(home: &Home, team: &str, file: Option<&TeamFile>) -> bool {
    store::SessionRecord::read(home, team)
        .and_then(|r| r.backend)
        .as_deref()
        == Some(BackendKind::Zellij.as_str())
        || file.is_some_and(|f| {
            f.members
                .iter()
                .any(|m| m.backend_kind() == Some(BackendKind::Zellij))
        })
}

/// Private Zellij sessions of dead leads (running or kept to be resurrected).
fn dead_private_sessions(home: &Home) -> Vec<String> {
    // Running zellij makes its own log directory under TMPDIR and a cache in the user's home:
    // a person who never used Zellij has no socket directory, no session, and gets nothing new
    // on disk from a sweep; and teamlead's records must say one of its leads used Zellij.
    if !zellij_socket_dir_exists() || !zellij_recorded(home) {
        return Vec::new();
    }
    let Some(program) = zellij_program() else {
        return Vec::new();
    };
    let mut found: Vec<String> = zellij::list_sessions(&program)
        .into_iter()
        .filter(|s| of_dead_lead(s))
        .collect();
    found.sort();
    found.dedup();
    found
}

/// Whether Zellij's socket directory is there (`$ZELLIJ_SOCKET_DIR`, else
/// `$XDG_RUNTIME_DIR/zellij`, else `$TMPDIR/zellij-<uid>`): without it there is no session.
fn zellij_socket_dir_exists() -> bool {
    let var = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = var("ZELLIJ_SOCKET_DIR") {
        return Path::new(&dir).is_dir();
    }
    if let Some(dir) = var("XDG_RUNTIME_DIR")
        && Path::new(&dir).join("zellij").is_dir()
    {
        return true;
    }
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join(format!("zellij-{uid}")).is_dir()
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
        match keep_reason(probe.owner, &probe.status) {
            None => match unreadable_team_file(home, &team) {
                Some(why) => out.orphans.push(Orphan::BrokenTeam {
                    team,
                    lead_pid: probe.recorded_pid,
                    why,
                }),
                None => out.orphans.push(Orphan::DeadTeam {
                    team,
                    lead_pid: probe.recorded_pid,
                    evidence: probe.status.evidence().to_vec(),
                }),
            },
            Some(why) => out.kept.push(Kept { team, why }),
        }
    }
    out.orphans.extend(
        dead_private_servers()
            .into_iter()
            .map(|socket| Orphan::PrivateServer { socket }),
    );
    out.orphans.extend(
        dead_private_sessions(home)
            .into_iter()
            .map(|session| Orphan::PrivateZellij { session }),
    );
    out.orphans
        .extend(
            teammate_panes_without_team(home)
                .into_iter()
                .map(|p| Orphan::TeammatePane {
                    pane: p.pane,
                    team: p.team,
                    name: p.name,
                    dead: p.dead,
                }),
        );
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

/// Teammate panes of this home on the user's tmux server whose team is gone (no
/// `config.json`: a late write may have made some of its directories again).
fn teammate_panes_without_team(home: &Home) -> Vec<TeammatePane> {
    if !TmuxServer::user_server_may_run() {
        return Vec::new();
    }
    let root = home.root.to_string_lossy();
    teammate_panes(&TmuxServer { socket: None }, &root)
        .into_iter()
        .filter(|p| store::team::team_gone(home, &p.team))
        .collect()
}

/// What may be removed (see [`survey`]).
pub fn find(home: &Home) -> Vec<Orphan> {
    survey(home).orphans
}

/// Kills the panes of a dead team's members on the user's server when they still carry the
/// member's title (pane ids are reused after a server restart, so the title must match); panes
/// of the other pane kinds are closed the same way on the terminal `clean` runs in (found as
/// the lead would find it), when it can tell their title.
fn kill_member_panes(file: &TeamFile, table: &ProcTable) {
    let server = TmuxServer { socket: None };
    let format = format!(
        "#{{pane_id}} #{{pane_pid}} #{{{}}}",
        super::tmux::NAME_OPTION
    );
    let listing = server
        .run(&["list-panes", "-a", "-F", &format])
        .unwrap_or_default();
    let env = CapturedEnv::from_process();
    let mut backends: Vec<(BackendKind, Option<Arc<dyn PaneBackend>>)> = Vec::new();
    for m in file.teammates() {
        let Some(kind) = m.backend_kind() else {
            continue;
        };
        if kind == BackendKind::Tmux {
            // Known by its processes (`--agent-id <name>@<team>` below the pane's program), or
            // by the name teamlead gave the pane (a dead pane runs nothing); never by its title,
            // which Claude Code rewrites.
            let agent = format!("{}@{}", m.name, file.name);
            let ours = listing.lines().any(|l| {
                let mut f = l.splitn(3, ' ');
                let (pane, pid, named) = (f.next(), f.next(), f.next());
                pane == Some(m.tmux_pane_id.as_str())
                    && (named == Some(m.name.as_str())
                        || pid
                            .and_then(|p| p.parse().ok())
                            .is_some_and(|pid| reap::tree_names(table, pid, &agent)))
            });
            if ours {
                let _ = server.run(&["kill-pane", "-t", &m.tmux_pane_id]);
            }
            continue;
        }
        if !kind.is_pane() || kind == BackendKind::Iterm2 {
            continue;
        }
        let backend = match backends.iter().find(|(k, _)| *k == kind) {
            Some((_, b)) => b.clone(),
            None => {
                let choice = detect::detect(&env, BackendRequest::for_kind(kind), &|_| false);
                let b = match choice {
                    // A private session of this process would be made, not found: skip.
                    BackendChoice::Zellij { session: None, .. } => None,
                    choice => super::pane_executor::backend_for(&choice),
                };
                backends.push((kind, b.clone()));
                b
            }
        };
        if let Some(backend) = backend
            && backend.title(&m.tmux_pane_id).as_deref() == Some(m.name.as_str())
        {
            let _ = backend.kill(&m.tmux_pane_id);
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
            if let Some(why) = keep_reason(probe.owner, &probe.status) {
                return Err(format!("left alone after all: {why}"));
            }
            let _hold = store::LeadLiveness::acquire(home, team).map_err(|e| e.to_string())?;
            let used_zellij =
                team_used_zellij(home, team, store::read_team(home, team).ok().as_ref());
            if let Some(pid) = lead_pid {
                let private = TmuxBackend::private(&TmuxServer::private_socket_name(*pid));
                if private.server.is_running() && !pid_alive(*pid) {
                    let _ = private.server.kill_server();
                }
                let session = zellij::private_session_name(*pid);
                if used_zellij
                    && let Some(program) = zellij_program()
                    && !pid_alive(*pid)
                    && zellij::list_sessions(&program).contains(&session)
                {
                    zellij::remove_session(&program, &session);
                }
            }
            store::team::delete_team_with(home, team, |file| {
                // Its panes, then every process still running as one of its teammates (a
                // `claude` behind its guard, a `teamlead teammate`), with what they started.
                let table = ProcTable::scan(SCAN_DEADLINE);
                kill_member_panes(file, &table);
                let table = ProcTable::scan(SCAN_DEADLINE);
                let pids: Vec<u32> = reap::team_processes(&table, &home.root, team)
                    .iter()
                    .map(|p| p.pid)
                    .collect();
                reap::stop_trees(&table, &pids, reap::TERM_WAIT);
                for m in file.members.iter() {
                    if let Some(path) = &m.worktree_path {
                        let _ = super::worktree::remove(Path::new(path));
                    }
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
        Orphan::PrivateZellij { session } => {
            if !of_dead_lead(session) {
                return Err("its lead is running again".to_string());
            }
            let program = zellij_program().ok_or("zellij is no longer on PATH")?;
            zellij::remove_session(&program, session);
            Ok(())
        }
        Orphan::PrivateServer { socket } => {
            if !of_dead_lead(socket) {
                return Err("its lead is running again".to_string());
            }
            let server = TmuxServer {
                socket: Some(socket.clone()),
            };
            let _ = server.kill_server();
            Ok(())
        }
        Orphan::TeammatePane {
            pane, team, name, ..
        } => {
            // Looked up again: the pane must still run that teammate, its team still be gone.
            let still = teammate_panes_without_team(home)
                .iter()
                .any(|p| &p.pane == pane && &p.team == team && &p.name == name);
            if !still {
                return Err("it is no longer there".to_string());
            }
            TmuxServer { socket: None }
                .run(&["kill-pane", "-t", pane])
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
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
