//! What the lead shows of a teammate's work (`/review`): the summary (base, branch, the files
//! changed with their counts, the commits, the pull request of its branch) and one file's
//! diff, parsed from git's unified diff into hunks of lines, each changed line with the byte
//! ranges that differ from its counterpart (intra-line highlights, by the `similar` crate's
//! word diff); a comment on a line or hunk as the message the teammate gets; the merge queue
//! (`/merges`); what a merge did; and the teammate worktrees a `/quit` kept or removed. Serde
//! types: they travel in [`LeadEvent`](crate::lead::contract::LeadEvent)s to any screen. Pure: the
//! git work is in `backend::git`, run off the controller's loop by `controller::review`.

mod comment;
mod left;
mod queue;

use serde::{Deserialize, Serialize};

pub use comment::ReviewComment;
pub use left::{WorktreeFate, WorktreeReport};
pub use queue::{MergeQueue, Merged, QueueEntry, QueuePair};

/// How `/merge` brings a teammate's branch into the lead's (named in one place:
/// `backend::git::MergeHow`).
pub use crate::backend::git::MergeHow;

/// One changed file of a review.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangedFile {
    pub path: String,
    /// `A` added, `M` modified, `D` deleted, `T` type changed, `?` untracked; `=` a file a
    /// teammate without a worktree wrote that shows no change now (committed since, or put
    /// back).
    pub status: char,
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
}

/// One commit of the teammate's branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitView {
    pub id: String,
    pub subject: String,
}

/// Where a teammate's work is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum WorkPlace {
    /// Its own worktree and branch: everything changed there since its base.
    #[default]
    Worktree,
    /// The lead's checkout (it has no worktree): the files its tool calls wrote, each with
    /// its change against the lead's `HEAD` (which may hold others' changes too).
    Checkout,
    /// The lead's checkout, for a teammate whose commands can write any file and leave no
    /// record of which (the shell engine): every uncommitted change there, whoever made it.
    Shared,
}

/// The pull request of a teammate's branch, as `gh pr view` tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrState {
    pub number: u64,
    /// `OPEN`, `CLOSED` or `MERGED`.
    pub state: String,
    #[serde(default)]
    pub draft: bool,
    pub url: String,
    #[serde(default)]
    pub title: String,
}

impl PrState {
    /// `PR #12 open`, `PR #12 draft`, `PR #12 merged`.
    pub fn label(&self) -> String {
        let state = if self.draft && self.state == "OPEN" {
            "draft".to_string()
        } else {
            self.state.to_lowercase()
        };
        format!("PR #{} {state}", self.number)
    }
}

/// What a teammate changed since its base.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSummary {
    pub name: String,
    pub branch: String,
    /// The commit its worktree started from (short id).
    pub base: String,
    /// Files changed (committed on its branch and uncommitted in its worktree), by path.
    pub files: Vec<ChangedFile>,
    /// Its commits since the base, newest first.
    pub commits: Vec<CommitView>,
    /// How many of the files have uncommitted changes.
    pub uncommitted: usize,
    /// Its own worktree, or the lead's checkout.
    #[serde(default)]
    pub place: WorkPlace,
    /// The pull request of its branch (where `gh` runs and the repository has a remote; it
    /// arrives after the summary, `LeadEvent::ReviewPr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<PrState>,
}

impl ReviewSummary {
    /// The summary of what git reported for a teammate's branch since `base`.
    pub fn from_git(
        name: &str,
        branch: String,
        base: &str,
        files: Vec<crate::backend::git::Changed>,
        commits: Vec<crate::backend::git::Commit>,
        uncommitted: usize,
    ) -> ReviewSummary {
        ReviewSummary {
            name: name.to_string(),
            branch,
            base: base.chars().take(7).collect(),
            files: files
                .into_iter()
                .map(|f| ChangedFile {
                    path: f.path,
                    status: f.status,
                    added: f.counts.map_or(0, |c| c.0),
                    removed: f.counts.map_or(0, |c| c.1),
                    binary: f.counts.is_none(),
                })
                .collect(),
            commits: commits
                .into_iter()
                .map(|c| CommitView {
                    id: c.id,
                    subject: c.subject,
                })
                .collect(),
            uncommitted,
            place: WorkPlace::Worktree,
            pr: None,
        }
    }
}

impl ReviewSummary {
    pub fn added(&self) -> usize {
        self.files.iter().map(|f| f.added).sum()
    }

