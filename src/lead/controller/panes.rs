//! Pane teammates in the lead: the pane session chosen at start (tmux inside or a private server,
//! iTerm2, or none), spawning into a pane, kill, hide/show (recorded in `hiddenPaneIds`), jump,
//! and killing every pane (and the private server) before the team is deleted.

use std::sync::Arc;

use super::state::Controller;
use crate::backend::PaneBackend;
use crate::backend::detect::BackendChoice;
use crate::backend::executor::{SpawnRequest, TeammateExecutor};
use crate::backend::iterm2::Iterm2Backend;
use crate::backend::launch::TeammateProgram;
use crate::backend::pane_executor::PaneExecutor;
use crate::backend::tmux::{TmuxBackend, TmuxServer};
use crate::lead::view::LeadEvent;
use crate::store::{self, Home};

/// Everything the lead keeps about its pane backend.
pub struct PaneSession {
    pub executor: Arc<PaneExecutor>,
    /// What runs builtin teammates (checked before each spawn).
    pub program: TeammateProgram,
    /// The private server (outside tmux), killed at quit.
    pub private: Option<TmuxServer>,
    /// How the user sees the private server.
    pub attach_hint: Option<String>,
}

impl PaneSession {
    /// The pane session for a backend choice; `None` for in-process.
    pub fn open(
        choice: &BackendChoice,
        home: &Home,
        team: &str,
        lead_session_id: &str,
        claude_by_default: bool,
        engine: &str,
    ) -> Option<PaneSession> {
        let program = if claude_by_default {
            TeammateProgram::Claude {
                binary: crate::backend::launch::claude_binary(&|k| std::env::var(k).ok()),
            }
        } else {
            TeammateProgram::Teamlead {
                binary: teamlead_binary(),
                engine: engine.to_string(),
            }
        };
        let (backend, private, attach_hint): (Arc<dyn PaneBackend>, _, _) = match choice {
            BackendChoice::TmuxInside { lead_pane } => {
                (Arc::new(TmuxBackend::inside(lead_pane)), None, None)
            }
            BackendChoice::TmuxPrivate => {
                let socket = TmuxServer::private_socket_name(std::process::id());
                let backend = TmuxBackend::private(&socket);
                let hint = backend.attach_hint();
                let server = backend.server.clone();
                (Arc::new(backend), Some(server), hint)
            }
            BackendChoice::Iterm2 { it2, session_id } => {
                (Arc::new(Iterm2Backend::new(it2, session_id)), None, None)
            }
            BackendChoice::InProcess { .. } => return None,
        };
        let executor = PaneExecutor::new(
            home,
            team,
            backend,
            program.clone(),
            Some(lead_session_id.to_string()),
        );
        Some(PaneSession {
            executor: Arc::new(executor),
            program,
            private,
            attach_hint,
        })
    }
}

/// This binary's path, for builtin pane teammates. A binary replaced while the lead runs (a
/// rebuild) reads as `<path> (deleted)` on Linux: the path itself is what panes should run.
fn teamlead_binary() -> String {
    match std::env::current_exe() {
        Ok(path) => {
            let path = path.to_string_lossy();
            path.strip_suffix(" (deleted)").unwrap_or(&path).to_string()
        }
        Err(_) => "teamlead".to_string(),
    }
}

impl Controller {
    /// Does `name` run in a pane of this session?
    pub fn is_pane_member(&self, name: &str) -> bool {
        self.team_file.member(name).is_some_and(|m| {
            matches!(m.backend_type.as_deref(), Some("tmux") | Some("iterm2"))
                && m.tmux_pane_id != "in-process"
        })
    }

    /// Starts a teammate whose member entry exists, in a pane. Returns the pane id.
    pub async fn spawn_in_pane(&mut self, request: SpawnRequest) -> Result<String, String> {
        let Some(panes) = &self.panes else {
            return Err("no pane backend in this session".to_string());
        };
        let executor = panes.executor.clone();
        let spawned = executor.spawn(request).await.map_err(|e| e.to_string())?;
        crate::lead::emergency::add_pane(&spawned.pane_id);
        Ok(spawned.pane_id)
    }

    /// Kills a pane teammate's pane (its process dies with it).
    pub async fn kill_pane(&mut self, name: &str) {
        let Some(panes) = &self.panes else { return };
        let executor = panes.executor.clone();
        if let Ok(pane) = executor.pane_of(name) {
            crate::lead::emergency::remove_pane(&pane);
        }
        if let Err(e) = executor.kill(name).await {
            tracing::info!("killing the pane of {name}: {e}");
        }
    }

