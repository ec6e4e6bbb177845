//! What the teammate worktrees held when the lead quit, and which were removed or kept: the
//! list `/quit` says before the screen closes and the screen prints on the terminal after it
//! has left its alternate screen, so it stays there.

use serde::{Deserialize, Serialize};

/// One teammate worktree at quit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeFate {
    pub name: String,
    pub path: String,
    pub branch: Option<String>,
    /// Commits of its branch the lead's branch lacks (`None`: not known).
    pub ahead: Option<usize>,
    /// Files with uncommitted changes (untracked included).
    pub uncommitted: usize,
    /// Commits on no other branch and not in the lead's `HEAD`.
    pub unmerged: usize,
    /// Its branch was merged this session (a squash leaves its commits on it alone).
    #[serde(default)]
    pub merged: bool,
    /// Removed (it held nothing), else kept.
    pub removed: bool,
    /// Why it was kept when git could not say what it holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Every teammate worktree of a session that quit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeReport {
    pub team: String,
    /// The lead's branch.
    pub lead_branch: String,
    pub worktrees: Vec<WorktreeFate>,
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl WorktreeFate {
    /// `branch teamlead/t/a: 2 commits ahead of main, 1 uncommitted file`.
    pub fn holds(&self, lead_branch: &str) -> String {
        let mut parts = Vec::new();
        if self.merged {
            parts.push(format!("merged into {lead_branch}"));
        } else if let Some(ahead) = self.ahead.filter(|a| *a > 0) {
            parts.push(format!(
                "{} ahead of {lead_branch}",
                plural(ahead, "commit")
            ));
        }
        if self.unmerged > 0 && !self.merged && self.ahead.is_none_or(|a| a == 0) {
            parts.push(format!("{} not merged", plural(self.unmerged, "commit")));
        }
        if self.uncommitted > 0 {
            parts.push(plural(self.uncommitted, "uncommitted file"));
        }
        if let Some(e) = &self.error {
            parts.push(e.clone());
        }
        let holds = if parts.is_empty() {
            "nothing uncommitted or unmerged".to_string()
        } else {
            parts.join(", ")
        };
        match &self.branch {
            Some(b) => format!("branch {b}: {holds}"),
            None => holds,
        }
    }
}

impl WorktreeReport {
    /// The lines printed after the screen closes (none without a worktree).
    pub fn lines(&self) -> Vec<String> {
        if self.worktrees.is_empty() {
            return Vec::new();
        }
        let mut out = vec![format!("Teammate worktrees of team `{}`:", self.team)];
        // Columns: every name and path padded to the widest, so the rows line up.
        let width = |t: &str| t.chars().count();
        let name_w = self
            .worktrees
            .iter()
            .map(|w| width(&w.name))
            .max()
            .unwrap_or(0);
        let path_w = self
            .worktrees
            .iter()
            .map(|w| width(&w.path))
            .max()
            .unwrap_or(0);
        for w in &self.worktrees {
            out.push(format!(
                "  {:<8} @{}{}  {}{}  {}",
                if w.removed { "removed" } else { "kept" },
                w.name,
                " ".repeat(name_w - width(&w.name)),
                w.path,
                " ".repeat(path_w - width(&w.path)),
                w.holds(&self.lead_branch)
            ));
        }
        if self.worktrees.iter().any(|w| !w.removed) {
            out.push(
                "  A kept worktree holds work: `git -C <path> status` shows it; merge its branch, then `git worktree remove <path>`."
                    .to_string(),
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_name_what_each_worktree_holds() {
        let report = WorktreeReport {
            team: "t".into(),
            lead_branch: "main".into(),
            worktrees: vec![
                WorktreeFate {
                    name: "alpha".into(),
                    path: "/r-worktrees/t-alpha".into(),
                    branch: Some("teamlead/t/alpha".into()),
                    ahead: Some(2),
                    uncommitted: 1,
                    unmerged: 2,
                    merged: false,
                    removed: false,
                    error: None,
                },
                WorktreeFate {
                    name: "beta".into(),
                    path: "/r-worktrees/t-beta".into(),
                    branch: Some("teamlead/t/beta".into()),
                    ahead: Some(0),
                    uncommitted: 0,
                    unmerged: 0,
                    merged: false,
                    removed: true,
                    error: None,
                },
            ],
        };
        let lines = report.lines();
        insta::assert_snapshot!("quit_worktree_table", lines.join("\n"));
        assert_eq!(lines[0], "Teammate worktrees of team `t`:");
        assert_eq!(
            lines[1],
            "  kept     @alpha  /r-worktrees/t-alpha  branch teamlead/t/alpha: 2 commits ahead of main, 1 uncommitted file"
        );
        assert_eq!(
            lines[2],
            "  removed  @beta   /r-worktrees/t-beta   branch teamlead/t/beta: nothing uncommitted or unmerged"
        );
        assert!(lines[3].contains("git -C <path> status"));
    }
}
