//! The iTerm2 pane backend through the `it2` CLI (PROTOCOL.md 6): split the lead's session for the
//! first teammate and the last teammate's session after that; when a split fails against a closed
//! session, confirm with `it2 session list`, drop the dead id and retry.

use std::process::Command;
use std::sync::Mutex;

use super::BackendError;

/// The iTerm2 backend of one lead session.
#[derive(Debug)]
pub struct Iterm2Backend {
    /// The `it2` program (a name on PATH or a path).
    program: String,
    /// The lead's session uuid (after `:` in `ITERM_SESSION_ID`).
    lead_session: String,
    /// Teammate sessions, oldest first; creation is serialized by this lock.
    sessions: Mutex<Vec<String>>,
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
        }
    }

    fn run(&self, args: &[&str]) -> Result<String, BackendError> {
        let out = Command::new(&self.program)
            .args(args)
            .output()
            .map_err(|e| BackendError::Spawn {
                program: self.program.clone(),
                detail: e.to_string(),
            })?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).to_string())
        } else {
            Err(BackendError::Command {
                command: format!("{} {}", self.program, args.join(" ")),
                detail: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            })
        }
    }

    /// `it2 session list` exits 0 (the Python API is on).
    pub fn is_available(program: &str) -> bool {
        Command::new(program)
            .args(["session", "list"])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false)
    }

    /// Splits a new pane and returns its session id, pruning closed sessions on failure.
    pub fn create_pane(&self) -> Result<String, BackendError> {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
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
    pub fn run_command(&self, session: &str, command: &str) -> Result<(), BackendError> {
        self.run(&["session", "run", "-s", session, command])
            .map(|_| ())
    }

    /// Closes a session.
    pub fn kill(&self, session: &str) -> Result<(), BackendError> {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|s| s != session);
        self.run(&["session", "close", "-f", "-s", session])
            .map(|_| ())
    }

    /// Focuses a session.
    pub fn focus(&self, session: &str) -> Result<(), BackendError> {
        self.run(&["session", "focus", session]).map(|_| ())
    }

    /// What `it2 session list` prints now (`None` when it fails): a session is open while
    /// its id appears there (the same test as the split's retry).
    pub fn listed(&self) -> Option<String> {
        self.run(&["session", "list"]).ok()
    }

    /// Counts a session a previous lead created as one of this session's.
    pub fn adopt_session(&self, session: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        if !sessions.iter().any(|s| s == session) {
            sessions.push(session.to_string());
        }
    }

    /// The sessions created so far (for tests and clean-up).
    pub fn sessions(&self) -> Vec<String> {
        self.sessions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
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
