//! The lead's session record, `teams/<team>/.teamlead/session.json`: what a later lead of the
//! team needs to take it over and is not in `config.json` — where the panes live (a private
//! tmux server's socket), how each teammate was started (a real `claude` or teamlead's own
//! runtime), the teammate worktrees not yet retired, and whether the last lead left on purpose
//! (`/quit --keep`). teamlead-only; Claude
//! Code never reads it. Written atomically, read through the safe reader; a record that cannot
//! be read counts as absent (the lead then knows less, and says so).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::home::Home;

/// The largest record read.
const MAX_RECORD_BYTES: u64 = 1024 * 1024;

/// How one teammate was started.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TeammateRecord {
    /// A real `claude` process (else teamlead's runtime).
    #[serde(default)]
    pub claude: bool,
    /// A `claude` teammate's session id (`--session-id`): its transcript under the config
    /// directory's `projects/`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The commit its worktree was made from (`--worktree`): what `/review` and `/merge`
    /// compare its work with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// A git worktree the lead made for a teammate (`--worktree`). Kept in the record until the
/// worktree is retired, so a lead that takes over the team after a crash retires it at `/quit`
/// too, even when its teammate has left the team.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeRecord {
    /// The teammate it was made for.
    pub name: String,
    pub path: String,
    /// Its branch (`teamlead/<team>/<name>`).
    pub branch: String,
    /// The checkout it was made from.
    pub repo: String,
}

/// The record of the team's last lead session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRecord {
    /// The `backendType` of its teammates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    /// What its executor needs to find its panes again (a private tmux server's socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_session: Option<String>,
    /// The lead left with `/quit --keep`: the team waits for the next lead.
    #[serde(default)]
    pub kept: bool,
    #[serde(default)]
    pub teammates: BTreeMap<String, TeammateRecord>,
    /// The teammate worktrees made by this team's leads and not retired yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub worktrees: Vec<WorktreeRecord>,
}

impl SessionRecord {
    /// The record of `team` (`None` when there is none or it cannot be read).
    pub fn read(home: &Home, team: &str) -> Option<SessionRecord> {
        let path = home.teamlead_dir(team).ok()?.join("session.json");
        let bytes = super::safe_file::read_regular(&path, MAX_RECORD_BYTES).ok()??;
        serde_json::from_slice(&bytes).ok()
    }

    /// The teammate worktrees `team` recorded, as (teammate, path), each path once: its
    /// members' `worktreePath`s, then the worktrees of its session record not retired yet (a
    /// teammate removed from `config.json` may have left one).
    pub fn team_worktrees(
        home: &Home,
        team: &str,
        file: &crate::TeamFile,
    ) -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = file
            .members
            .iter()
            .filter_map(|m| Some((m.name.clone(), m.worktree_path.clone()?)))
            .collect();
        let recorded = SessionRecord::read(home, team)
            .map(|r| r.worktrees)
            .unwrap_or_default();
        for w in recorded {
            if !found.iter().any(|(_, path)| *path == w.path) {
                found.push((w.name, w.path));
            }
        }
        found
    }

    /// Writes the record of `team`.
    pub fn write(&self, home: &Home, team: &str) -> Result<()> {
        let dir = home.teamlead_dir(team)?;
        home.ensure_dir(&dir)?;
        let bytes = super::atomic::pretty_bytes(self);
        super::atomic::write_atomic(&dir.join("session.json"), &bytes)
    }
}
