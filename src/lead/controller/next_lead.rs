//! What the next lead of the team will need (`.teamlead/session.json`): one part of the
//! controller. Which teammates are real `claude` processes and their sessions, the commit each
//! worktree was made from, the terminal kind and its private server, whether `/quit --keep`
//! kept the team. The record is private: the controller's other files ask it narrow
//! questions, and [`NextLead::to_write`] is the one copy that goes to disk (with the
//! worktrees, which are another part's).

use std::collections::BTreeMap;

use crate::store::session_record::{SessionRecord, TeammateRecord, WorktreeRecord};

/// The session record as this lead keeps it.
#[derive(Debug, Default)]
pub(crate) struct NextLead {
    record: SessionRecord,
}

impl NextLead {
    /// Teammates of `backend` kind, whose panes `pane_session` finds again.
    pub fn new(backend: &str, pane_session: Option<String>) -> NextLead {
        NextLead {
            record: SessionRecord {
                backend: Some(backend.to_string()),
                pane_session,
                ..SessionRecord::default()
            },
        }
    }

    /// Whether `name` is a real `claude` process.
    pub fn is_claude(&self, name: &str) -> bool {
        self.record.teammates.get(name).is_some_and(|r| r.claude)
    }

    /// The session id of `claude` teammate `name` (its transcript), when known.
    pub fn claude_session(&self, name: &str) -> Option<&str> {
        self.record
            .teammates
            .get(name)
            .filter(|r| r.claude)
            .and_then(|r| r.session_id.as_deref())
    }

    /// The commit `name`'s worktree was made from.
    pub fn base_of(&self, name: &str) -> Option<&str> {
        self.record
            .teammates
            .get(name)
            .and_then(|r| r.base.as_deref())
    }

    /// `name` was started (again) as `record` says.
    pub fn started(&mut self, name: &str, record: TeammateRecord) {
        self.record.teammates.insert(name.to_string(), record);
    }

    /// `name` is gone from the team.
    pub fn forget(&mut self, name: &str) {
        self.record.teammates.remove(name);
    }

    /// The teammates a dead lead recorded become this lead's.
    pub fn adopt(&mut self, teammates: BTreeMap<String, TeammateRecord>) {
        self.record.teammates = teammates;
    }

    /// `/quit --keep`: the team waits for the next lead.
    pub fn keep(&mut self) {
        self.record.kept = true;
    }

    /// The record to write, with the worktrees not retired yet.
    pub fn to_write(&self, worktrees: Vec<WorktreeRecord>) -> SessionRecord {
        SessionRecord {
            worktrees,
            ..self.record.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude(session: &str) -> TeammateRecord {
        TeammateRecord {
            claude: true,
            session_id: Some(session.to_string()),
            base: Some("abc".to_string()),
        }
    }

    #[test]
    fn a_session_is_told_for_claude_teammates_only() {
        let mut next = NextLead::new("tmux", None);
        next.started("alpha", claude("s1"));
        next.started(
            "beta",
            TeammateRecord {
                claude: false,
                session_id: Some("s2".to_string()),
                base: None,
            },
        );
        assert!(next.is_claude("alpha") && !next.is_claude("beta"));
        assert_eq!(next.claude_session("alpha"), Some("s1"));
        assert_eq!(next.claude_session("beta"), None);
        assert_eq!(next.base_of("alpha"), Some("abc"));
        next.forget("alpha");
        assert!(!next.is_claude("alpha"));
    }

    #[test]
    fn the_copy_written_has_the_worktrees_given_and_the_kind() {
        let mut next = NextLead::new("tmux", Some("sock".to_string()));
        next.keep();
        let tree = WorktreeRecord {
            name: "alpha".to_string(),
            path: "/w".to_string(),
            branch: "b".to_string(),
            repo: "/r".to_string(),
        };
        let written = next.to_write(vec![tree.clone()]);
        assert_eq!(written.backend.as_deref(), Some("tmux"));
        assert_eq!(written.pane_session.as_deref(), Some("sock"));
        assert!(written.kept);
        assert_eq!(written.worktrees, vec![tree]);
    }
}
