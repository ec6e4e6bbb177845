//! Zellij as a [`Terminal`]: inside Zellij (`ZELLIJ`, its session's name, the lead's pane) when
//! `zellij` is on PATH; asked for by name outside it, a private background session
//! `teamlead-<lead pid>` (`auto` never makes one); a teammate's pane is `ZELLIJ_PANE_ID`. What
//! dead leads left: their private sessions (running, or kept to be resurrected). No `zellij` is
//! run on a guess: the CLI writes into the user's home (`~/.cache/zellij`) and its temporary
//! directory even to list sessions, which a dry run or a lead's start must not do, so only when
//! Zellij's socket directory exists and teamlead's own records say one of its leads used Zellij.

use std::path::Path;
use std::sync::Arc;

use super::{
    ZellijBackend, list_sessions, normalize_pane_id, private_session_name, remove_session,
};
use crate::backend::detect::CapturedEnv;
use crate::backend::orphans::{of_dead_lead, pid_alive};
use crate::backend::terminals::{About, Leftover, PaneChoice, Probe, Terminal};
use crate::backend::{BackendKind, PaneBackend};
use crate::protocol::TeamFile;
use crate::store::{self, Home};

/// The Zellij terminal.
pub struct Zellij;

static ABOUT: About = About {
    kind: BackendKind::Zellij,
    help: "Zellij panes (beside the lead inside Zellij, else a private background session)",
    inside: Some("inside Zellij"),
    auto_elsewhere: None,
    unusable: "is not installed",
    variables: &["ZELLIJ", "ZELLIJ_SESSION_NAME", "ZELLIJ_PANE_ID"],
};

impl Terminal for Zellij {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn inside(&self, env: &CapturedEnv, _probe: Probe<'_>) -> Option<PaneChoice> {
        let zellij = env.which("zellij")?;
        env.get("ZELLIJ")?;
        let session = env.var("ZELLIJ_SESSION_NAME")?;
        Some(PaneChoice::inside(
            BackendKind::Zellij,
            &zellij,
            env.var("ZELLIJ_PANE_ID"),
            Some(session),
        ))
    }

    fn elsewhere(&self, env: &CapturedEnv, asked: bool) -> Option<PaneChoice> {
        let zellij = env.which("zellij").filter(|_| asked)?;
        Some(PaneChoice::private(BackendKind::Zellij, &zellij))
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        match choice.address() {
            Some(session) => Arc::new(ZellijBackend::inside(
                &choice.program,
                session,
                choice.lead_pane(),
            )),
            None => Arc::new(ZellijBackend::private(
                &choice.program,
                &private_session_name(std::process::id()),
            )),
        }
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.get("ZELLIJ")?;
        env.get("ZELLIJ_PANE_ID").map(normalize_pane_id)
    }

    fn leftovers(&self, home: &Home) -> Vec<Leftover> {
        dead_private_sessions(home)
            .into_iter()
            .map(|name| Leftover::Private {
                kind: BackendKind::Zellij,
                name,
            })
            .collect()
    }

    fn remove_leftover(&self, _home: &Home, leftover: &Leftover) -> Result<(), String> {
        let Leftover::Private { name, .. } = leftover else {
            return Err("Zellij leaves no such thing".to_string());
        };
        if !of_dead_lead(name) {
            return Err("its lead is running again".to_string());
        }
        let program = zellij_program().ok_or("zellij is no longer on PATH")?;
        remove_session(&program, name);
        Ok(())
    }

    fn end_private(&self, home: &Home, team: &str, lead_pid: u32) {
        if !team_used_zellij(home, team, store::read_team(home, team).ok().as_ref()) {
            return;
        }
        let session = private_session_name(lead_pid);
        if let Some(program) = zellij_program()
            && !pid_alive(lead_pid)
            && list_sessions(&program).contains(&session)
        {
            remove_session(&program, &session);
        }
    }
}

/// The `zellij` on PATH, if any.
fn zellij_program() -> Option<String> {
    CapturedEnv::from_process().which("zellij")
}

/// Do teamlead's own records in `home` say a Zellij session of a lead may exist? A team whose
/// session record (`.teamlead/session.json`) or a member of whose `config.json` names Zellij.
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
    // A person who never used Zellij has no socket directory, no session, and gets nothing
    // new on disk from a sweep; and teamlead's records must say one of its leads used Zellij.
    if !zellij_socket_dir_exists() || !zellij_recorded(home) {
        return Vec::new();
    }
    let Some(program) = zellij_program() else {
        return Vec::new();
    };
    let mut found: Vec<String> = list_sessions(&program)
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
