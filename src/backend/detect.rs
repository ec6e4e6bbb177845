//! Backend choice, once per lead session, from the environment captured at start (PROTOCOL.md 6),
//! inside a multiplexer first: inside tmux → tmux; inside Zellij → Zellij; in kitty with remote
//! control (`KITTY_LISTEN_ON`) → kitty; in WezTerm → WezTerm; in iTerm2 with a working `it2` →
//! iTerm2; tmux on PATH → a private tmux server; else in-process. `--backend` overrides it
//! (`--backend zellij` outside Zellij: a private background session).

use std::collections::HashMap;
use std::path::Path;

use crate::protocol::BackendRequest;

/// The environment variables that matter, captured once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedEnv {
    pub tmux: Option<String>,
    pub tmux_pane: Option<String>,
    pub term_program: Option<String>,
    pub iterm_session_id: Option<String>,
    pub zellij: Option<String>,
    pub zellij_session_name: Option<String>,
    pub zellij_pane_id: Option<String>,
    pub kitty_window_id: Option<String>,
    pub kitty_listen_on: Option<String>,
    pub wezterm_pane: Option<String>,
    pub path: Option<String>,
}

impl CapturedEnv {
    /// Reads the process environment.
    pub fn from_process() -> CapturedEnv {
        let get = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        CapturedEnv {
            tmux: get("TMUX"),
            tmux_pane: get("TMUX_PANE"),
            term_program: get("TERM_PROGRAM"),
            iterm_session_id: get("ITERM_SESSION_ID"),
            zellij: get("ZELLIJ"),
            zellij_session_name: get("ZELLIJ_SESSION_NAME"),
            zellij_pane_id: get("ZELLIJ_PANE_ID"),
            kitty_window_id: get("KITTY_WINDOW_ID"),
            kitty_listen_on: get("KITTY_LISTEN_ON"),
            wezterm_pane: get("WEZTERM_PANE"),
            path: get("PATH"),
        }
    }

    /// From a map (tests).
    pub fn from_map(vars: &HashMap<&str, &str>) -> CapturedEnv {
        let get = |k: &str| vars.get(k).map(|v| v.to_string());
        CapturedEnv {
            tmux: get("TMUX"),
            tmux_pane: get("TMUX_PANE"),
            term_program: get("TERM_PROGRAM"),
            iterm_session_id: get("ITERM_SESSION_ID"),
            zellij: get("ZELLIJ"),
            zellij_session_name: get("ZELLIJ_SESSION_NAME"),
            zellij_pane_id: get("ZELLIJ_PANE_ID"),
            kitty_window_id: get("KITTY_WINDOW_ID"),
            kitty_listen_on: get("KITTY_LISTEN_ON"),
            wezterm_pane: get("WEZTERM_PANE"),
            path: get("PATH"),
        }
    }

