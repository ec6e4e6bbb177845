//! Backend choice, once per lead session, from the environment captured at start (PROTOCOL.md 6):
//! inside tmux → tmux; in iTerm2 with a working `it2` → iTerm2; tmux on PATH → a private tmux
//! server; else in-process. `--backend` overrides it.

use std::collections::HashMap;
use std::path::Path;

/// What the user asked for with `--backend`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendRequest {
    #[default]
    Auto,
    Tmux,
    Iterm2,
    InProcess,
}

impl std::str::FromStr for BackendRequest {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(BackendRequest::Auto),
            "tmux" => Ok(BackendRequest::Tmux),
            "iterm2" => Ok(BackendRequest::Iterm2),
            "in-process" => Ok(BackendRequest::InProcess),
            other => Err(format!(
                "unknown backend `{other}` (expected auto, tmux, iterm2 or in-process)"
            )),
        }
    }
}

/// The environment variables that matter, captured once at start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedEnv {
    pub tmux: Option<String>,
    pub tmux_pane: Option<String>,
    pub term_program: Option<String>,
    pub iterm_session_id: Option<String>,
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
    /// Inline teammates; `notice` says why when a pane backend was wanted but is unusable.
    InProcess { notice: Option<String> },
}

impl BackendChoice {
    /// The label shown in the UI and written as `backendType`.
    pub fn label(&self) -> &'static str {
        match self {
            BackendChoice::TmuxInside { .. } | BackendChoice::TmuxPrivate => "tmux",
            BackendChoice::Iterm2 { .. } => "iterm2",
            BackendChoice::InProcess { .. } => "in-process",
        }
    }
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
        BackendRequest::Auto => {
            if let Some(pane) = inside_tmux {
                return BackendChoice::TmuxInside { lead_pane: pane };
            }
            if let Some(choice) = iterm() {
                return choice;
            }
            if tmux_bin.is_some() {
                return BackendChoice::TmuxPrivate;
            }
            BackendChoice::InProcess {
                notice: Some("no tmux or iTerm2 found: teammates run in-process".into()),
            }
        }
    }
}
