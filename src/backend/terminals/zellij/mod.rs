//! The Zellij terminal, through `zellij --session NAME action …` (Zellij 0.44 or newer, whose
//! actions take `--pane-id` and whose `new-pane` prints the new pane's id). Inside Zellij the
//! teammates' panes open beside the lead's pane in the lead's session without taking any
//! client's focus (`new-pane --no-focus`: the user's keys keep going to the lead); outside it
//! they open in a private background session `teamlead-<lead pid>`
//! (`attach --create-background`), like the private tmux server, whose first pane (the user's
//! default shell) is closed once a teammate's pane is there. A pane runs the placeholder until
//! its command line is typed into it (`write-chars`); it is named after its teammate
//! (`rename-pane`; Zellij has no per-pane colors). A pane whose program ended stays, held, with
//! its exit status (`list-panes --json`), until it is closed (`close-pane`). Focus is
//! `focus-pane-id`; focus is per client, and the call, made from the lead's pane
//! (`ZELLIJ_PANE_ID`), moves the client whose focus is on the lead's pane: the user's, who
//! asked for the jump there (`is_focused` of `list-panes` is true of a pane any client focused,
//! so nothing here reads it). Zellij cannot hide one pane, only a tab's floating panes all at
//! once: hide makes the pane floating (`toggle-pane-embed-or-floating --pane-id`, when it is
//! embedded) and hides the floating panes of its tab (`hide-floating-panes --tab-id`), so the
//! other floating panes of that tab are hidden with it, and showing the floating panes
//! (`Ctrl p w`) shows the hidden teammates too, floating. Show embeds the pane again (focus
//! stays where it is, as with tmux). The CLI now and then says a busy session is not there
//! ("There is no active session!"): such an action was not sent, and is tried again; and now
//! and then it exits 0 having printed nothing: a listing is asked for again, a new pane found
//! in the listing. Detection and what dead leads left (their private sessions) are in
//! [`terminal`].

mod terminal;

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::cli::{self, PLACEHOLDER};
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneState};
use crate::protocol::Color;
pub use terminal::Zellij;

/// How long a new pane may take to be listed.
const FIRST_PANE_WAIT: Duration = Duration::from_secs(10);

/// How long a new private session may take to list its first pane. A session's first start
/// with an empty cache compiles Zellij's own plugins first: tens of seconds on a busy 2-core
/// machine. Zellij 0.45's server panics when a CLI call connects while it still starts, so
/// nothing is asked of the session until its first pane is there, and a session that never
/// shows one is an error, not a session to go on with.
const SESSION_START_WAIT: Duration = Duration::from_secs(45);

/// How many times an action is tried while the CLI says the session is not there, and the
/// first pause between two (it grows).
const ACTION_ATTEMPTS: u32 = 3;
const ACTION_RETRY: Duration = Duration::from_millis(100);

/// Did the CLI find no such session? It says so, now and then, of a busy session that runs (it
/// judges a session by whether its socket answers at once); the action was not sent.
fn session_not_found(error: &BackendError) -> bool {
    match error {
        BackendError::Command { detail, .. } => {
            detail.contains("There is no active session")
                || (detail.starts_with("Session '") && detail.contains("not found"))
        }
        _ => false,
    }
}

/// `new-pane`'s flag that leaves every client's focus where it is (Zellij 0.45).
const NO_FOCUS: &str = "--no-focus";

/// Did the CLI refuse `flag` as an argument it does not know (an older Zellij)?
fn unknown_flag(error: &BackendError, flag: &str) -> bool {
    match error {
        BackendError::Command { detail, .. } => {
            detail.contains("unexpected argument") && detail.contains(flag)
        }
        _ => false,
    }
}

/// The private session name of the lead with this pid.
pub fn private_session_name(lead_pid: u32) -> String {
    format!("teamlead-{lead_pid}")
}