    pub fn removed(&self) -> usize {
        self.files.iter().map(|f| f.removed).sum()
    }

    /// The transcript's account: `alpha (branch …, base abc1234): 2 files +10 −3, 1 commit`
    /// and a line per file and per commit.
    pub fn text(&self) -> String {
        let mut out = match self.place {
            WorkPlace::Worktree => format!(
                "Review of @{} (branch {}, base {}): {} file(s) +{} -{}, {} commit(s){}",
                self.name,
                self.branch,
                self.base,
                self.files.len(),
                self.added(),
                self.removed(),
                self.commits.len(),
                if self.uncommitted > 0 {
                    format!(", {} file(s) with uncommitted changes", self.uncommitted)
                } else {
                    String::new()
                }
            ),
            WorkPlace::Checkout => format!(
                "Review of @{} (no worktree: the files its tool calls wrote in the lead's checkout, against {} {}): {} file(s) +{} -{}",
                self.name,
                self.branch,
                self.base,
                self.files.len(),
                self.added(),
                self.removed(),
            ),
            WorkPlace::Shared => format!(
                "Review of @{} (no worktree, and its shell commands leave no record of the files they write: which changes are its own cannot be known. Every uncommitted change in the lead's checkout, against {} {}): {} file(s) +{} -{}",
                self.name,
                self.branch,
                self.base,
                self.files.len(),
                self.added(),
                self.removed(),
            ),
        };
        if let Some(pr) = &self.pr {
            out.push_str(&format!("\n  {} {}", pr.label(), pr.url));
        }
        for f in &self.files {
            let counts = if f.binary {
                "binary".to_string()
            } else if f.status == '=' {
                "unchanged now".to_string()
            } else {
                format!("+{} -{}", f.added, f.removed)
            };
            out.push_str(&format!("\n  {} {} {counts}", f.status, f.path));
        }
        for c in &self.commits {
            out.push_str(&format!("\n  {} {}", c.id, c.subject));
        }
        out
    }
}

/// What a diff line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum LineKind {
    Context,
    Added,
    Removed,
}

/// One line of a hunk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    pub kind: LineKind,
    /// Its number in the old file (context and removed lines).
    pub old: Option<u32>,
    /// Its number in the new file (context and added lines).
    pub new: Option<u32>,
    /// The text, without the `+`/`-`/` ` marker and the newline.
    pub text: String,
    /// Byte ranges of `text` that differ from its counterpart (a removed line paired with the
    /// added line that replaced it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub emph: Vec<(usize, usize)>,
}

/// One hunk: its `@@` header and its lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hunk {
    pub header: String,
    pub lines: Vec<DiffLine>,
}

/// One file's diff.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FileDiff {
    pub path: String,
    pub hunks: Vec<Hunk>,
    /// Git's word for a file it does not diff as text (`Binary files … differ`).
    #[serde(default)]
    pub binary: bool,
}

/// Lines of a hunk header `@@ -a,b +c,d @@`: the first old and new line numbers.
fn header_starts(header: &str) -> (u32, u32) {
    let mut old = 0;
    let mut new = 0;
    for part in header.split_whitespace() {
        let num = |p: &str| {
            p.split(',')
                .next()
                .and_then(|n| n.parse::<u32>().ok())
                .unwrap_or(0)
        };
        if let Some(p) = part.strip_prefix('-') {
            old = num(p);
        } else if let Some(p) = part.strip_prefix('+') {
            new = num(p);
        }
    }
    (old, new)
}

/// Parses git's unified diff of one file.
pub fn parse_diff(path: &str, text: &str) -> FileDiff {
    let mut diff = FileDiff {
        path: path.to_string(),
        ..FileDiff::default()
    };
    let (mut old, mut new) = (0u32, 0u32);
    for line in text.lines() {
        if line.starts_with("@@") {
            let header = line.to_string();
            (old, new) = header_starts(&header);
            diff.hunks.push(Hunk {
                header,
                lines: Vec::new(),
            });
            continue;
        }
        let Some(hunk) = diff.hunks.last_mut() else {
            if line.starts_with("Binary files") {
                diff.binary = true;
            }
            continue;
        };
        let (kind, rest) = match line.as_bytes().first() {
            Some(b'+') => (LineKind::Added, &line[1..]),
            Some(b'-') => (LineKind::Removed, &line[1..]),
            Some(b' ') => (LineKind::Context, &line[1..]),
            Some(b'\\') => continue, // "\ No newline at end of file"
            None => (LineKind::Context, ""),
            _ => continue,
        };
        let (o, n) = match kind {
            LineKind::Context => (Some(old), Some(new)),
            LineKind::Added => (None, Some(new)),
            LineKind::Removed => (Some(old), None),
        };
        if o.is_some() {
            old += 1;
        }
        if n.is_some() {
            new += 1;
        }
        hunk.lines.push(DiffLine {
            kind,
            old: o,
            new: n,
            text: rest.to_string(),
            emph: Vec::new(),
        });
    }
    for hunk in &mut diff.hunks {
        emphasize(&mut hunk.lines);
    }
    diff
}