    /// Looks a program up on the captured PATH.
    pub fn which(&self, program: &str) -> Option<String> {
        let path = self.path.as_deref()?;
        std::env::split_paths(path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
            .map(|p| p.to_string_lossy().into_owned())
    }

    fn in_iterm(&self) -> bool {
        self.term_program.as_deref() == Some("iTerm.app") || self.iterm_session_id.is_some()
    }

    fn in_wezterm(&self) -> bool {
        self.term_program.as_deref() == Some("WezTerm") || self.wezterm_pane.is_some()
    }
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The backend chosen for the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BackendChoice {
    /// Inside the user's tmux; the lead's pane.
    TmuxInside { lead_pane: String },
    /// A private tmux server.
    TmuxPrivate,
    /// iTerm2 through `it2` (its path) splitting the lead's session.
    Iterm2 { it2: String, session_id: String },
    /// Zellij (its path): inside the lead's session `session` beside its pane, or (no session)
    /// a private background session.
    Zellij {
        zellij: String,
        session: Option<String>,
        lead_pane: Option<String>,
    },
    /// kitty (its path) through remote control at `listen_on`, beside the lead's window.
    Kitty {
        kitty: String,
        listen_on: String,
        window_id: String,
    },
    /// WezTerm (its path) through `wezterm cli`, beside the lead's pane when it has one.
    Wezterm {
        wezterm: String,
        lead_pane: Option<String>,
    },
    /// Inline teammates; `notice` says why when a pane backend was wanted but is unusable.
    InProcess { notice: Option<String> },
}

impl BackendChoice {
    /// The label shown in the UI and written as `backendType`.
    pub fn label(&self) -> &'static str {
        match self {
            BackendChoice::TmuxInside { .. } | BackendChoice::TmuxPrivate => "tmux",
            BackendChoice::Iterm2 { .. } => "iterm2",
            BackendChoice::Zellij { .. } => "zellij",
            BackendChoice::Kitty { .. } => "kitty",
            BackendChoice::Wezterm { .. } => "wezterm",
            BackendChoice::InProcess { .. } => "in-process",
        }
    }
}

/// Zellij: inside the lead's session when `ZELLIJ` and its session name are set, else (when
/// `private` is allowed) a private session; `None` without a `zellij` on PATH.
fn zellij(env: &CapturedEnv, private: bool) -> Option<BackendChoice> {
    let zellij = env.which("zellij")?;
    let inside = env.zellij.is_some() && env.zellij_session_name.is_some();
    (inside || private).then(|| BackendChoice::Zellij {
        zellij,
        session: env.zellij_session_name.clone().filter(|_| inside),
        lead_pane: env.zellij_pane_id.clone().filter(|_| inside),
    })
}

/// kitty with remote control: `KITTY_WINDOW_ID` and `KITTY_LISTEN_ON` set, `kitty` on PATH.
fn kitty(env: &CapturedEnv) -> Option<BackendChoice> {
    Some(BackendChoice::Kitty {
        kitty: env.which("kitty")?,
        listen_on: env.kitty_listen_on.clone()?,
        window_id: env.kitty_window_id.clone()?,
    })
}

/// WezTerm: `WEZTERM_PANE` or `TERM_PROGRAM=WezTerm`, `wezterm` on PATH.
fn wezterm(env: &CapturedEnv) -> Option<BackendChoice> {
    if !env.in_wezterm() {
        return None;
    }
    Some(BackendChoice::Wezterm {
        wezterm: env.which("wezterm")?,
        lead_pane: env.wezterm_pane.clone(),
    })
}

/// Chooses the backend. `it2_works` runs `it2 session list` (injected so tests need no iTerm2).
pub fn detect(
    env: &CapturedEnv,
    request: BackendRequest,
    it2_works: &dyn Fn(&str) -> bool,
) -> BackendChoice {
    let inside_tmux = match (&env.tmux, &env.tmux_pane) {
        (Some(_), Some(pane)) => Some(pane.clone()),
        _ => None,
    };
    let tmux_bin = env.which("tmux");
    let iterm = || {
        if !env.in_iterm() {
            return None;
        }
        let it2 = env.which("it2")?;
        it2_works(&it2).then(|| BackendChoice::Iterm2 {
            it2,
            session_id: env.iterm_session_id.clone().unwrap_or_default(),
        })
    };
    let tmux = || match (&inside_tmux, &tmux_bin) {
        (Some(pane), _) => Some(BackendChoice::TmuxInside {
            lead_pane: pane.clone(),
        }),
        (None, Some(_)) => Some(BackendChoice::TmuxPrivate),
        _ => None,
    };
    match request {
        BackendRequest::InProcess => BackendChoice::InProcess { notice: None },
        BackendRequest::Tmux => tmux().unwrap_or(BackendChoice::InProcess {
            notice: Some("tmux was asked for but is not installed: teammates run in-process".into()),
        }),
        BackendRequest::Iterm2 => iterm().unwrap_or(BackendChoice::InProcess {
            notice: Some(
                "iTerm2 was asked for but `it2 session list` does not work: teammates run in-process"
                    .into(),
            ),
        }),
        BackendRequest::Zellij => zellij(env, true).unwrap_or(BackendChoice::InProcess {
            notice: Some("Zellij was asked for but is not installed: teammates run in-process".into()),
        }),
        BackendRequest::Kitty => kitty(env).unwrap_or(BackendChoice::InProcess {
            notice: Some(
                "kitty was asked for but this is not a kitty window with remote control (KITTY_LISTEN_ON): teammates run in-process"
                    .into(),
            ),
        }),
        BackendRequest::Wezterm => wezterm(env).unwrap_or(BackendChoice::InProcess {
            notice: Some(
                "WezTerm was asked for but this is not a WezTerm pane with `wezterm` on PATH: teammates run in-process"
                    .into(),
            ),
        }),
        BackendRequest::Auto => {
            if let Some(pane) = inside_tmux {
                return BackendChoice::TmuxInside { lead_pane: pane };
            }
            let inside = || zellij(env, false).or_else(|| kitty(env)).or_else(|| wezterm(env));
            if let Some(choice) = inside().or_else(iterm) {
                return choice;
            }
            if tmux_bin.is_some() {
                return BackendChoice::TmuxPrivate;
            }
            BackendChoice::InProcess {
                notice: Some(
                    "no tmux, Zellij, kitty, WezTerm or iTerm2 found: teammates run in-process".into(),
                ),
            }
        }
    }
}
