//! Review and merge of teammates' work: `/review NAME` (the files its worktree changed since
//! its base, committed and uncommitted, with counts, and its commits; a file's diff on demand,
//! `LeadCommand::ReviewFile`), `/merge NAME --squash|--merge|--rebase [--dry-run] [--retire]`
//! (refused when the lead's checkout has uncommitted changes or the branch conflicts, checked
//! with `git merge-tree`, nothing touched), and `/merges` (every teammate's branch against the
//! lead's and each other, pairwise). Git runs in the store worker's `Git` lane, never on the
//! loop; a `Barrier` (how `ctl` knows a command is done) waits until what runs there is done.

use std::collections::HashMap;
use std::path::PathBuf;

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::git::{self, How};
use crate::lead::review::{MergeHow, ReviewSummary, parse_diff};
use crate::lead::contract::{LeadEvent, TeammateStatus};
use crate::lead::view_builder::status_of;

/// Reviews and merges under way.
#[derive(Debug, Default)]
pub struct ReviewState {
    /// Worktrees whose branch was merged at this tip but kept (the teammate still ran): by path,
    /// with their branch and the tip. Removed at quit when nothing came after.
    pub merged: HashMap<PathBuf, (String, String)>,
}

/// A teammate's worktree as review and merge need it.
#[derive(Debug, Clone)]
struct Target {
    name: String,
    worktree: PathBuf,
    /// Its branch, when known (else asked of git).
    branch: Option<String>,
    /// The commit it started from, when recorded.
    base: Option<String>,
    /// The lead's checkout.
    repo: PathBuf,
}

impl Target {
    fn branch(&self) -> Result<String, String> {
        if let Some(b) = &self.branch {
            return Ok(b.clone());
        }
        git::git_ok(&self.worktree, &["symbolic-ref", "--short", "HEAD"])
            .map(|b| b.trim().to_string())
            .map_err(|e| format!("{}'s worktree has no branch checked out: {e}", self.name))
    }

    /// The recorded base, else where its branch left the lead's `HEAD`.
    fn base(&self, branch: &str) -> Result<String, String> {
        if let Some(b) = &self.base
            && git::rev(&self.repo, b).is_some()
        {
            return Ok(b.clone());
        }
        git::merge_base(&self.repo, "HEAD", branch)
            .ok_or_else(|| format!("{branch} shares no history with the lead's HEAD"))
    }
}

