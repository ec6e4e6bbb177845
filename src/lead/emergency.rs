//! Last-resort clean-up when the lead itself panics: kill every teammate pane it opened (and its
//! private tmux server), then delete the team, so a crash leaves no orphan panes, servers or team
//! files behind. The lead registers what it owns as it goes; the panic paths call [`run`] (the
//! binary's panic hook for the main thread, the controller task's unwind guard for the lead).
//! Graceful quits never need it: they clear the registration when done.

use std::sync::{Arc, Mutex};

use crate::backend::PaneBackend;
use crate::backend::tmux::TmuxServer;
use crate::store::{self, Home};

struct Owned {
    home: Home,
    team: String,
    backend: Option<Arc<dyn PaneBackend>>,
    private: Option<TmuxServer>,
    panes: Vec<String>,
}

static OWNED: Mutex<Option<Owned>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Option<Owned>) -> R) -> R {
    let mut guard = OWNED.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut guard)
}

/// The lead of `team` runs; `backend` hosts its pane teammates.
pub fn register(
    home: &Home,
    team: &str,
    backend: Option<Arc<dyn PaneBackend>>,
    private: Option<TmuxServer>,
) {
    with(|o| {
        *o = Some(Owned {
            home: home.clone(),
            team: team.to_string(),
            backend,
            private,
            panes: Vec::new(),
        })
    });
}

/// A pane was opened.
pub fn add_pane(pane: &str) {
    with(|o| {
        if let Some(o) = o {
            o.panes.push(pane.to_string());
        }
    });
}

/// A pane was closed.
pub fn remove_pane(pane: &str) {
    with(|o| {
        if let Some(o) = o {
            o.panes.retain(|p| p != pane);
        }
    });
}

/// Every pane was closed.
pub fn clear_panes() {
    with(|o| {
        if let Some(o) = o {
            o.panes.clear();
        }
    });
}

/// The lead finished cleanly: nothing left to do.
pub fn unregister() {
    with(|o| *o = None);
}

/// Kills the panes, the private server, and deletes the team (worktrees first). Runs once.
pub fn run() {
    let Some(owned) = with(|o| o.take()) else {
        return;
    };
    if let Some(backend) = &owned.backend {
        for pane in &owned.panes {
            let _ = backend.kill(pane);
        }
    }
    if let Some(server) = &owned.private {
        let _ = server.kill_server();
    }
    let _ = store::team::delete_team_with(&owned.home, &owned.team, |file| {
        for m in &file.members {
            if let Some(path) = &m.worktree_path {
                let _ = crate::backend::worktree::remove(std::path::Path::new(path));
            }
        }
    });
    tracing::error!(
        "the lead crashed: its panes were killed and team {} removed",
        owned.team
    );
}
