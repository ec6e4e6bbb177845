//! The iTerm2 terminal through the `it2` CLI (PROTOCOL.md 6): chosen when the lead runs in
//! iTerm2 (`TERM_PROGRAM=iTerm.app` or `ITERM_SESSION_ID`) and `it2 session list` works (its
//! Python API is on). It splits the lead's session for the first teammate and the last
//! teammate's session after that; when a split fails against a closed session, it confirms with
//! `it2 session list`, drops the dead id and retries. A session is open while its id is listed;
//! iTerm2 can neither style, hide nor type into one.
//!
//! `it2` is a Python program that talks to iTerm2's API: each call costs. The liveness poll
//! (twice a second) reads the listing through a cache ([`Listing`]): a listing is reused for a
//! while, and that while doubles each time the listing comes back unchanged (from
//! [`TRUST_MIN`] up to [`TRUST_MAX`]); a listing that changed, or anything this backend does to
//! its sessions, brings it back to the minimum. An idle team is listed about ten times in 30 s
//! instead of sixty; a pane closed by the user is seen within [`TRUST_MAX`] and a poll.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::cli;
use super::{About, PaneChoice, Probe, Terminal};
use crate::backend::detect::CapturedEnv;
use crate::backend::{BackendError, BackendKind, PaneBackend, PaneState};
use crate::protocol::Color;

/// The iTerm2 terminal.
pub struct Iterm2;

static ABOUT: About = About {
    kind: BackendKind::Iterm2,
    help: "iTerm2 splits through `it2`",
    inside: Some("in iTerm2 with `it2`"),
    auto_elsewhere: None,
    unusable: "`it2 session list` does not work",
    variables: &["ITERM_SESSION_ID"],
};

impl Terminal for Iterm2 {
    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn inside(&self, env: &CapturedEnv, probe: Probe<'_>) -> Option<PaneChoice> {
        let in_iterm =
            env.get("TERM_PROGRAM") == Some("iTerm.app") || env.get("ITERM_SESSION_ID").is_some();
        if !in_iterm {
            return None;
        }
        let it2 = env.which("it2")?;
        probe(BackendKind::Iterm2, &it2).then(|| {
            PaneChoice::inside(BackendKind::Iterm2, &it2, env.var("ITERM_SESSION_ID"), None)
        })
    }

    fn open(&self, choice: &PaneChoice) -> Arc<dyn PaneBackend> {
        Arc::new(Iterm2Backend::new(
            &choice.program,
            choice.lead_pane().unwrap_or_default(),
        ))
    }

    fn own_pane(&self, env: &CapturedEnv) -> Option<String> {
        env.get("ITERM_SESSION_ID").map(lead_session_uuid)
    }

    /// `it2 session list` exits 0 (the Python API is on).
    fn answers(&self, program: &str) -> bool {
        cli::run(program, &["session", "list"], None).is_ok()
    }
}

/// The shortest time a listing is reused by the liveness poll.
pub const TRUST_MIN: Duration = Duration::from_millis(500);
/// The longest: how late a session closed outside teamlead can be seen.
pub const TRUST_MAX: Duration = Duration::from_secs(4);

/// The last `it2 session list` the poll read, when, and for how long it is reused.
#[derive(Debug)]
struct Listing {
    text: Option<String>,
    at: Option<Instant>,
    trust: Duration,
}

impl Listing {
    fn new() -> Listing {
        Listing {
            text: None,
            at: None,
            trust: TRUST_MIN,
        }
    }
}

/// The iTerm2 backend of one lead session.
#[derive(Debug)]
pub struct Iterm2Backend {
    /// The `it2` program (a name on PATH or a path).
    program: String,
    /// The lead's session uuid (after `:` in `ITERM_SESSION_ID`).
    lead_session: String,
    /// Teammate sessions, oldest first; creation is serialized by this lock.
    sessions: Mutex<Vec<String>>,
    /// What the liveness poll last listed.
    listing: Mutex<Listing>,
}

/// The part of `ITERM_SESSION_ID` after `:` (`w0t0p0:UUID` → `UUID`).
pub fn lead_session_uuid(iterm_session_id: &str) -> String {
    match iterm_session_id.split_once(':') {
        Some((_, uuid)) => uuid.to_string(),
        None => iterm_session_id.to_string(),
    }
}

impl Iterm2Backend {
    pub fn new(program: &str, iterm_session_id: &str) -> Iterm2Backend {
        Iterm2Backend {
            program: program.to_string(),
            lead_session: lead_session_uuid(iterm_session_id),
            sessions: Mutex::new(Vec::new()),
            listing: Mutex::new(Listing::new()),
        }
    }

    fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        cli::run(&self.program, args, None)
    }

    fn sessions_mut(&self) -> MutexGuard<'_, Vec<String>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What `it2 session list` prints now (`None` when it fails): a session is open while
    /// its id appears there (the same test as the split's retry).
    pub fn listed(&self) -> Option<String> {
        self.run(&["session", "list"]).ok()
    }

    /// The listing for the liveness poll: the last one while it is trusted, else a new one
    /// (see the module header).
    fn polled(&self) -> Option<String> {
        let mut cache = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(text), Some(at)) = (&cache.text, cache.at)
            && at.elapsed() < cache.trust
        {
            return Some(text.clone());
        }
        let fresh = self.listed();
        cache.trust = match (&fresh, &cache.text) {
            (Some(new), Some(old)) if new == old => (cache.trust * 2).min(TRUST_MAX),
            _ => TRUST_MIN,
        };
        cache.text = fresh.clone();
        cache.at = Some(Instant::now());
        fresh
    }

    /// This backend changed its sessions: the next poll lists again.
    fn forget_listing(&self) {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = Listing::new();
    }

    /// The sessions created so far (for tests and clean-up).
    pub fn sessions(&self) -> Vec<String> {
        self.sessions_mut().clone()
    }
}

impl PaneBackend for Iterm2Backend {
    fn kind(&self) -> BackendKind {
        BackendKind::Iterm2
    }

    /// Splits a new pane and returns its session id, pruning closed sessions on failure.
    fn create_pane(&self) -> Result<String, BackendError> {
        let mut sessions = self.sessions_mut();
        self.forget_listing();
        loop {
            let result = match sessions.last() {
                None => self.run(&["session", "split", "-v", "-s", &self.lead_session]),
                Some(last) => self.run(&["session", "split", "-s", last]),
            };
            match result {
                Ok(out) => {
                    let id = parse_created(&out).ok_or_else(|| BackendError::Command {
                        command: "it2 session split".into(),
                        detail: format!("unexpected output: {}", out.trim()),
                    })?;
                    sessions.push(id.clone());
                    return Ok(id);
                }
                Err(err) => {
                    // Was the split target closed? Each turn removes one dead id, so this ends.
                    let Some(last) = sessions.last().cloned() else {
                        return Err(err);
                    };
                    let listing = self.run(&["session", "list"])?;
                    if listing.contains(&last) {
                        return Err(err);
                    }
                    sessions.pop();
                }
            }
        }
    }

    /// Runs the teammate's command in its session.
    fn run_command(&self, session: &str, command: &str) -> Result<(), BackendError> {
        self.run(&["session", "run", "-s", session, command])
            .map(|_| ())
    }

    fn style(&self, _pane: &str, _name: &str, _color: Option<Color>) -> Result<(), BackendError> {
        // it2 has no pane styling; iTerm2 shows the teammate's own header instead.
        Ok(())
    }

    /// Closes a session.
    fn kill(&self, session: &str) -> Result<(), BackendError> {
        self.sessions_mut().retain(|s| s != session);
        self.forget_listing();
        self.run(&["session", "close", "-f", "-s", session])
            .map(|_| ())
    }

    fn hide(&self, _pane: &str) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(
            "iTerm2 panes cannot be hidden".into(),
        ))
    }

    fn show(&self, _pane: &str) -> Result<(), BackendError> {
        Err(BackendError::Unavailable(
            "iTerm2 panes cannot be hidden".into(),
        ))
    }

    fn focus(&self, session: &str) -> Result<(), BackendError> {
        self.run(&["session", "focus", session]).map(|_| ())
    }

    fn pane_alive(&self, pane: &str) -> bool {
        self.listed().is_some_and(|l| l.contains(pane))
    }

    fn pane_states(&self, panes: &[String]) -> Vec<PaneState> {
        // A listing that failed proves nothing: everything counts as running.
        let listed = self.polled();
        panes
            .iter()
            .map(|p| match &listed {
                Some(l) if !l.contains(p.as_str()) => PaneState::Gone,
                _ => PaneState::Running,
            })
            .collect()
    }

    /// Counts a session a previous lead created as one of this session's.
    fn adopt_pane(&self, session: &str) {
        let mut sessions = self.sessions_mut();
        if !sessions.iter().any(|s| s == session) {
            sessions.push(session.to_string());
        }
    }
}

/// The id in `Created new pane: <id>`.
pub fn parse_created(out: &str) -> Option<String> {
    out.lines().find_map(|l| {
        l.trim()
            .strip_prefix("Created new pane:")
            .map(|id| id.trim().to_string())
            .filter(|id| !id.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ids() {
        assert_eq!(lead_session_uuid("w0t0p0:ABC-123"), "ABC-123");
        assert_eq!(
            parse_created("Created new pane: 9F2C-11\n").as_deref(),
            Some("9F2C-11")
        );
        assert!(parse_created("nope").is_none());
    }
}
