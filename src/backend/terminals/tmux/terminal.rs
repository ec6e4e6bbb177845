//! tmux as a [`Terminal`]: found by `TMUX` and `TMUX_PANE` (the lead's pane), else a private
//! server `-L teamlead-<lead pid>` when `tmux` is on PATH (the one terminal `auto` takes with
//! the lead outside it); a teammate's pane is `TMUX_PANE`. What dead leads left: their private
//! servers, and panes on the user's server that run (or ran) a `teamlead teammate` of this home
//! whose team is gone ([`teammate_panes`]); a dead team's member panes are known by the
//! processes below them or by the name teamlead gave them, never by their title.

use std::sync::Arc;

use super::teammate_panes::{TeammatePane, teammate_panes};
use super::{NAME_OPTION, TmuxBackend, TmuxServer};
use crate::backend::detect::CapturedEnv;
use crate::backend::lead_probe::procs::ProcTable;
use crate::backend::orphans::{of_dead_lead, pid_alive};
use crate::backend::reap;
use crate::backend::terminals::{About, Leftover, PaneChoice, Probe, Terminal};
use crate::backend::{BackendKind, PaneBackend};
use crate::protocol::{Member, TeamFile};
use crate::store::{self, Home};

/// The tmux terminal.
pub struct Tmux;

static ABOUT: About = About {
    kind: BackendKind::Tmux,
    help: "tmux panes (the user's server, or a private one outside tmux)",
    inside: Some("inside tmux"),
    auto_elsewhere: Some("tmux on PATH → a private tmux server"),
    unusable: "is not installed",
    variables: &["TMUX", "TMUX_PANE"],
};

impl Terminal for Tmux {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn inside(&self, env: &CapturedEnv, _probe: Probe<'_>) -> Option<PaneChoice> {
        env.get("TMUX")?;
        let pane = env.var("TMUX_PANE")?;
        Some(PaneChoice::inside(
            BackendKind::Tmux,
            "tmux",
            Some(pane),
            None,
        ))
    }

    fn elsewhere(&self, env: &CapturedEnv, _asked: bool) -> Option<PaneChoice> {
        env.which("tmux")?;
        Some(PaneChoice::private(BackendKind::Tmux, "tmux"))
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        match choice.lead_pane() {
            Some(pane) => Arc::new(TmuxBackend::inside(pane)),
            None => Arc::new(TmuxBackend::private(&TmuxServer::private_socket_name(
                std::process::id(),
            ))),
        }
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.var("TMUX_PANE")
    }

    fn private_label(&self, name: &str) -> String {
        format!("tmux server -L {name}")
    }

    fn leftovers(&self, home: &Home) -> Vec<Leftover> {
        let servers = dead_private_servers()
            .into_iter()
            .map(|name| Leftover::Private {
                kind: BackendKind::Tmux,
                name,
            });
        let panes = panes_without_team(home)
            .into_iter()
            .map(|p| Leftover::Pane {
                kind: BackendKind::Tmux,
                pane: p.pane,
                team: p.team,
                name: p.name,
                dead: p.dead,
            });
        servers.chain(panes).collect()
    }

    fn remove_leftover(&self, home: &Home, leftover: &Leftover) -> Result<(), String> {
        match leftover {
            Leftover::Private { name, .. } => {
                if !of_dead_lead(name) {
                    return Err("its lead is running again".to_string());
                }
                let server = TmuxServer {
                    socket: Some(name.clone()),
                };
                let _ = server.kill_server();
                Ok(())
            }
            Leftover::Pane {
                pane, team, name, ..
            } => {
                // Looked up again: the pane must still run that teammate, its team still be gone.
                let still = panes_without_team(home)
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

    fn end_private(&self, _home: &Home, _team: &str, lead_pid: u32) {
        let private = TmuxBackend::private(&TmuxServer::private_socket_name(lead_pid));
        if private.server.is_running() && !pid_alive(lead_pid) {
            let _ = private.server.kill_server();
        }
    }

    /// Panes on the user's server: known by their processes (`--agent-id <name>@<team>` below
    /// the pane's program), or by the name teamlead gave the pane (a dead pane runs nothing);
    /// never by their title, which Claude Code rewrites.
    fn close_member_panes(&self, team: &TeamFile, members: &[&Member], table: &ProcTable) {
        if members.is_empty() {
            return;
        }
        let server = TmuxServer { socket: None };
        let format = format!("#{{pane_id}} #{{pane_pid}} #{{{NAME_OPTION}}}");
        let listing = server
            .run(&["list-panes", "-a", "-F", &format])
            .unwrap_or_default();
        for m in members {
            let agent = format!("{}@{}", m.name, team.name);
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
        }
    }
}

/// Private servers of dead leads, from the socket directory.
fn dead_private_servers() -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(TmuxServer::socket_dir()) else {
        return Vec::new();
    };
    let mut found: Vec<String> = entries
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_string))
        .filter(|name| of_dead_lead(name))
        .collect();
    found.sort();
    found
}

/// Teammate panes of this home on the user's tmux server whose team is gone (no
/// `config.json`: a late write may have made some of its directories again).
fn panes_without_team(home: &Home) -> Vec<TeammatePane> {
    if !TmuxServer::user_server_may_run() {
        return Vec::new();
    }
    let root = home.root.to_string_lossy();
    teammate_panes(&TmuxServer { socket: None }, &root)
        .into_iter()
        .filter(|p| store::team::team_gone(home, &p.team))
        .collect()
}