/// Lines longer than this are not compared word by word (the cost grows with their product).
const EMPH_MAX_LINE: usize = 1_000;

/// Pairs each run of removed lines with the added lines that follow it, line by line, and
/// marks the words that differ.
fn emphasize(lines: &mut [DiffLine]) {
    let mut i = 0;
    while i < lines.len() {
        if lines[i].kind != LineKind::Removed {
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && lines[i].kind == LineKind::Removed {
            i += 1;
        }
        let removed = i - start;
        let added_start = i;
        while i < lines.len() && lines[i].kind == LineKind::Added {
            i += 1;
        }
        let added = i - added_start;
        for k in 0..removed.min(added) {
            let (a, b) = (start + k, added_start + k);
            if lines[a].text.len() > EMPH_MAX_LINE || lines[b].text.len() > EMPH_MAX_LINE {
                continue;
            }
            let (ea, eb) = word_ranges(&lines[a].text, &lines[b].text);
            lines[a].emph = ea;
            lines[b].emph = eb;
        }
    }
}

/// Byte ranges of a line.
type Ranges = Vec<(usize, usize)>;

/// The byte ranges of `old` deleted and of `new` inserted, by a word diff; none when the two
/// lines share almost nothing (then the whole line is the change and no highlight helps).
fn word_ranges(old: &str, new: &str) -> (Ranges, Ranges) {
    use similar::{ChangeTag, TextDiff};
    let diff = TextDiff::from_words(old, new);
    if diff.ratio() < 0.3 {
        return (Vec::new(), Vec::new());
    }
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    let (mut at_old, mut at_new) = (0usize, 0usize);
    let push = |v: &mut Vec<(usize, usize)>, s: usize, e: usize| match v.last_mut() {
        Some(last) if last.1 == s => last.1 = e,
        _ => v.push((s, e)),
    };
    for change in diff.iter_all_changes() {
        let len = change.value().len();
        match change.tag() {
            ChangeTag::Equal => {
                at_old += len;
                at_new += len;
            }
            ChangeTag::Delete => {
                push(&mut ea, at_old, at_old + len);
                at_old += len;
            }
            ChangeTag::Insert => {
                push(&mut eb, at_new, at_new + len);
                at_new += len;
            }
        }
    }
    (ea, eb)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "diff --git a/src/a.rs b/src/a.rs\nindex 1..2 100644\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,3 +1,4 @@\n fn main() {\n-    let x = 1;\n+    let x = 2;\n+    println!(\"{x}\");\n }\n";

    #[test]
    fn parses_hunks_with_line_numbers_and_word_highlights() {
        let d = parse_diff("src/a.rs", DIFF);
        assert_eq!(d.hunks.len(), 1);
        let lines = &d.hunks[0].lines;
        assert_eq!(lines.len(), 5);
        assert_eq!((lines[0].old, lines[0].new), (Some(1), Some(1)));
        assert_eq!(lines[1].kind, LineKind::Removed);
        assert_eq!((lines[1].old, lines[1].new), (Some(2), None));
        assert_eq!((lines[2].old, lines[2].new), (None, Some(2)));
        assert_eq!((lines[3].old, lines[3].new), (None, Some(3)));
        assert_eq!((lines[4].old, lines[4].new), (Some(3), Some(4)));
        // Only the word `1;` → `2;` differs (words are split at whitespace).
        assert_eq!(lines[1].emph.len(), 1);
        let (s, e) = lines[1].emph[0];
        assert_eq!(&lines[1].text[s..e], "1;");
        let (s, e) = lines[2].emph[0];
        assert_eq!(&lines[2].text[s..e], "2;");
        assert!(lines[3].emph.is_empty());
    }

    #[test]
    fn binary_files_have_no_hunks() {
        let d = parse_diff(
            "x.png",
            "diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n",
        );
        assert!(d.binary);
        assert!(d.hunks.is_empty());
    }
}