/// One pane of `zellij action list-panes --json`.
#[derive(Debug, Clone, Deserialize)]
pub struct ListedPane {
    pub id: u32,
    #[serde(default)]
    pub is_plugin: bool,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub exited: bool,
    #[serde(default)]
    pub exit_status: Option<i32>,
    /// A floating pane (hide makes a teammate's pane one, in hidden floating panes).
    #[serde(default)]
    pub is_floating: bool,
    /// Whether some client (or an earlier CLI call) has its focus on it: focus is per client,
    /// so this says where a person's keys go only in a session without clients (tests).
    #[serde(default)]
    pub is_focused: bool,
    /// The stable id of its tab (`hide-floating-panes --tab-id`).
    #[serde(default)]
    pub tab_id: Option<u32>,
}

impl ListedPane {
    /// The id as the CLI takes it (`terminal_N`, `plugin_N`).
    pub fn pane_id(&self) -> String {
        if self.is_plugin {
            format!("plugin_{}", self.id)
        } else {
            format!("terminal_{}", self.id)
        }
    }
}

/// The panes of `list-panes --json`.
pub fn parse_panes(json: &str) -> Option<Vec<ListedPane>> {
    serde_json::from_str(json).ok()
}

/// A terminal pane id in the form the CLI prints: `terminal_N` (a bare `N` is read as one).
pub fn normalize_pane_id(id: &str) -> String {
    let id = id.trim();
    if id.bytes().all(|b| b.is_ascii_digit()) && !id.is_empty() {
        format!("terminal_{id}")
    } else {
        id.to_string()
    }
}

/// Session names of `zellij list-sessions --short`.
pub fn list_sessions(program: &str) -> Vec<String> {
    cli::run(
        program,
        &["list-sessions", "--short", "--no-formatting"],
        None,
    )
    .map(|out| {
        out.lines()
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .filter(|l| !l.is_empty())
            .collect()
    })
    .unwrap_or_default()
}

/// Kills a session and deletes what Zellij keeps of it to resurrect it.
pub fn remove_session(program: &str, session: &str) {
    let _ = cli::run(program, &["kill-session", session], None);
    let _ = cli::run(program, &["delete-session", "--force", session], None);
}

/// The Zellij backend of one lead session.
#[derive(Debug)]
pub struct ZellijBackend {
    /// The `zellij` program (a name on PATH or a path).
    program: String,
    /// The session the teammates' panes live in (renamed when a resumed lead takes it over).
    session: Mutex<String>,
    /// The lead's pane (inside Zellij), `None` for a private session.
    lead_pane: Option<String>,
    /// Teammate panes, oldest first; creation is serialized by this lock.
    panes: Mutex<Vec<String>>,
}

impl ZellijBackend {
    /// Inside Zellij: the lead's session and pane (`ZELLIJ_PANE_ID`).
    pub fn inside(program: &str, session: &str, lead_pane: Option<&str>) -> ZellijBackend {
        ZellijBackend {
            program: program.to_string(),
            session: Mutex::new(session.to_string()),
            lead_pane: Some(lead_pane.map(normalize_pane_id).unwrap_or_default())
                .filter(|p| !p.is_empty()),
            panes: Mutex::new(Vec::new()),
        }
    }

    /// A private background session named `session`.
    pub fn private(program: &str, session: &str) -> ZellijBackend {
        ZellijBackend {
            program: program.to_string(),
            session: Mutex::new(session.to_string()),
            lead_pane: None,
            panes: Mutex::new(Vec::new()),
        }
    }

    /// Is this a private session?
    fn is_private(&self) -> bool {
        self.lead_pane.is_none()
    }

