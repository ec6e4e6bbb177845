//! The kitty terminal, through kitty's remote control (`kitty @ --to $KITTY_LISTEN_ON`):
//! teammates are kitty windows split beside the lead's (`launch --location=vsplit`, then
//! `hsplit`, `--keep-focus` so the lead keeps the keyboard) and titled (`set-window-title`), not
//! colored: kitty's border colors are global (`set-colors --match` on a border recolors every
//! window's border, the lead's and other tabs' included), so a teammate's color is the one its
//! own window prints its name in; the command line is typed into the placeholder
//! (`send-text --stdin`, no escape processing). Liveness is `ls` (JSON, asked on kitty's socket:
//! [`rc`]): kitty closes a window when its program exits, so a window is running while it is
//! listed. Hide moves the window to a
//! tab of its own (`detach-window --target-tab new`), show moves it back to the lead's tab; both
//! give the keyboard back to the lead's window (kitty focuses a window it moves).

use std::sync::Mutex;

use serde::Deserialize;

pub mod rc;

use std::sync::Arc;

use super::cli::{self, PLACEHOLDER};
use super::{About, PaneChoice, Probe, Terminal};
use crate::backend::detect::CapturedEnv;
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneKey, PaneState};
use crate::protocol::Color;

/// The kitty terminal.
pub struct Kitty;

static ABOUT: About = About {
    kind: BackendKind::Kitty,
    help: "kitty windows through `kitty @` (needs KITTY_LISTEN_ON)",
    inside: Some("in kitty (remote control)"),
    auto_elsewhere: None,
    unusable: "this is not a kitty window with remote control (KITTY_LISTEN_ON)",
    variables: &["KITTY_WINDOW_ID", "KITTY_LISTEN_ON"],
};

impl Terminal for Kitty {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// In a kitty window (`KITTY_WINDOW_ID`) with remote control (`KITTY_LISTEN_ON`), `kitty`
    /// on PATH.
    fn inside(&self, env: &CapturedEnv, _probe: Probe<'_>) -> Option<PaneChoice> {
        Some(PaneChoice::inside(
            BackendKind::Kitty,
            &env.which("kitty")?,
            Some(env.var("KITTY_WINDOW_ID")?),
            Some(env.var("KITTY_LISTEN_ON")?),
        ))
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        Arc::new(KittyBackend::new(
            &choice.program,
            choice.address().unwrap_or_default(),
            choice.lead_pane().unwrap_or_default(),
        ))
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.var("KITTY_WINDOW_ID")
    }
}

/// The kitty backend of one lead session.
#[derive(Debug)]
pub struct KittyBackend {
    /// The `kitty` program (a name on PATH or a path).
    program: String,
    /// The remote-control address (`KITTY_LISTEN_ON`, e.g. `unix:/tmp/kitty-123`).
    listen_on: String,
    /// The lead's window id (`KITTY_WINDOW_ID`).
    lead_window: String,
    /// Teammate windows, oldest first; creation is serialized by this lock.
    windows: Mutex<Vec<String>>,
}

/// One window of `kitty @ ls`.
#[derive(Debug, Deserialize)]
struct LsWindow {
    id: u64,
    #[serde(default)]
    title: String,
}

#[derive(Debug, Deserialize)]
struct LsTab {
    id: u64,
    #[serde(default)]
    windows: Vec<LsWindow>,
}

#[derive(Debug, Deserialize)]
struct LsOsWindow {
    #[serde(default)]
    tabs: Vec<LsTab>,
}

/// Every window of `kitty @ ls` as (tab id, window id, title).
pub fn parse_ls(json: &str) -> Option<Vec<(String, String, String)>> {
    let os_windows: Vec<LsOsWindow> = serde_json::from_str(json).ok()?;
    Some(
        os_windows
            .iter()
            .flat_map(|o| o.tabs.iter())
            .flat_map(|t| {
                t.windows
                    .iter()
                    .map(move |w| (t.id.to_string(), w.id.to_string(), w.title.clone()))
            })
            .collect(),
    )
}

impl KittyBackend {
    pub fn new(program: &str, listen_on: &str, lead_window: &str) -> KittyBackend {
        KittyBackend {
            program: program.to_string(),
            listen_on: listen_on.to_string(),
            lead_window: lead_window.to_string(),
            windows: Mutex::new(Vec::new()),
        }
    }

    fn run_with(&self, args: &[&str], input: Option<&str>) -> Result<String, BackendError> {
        let mut all = vec!["@", "--to", self.listen_on.as_str()];
        all.extend_from_slice(args);
        cli::run(&self.program, &all, input)
    }

    fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        self.run_with(args, None)
    }

    /// `kitty @ ls` answers (remote control is on and reachable).
    pub fn is_available(program: &str, listen_on: &str) -> bool {
        cli::run(program, &["@", "--to", listen_on, "ls"], None).is_ok()
    }

    /// Every window kitty lists now (`None` when `ls` fails): asked on kitty's socket, through
    /// `kitty @ ls` when that does not answer (see [`rc`]).
    fn listed(&self) -> Option<Vec<(String, String, String)>> {
        match rc::ls(&self.listen_on) {
            Some(json) => parse_ls(&json),
            None => parse_ls(&self.run(&["ls"]).ok()?),
        }
    }

    fn matching(window: &str) -> String {
        format!("id:{window}")
    }

    /// The tab of the lead's window.
    fn lead_tab(&self) -> Option<String> {
        self.listed()?
            .into_iter()
            .find(|(_, id, _)| *id == self.lead_window)
            .map(|(tab, _, _)| tab)
    }

    /// Gives the keyboard back to the lead's window: kitty focuses a window it moves (`show`
    /// left the keyboard in the teammate's window, so what the person typed next went there).
    fn refocus_lead(&self) {
        let _ = self.run(&[
            "focus-window",
            "--match",
            &Self::matching(&self.lead_window),
        ]);
    }

    /// The windows created so far (for tests).
    pub fn windows(&self) -> Vec<String> {
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl PaneBackend for KittyBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Kitty
    }
    /// Launches a window running the placeholder beside the lead (first) or the last teammate.
    fn create_pane(&self) -> Result<String, BackendError> {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(listed) = self.listed() {
            windows.retain(|w| listed.iter().any(|(_, id, _)| id == w));
        }
        let location = if windows.is_empty() {
            "--location=vsplit"
        } else {
            "--location=hsplit"
        };
        let target = Self::matching(windows.last().unwrap_or(&self.lead_window));
        // `launch` splits the active window: make the split target active, keep focus after.
        let _ = self.run(&["focus-window", "--match", &target]);
        let mut args = vec!["launch", "--type=window", location, "--keep-focus"];
        args.extend_from_slice(&PLACEHOLDER);
        let out = self.run(&args);
        self.refocus_lead();
        let id = out?.trim().to_string();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BackendError::Command {
                command: "kitty @ launch".into(),
                detail: format!("unexpected output: {id}"),
            });
        }
        windows.push(id.clone());
        Ok(id)
    }
    fn run_command(&self, window: &str, command: &str) -> Result<(), BackendError> {
        let input = cli::command_input(command);
        self.run_with(
            &["send-text", "--match", &Self::matching(window), "--stdin"],
            Some(&input),
        )
        .map(|_| ())
    }
    /// Titles the window after its teammate. The color is left alone: kitty has no border
    /// color of one window (see the module's header).
    fn style(&self, window: &str, name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        self.run(&["set-window-title", "--match", &Self::matching(window), name])
            .map(|_| ())
    }

    fn kill(&self, window: &str) -> Result<(), BackendError> {
        self.windows
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|w| w != window);
        self.run(&["close-window", "--match", &Self::matching(window)])
            .map(|_| ())
    }
    /// Moves `window` to a tab of its own; the keyboard stays with the lead.
    fn hide(&self, window: &str) -> Result<(), BackendError> {
        let moved = self.run(&[
            "detach-window",
            "--match",
            &Self::matching(window),
            "--target-tab",
            "new",
        ]);
        self.refocus_lead();
        moved.map(|_| ())
    }
    fn show(&self, window: &str) -> Result<(), BackendError> {
        let tab = self
            .lead_tab()
            .ok_or_else(|| BackendError::Unavailable("the lead's kitty window is gone".into()))?;
        let moved = self.run(&[
            "detach-window",
            "--match",
            &Self::matching(window),
            "--target-tab",
            &format!("id:{tab}"),
        ]);
        self.refocus_lead();
        moved.map(|_| ())
    }
    fn focus(&self, window: &str) -> Result<(), BackendError> {
        self.run(&["focus-window", "--match", &Self::matching(window)])
            .map(|_| ())
    }
    fn send_key(&self, pane: &str, key: PaneKey) -> Result<(), BackendError> {
        self.run(&["send-text", "--match", &Self::matching(pane), key.bytes()])
            .map(|_| ())
    }
    fn pane_alive(&self, pane: &str) -> bool {
        self.listed()
            .is_some_and(|l| l.iter().any(|(_, id, _)| id == pane))
    }
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        // A listing that failed proves nothing: everything counts as running.
        let listed = self.listed();
        panes
            .iter()
            .map(|p| match &listed {
                Some(l) if !l.iter().any(|(_, id, _)| id == p) => PaneState::Gone,
                _ => PaneState::Running,
            })
            .collect()
    }
    fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        let text = self
            .run(&["get-text", "--match", &Self::matching(pane)])
            .unwrap_or_default();
        crate::backend::last_lines(&text, lines)
    }
    fn title(&self, pane: &str) -> Option<String> {
        self.listed()?
            .into_iter()
            .find(|(_, id, _)| id == pane)
            .map(|(_, _, title)| title)
    }
    fn adopt_pane(&self, pane: &str) {
        let mut windows = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if !windows.iter().any(|w| w == pane) {
            windows.push(pane.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ls() {
        let json = r#"[{"id":1,"tabs":[{"id":1,"windows":[{"id":1,"title":"lead"},{"id":3,"title":"a"}]},{"id":2,"windows":[{"id":4,"title":"b"}]}]}]"#;
        assert_eq!(
            parse_ls(json).unwrap(),
            vec![
                ("1".into(), "1".into(), "lead".into()),
                ("1".into(), "3".into(), "a".into()),
                ("2".into(), "4".into(), "b".into())
            ]
        );
        assert!(parse_ls("nope").is_none());
    }
}
