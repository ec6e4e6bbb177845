//! Keeping a teammate's mode in step with what the lead set, for clients that ignore
//! `mode_set_request` (Claude Code 2.1.329 and later; PROTOCOL.md 4).
//!
//! The rule: after the lead changed a teammate's mode (a `mode_set_request` was sent), the
//! teammate's next `permission_request` that the new mode would not have asked — `acceptEdits`:
//! an edit tool (Write, Edit, MultiEdit, NotebookEdit) on a file inside the teammate's working
//! directory; `bypassPermissions`: any tool — is answered at once with an approval carrying a
//! `setMode` update to that mode (destination `session`), so the teammate adopts the mode the
//! lead set, and the transcript says so. This happens once per mode change: the answer brings
//! the teammate to the mode, after which its requests are its own. A client that did apply the
//! `mode_set_request` never asks such a request, so the rule does not touch it.

use std::path::Path;

use serde_json::Value;

use super::state::Controller;
use crate::lead::contract::PermissionDecision;
use crate::protocol::permission::Destination;
use crate::protocol::{PermissionMode, PermissionUpdate};

/// The edit tools `acceptEdits` allows inside the working directory.
const EDIT_TOOLS: [&str; 4] = ["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Whether `mode` lets a teammate whose working directory is `cwd` run `tool` on `input`
/// without asking.
pub fn mode_allows(mode: PermissionMode, tool: &str, input: &Value, cwd: &str) -> bool {
    match mode {
        PermissionMode::BypassPermissions => true,
        PermissionMode::AcceptEdits if EDIT_TOOLS.contains(&tool) => {
            let file = input["file_path"]
                .as_str()
                .or_else(|| input["notebook_path"].as_str());
            match file {
                Some(file) => {
                    let (file, cwd) = (Path::new(file), Path::new(cwd));
                    file.is_absolute()
                        && !cwd.as_os_str().is_empty()
                        && !file.components().any(|c| c.as_os_str() == "..")
                        && file.starts_with(cwd)
                }
                None => false,
            }
        }
        _ => false,
    }
}

impl Controller {
    /// A permission request just queued under `key`: answered at once when the mode the lead
    /// set for `from`, which `from` has not adopted yet, would not have asked it.
    pub(super) fn answer_by_set_mode(&mut self, from: &str, key: u64, tool: &str, input: &Value) {
        let Some(mode) = self.roster.get(from).and_then(|t| t.modes().sent()) else {
            return;
        };
        let cwd = match self.cache.file().member(from) {
            Some(member) => member.cwd.clone(),
            None => return,
        };
        if !mode_allows(mode, tool, input, &cwd) {
            return;
        }
        if let Some(t) = self.roster.get_mut(from) {
            t.modes_mut().forget_sent();
        }
        self.answer_permission(
            key,
            PermissionDecision::AllowAlways(vec![PermissionUpdate::SetMode {
                mode,
                destination: Destination::Session,
            }]),
        );
        self.note(format!(
            "Approved {from}'s {tool} request: the lead set {from} to {mode} mode, which it had \
             not applied; the answer switches it to {mode}."
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accept_edits_allows_edits_inside_the_working_directory_only() {
        let m = PermissionMode::AcceptEdits;
        let inside = json!({"file_path": "/w/src/a.rs"});
        assert!(mode_allows(m, "Write", &inside, "/w"));
        assert!(mode_allows(m, "Edit", &inside, "/w"));
        assert!(!mode_allows(m, "Bash", &json!({"command": "ls"}), "/w"));
        assert!(!mode_allows(
            m,
            "Write",
            &json!({"file_path": "/etc/x"}),
            "/w"
        ));
        assert!(!mode_allows(
            m,
            "Write",
            &json!({"file_path": "/w/../x"}),
            "/w"
        ));
        assert!(!mode_allows(
            m,
            "Write",
            &json!({"file_path": "a.rs"}),
            "/w"
        ));
        assert!(!mode_allows(m, "Write", &inside, ""));
    }

    #[test]
    fn bypass_allows_everything_and_default_and_plan_nothing() {
        let bash = json!({"command": "ls"});
        assert!(mode_allows(
            PermissionMode::BypassPermissions,
            "Bash",
            &bash,
            "/w"
        ));
        assert!(!mode_allows(PermissionMode::Default, "Bash", &bash, "/w"));
        let write = json!({"file_path": "/w/a"});
        assert!(!mode_allows(PermissionMode::Plan, "Write", &write, "/w"));
    }
}
