//! The merge queue (`/merges`, and its dialog): every teammate branch against the lead's
//! branch (ahead, behind, clean or the files it conflicts in) and each pair of branches that
//! would conflict with each other. The pairs take longest (one `git merge-tree` a pair), so the
//! queue first comes without them (`pairs: None`) and again with them; a merge sends it again
//! so the others' status follows. Also what a merge did ([`Merged`]), for the screen's offer to
//! retire the worktree.

use serde::{Deserialize, Serialize};

use super::MergeHow;

/// One teammate's branch in the queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueEntry {
    pub name: String,
    pub branch: String,
    /// Commits of its branch the lead's branch lacks.
    pub ahead: usize,
    /// Commits of the lead's branch its branch lacks.
    pub behind: usize,
    /// The files it would conflict in with the lead's branch (empty: it merges cleanly).
    pub conflicts: Vec<String>,
    /// Files with uncommitted changes in its worktree (not part of a merge).
    pub uncommitted: usize,
    /// Its commits are ahead by name, but every change of them is in the lead's branch
    /// already (merged before as a squash or a rebase): nothing is left to merge.
    #[serde(default)]
    pub already_in: bool,
    /// Why it could not be looked at (no branch checked out, git failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl QueueEntry {
    /// `1 ahead, 0 behind, clean` / `… conflicts in a.rs, b.rs`.
    pub fn state(&self) -> String {
        if let Some(e) = &self.error {
            return e.clone();
        }
        let with_lead = if self.conflicts.is_empty() && self.already_in {
            "already merged (nothing left to merge)".to_string()
        } else if self.conflicts.is_empty() {
            "clean".to_string()
        } else {
            format!("conflicts in {}", self.conflicts.join(", "))
        };
        format!("{} ahead, {} behind, {with_lead}", self.ahead, self.behind)
    }

    /// Whether a merge of it would go in (something to merge, no conflict with the lead).
    pub fn mergeable(&self) -> bool {
        self.error.is_none() && self.conflicts.is_empty() && self.ahead > 0 && !self.already_in
    }

    /// Nothing of it is left to merge (no commit ahead, or its changes are in already).
    pub fn nothing_left(&self) -> bool {
        self.conflicts.is_empty() && (self.ahead == 0 || self.already_in)
    }
}

/// Two branches that conflict with each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuePair {
    pub a: String,
    pub b: String,
    pub files: Vec<String>,
}

/// The merge queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeQueue {
    /// The lead's branch (`HEAD` when detached).
    pub lead_branch: String,
    pub entries: Vec<QueueEntry>,
    /// Each pair of branches that conflict; `None` while they are being computed.
    pub pairs: Option<Vec<QueuePair>>,
    /// Opens the dialog (`/merges`); otherwise it only updates an open one (the pairs
    /// arriving, the queue after a merge).
    pub opens: bool,
}

impl MergeQueue {
    /// The teammates whose branches conflict with `name`'s, with the files.
    pub fn conflicts_of(&self, name: &str) -> Vec<(&str, &[String])> {
        self.pairs
            .iter()
            .flatten()
            .filter_map(|p| {
                if p.a == name {
                    Some((p.b.as_str(), p.files.as_slice()))
                } else if p.b == name {
                    Some((p.a.as_str(), p.files.as_slice()))
                } else {
                    None
                }
            })
            .collect()
    }

    /// The transcript's account (what `ctl … merges` prints).
    pub fn text(&self) -> String {
        let mut out = format!("Merge queue (against {}):", self.lead_branch);
        for e in &self.entries {
            if e.error.is_some() {
                out.push_str(&format!("\n  @{}: {}", e.name, e.state()));
            } else {
                out.push_str(&format!("\n  @{} {}: {}", e.name, e.branch, e.state()));
            }
        }
        match &self.pairs {
            None => out.push_str("\n  (conflicts between branches: still computing)"),
            Some(pairs) if pairs.is_empty() => {
                if self.entries.len() > 1 {
                    out.push_str("\n  No two branches conflict with each other.");
                }
            }
            Some(pairs) => {
                for p in pairs {
                    out.push_str(&format!(
                        "\n  @{} and @{} conflict in {}",
                        p.a,
                        p.b,
                        p.files.join(", ")
                    ));
                }
            }
        }
        out
    }
}

/// What a merge did (a real one, not a dry run).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Merged {
    pub name: String,
    pub branch: String,
    pub how: MergeHow,
    /// Its worktree.
    pub worktree: String,
    /// The worktree and branch were removed with the merge (`--retire`).
    pub retired: bool,
    /// The teammate still ran when it was merged (retiring it stops it first).
    pub running: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, conflicts: &[&str]) -> QueueEntry {
        QueueEntry {
            name: name.into(),
            branch: format!("teamlead/t/{name}"),
            ahead: 1,
            behind: 0,
            conflicts: conflicts.iter().map(|s| s.to_string()).collect(),
            uncommitted: 0,
            already_in: false,
            error: None,
        }
    }

    #[test]
    fn text_and_pairs() {
        let mut q = MergeQueue {
            lead_branch: "main".into(),
            entries: vec![entry("a", &[]), entry("b", &["x.rs"]), entry("c", &[])],
            pairs: None,
            opens: true,
        };
        assert!(q.text().contains("still computing"));
        q.pairs = Some(vec![QueuePair {
            a: "a".into(),
            b: "c".into(),
            files: vec!["y.rs".into()],
        }]);
        let t = q.text();
        assert!(
            t.contains("@a teamlead/t/a: 1 ahead, 0 behind, clean"),
            "{t}"
        );
        assert!(
            t.contains("@b teamlead/t/b: 1 ahead, 0 behind, conflicts in x.rs"),
            "{t}"
        );
        assert!(t.contains("@a and @c conflict in y.rs"), "{t}");
        assert_eq!(q.conflicts_of("c"), vec![("a", &["y.rs".to_string()][..])]);
        assert!(q.conflicts_of("b").is_empty());
        assert!(q.entries[0].mergeable() && !q.entries[1].mergeable());
    }
}