impl Controller {
    /// Runs `then` with the worktree of teammate `name`, or says why there is none (and marks
    /// the command refused).
    fn with_review_target(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller, Target) + Send + 'static,
    ) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if let Some(target) = c.review_target(&name, known) {
                then(c, target)
            }
        });
    }

    /// The worktree of teammate `name` (`known`: it is in the team), or why there is none
    /// (said and marked refused).
    fn review_target(&mut self, name: &str, known: bool) -> Option<Target> {
        // A teammate that left the team (killed, pruned) keeps its worktree until /quit.
        let left = |c: &Controller| {
            c.worktrees
                .iter()
                .rev()
                .find(|(n, _)| n == name)
                .map(|(_, w)| w.path.clone())
        };
        let path = if known {
            let member = self.team_file.member(name);
            match member.and_then(|m| m.worktree_path.clone()) {
                Some(p) => PathBuf::from(p),
                None => {
                    self.refuse();
                    self.note(format!(
                        "{name} works in the lead's checkout, not a worktree of its own: there is nothing to review or merge apart (spawn with --worktree)."
                    ));
                    return None;
                }
            }
        } else if let Some(p) = left(self) {
            p
        } else {
            self.no_such_teammate(name);
            return None;
        };
        let worktree = path;
        let branch = self
            .worktrees
            .iter()
            .find(|(_, w)| w.path == worktree)
            .map(|(_, w)| w.branch.clone());
        Some(Target {
            name: name.to_string(),
            worktree,
            branch,
            base: self.record.teammates.get(name).and_then(|r| r.base.clone()),
            repo: self.cwd.clone(),
        })
    }

    /// Runs `work` in the `Git` lane; `then` on the loop (a store job like any other, so a
    /// `ctl` barrier waits for it: `store_worker`'s generations).
    fn git_job<T: Send + 'static>(
        &mut self,
        work: impl FnOnce() -> T + Send + 'static,
        then: impl FnOnce(&mut Controller, T) + Send + 'static,
    ) {
        self.store.submit(Lane::Git, move |_| work(), then);
    }

    /// `/review NAME`: the summary in the transcript, and the review for the screens.
    pub fn review(&mut self, name: &str) {
        self.with_review_target(name, |c, target| c.review_now(target));
    }

    fn review_now(&mut self, target: Target) {
        self.git_job(
            move || summary(&target),
            |c, result| match result {
                Ok(summary) => {
                    c.note(summary.text());
                    c.emit(LeadEvent::Review(summary));
                }
                Err(e) => {
                    c.refuse();
                    c.note(e);
                }
            },
        );
    }

    /// One file's diff for a review.
    pub fn review_file(&mut self, name: &str, path: &str) {
        let path = path.to_string();
        self.with_review_target(name, move |c, target| c.review_file_now(target, path));
    }

    fn review_file_now(&mut self, target: Target, path: String) {
        let name = target.name.clone();
        self.git_job(
            move || {
                let branch = target.branch()?;
                let base = target.base(&branch)?;
                git::file_diff(&target.worktree, &base, &path)
                    .map(|text| parse_diff(&path, &text))
                    .map_err(|e| format!("The diff of {path}: {e}"))
            },
            move |c, result| match result {
                Ok(diff) => c.emit(LeadEvent::ReviewFile { name, diff }),
                Err(e) => c.note(e),
            },
        );
    }

    /// `/merge NAME …`: checks, then merges (or says what it would do with `--dry-run`).
    pub fn merge(&mut self, name: &str, how: MergeHow, dry_run: bool, retire: bool) {
        self.with_review_target(name, move |c, target| {
            c.merge_now(target, how, dry_run, retire)
        });
    }

    fn merge_now(&mut self, target: Target, how: MergeHow, dry_run: bool, retire: bool) {
        let name = target.name.clone();
        let name = name.as_str();
        // A teammate removed from the team (killed, pruned) has no tracking left.
        let running = match (self.team_file.member(name), self.tracking.get(name)) {
            (Some(m), Some(t)) => !matches!(
                status_of(m, Some(t), false),
                TeammateStatus::Stopped { .. } | TeammateStatus::Gone
            ),
            _ => false,
        };
        self.git_job(
            move || merge_job(&target, how, dry_run, retire && !running, running && retire),
            |c, result| {
                let (text, refused, kept, retired) = match result {
                    Ok(done) => (done.text, false, done.kept, done.retired),
                    Err(e) => (e, true, None, None),
                };
                if refused {
                    c.refuse();
                }
                if let Some(path) = retired {
                    c.worktrees.retain(|(_, w)| w.path != path);
                }
                if let Some((path, branch, tip)) = kept {
                    c.review.merged.insert(path, (branch, tip));
                }
                c.note(text);
            },
        );
    }

    /// `/merges`: every teammate's branch against the lead's and each other.
    pub fn merge_queue(&mut self) {
        self.with_fresh_team(|c| c.merge_queue_now());
    }

    fn merge_queue_now(&mut self) {
        let names: Vec<String> = self
            .team_file
            .teammates()
            .filter(|m| m.worktree_path.is_some())
            .map(|m| m.name.clone())
            .collect();
        if names.is_empty() {
            return self.note("No teammate has a worktree of its own: the merge queue is empty.");
        }
        let mut targets = Vec::new();
        for name in names {
            if let Some(t) = self.review_target(&name, true) {
                targets.push(t);
            }
        }
        self.git_job(move || queue_text(&targets), |c, text| c.note(text));
    }

    /// At quit: worktrees merged this session whose teammate still ran then are removed now,
    /// when nothing came after the merge (else `retire` keeps and names them as before).
    pub(super) async fn retire_merged_worktrees(&mut self) {
        let merged: Vec<(PathBuf, (String, String))> = self.review.merged.drain().collect();
        if merged.is_empty() {
            return;
        }
        let repo = self.cwd.clone();
        let results = tokio::task::spawn_blocking(move || {
            merged
                .into_iter()
                .map(|(path, (branch, tip))| {
                    let r = git::retire_merged(&repo, &path, &branch, &tip);
                    (path, branch, r)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        for (path, branch, r) in results {
            match r {
                Ok(None) => {
                    self.worktrees.retain(|(_, w)| w.path != path);
                    self.note(format!(
                        "Removed the merged worktree {} and its branch {branch}.",
                        path.display()
                    ));
                }
                // Kept: the usual retirement names it with what it holds.
                Ok(Some(_)) => {}
                Err(e) => tracing::warn!("removing the merged worktree {}: {e}", path.display()),
            }
        }
    }
}

/// What `/review` shows (on the blocking pool).
fn summary(target: &Target) -> Result<ReviewSummary, String> {
    let branch = target.branch()?;
    let base = target.base(&branch)?;
    let files = git::changed_files(&target.worktree, &base)
        .map_err(|e| format!("Reading {}'s changes: {e}", target.name))?;
    let commits = git::commits(&target.worktree, &base, "HEAD")
        .map_err(|e| format!("Reading {}'s commits: {e}", target.name))?;
    let uncommitted = git::uncommitted(&target.worktree, true)
        .map(|u| u.len())
        .unwrap_or(0);
    Ok(ReviewSummary::from_git(
        &target.name,
        branch,
        &base,
        files,
        commits,
        uncommitted,
    ))
}

/// What a merge did.
struct Merged {
    text: String,
    /// Merged but kept (the teammate still runs in it): path, branch and the tip merged.
    kept: Option<(PathBuf, String, String)>,
    /// The worktree removed after the merge.
    retired: Option<PathBuf>,
}

fn how_word(how: MergeHow) -> &'static str {
    match how {
        MergeHow::Squash => "squash-merge",
        MergeHow::Merge => "merge",
        MergeHow::Rebase => "rebase",
    }
}

/// `/merge` (on the blocking pool): `Err` is a refusal, with nothing changed.
fn merge_job(
    target: &Target,
    how: MergeHow,
    dry_run: bool,
    retire: bool,
    retire_later: bool,
) -> Result<Merged, String> {
    let name = &target.name;
    let branch = target.branch()?;
    let repo = &target.repo;
    let lead_branch = git::git_ok(repo, &["rev-parse", "--abbrev-ref", "HEAD"])
        .map(|b| b.trim().to_string())
        .unwrap_or_else(|_| "HEAD".to_string());
    let dirty = git::uncommitted(repo, false).map_err(|e| e.to_string())?;
    if !dirty.is_empty() {
        return Err(format!(
            "Not merging {name}: the lead's checkout has uncommitted changes ({}): commit or stash them first. Nothing was changed.",
            dirty.join(", ")
        ));
    }
    let check = git::merge_check(repo, "HEAD", &branch).map_err(|e| e.to_string())?;
    let left_out = git::uncommitted(&target.worktree, true)
        .map(|u| u.len())
        .unwrap_or(0);
    let left_out = if left_out > 0 {
        format!(
            " {left_out} uncommitted file(s) in its worktree are not part of it (ask {name} to commit them)."
        )
    } else {
        String::new()
    };
    if !check.conflicts.is_empty() {
        return Err(format!(
            "Not merging {name}: {branch} conflicts with {lead_branch} in {}. Nothing was changed.",
            check.conflicts.join(", ")
        ));
    }
    if check.ahead == 0 {
        return Ok(Merged {
            text: format!(
                "Nothing to merge: {branch} has no commit that {lead_branch} lacks.{left_out}"
            ),
            kept: None,
            retired: None,
        });
    }
    let what = format!(
        "{} commit(s) of {name} ({branch}, {} behind {lead_branch})",
        check.ahead, check.behind
    );
    if dry_run {
        return Ok(Merged {
            text: format!(
                "Would {} {what} into {lead_branch}: it applies cleanly.{left_out}",
                how_word(how)
            ),
            kept: None,
            retired: None,
        });
    }
    let subjects = git::commits(repo, "HEAD", &branch)
        .map(|cs| {
            cs.iter()
                .map(|c| format!("- {}", c.subject))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let message = format!("Work of @{name} ({branch})\n\n{subjects}\n");
    let tip = git::rev(repo, &branch).unwrap_or_default();
    let git_how = match how {
        MergeHow::Squash => How::Squash,
        MergeHow::Merge => How::Merge,
        MergeHow::Rebase => How::Rebase,
    };
    git::merge(repo, &branch, git_how, &message).map_err(|e| {
        format!(
            "Could not {} {name}: {e}. Nothing was changed.",
            how_word(how)
        )
    })?;
    let head = git::rev(repo, "HEAD").unwrap_or_default();
    let mut text = format!(
        "Merged ({}) {what} into {lead_branch}: now at {}.{left_out}",
        how_word(how),
        head.chars().take(7).collect::<String>()
    );
    let (mut kept, mut retired) = (None, None);
    if retire {
        match git::retire_merged(repo, &target.worktree, &branch, &tip) {
            Ok(None) => {
                text.push_str(&format!(
                    " Removed its worktree {} and branch {branch}.",
                    target.worktree.display()
                ));
                retired = Some(target.worktree.clone());
            }
            Ok(Some(why)) => text.push_str(&format!(
                " Kept its worktree {}: it holds {why}.",
                target.worktree.display()
            )),
            Err(e) => text.push_str(&format!(" Kept its worktree: {e}")),
        }
    } else {
        if retire_later {
            text.push_str(&format!(
                " {name} still runs in its worktree: it is removed at /quit if nothing changes there."
            ));
        } else {
            text.push_str(&format!(
                " Its worktree stays: /merge {name} --{} --retire after it stops removes it, or /quit does.",
                match how {
                    MergeHow::Squash => "squash",
                    MergeHow::Merge => "merge",
                    MergeHow::Rebase => "rebase",
                }
            ));
        }
        kept = Some((target.worktree.clone(), branch, tip));
    }
    Ok(Merged {
        text,
        kept,
        retired,
    })
}

/// The merge queue (on the blocking pool).
fn queue_text(targets: &[Target]) -> String {
    let lead_branch = targets
        .first()
        .and_then(|t| git::git_ok(&t.repo, &["rev-parse", "--abbrev-ref", "HEAD"]).ok())
        .map(|b| b.trim().to_string())
        .unwrap_or_else(|| "HEAD".to_string());
    let mut rows: Vec<(String, String)> = Vec::new();
    let mut out = format!("Merge queue (against {lead_branch}):");
    for t in targets {
        let Ok(branch) = t.branch() else {
            out.push_str(&format!("\n  @{}: no branch checked out", t.name));
            continue;
        };
        match git::merge_check(&t.repo, "HEAD", &branch) {
            Ok(c) => {
                let state = if c.conflicts.is_empty() {
                    "clean".to_string()
                } else {
                    format!("conflicts in {}", c.conflicts.join(", "))
                };
                out.push_str(&format!(
                    "\n  @{} {branch}: {} ahead, {} behind, {state}",
                    t.name, c.ahead, c.behind
                ));
            }
            Err(e) => out.push_str(&format!("\n  @{} {branch}: {e}", t.name)),
        }
        rows.push((t.name.clone(), branch));
    }
    let mut pairs = Vec::new();
    for (i, (a, ba)) in rows.iter().enumerate() {
        for (b, bb) in rows.iter().skip(i + 1) {
            if let (Some(t), true) = (targets.first(), true)
                && let Ok(files) = git::conflicts(&t.repo, ba, bb)
                && !files.is_empty()
            {
                pairs.push(format!("@{a} and @{b} conflict in {}", files.join(", ")));
            }
        }
    }
    if pairs.is_empty() {
        if rows.len() > 1 {
            out.push_str("\n  No two branches conflict with each other.");
        }
    } else {
        for p in pairs {
            out.push_str(&format!("\n  {p}"));
        }
    }
    out
}