    /// A pane teammate approved its shutdown: its pane should close by itself; make sure of it
    /// in the background.
    pub fn release_pane(&mut self, name: &str) {
        let Some(panes) = &self.panes else { return };
        let executor = panes.executor.clone();
        if let Ok(pane) = executor.pane_of(name) {
            crate::lead::emergency::remove_pane(&pane);
        }
        let name = name.to_string();
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(3);
            while executor.is_active(&name) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            let _ = executor.kill(&name).await;
        });
    }

    /// `h` in the teams dialog: hide a visible pane, show a hidden one; `hiddenPaneIds` follows.
    pub async fn toggle_hidden(&mut self, name: &str) {
        let Some(executor) = self.panes.as_ref().map(|p| p.executor.clone()) else {
            return;
        };
        let Some(pane) = self.team_file.member(name).map(|m| m.tmux_pane_id.clone()) else {
            return self.no_such_teammate(name);
        };
        let hidden = self
            .team_file
            .hidden_pane_ids
            .as_ref()
            .is_some_and(|ids| ids.contains(&pane));
        let result = if hidden {
            executor.show(name).await
        } else {
            executor.hide(name).await
        };
        if let Err(e) = result {
            return self.note(format!(
                "Could not {} {name}: {e}",
                if hidden { "show" } else { "hide" }
            ));
        }
        let edit = store::team::edit_team(&self.home, &self.team, |file| {
            let ids = file.hidden_pane_ids.get_or_insert_with(Vec::new);
            ids.retain(|p| p != &pane);
            if !hidden {
                ids.push(pane.clone());
            }
            Ok(())
        });
        if let Err(e) = edit {
            self.note(format!("Could not record the hidden pane: {e}"));
        }
        self.reload_team();
        self.note(if hidden {
            format!("{name}'s pane is back.")
        } else {
            format!("{name}'s pane is hidden (h again to bring it back).")
        });
    }

    /// Enter/v in the teams dialog: go to the teammate's pane.
    pub async fn jump(&mut self, name: &str) {
        let Some(panes) = &self.panes else { return };
        let executor = panes.executor.clone();
        let hint = panes.attach_hint.clone();
        let private = panes.private.clone();
        match executor.focus(name).await {
            Ok(()) => match (private.and_then(|p| p.socket), hint) {
                (Some(socket), Some(hint)) => {
                    // Outside tmux: the lead's screen steps aside while the user is attached to
                    // the private server at that pane, and comes back when they detach.
                    self.note(format!(
                        "Attached to {name}'s pane (`{hint}`); detach with ctrl+b d to come back."
                    ));
                    self.emit(LeadEvent::HandOverTerminal {
                        argv: vec![
                            "tmux".into(),
                            "-L".into(),
                            socket,
                            "attach".into(),
                            "-t".into(),
                            crate::backend::tmux::SWARM_SESSION.into(),
                        ],
                    });
                }
                _ => self.note(format!("Jumped to {name}'s pane.")),
            },
            Err(e) => self.note(format!("Could not jump to {name}: {e}")),
        }
    }

    /// `/clean`: removes what dead sessions left behind (never this session's team).
    pub fn clean_orphans(&mut self) {
        use crate::backend::orphans;
        let found = orphans::find(&self.home);
        if found.is_empty() {
            return self.note("Nothing to clean.");
        }
        for orphan in found {
            match orphans::remove(&self.home, &orphan) {
                Ok(()) => self.note(format!("Removed: {orphan}.")),
                Err(e) => self.note(format!("Could not remove {orphan}: {e}")),
            }
        }
    }

    /// At quit: every pane still open is killed, then the private server.
    pub async fn kill_all_panes(&mut self) {
        let Some(panes) = &self.panes else { return };
        let executor = panes.executor.clone();
        let private = panes.private.clone();
        let mut names: Vec<String> = self
            .team_file
            .teammates()
            .filter(|m| matches!(m.backend_type.as_deref(), Some("tmux") | Some("iterm2")))
            .map(|m| m.name.clone())
            .collect();
        // Panes still being released after a shutdown: their members are gone from the team
        // file, and the lead may exit before the release task kills them.
        for name in executor.names() {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        for name in names {
            let _ = executor.kill(&name).await;
        }
        if let Some(server) = private {
            let _ = tokio::task::spawn_blocking(move || server.kill_server()).await;
        }
        crate::lead::emergency::clear_panes();
    }
}
