//! Backend choice, once per lead session, from the environment captured at start (PROTOCOL.md
//! 6). `auto` asks each terminal of the registry ([`TERMINALS`], in its order) whether the lead
//! runs inside it and can drive it (inside tmux → tmux; inside Zellij → Zellij; in kitty with
//! remote control → kitty; in WezTerm → WezTerm; in iTerm2 with a working `it2` → iTerm2), then
//! whether one makes panes elsewhere unasked (tmux on PATH → a private tmux server); else
//! in-process. `--backend NAME` asks that terminal only, inside or elsewhere (`--backend zellij`
//! outside Zellij: a private background session), and says why when it cannot be used.

use std::collections::BTreeMap;
use std::path::Path;

use super::terminals::{PaneChoice, Probe, TERMINALS, terminal};
use crate::protocol::{BackendKind, BackendRequest};

/// Variables every detection reads besides the terminals' own.
const COMMON_VARIABLES: [&str; 2] = ["PATH", "TERM_PROGRAM"];

/// The environment variables that matter (`PATH`, `TERM_PROGRAM` and those each terminal
/// names in its `About::variables`), captured once at start; empty values count as unset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CapturedEnv {
    vars: BTreeMap<String, String>,
}

impl CapturedEnv {
    /// Reads the process environment.
    pub fn from_process() -> CapturedEnv {
        let names = COMMON_VARIABLES.into_iter().chain(
            TERMINALS
                .iter()
                .flat_map(|t| t.about().variables.iter().copied()),
        );
        let vars = names
            .filter_map(|k| {
                let v = std::env::var(k).ok().filter(|v| !v.is_empty())?;
                Some((k.to_string(), v))
            })
            .collect();
        CapturedEnv { vars }
    }

    /// From a map (tests).
    pub fn from_map<K: AsRef<str>, V: AsRef<str>>(
        vars: impl IntoIterator<Item = (K, V)>,
    ) -> CapturedEnv {
        CapturedEnv {
            vars: vars
                .into_iter()
                .filter(|(_, v)| !v.as_ref().is_empty())
                .map(|(k, v)| (k.as_ref().to_string(), v.as_ref().to_string()))
                .collect(),
        }
    }

    /// A captured variable.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// A captured variable, owned.
    pub fn var(&self, name: &str) -> Option<String> {
        self.get(name).map(str::to_string)
    }

    /// Looks a program up on the captured PATH.
    pub fn which(&self, program: &str) -> Option<String> {
        let path = self.get("PATH")?;
        std::env::split_paths(path)
            .map(|d| d.join(program))
            .find(|p| is_executable(p))
            .map(|p| p.to_string_lossy().into_owned())
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
    /// Panes of a terminal.
    Panes(PaneChoice),
    /// Inline teammates; `notice` says why when a pane backend was wanted but is unusable.
    InProcess { notice: Option<String> },
}

impl BackendChoice {
    /// The kind of its teammates.
    pub fn kind(&self) -> BackendKind {
        match self {
            BackendChoice::Panes(panes) => panes.kind,
            BackendChoice::InProcess { .. } => BackendKind::InProcess,
        }
    }

    /// The label shown in the UI and written as `backendType`.
    pub fn label(&self) -> &'static str {
        self.kind().as_str()
    }
}

/// Chooses the backend. `probe` asks a terminal's CLI whether it answers (`it2 session list`;
/// injected so tests need no iTerm2: [`super::terminals::answers`] is the real one).
pub fn detect(env: &CapturedEnv, request: BackendRequest, probe: Probe<'_>) -> BackendChoice {
    let kind = match request {
        BackendRequest::Auto => {
            let found = TERMINALS
                .iter()
                .find_map(|t| t.inside(env, probe))
                .or_else(|| TERMINALS.iter().find_map(|t| t.elsewhere(env, false)));
            return match found {
                Some(panes) => BackendChoice::Panes(panes),
                None => BackendChoice::InProcess {
                    notice: Some(format!(
                        "no {} found: teammates run in-process",
                        super::terminals::auto_terminals()
                    )),
                },
            };
        }
        BackendRequest::Kind(kind) => kind,
    };
    let Some(asked) = terminal(kind) else {
        return BackendChoice::InProcess { notice: None };
    };
    match asked
        .inside(env, probe)
        .or_else(|| asked.elsewhere(env, true))
    {
        Some(panes) => BackendChoice::Panes(panes),
        None => BackendChoice::InProcess {
            notice: Some(format!(
                "{} was asked for but {}: teammates run in-process",
                kind.terminal_name(),
                asked.about().unusable
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto` takes the first terminal the lead runs inside, in the registry's order; tmux on
    /// PATH makes a private server; a name asks that terminal only.
    #[test]
    fn auto_follows_the_registry_and_a_name_asks_one() {
        let dir = tempfile::tempdir().unwrap();
        for program in ["tmux", "zellij", "kitty", "wezterm"] {
            let path = dir.path().join(program);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let path = dir.path().to_string_lossy().into_owned();
        let program = |p: &str| format!("{path}/{p}");
        let env = |pairs: &[(&str, &str)]| {
            CapturedEnv::from_map(pairs.iter().copied().chain([("PATH", path.as_str())]))
        };
        let never = |_: BackendKind, _: &str| false;
        let in_zellij_in_kitty = env(&[
            ("ZELLIJ", "0"),
            ("ZELLIJ_SESSION_NAME", "work"),
            ("ZELLIJ_PANE_ID", "2"),
            ("KITTY_WINDOW_ID", "1"),
            ("KITTY_LISTEN_ON", "unix:/tmp/k"),
        ]);
        assert_eq!(
            detect(&in_zellij_in_kitty, BackendRequest::Auto, &never),
            BackendChoice::Panes(PaneChoice::inside(
                BackendKind::Zellij,
                &program("zellij"),
                Some("2".into()),
                Some("work".into())
            ))
        );
        assert_eq!(
            detect(
                &in_zellij_in_kitty,
                BackendRequest::Kind(BackendKind::Kitty),
                &never
            ),
            BackendChoice::Panes(PaneChoice::inside(
                BackendKind::Kitty,
                &program("kitty"),
                Some("1".into()),
                Some("unix:/tmp/k".into())
            ))
        );
        let outside = env(&[]);
        assert_eq!(
            detect(&outside, BackendRequest::Auto, &never),
            BackendChoice::Panes(PaneChoice::private(BackendKind::Tmux, "tmux"))
        );
        assert_eq!(
            detect(&outside, BackendRequest::Kind(BackendKind::Zellij), &never),
            BackendChoice::Panes(PaneChoice::private(BackendKind::Zellij, &program("zellij")))
        );
        match detect(&outside, BackendRequest::Kind(BackendKind::Kitty), &never) {
            BackendChoice::InProcess { notice: Some(n) } => assert_eq!(
                n,
                "kitty was asked for but this is not a kitty window with remote control \
                 (KITTY_LISTEN_ON): teammates run in-process"
            ),
            other => panic!("{other:?}"),
        }
        let bare = CapturedEnv::from_map([("PATH", "/nonexistent")]);
        match detect(&bare, BackendRequest::Auto, &never) {
            BackendChoice::InProcess { notice: Some(n) } => assert_eq!(
                n,
                "no tmux, Zellij, kitty, WezTerm or iTerm2 found: teammates run in-process"
            ),
            other => panic!("{other:?}"),
        }
        assert_eq!(
            detect(&bare, BackendRequest::Kind(BackendKind::InProcess), &never),
            BackendChoice::InProcess { notice: None }
        );
    }
}
