//! The WezTerm terminal, through `wezterm cli`: the first teammate splits the lead's pane
//! (`split-pane --pane-id LEAD --right --percent 70`), each next one the last teammate's
//! (`--bottom`); a lead without a pane of its own (`WEZTERM_PANE` unset) opens a tab (`spawn`).
//! The command line is typed into the placeholder (`send-text --no-paste`). WezTerm's CLI cannot
//! title or color one pane: a teammate shows its name in its own header, and its tab is titled
//! with it while it is hidden (`move-pane-to-new-tab`, `set-tab-title`); show moves it back
//! (`split-pane --move-pane-id`). Liveness is `list --format json` (a pane closes with its
//! program); kill is `kill-pane`, focus `activate-pane`.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use std::sync::Arc;

use super::cli::{self, PLACEHOLDER};
use super::{About, PaneChoice, Probe, Terminal};
use crate::backend::detect::CapturedEnv;
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneKey, PaneState};
use crate::protocol::Color;

/// The WezTerm terminal.
pub struct Wezterm;

static ABOUT: About = About {
    kind: BackendKind::Wezterm,
    help: "WezTerm panes through `wezterm cli`",
    inside: Some("in WezTerm"),
    auto_elsewhere: None,
    unusable: "this is not a WezTerm pane with `wezterm` on PATH",
    variables: &["WEZTERM_PANE"],
};

impl Terminal for Wezterm {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    /// `WEZTERM_PANE` or `TERM_PROGRAM=WezTerm`, `wezterm` on PATH.
    fn inside(&self, env: &CapturedEnv, _probe: Probe<'_>) -> Option<PaneChoice> {
        let in_wezterm =
            env.get("TERM_PROGRAM") == Some("WezTerm") || env.get("WEZTERM_PANE").is_some();
        if !in_wezterm {
            return None;
        }
        Some(PaneChoice::inside(
            BackendKind::Wezterm,
            &env.which("wezterm")?,
            env.var("WEZTERM_PANE"),
            None,
        ))
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        Arc::new(WeztermBackend::new(&choice.program, choice.lead_pane()))
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.var("WEZTERM_PANE")
    }
}

/// The WezTerm backend of one lead session.
#[derive(Debug)]
pub struct WeztermBackend {
    /// The `wezterm` program (a name on PATH or a path).
    program: String,
    /// The lead's pane id (`WEZTERM_PANE`), when it has one.
    lead_pane: Option<String>,
    /// Teammate panes, oldest first; creation is serialized by this lock.
    panes: Mutex<Vec<String>>,
    /// Teammates' names by pane (for the title of a hidden pane's tab).
    names: Mutex<HashMap<String, String>>,
}

/// One pane of `wezterm cli list --format json`.
#[derive(Debug, Clone, Deserialize)]
pub struct ListedPane {
    pub pane_id: u64,
    pub tab_id: u64,
    #[serde(default)]
    pub title: String,
}

/// The panes of `wezterm cli list --format json`.
pub fn parse_list(json: &str) -> Option<Vec<ListedPane>> {
    serde_json::from_str(json).ok()
}

impl WeztermBackend {
    pub fn new(program: &str, lead_pane: Option<&str>) -> WeztermBackend {
        WeztermBackend {
            program: program.to_string(),
            lead_pane: lead_pane.map(str::to_string),
            panes: Mutex::new(Vec::new()),
            names: Mutex::new(HashMap::new()),
        }
    }

    fn run_with(&self, args: &[&str], input: Option<&str>) -> Result<String, BackendError> {
        let mut all = vec!["cli"];
        all.extend_from_slice(args);
        cli::run(&self.program, &all, input)
    }

    fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        self.run_with(args, None)
    }

    /// Every pane WezTerm lists now (`None` when `list` fails).
    fn listed(&self) -> Option<Vec<ListedPane>> {
        parse_list(&self.run(&["list", "--format", "json"]).ok()?)
    }

    fn listed_ids(&self) -> Option<Vec<String>> {
        self.listed()
            .map(|l| l.iter().map(|p| p.pane_id.to_string()).collect())
    }

    fn parse_id(out: &str, command: &str) -> Result<String, BackendError> {
        let id = out.trim().to_string();
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
            return Err(BackendError::Command {
                command: format!("wezterm cli {command}"),
                detail: format!("unexpected output: {id}"),
            });
        }
        Ok(id)
    }

    /// The split that places the next pane: beside the lead first, then below the last
    /// teammate; `None` when there is nothing to split.
    fn split_args(&self, visible: &[String]) -> Option<Vec<String>> {
        let (target, side) = match visible.last() {
            Some(last) => (last.clone(), vec!["--bottom"]),
            None => (self.lead_pane.clone()?, vec!["--right", "--percent", "70"]),
        };
        let mut args = vec!["split-pane".to_string(), "--pane-id".into(), target];
        args.extend(side.into_iter().map(str::to_string));
        Some(args)
    }

    /// Teammate panes in the lead's tab (not hidden), oldest first.
    fn visible(&self, panes: &[String]) -> Vec<String> {
        let Some(lead) = &self.lead_pane else {
            return panes.to_vec();
        };
        let Some(listed) = self.listed() else {
            return panes.to_vec();
        };
        let Some(tab) = listed
            .iter()
            .find(|p| p.pane_id.to_string() == *lead)
            .map(|p| p.tab_id)
        else {
            return Vec::new();
        };
        panes
            .iter()
            .filter(|id| {
                listed
                    .iter()
                    .any(|p| p.pane_id.to_string() == **id && p.tab_id == tab)
            })
            .cloned()
            .collect()
    }

    /// The panes created so far (for tests).
    pub fn panes(&self) -> Vec<String> {
        self.panes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl PaneBackend for WeztermBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Wezterm
    }
    /// Creates a pane running the placeholder and returns its id.
    fn create_pane(&self) -> Result<String, BackendError> {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(listed) = self.listed_ids() {
            panes.retain(|p| listed.contains(p));
        }
        let visible = self.visible(&panes);
        let (mut args, command) = match self.split_args(&visible) {
            Some(args) => (args, "split-pane"),
            None => (vec!["spawn".to_string()], "spawn"),
        };
        args.push("--".into());
        args.extend(PLACEHOLDER.iter().map(|s| s.to_string()));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let id = Self::parse_id(&self.run(&argv)?, command)?;
        panes.push(id.clone());
        Ok(id)
    }
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        let input = cli::command_input(command);
        self.run(&["send-text", "--pane-id", pane, "--no-paste", &input])
            .map(|_| ())
    }
    fn style(&self, pane: &str, name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        // `wezterm cli` cannot title or color one pane: the name is kept for a hidden pane's tab.
        self.names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pane.to_string(), name.to_string());
        Ok(())
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        self.panes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != pane);
        self.run(&["kill-pane", "--pane-id", pane]).map(|_| ())
    }
    fn hide(&self, pane: &str) -> Result<(), BackendError> {
        self.run(&["move-pane-to-new-tab", "--pane-id", pane])?;
        let name = self
            .names
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(pane)
            .cloned();
        if let Some(name) = name {
            self.run(&["set-tab-title", "--pane-id", pane, &name])?;
        }
        Ok(())
    }
    fn show(&self, pane: &str) -> Result<(), BackendError> {
        let panes = self.panes.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let others: Vec<String> = panes.into_iter().filter(|p| p != pane).collect();
        let visible = self.visible(&others);
        let mut args = self.split_args(&visible).ok_or_else(|| {
            BackendError::Unavailable("the lead has no WezTerm pane to show it beside".into())
        })?;
        args.extend(["--move-pane-id".to_string(), pane.to_string()]);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        self.run(&argv).map(|_| ())
    }
    fn focus(&self, pane: &str) -> Result<(), BackendError> {
        self.run(&["activate-pane", "--pane-id", pane]).map(|_| ())
    }
    fn send_key(&self, pane: &str, key: PaneKey) -> Result<(), BackendError> {
        self.run(&["send-text", "--pane-id", pane, "--no-paste", key.bytes()])
            .map(|_| ())
    }
    fn pane_alive(&self, pane: &str) -> bool {
        self.listed_ids()
            .is_some_and(|l| l.iter().any(|p| p == pane))
    }
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        // A listing that failed proves nothing: everything counts as running.
        let listed = self.listed_ids();
        panes
            .iter()
            .map(|p| match &listed {
                Some(l) if !l.contains(p) => PaneState::Gone,
                _ => PaneState::Running,
            })
            .collect()
    }
    fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        let text = self
            .run(&["get-text", "--pane-id", pane])
            .unwrap_or_default();
        crate::backend::last_lines(&text, lines)
    }
    fn adopt_pane(&self, pane: &str) {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        if !panes.iter().any(|p| p == pane) {
            panes.push(pane.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_list() {
        let json = r#"[{"window_id":0,"tab_id":0,"pane_id":0,"workspace":"default","size":{"rows":24,"cols":80},"title":"teamlead","cwd":"file://h/w/"},{"window_id":0,"tab_id":0,"pane_id":3,"workspace":"default","size":{"rows":24,"cols":80},"title":"sh","cwd":"file://h/w/"}]"#;
        let panes = parse_list(json).unwrap();
        assert_eq!(panes.len(), 2);
        assert_eq!((panes[1].pane_id, panes[1].tab_id), (3, 0));
        assert!(parse_list("[").is_none());
    }
}