    /// The session's name now.
    pub fn session(&self) -> String {
        self.session
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn action(&self, args: &[&str]) -> Result<String, BackendError> {
        let session = self.session();
        let mut all = vec!["--session", session.as_str(), "action"];
        all.extend_from_slice(args);
        let mut attempt = 1;
        loop {
            match cli::run(&self.program, &all, None) {
                Err(e) if attempt < ACTION_ATTEMPTS && session_not_found(&e) => {
                    std::thread::sleep(ACTION_RETRY * attempt);
                    attempt += 1;
                }
                done => return done,
            }
        }
    }

    /// The JSON answer of a listing `args`, parsed (`None` when the session does not answer).
    /// The CLI now and then exits 0 having printed nothing: asked again before concluding.
    fn listing<T: serde::de::DeserializeOwned>(&self, args: &[&str]) -> Option<T> {
        for attempt in 1..=ACTION_ATTEMPTS {
            if let Ok(parsed) = serde_json::from_str(&self.action(args).ok()?) {
                return Some(parsed);
            }
            if attempt < ACTION_ATTEMPTS {
                std::thread::sleep(ACTION_RETRY * attempt);
            }
        }
        None
    }

    /// Every pane of the session (`None` when the session does not answer).
    pub fn listed(&self) -> Option<Vec<ListedPane>> {
        self.listing(&["list-panes", "--json"])
    }

    /// One pane as listed, or why it cannot be acted on.
    fn listed_pane(&self, pane: &str) -> Result<ListedPane, BackendError> {
        let listed = self.listed().ok_or_else(|| {
            BackendError::Unavailable(format!("the Zellij session {} answers no", self.session()))
        })?;
        listed
            .into_iter()
            .find(|p| p.pane_id() == pane)
            .ok_or_else(|| BackendError::Unavailable(format!("pane {pane} is gone")))
    }

    /// Are the floating panes of this tab shown (`None` when Zellij does not say)?
    pub fn floating_visible(&self, tab: u32) -> Option<bool> {
        let tabs: Vec<serde_json::Value> = self.listing(&["list-tabs", "--json", "--state"])?;
        tabs.iter()
            .find(|t| t["tab_id"].as_u64() == Some(u64::from(tab)))
            .and_then(|t| t["are_floating_panes_visible"].as_bool())
    }

    /// Does the session run (a resurrectable, exited session does not count)?
    fn session_running(&self) -> bool {
        self.listed().is_some()
    }

    /// Creates the private session in the background when it is not running; returns the ids
    /// of the panes it started with (to close once a teammate's pane is there).
    fn ensure_private(&self) -> Result<Vec<String>, BackendError> {
        if self.session_running() {
            return Ok(Vec::new());
        }
        let session = self.session();
        remove_session(&self.program, &session);
        cli::run(
            &self.program,
            &["attach", "--create-background", &session],
            None,
        )?;
        // A session just made lists no pane for a moment: wait for its first one.
        let deadline = Instant::now() + SESSION_START_WAIT;
        let mut first = Vec::new();
        while !first.iter().any(|p: &ListedPane| !p.is_plugin) {
            if Instant::now() >= deadline {
                return Err(BackendError::Command {
                    command: format!("zellij attach --create-background {session}"),
                    detail: format!(
                        "the session showed no pane within {} s",
                        SESSION_START_WAIT.as_secs()
                    ),
                });
            }
            std::thread::sleep(Duration::from_millis(100));
            first = self.listed().unwrap_or_default();
        }
        Ok(first
            .iter()
            .filter(|p| !p.is_plugin)
            .map(ListedPane::pane_id)
            .collect())
    }

    /// The ids of the session's terminal panes (empty when it does not answer).
    fn terminal_ids(&self) -> Vec<String> {
        self.listed()
            .unwrap_or_default()
            .iter()
            .filter(|p| !p.is_plugin)
            .map(ListedPane::pane_id)
            .collect()
    }

    /// The newest terminal pane that is not in `before`, waiting for it to be listed.
    fn new_terminal_since(&self, before: &[String]) -> Option<String> {
        let deadline = Instant::now() + FIRST_PANE_WAIT;
        loop {
            let newest = self
                .listed()
                .unwrap_or_default()
                .into_iter()
                .filter(|p| !p.is_plugin && !before.contains(&p.pane_id()))
                .max_by_key(|p| p.id);
            if let Some(pane) = newest {
                return Some(pane.pane_id());
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `new-pane ARGS -- placeholder`. Inside Zellij the pane opens without taking the focus
    /// of any client (`--no-focus`, beside the lead's pane, from which the call is made): a
    /// pane that took it, even for the moment before the focus is given back, got what the user
    /// typed meanwhile, which the placeholder read as the start of its command line. A Zellij
    /// without `--no-focus` opens it focused, and the lead's pane is focused again at once.
    fn new_pane(&self, mut args: Vec<&str>) -> Result<String, BackendError> {
        fn with_placeholder<'a>(args: &[&'a str]) -> Vec<&'a str> {
            let mut all = args.to_vec();
            all.push("--");
            all.extend_from_slice(&PLACEHOLDER);
            all
        }
        let lead = self.lead_pane.as_deref();
        if lead.is_some() {
            args.push(NO_FOCUS);
        }
        match (self.action(&with_placeholder(&args)), lead) {
            (Err(e), Some(lead)) if unknown_flag(&e, NO_FOCUS) => {
                args.retain(|a| *a != NO_FOCUS);
                let out = self.action(&with_placeholder(&args))?;
                let _ = self.action(&["focus-pane-id", lead]);
                Ok(out)
            }
            (done, _) => done,
        }
    }

    /// The panes created so far (for tests).
    pub fn panes(&self) -> Vec<String> {
        self.panes.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl PaneBackend for ZellijBackend {
    fn kind(&self) -> BackendKind {
        BackendKind::Zellij
    }
    /// Opens a pane running the placeholder and returns its id.
    fn create_pane(&self) -> Result<String, BackendError> {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        let initial = if self.is_private() {
            self.ensure_private()?
        } else {
            Vec::new()
        };
        if let Some(listed) = self.listed() {
            panes.retain(|p| listed.iter().any(|l| l.pane_id() == *p));
        }
        let mut args = vec!["new-pane"];
        if panes.is_empty() && !self.is_private() {
            args.extend(["--direction", "right"]);
        }
        let before = self.terminal_ids();
        let out = self.new_pane(args)?;
        let mut id = normalize_pane_id(out.lines().last().unwrap_or(""));
        if !id.starts_with("terminal_") {
            // A session that has just started sometimes makes the pane and prints nothing.
            id = self
                .new_terminal_since(&before)
                .ok_or_else(|| BackendError::Command {
                    command: "zellij action new-pane".into(),
                    detail: format!("unexpected output: {}", out.trim()),
                })?;
        }
        for pane in initial {
            let _ = self.action(&["close-pane", "--pane-id", &pane]);
        }
        panes.push(id.clone());
        Ok(id)
    }
    fn run_command(&self, pane: &str, command: &str) -> Result<(), BackendError> {
        let input = cli::command_input(command);
        self.action(&["write-chars", "--pane-id", pane, &input])
            .map(|_| ())
    }
    fn style(&self, pane: &str, name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        // Zellij has no per-pane frame color; the teammate's header carries its color.
        self.action(&["rename-pane", "--pane-id", pane, name])
            .map(|_| ())
    }
    fn kill(&self, pane: &str) -> Result<(), BackendError> {
        self.panes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| p != pane);
        self.action(&["close-pane", "--pane-id", pane]).map(|_| ())
    }
    /// Hides a pane: makes it floating (when it is embedded) and hides the floating panes of
    /// its tab.
    fn hide(&self, pane: &str) -> Result<(), BackendError> {
        let listed = self.listed_pane(pane)?;
        if !listed.is_floating {
            self.action(&["toggle-pane-embed-or-floating", "--pane-id", pane])?;
        }
        let Some(tab) = listed.tab_id else {
            return Err(BackendError::Unavailable(format!(
                "Zellij does not say which tab holds {pane}"
            )));
        };
        let tab_arg = tab.to_string();
        // Exit status 2: they were hidden already.
        match self.action(&["hide-floating-panes", "--tab-id", &tab_arg]) {
            Ok(_) => Ok(()),
            Err(_) if self.floating_visible(tab) == Some(false) => Ok(()),
            Err(e) => Err(e),
        }
    }
    /// Shows a hidden pane: embeds it in its tab's layout again (focus stays where it is).
    fn show(&self, pane: &str) -> Result<(), BackendError> {
        if self.listed_pane(pane)?.is_floating {
            self.action(&["toggle-pane-embed-or-floating", "--pane-id", pane])?;
        }
        Ok(())
    }
    fn focus(&self, pane: &str) -> Result<(), BackendError> {
        self.action(&["focus-pane-id", pane]).map(|_| ())
    }
    fn pane_alive(&self, pane: &str) -> bool {
        self.listed()
            .is_some_and(|l| l.iter().any(|p| p.pane_id() == pane))
    }
    fn pane_running(&self, pane: &str) -> bool {
        self.listed()
            .is_some_and(|l| l.iter().any(|p| p.pane_id() == pane && !p.exited))
    }
    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        // A listing that failed proves nothing: everything counts as running.
        let listed = self.listed();
        panes
            .iter()
            .map(|id| match &listed {
                None => PaneState::Running,
                Some(l) => match l.iter().find(|p| p.pane_id() == *id) {
                    None => PaneState::Gone,
                    Some(p) if p.exited => PaneState::Dead {
                        status: p.exit_status,
                        signal: None,
                    },
                    Some(_) => PaneState::Running,
                },
            })
            .collect()
    }
    fn tail(&self, pane: &str, lines: usize) -> Vec<String> {
        let text = self
            .action(&["dump-screen", "--pane-id", pane])
            .unwrap_or_default();
        crate::backend::last_lines(&text, lines)
    }
    fn title(&self, pane: &str) -> Option<String> {
        self.listed()?
            .into_iter()
            .find(|p| p.pane_id() == pane)
            .map(|p| p.title)
    }
    fn adopt_pane(&self, pane: &str) {
        let mut panes = self.panes.lock().unwrap_or_else(|e| e.into_inner());
        if !panes.iter().any(|p| p == pane) {
            panes.push(pane.to_string());
        }
    }
    fn take_over(&self, record: &str) -> Result<bool, BackendError> {
        if !self.is_private() || record == self.session() {
            return Ok(false);
        }
        let old = ZellijBackend::private(&self.program, record);
        if !old.session_running() {
            return Ok(false);
        }
        let new = self.session();
        old.action(&["rename-session", &new])?;
        Ok(true)
    }
    fn session_record(&self) -> Option<String> {
        self.is_private().then(|| self.session())
    }
    fn attach(&self) -> Option<(Vec<String>, String)> {
        if !self.is_private() {
            return None;
        }
        let argv = vec![self.program.clone(), "attach".to_string(), self.session()];
        let hint = format!("zellij attach {}", self.session());
        Some((argv, hint))
    }
    fn detach_keys(&self) -> &'static str {
        // Zellij's default keys: session mode, then detach.
        "ctrl+o d"
    }
    fn shutdown(&self) {
        if self.is_private() {
            remove_session(&self.program, &self.session());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_panes_and_ids() {
        let json = r#"[{"id":0,"is_plugin":true,"title":"tab-bar","exited":false,"exit_status":null,"tab_id":0},{"id":2,"is_plugin":false,"title":"a","exited":true,"exit_status":3,"tab_id":0}]"#;
        let panes = parse_panes(json).unwrap();
        assert_eq!(panes[0].pane_id(), "plugin_0");
        assert_eq!(panes[1].pane_id(), "terminal_2");
        assert_eq!(panes[1].exit_status, Some(3));
        assert_eq!(normalize_pane_id("7\n"), "terminal_7");
        assert_eq!(normalize_pane_id("terminal_7"), "terminal_7");
        assert_eq!(private_session_name(42), "teamlead-42");
        let said = |detail: &str| BackendError::Command {
            command: "zellij".into(),
            detail: detail.into(),
        };
        assert!(session_not_found(&said("There is no active session!")));
        assert!(session_not_found(&said(
            "Session 'x' not found. The following sessions are active:\ny"
        )));
        assert!(!session_not_found(&said("Pane terminal_9 not found")));
        assert!(unknown_flag(
            &said("error: unexpected argument '--no-focus' found"),
            NO_FOCUS
        ));
        assert!(!unknown_flag(
            &said("There is no active session!"),
            NO_FOCUS
        ));
    }
}
