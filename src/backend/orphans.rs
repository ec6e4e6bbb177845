//! The orphan sweep behind `teamlead clean --orphans` and the lead's offer at start: teams whose
//! teamlead lead is dead, members whose pane is gone, private tmux servers of dead leads, and stale
//! lock directories. Finding is read-only; removing is a separate step so `--dry-run` can show it.

use std::path::{Path, PathBuf};

use super::tmux::{TmuxBackend, TmuxServer};
use crate::protocol::TeamFile;
use crate::store::{self, Home};

/// One thing left behind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Orphan {
    /// A team created by a teamlead lead that is no longer running.
    DeadTeam { team: String, lead_pid: Option<u32> },
    /// A pane member of a live team whose tmux pane no longer exists.
    GoneMember {
        team: String,
        name: String,
        pane: String,
    },
    /// A private tmux server (`-L teamlead-<pid>`) whose lead process is gone.
    PrivateServer { socket: String },
    /// A lock directory older than the stale limit.
    StaleLock { path: PathBuf },
}

impl std::fmt::Display for Orphan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Orphan::DeadTeam { team, lead_pid } => match lead_pid {
                Some(pid) => write!(f, "team {team}: its lead (pid {pid}) is gone"),
                None => write!(f, "team {team}: its lead is gone"),
            },
            Orphan::GoneMember { team, name, pane } => {
                write!(f, "team {team}: member {name} lost its pane {pane}")
            }
            Orphan::PrivateServer { socket } => {
                write!(f, "tmux server -L {socket}: its lead is gone")
            }
            Orphan::StaleLock { path } => write!(f, "stale lock directory {}", path.display()),
        }
    }
}

/// Is a process with this pid running?
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 || pid > i32::MAX as u32 {
        return false;
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    let r = unsafe { libc::kill(pid as i32, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The pid written in a team's liveness file, whether or not that lead still runs.
fn recorded_lead_pid(home: &Home, team: &str) -> Option<u32> {
    let path = home.lead_lock_path(team).ok()?;
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Was this team created by a teamlead lead (it has a liveness file)? Teams of Claude Code
/// leads have none and are never swept.
fn is_teamlead_team(home: &Home, team: &str) -> bool {
    home.lead_lock_path(team).is_ok_and(|p| p.exists())
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

/// The tmux server a team's panes live on: the lead's private server when it runs, else the
/// user's default server.
fn server_for(lead_pid: Option<u32>) -> TmuxServer {
    if let Some(pid) = lead_pid {
        let private = TmuxServer {
            socket: Some(TmuxServer::private_socket_name(pid)),
        };
        if private.is_running() {
            return private;
        }
    }
    TmuxServer { socket: None }
}

/// Everything left behind under `home` and on this machine's tmux.
pub fn find(home: &Home) -> Vec<Orphan> {
    let mut found = Vec::new();
    for team in home.list_teams().unwrap_or_default() {
        if is_teamlead_team(home, &team) && !store::liveness::is_lead_alive(home, &team) {
            found.push(Orphan::DeadTeam {
                lead_pid: recorded_lead_pid(home, &team),
                team: team.clone(),
            });
        } else if let Ok(file) = store::team::read_team(home, &team) {
            let server = server_for(recorded_lead_pid(home, &team));
            if file
                .teammates()
                .any(|m| m.backend_type.as_deref() == Some("tmux"))
            {
                let panes = server.pane_ids();
                for m in file.teammates() {
                    let is_tmux = m.backend_type.as_deref() == Some("tmux");
                    if is_tmux
                        && m.tmux_pane_id.starts_with('%')
                        && !panes.contains(&m.tmux_pane_id)
                    {
                        found.push(Orphan::GoneMember {
                            team: team.clone(),
                            name: m.name.clone(),
                            pane: m.tmux_pane_id.clone(),
                        });
                    }
                }
            }
        }
        found.extend(
            store::scan::stale_locks(home, &team)
                .into_iter()
                .map(|path| Orphan::StaleLock { path }),
        );
    }
    found.extend(
        dead_private_servers()
            .into_iter()
            .map(|socket| Orphan::PrivateServer { socket }),
    );
    found
}

/// Kills the panes of a dead team's members on the user's server when they still carry the
/// member's title (pane ids are reused after a server restart, so the title must match).
fn kill_member_panes(file: &TeamFile) {
    let server = TmuxServer { socket: None };
    let titles = server
        .run(&["list-panes", "-a", "-F", "#{pane_id} #{pane_title}"])
        .unwrap_or_default();
    for m in file.teammates() {
        let wanted = format!("{} {}", m.tmux_pane_id, m.name);
        if m.backend_type.as_deref() == Some("tmux") && titles.lines().any(|l| l == wanted) {
            let _ = server.run(&["kill-pane", "-t", &m.tmux_pane_id]);
        }
    }
}

/// Removes one orphan. Errors are one-line messages.
pub fn remove(home: &Home, orphan: &Orphan) -> Result<(), String> {
    match orphan {
        Orphan::DeadTeam { team, lead_pid } => {
            if let Some(pid) = lead_pid {
                let private = TmuxBackend::private(&TmuxServer::private_socket_name(*pid));
                if private.server.is_running() {
                    let _ = private.server.kill_server();
                }
            }
            store::team::delete_team_with(home, team, |file| {
                kill_member_panes(file);
                for m in file.members.iter() {
                    if let Some(path) = &m.worktree_path {
                        let _ = super::worktree::remove(Path::new(path));
                    }
                }
            })
            .map_err(|e| e.to_string())
        }
        Orphan::GoneMember { team, name, .. } => {
            store::team::remove_member(home, team, name).map_err(|e| e.to_string())?;
            let tasks = store::tasks::TaskList::new(home, team).map_err(|e| e.to_string())?;
            tasks.unassign_owner(name).map_err(|e| e.to_string())?;
            Ok(())
        }
        Orphan::PrivateServer { socket } => {
            let server = TmuxServer {
                socket: Some(socket.clone()),
            };
            let _ = server.kill_server();
            Ok(())
        }
        Orphan::StaleLock { path } => match std::fs::remove_dir(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(format!("could not remove {}: {e}", path.display())),
        },
    }
}
