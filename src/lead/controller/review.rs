//! Review and merge of teammates' work: `/review NAME` (the files its worktree changed since
//! its base, committed and uncommitted, with counts, and its commits, then the pull request of
//! its branch where `gh` can tell; for a teammate without a worktree, the files its tool calls
//! wrote, with their change in the lead's checkout; a file's diff on demand,
//! `LeadCommand::ReviewFile`), a comment on a line or hunk sent to the teammate as a message
//! (`LeadCommand::ReviewComment`), `/merge NAME --squash|--merge|--rebase [--dry-run]
//! [--retire]` (refused when the lead's checkout has uncommitted changes or the branch
//! conflicts, checked with `git merge-tree`, nothing touched), retiring a merged worktree
//! (`LeadCommand::RetireWorktree`), and `/merges` (every teammate's branch against the lead's
//! and each other, pairwise: sent to the screens as the merge queue, again after each merge).
//! Git runs in the store worker's `Git` lane and `gh` in the `GitHub` lane, never on the loop;
//! a `Barrier` (how `ctl` knows a command is done) waits until what runs there is done.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::merge_words::{self, MergeDone};
use super::review_target::{BranchFrom, Target};
use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::BackendError;
use crate::backend::git;
use crate::backend::worktree::{self, Retired, Survey, Worktree};
use crate::lead::contract::{LeadEvent, TeammateStatus};
use crate::lead::review::{
    MergeHow, MergeQueue, Merged, PrState, QueueEntry, QueuePair, ReviewComment, ReviewSummary,
    WorkPlace, WorktreeFate, parse_diff,
};
use crate::lead::view_builder::status_of;
use crate::store::Home;
use crate::store::claude_transcript::TranscriptMeter;

/// Reviews and merges under way.
#[derive(Debug, Default)]
pub struct ReviewState {
    /// Worktrees whose branch was merged at this tip but kept (the teammate still ran): by path,
    /// with their branch and the tip. Removed at quit when nothing came after.
    merged: HashMap<PathBuf, (String, String)>,
    /// A merge queue was asked for this session: a merge sends it again, so the others'
    /// status follows.
    queue_shown: bool,
}

/// What went wrong in review and merge work; its text is what the lead says.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReviewError {
    #[error("{name}'s worktree has no branch checked out: {source}")]
    NoBranch { name: String, source: BackendError },
    #[error("{branch} shares no history with the lead's HEAD")]
    NoHistory { branch: String },
    /// Reading something of the repository failed: what it was, and why.
    #[error("{what}: {source}")]
    Reading { what: String, source: BackendError },
    #[error(
        "{name} works in the lead's checkout, which is not a git repository: there is nothing to review (spawn with --worktree in a repository)."
    )]
    NoRepository { name: String },
    #[error(
        "{name} works in the lead's checkout, whose repository has no commit yet: there is nothing to compare with."
    )]
    NoCommit { name: String },
    #[error(transparent)]
    Git(#[from] BackendError),
    /// A remote teammate's branch could not be fetched; nothing was changed.
    #[error("{0}")]
    Fetch(#[from] git::FetchError),
    #[error("{what} is gone")]
    Gone { what: String },
    /// `/merge` refused; nothing was changed.
    #[error("{}", merge_words::refusal(name, branch, *how, refusal))]
    MergeRefused {
        name: String,
        branch: String,
        how: MergeHow,
        refusal: git::LandRefusal,
    },
}

/// `what` failed to be read.
fn reading(what: impl Into<String>) -> impl FnOnce(BackendError) -> ReviewError {
    let what = what.into();
    move |source| ReviewError::Reading { what, source }
}

/// Where a teammate without a worktree keeps the record of the files it wrote.
#[derive(Debug, Clone)]
enum Written {
    /// A teamlead teammate's log (`store::written_files`).
    Own { team: String, name: String },
    /// A `claude` teammate's session transcript.
    Claude(Arc<Mutex<TranscriptMeter>>),
    /// Nothing: a shell teammate's commands may write any file and no record says which.
    Unknown,
}

impl Written {
    /// The files written, absolute (relative ones taken from `cwd`).
    fn paths(&self, home: &Home, cwd: &Path) -> Vec<PathBuf> {
        let paths = match self {
            Written::Own { team, name } => crate::store::written_files::read(home, team, name),
            Written::Unknown => Vec::new(),
            Written::Claude(meter) => meter
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .read(home)
                .map(|f| f.written.into_iter().map(PathBuf::from).collect())
                .unwrap_or_default(),
        };
        paths.into_iter().map(|p| cwd.join(p)).collect()
    }
}

/// A teammate that works in the lead's checkout (no worktree of its own).
#[derive(Debug, Clone)]
struct Checkout {
    name: String,
    /// Its working directory (where relative paths start).
    cwd: PathBuf,
    /// The lead's checkout.
    repo: PathBuf,
    written: Written,
}

/// What `/review` looks at.
enum Subject {
    Worktree(Target),
    Checkout(Checkout),
}

impl Controller {
    /// Runs `then` with what to review of teammate `name`, or says why there is nothing (and
    /// marks the command refused).
    fn with_review_subject(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller, Subject) + Send + 'static,
    ) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if let Some(subject) = c.review_subject(&name, known) {
                then(c, subject)
            }
        });
    }

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

    /// What to review of teammate `name` (`known`: it is in the team): its worktree, or
    /// (without one) the files it wrote in the lead's checkout.
    fn review_subject(&mut self, name: &str, known: bool) -> Option<Subject> {
        let member = if known {
            self.cache.file().member(name).cloned()
        } else {
            None
        };
        let Some(member) = member.filter(|m| m.worktree_path.is_none()) else {
            return self.review_target(name, known).map(Subject::Worktree);
        };
        if let Some(host) = crate::backend::hosts::remote::member_host(&member) {
            self.refuse();
            self.note(format!(
                "{name} works on {host} without a worktree of its own: there is nothing to review or merge here (spawn with --host {host} --worktree)."
            ));
            return None;
        }
        let written = if self.is_claude(name) {
            let Some(session) = self.record.claude_session(name).map(str::to_string) else {
                self.refuse();
                self.note(format!(
                    "{name} works in the lead's checkout and its session is not known: there is no record of the files it wrote."
                ));
                return None;
            };
            let prices = self.settings.prices().clone();
            let tracking = self.roster.entry(name);
            Written::Claude(
                tracking
                    .claude_mut()
                    .meter(|| TranscriptMeter::new(&session, prices.clone())),
            )
        } else if self.settings.shell_engine() {
            Written::Unknown
        } else {
            Written::Own {
                team: self.given.team().to_string(),
                name: name.to_string(),
            }
        };
        Some(Subject::Checkout(Checkout {
            name: name.to_string(),
            cwd: PathBuf::from(&member.cwd),
            repo: self.given.cwd().to_path_buf(),
            written,
        }))
    }

    /// The worktree of teammate `name` (`known`: it is in the team), or why there is none
    /// (said and marked refused).
    fn review_target(&mut self, name: &str, known: bool) -> Option<Target> {
        // A teammate that left the team (killed, pruned) keeps its worktree until /quit.
        let left = |c: &Controller| {
            c.worktrees
                .last_of(name)
                .map(|w| (w.path.clone(), w.host.clone()))
        };
        let (path, host) = if known {
            let member = self.cache.file().member(name);
            let host = member
                .and_then(crate::backend::hosts::remote::member_host)
                .map(str::to_string);
            match member.and_then(|m| m.worktree_path.clone()) {
                Some(p) => (PathBuf::from(p), host),
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
        let from = match self.branch_from(host.as_deref()) {
            Ok(from) => from,
            Err(e) => {
                self.refuse();
                self.note(format!("Cannot review or merge {name}'s work: {e}"));
                return None;
            }
        };
        Some(self.target(name, path, from))
    }

    /// Where the branch of a worktree on `host` (`None`: the lead's machine) comes from.
    pub(super) fn branch_from(&self, host: Option<&str>) -> Result<BranchFrom, BackendError> {
        let Some(host) = host else {
            return Ok(BranchFrom::Local);
        };
        let hosts = self.hosts_git.as_ref().ok_or_else(|| {
            BackendError::Unavailable(format!(
                "there is no host `{host}`: this lead's config has no hosts"
            ))
        })?;
        Ok(BranchFrom::Host(hosts.place(host)?))
    }

    /// The target of `name`'s worktree at `path`, with what this session knows of it.
    fn target(&self, name: &str, path: PathBuf, from: BranchFrom) -> Target {
        let known = self.worktrees.at(&path).cloned();
        Target {
            name: name.to_string(),
            branch: known.as_ref().map(|w| w.branch.clone()),
            home_repo: known.map(|w| w.repo),
            base: self.record.base_of(name).map(str::to_string),
            repo: self.given.cwd().to_path_buf(),
            worktree: path,
            from,
        }
    }

    /// Runs `work` in the `Git` lane; `then` on the loop (a store job like any other, so a
    /// `ctl` barrier waits for it: `store_worker`'s generations).
    fn git_job<T: Send + 'static>(
        &mut self,
        work: impl FnOnce(&Home) -> T + Send + 'static,
        then: impl FnOnce(&mut Controller, T) + Send + 'static,
    ) {
        self.store.submit(Lane::Git, work, then);
    }

    /// `/review NAME`: the summary in the transcript, and the review for the screens; then,
    /// for a branch, its pull request.
    pub fn review(&mut self, name: &str) {
        self.with_review_subject(name, |c, subject| c.review_now(subject));
    }

    fn review_now(&mut self, subject: Subject) {
        let pr_of = match &subject {
            Subject::Worktree(t) => Some((t.name.clone(), t.repo.clone())),
            Subject::Checkout(_) => None,
        };
        self.git_job(
            move |home| match &subject {
                Subject::Worktree(target) => summary(target),
                Subject::Checkout(checkout) => checkout_summary(checkout, home),
            },
            move |c, result| match result {
                Ok(summary) => {
                    c.note(summary.text());
                    if let Some((name, repo)) = pr_of {
                        c.pull_request(name, repo, summary.branch.clone());
                    }
                    c.emit(LeadEvent::Review(summary));
                }
                Err(e) => {
                    c.refuse();
                    c.note(e.to_string());
                }
            },
        );
    }

    /// The pull request of `branch`, asked of `gh` in the background (where it is installed
    /// and the repository has a remote, within `gh::gh_timeout`); said and sent to the
    /// screens when there is one.
    fn pull_request(&mut self, name: String, repo: PathBuf, branch: String) {
        self.store.submit(
            Lane::GitHub,
            move |_| {
                let gh = git::gh::find_gh()?;
                if !git::gh::has_remote(&repo) {
                    return None;
                }
                git::gh::pr_of(&gh, &repo, &branch, git::gh::gh_timeout()).map(|pr| {
                    (
                        branch,
                        PrState {
                            number: pr.number,
                            state: pr.state,
                            draft: pr.is_draft,
                            url: pr.url,
                            title: pr.title,
                        },
                    )
                })
            },
            move |c, pr| {
                if let Some((branch, pr)) = pr {
                    c.note(format!(
                        "@{name}'s branch {branch}: {} {}",
                        pr.label(),
                        pr.url
                    ));
                    c.emit(LeadEvent::ReviewPr { name, pr });
                }
            },
        );
    }

    /// One file's diff for a review.
    pub fn review_file(&mut self, name: &str, path: &str) {
        let path = path.to_string();
        self.with_review_subject(name, move |c, subject| c.review_file_now(subject, path));
    }

    fn review_file_now(&mut self, subject: Subject, path: String) {
        let name = match &subject {
            Subject::Worktree(t) => t.name.clone(),
            Subject::Checkout(c) => c.name.clone(),
        };
        self.git_job(
            move |_| {
                let text = match &subject {
                    Subject::Worktree(target) => {
                        let branch = target.branch()?;
                        let tip = target.tip(&branch, false)?;
                        let base = target.base(&tip)?;
                        target.file_diff(&base, &tip, &path)?
                    }
                    Subject::Checkout(checkout) => {
                        let top = git::toplevel(&checkout.repo)?;
                        git::file_diff(&top, "HEAD", &path)
                            .map_err(reading(format!("The diff of {path}")))?
                    }
                };
                Ok(parse_diff(&path, &text))
            },
            move |c, result: Result<_, ReviewError>| match result {
                Ok(diff) => c.emit(LeadEvent::ReviewFile { name, diff }),
                Err(e) => c.note(e.to_string()),
            },
        );
    }

    /// A comment on a line or hunk of `name`'s review: sent as a message, the way `/msg` sends
    /// one (echoed once it is in the inbox, refused for a teammate that stopped).
    pub fn review_comment(&mut self, name: &str, comment: &ReviewComment) {
        if comment.text.trim().is_empty() {
            return self.note("An empty comment was not sent.");
        }
        self.message_teammate(name, &comment.message(), true);
    }

    /// Whether `name` is in the team and has not stopped.
    fn still_runs(&self, name: &str) -> bool {
        // A teammate removed from the team (killed, pruned) has no tracking left.
        match (self.cache.file().member(name), self.roster.get(name)) {
            (Some(m), Some(t)) => !matches!(
                status_of(m, Some(t), false),
                TeammateStatus::Stopped { .. } | TeammateStatus::Gone
            ),
            _ => false,
        }
    }

    /// `/merge NAME …`: checks, then merges (or says what it would do with `--dry-run`). A
    /// merge is told to the screens (`LeadEvent::Merged`: they offer to retire the worktree)
    /// and, once a queue was shown, the queue follows.
    pub fn merge(&mut self, name: &str, how: MergeHow, dry_run: bool, retire: bool) {
        self.with_review_target(name, move |c, target| {
            c.merge_now(target, how, dry_run, retire)
        });
    }

    fn merge_now(&mut self, target: Target, how: MergeHow, dry_run: bool, retire: bool) {
        let running = self.still_runs(&target.name);
        let who = target.name.clone();
        self.git_job(
            move |_| merge_job(&target, how, dry_run, retire && !running, running),
            move |c, result| {
                let done = match result {
                    Ok(done) => done,
                    Err(e) => {
                        c.refuse();
                        return c.note(e.to_string());
                    }
                };
                if let Some(path) = &done.retired {
                    c.worktrees.forget(path);
                }
                if let Some((path, branch, tip)) = done.kept {
                    c.review.merged.insert(path, (branch, tip));
                }
                c.note(done.text);
                if let Some((branch, worktree)) = done.merged {
                    c.emit(LeadEvent::Merged(Merged {
                        name: who,
                        branch,
                        how,
                        worktree: worktree.to_string_lossy().into_owned(),
                        retired: done.retired.is_some(),
                        running,
                    }));
                    if c.review.queue_shown {
                        c.queue(false);
                    }
                }
            },
        );
    }

    /// Removes `name`'s worktree and branch after its work was merged (the screen's offer).
    /// What would keep the worktree is asked first (anything added since the merge or, never
    /// merged, any work): then nothing is stopped or removed. Otherwise a teammate that still
    /// runs is stopped, and leaves the team only once its worktree is really gone: a
    /// teammate is never removed for a worktree that stays.
    pub fn retire_worktree(&mut self, name: &str) {
        self.with_review_target(name, |c, target| {
            let tip = c.merged_tip(&target);
            let check = target.clone();
            c.git_job(
                move |_| keeps(&check, tip.as_deref()),
                move |c, kept: Result<Option<String>, ReviewError>| match kept {
                    Ok(Some(why)) => {
                        c.refuse();
                        let runs = if c.still_runs(&target.name) {
                            format!(" @{} keeps running; nothing was stopped.", target.name)
                        } else {
                            String::new()
                        };
                        c.note(format!(
                            "Kept the worktree {} and its branch: it holds {why}.{runs}",
                            target.place().describe(&target.worktree)
                        ));
                    }
                    Err(e) => {
                        c.refuse();
                        c.note(format!("Could not retire the worktree: {e}"));
                    }
                    Ok(None) if c.still_runs(&target.name) => {
                        // Its worktree goes once its process has.
                        c.kill_runtime(&target.name.clone(), "retiring", move |c, name| {
                            let name = name.to_string();
                            c.retire_now(target, Some(name));
                        });
                    }
                    Ok(None) => c.retire_now(target, None),
                },
            );
        });
    }

    /// The tip `target`'s branch was merged at this session, if it was.
    fn merged_tip(&self, target: &Target) -> Option<String> {
        self.review
            .merged
            .get(&target.worktree)
            .map(|(_, t)| t.clone())
    }

    /// Removes the worktree and branch unless something keeps them; `stopped`: the teammate
    /// that was stopped for it, which leaves the team only when the worktree is gone.
    fn retire_now(&mut self, target: Target, stopped: Option<String>) {
        let tip = self.merged_tip(&target);
        let shown = target.place().describe(&target.worktree);
        self.git_job(
            move |_| {
                let branch = target.branch()?;
                let w = target.worktree_of(&branch)?;
                let place = target.place();
                let kept = match tip {
                    Some(tip) => git::retire_merged(place, &w, &tip)?,
                    // Its changes are in the lead's branch (squashed or replayed before, maybe
                    // by an earlier session or by hand): merged, whatever its commits say.
                    None if target.tip(&branch, true).is_ok_and(|t| {
                        git::merge_check(&target.repo, "HEAD", &t).is_ok_and(|c| c.nothing_left())
                    }) =>
                    {
                        let t = target.tip(&branch, false)?;
                        let tip = git::rev(&target.repo, &t).unwrap_or_default();
                        git::retire_merged(place, &w, &tip)?
                    }
                    None => match worktree::retire_in(place, &w)? {
                        Retired::Removed => None,
                        Retired::Kept(work) => Some(work.to_string()),
                    },
                };
                Ok((target.worktree, branch, kept))
            },
            move |c, result: Result<(PathBuf, String, Option<String>), ReviewError>| {
                let stayed = |who: &Option<String>| match who {
                    Some(name) => format!(
                        " @{name} was stopped for it and stays in the team: /respawn {name} starts it again."
                    ),
                    None => String::new(),
                };
                match result {
                    Ok((path, branch, None)) => {
                        c.worktrees.forget(&path);
                        c.review.merged.remove(&path);
                        c.note(format!(
                            "Removed the worktree {shown} and its branch {branch}."
                        ));
                        // The queue follows once the team no longer lists the teammate.
                        let requeue = |c: &mut Controller| {
                            if c.review.queue_shown {
                                c.queue(false);
                            }
                        };
                        match &stopped {
                            Some(name) => c.remove_teammate_then(
                                name,
                                "was stopped to retire its worktree",
                                requeue,
                            ),
                            None => requeue(c),
                        }
                    }
                    Ok((_, _, Some(why))) => {
                        c.refuse();
                        c.note(format!(
                            "Kept the worktree {shown}: it holds {why}.{}",
                            stayed(&stopped)
                        ));
                    }
                    Err(e) => {
                        c.refuse();
                        c.note(format!(
                            "Could not retire the worktree: {e}{}",
                            stayed(&stopped)
                        ));
                    }
                }
            },
        );
    }

    /// `/merges`: every teammate's branch against the lead's and each other.
    pub fn merge_queue(&mut self) {
        self.with_fresh_team(|c| {
            c.review.queue_shown = true;
            c.queue(true);
        });
    }

    /// The merge queue, in two steps: each branch against the lead's (sent at once), then each
    /// pair against each other (sent again, said in the transcript when `opens`).
    fn queue(&mut self, opens: bool) {
        let targets: Vec<Target> = self
            .cache
            .file()
            .teammates()
            .filter_map(|m| {
                let path = PathBuf::from(m.worktree_path.as_ref()?);
                let host = crate::backend::hosts::remote::member_host(m);
                let from = self.branch_from(host).ok()?;
                let mut target = self.target(&m.name, path, from);
                target.base = None;
                Some(target)
            })
            .collect();
        if targets.is_empty() && opens {
            self.note("No teammate has a worktree of its own: the merge queue is empty.");
        }
        let repo = self.given.cwd().to_path_buf();
        self.git_job(
            move |_| queue_entries(&repo, &targets),
            move |c, (queue, tips): (MergeQueue, HashMap<String, String>)| {
                let queue = MergeQueue { opens, ..queue };
                c.emit(LeadEvent::MergeQueue(queue.clone()));
                let repo = c.given.cwd().to_path_buf();
                c.git_job(
                    move |_| queue_pairs(&repo, &queue, &tips),
                    move |c, queue: MergeQueue| {
                        if opens && !queue.entries.is_empty() {
                            c.note(queue.text());
                        }
                        c.emit(LeadEvent::MergeQueue(queue));
                    },
                );
            },
        );
    }

    /// At quit: worktrees merged this session whose teammate still ran then are removed now,
    /// when nothing came after the merge (else `retire` keeps and names them as before). The
    /// ones removed, for the list the screen keeps.
    pub(super) async fn retire_merged_worktrees(&mut self) -> Vec<WorktreeFate> {
        let merged: Vec<(PathBuf, (String, String))> = self.review.merged.drain().collect();
        if merged.is_empty() {
            return Vec::new();
        }
        let names: HashMap<PathBuf, String> = self.worktrees.owners();
        // Each with where it is (a worktree on a host is retired there).
        let merged: Vec<(Worktree, String, Result<BranchFrom, BackendError>)> = merged
            .into_iter()
            .map(|(path, (branch, tip))| {
                let known = self.worktrees.at(&path);
                let w = known.cloned().unwrap_or(Worktree {
                    path,
                    branch,
                    repo: self.given.cwd().to_path_buf(),
                    host: None,
                });
                let from = self.branch_from(w.host.as_deref());
                (w, tip, from)
            })
            .collect();
        let results = tokio::task::spawn_blocking(move || {
            merged
                .into_iter()
                .map(|(w, tip, from)| {
                    let r = from.and_then(|from| git::retire_merged(from.place(), &w, &tip));
                    (w.path, w.branch, r)
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let mut fates = Vec::new();
        for (path, branch, r) in results {
            match r {
                Ok(None) => {
                    self.worktrees.forget(&path);
                    self.note(format!(
                        "Removed the merged worktree {} and its branch {branch}.",
                        path.display()
                    ));
                    fates.push(WorktreeFate {
                        name: names.get(&path).cloned().unwrap_or_default(),
                        path: path.to_string_lossy().into_owned(),
                        branch: Some(branch),
                        ahead: None,
                        uncommitted: 0,
                        unmerged: 0,
                        merged: true,
                        removed: true,
                        error: None,
                    });
                }
                // Kept: the usual retirement names it with what it holds.
                Ok(Some(_)) => {}
                Err(e) => tracing::warn!("removing the merged worktree {}: {e}", path.display()),
            }
        }
        fates
    }
}

/// One worktree's line of the list `/quit` leaves on the terminal, from what it held before
/// and what retiring it did.
pub(super) fn fate(
    name: &str,
    worktree: &Worktree,
    survey: Result<Survey, BackendError>,
    retired: &Result<Retired, crate::backend::BackendError>,
) -> WorktreeFate {
    let (survey, error) = match survey {
        Ok(s) => (s, None),
        Err(e) => (Survey::default(), Some(e.to_string())),
    };
    let error = match retired {
        Err(e) => Some(e.to_string()),
        Ok(_) => error,
    };
    let work = match retired {
        Ok(Retired::Kept(work)) => *work,
        _ => survey.work,
    };
    WorktreeFate {
        name: name.to_string(),
        path: worktree.path.to_string_lossy().into_owned(),
        branch: Some(worktree.branch.clone()),
        ahead: survey.ahead,
        uncommitted: work.uncommitted,
        unmerged: work.unmerged,
        merged: false,
        removed: matches!(retired, Ok(Retired::Removed)),
        error,
    }
}

/// What `/review` shows (on the blocking pool).
fn summary(target: &Target) -> Result<ReviewSummary, ReviewError> {
    let branch = target.branch()?;
    let tip = target.tip(&branch, true)?;
    let base = target.base(&tip)?;
    let files = target.changed(&base, &tip)?;
    let commits = target.commits(&base, &tip)?;
    let uncommitted = target.uncommitted().unwrap_or(0);
    Ok(ReviewSummary::from_git(
        &target.name,
        branch,
        &base,
        files,
        commits,
        uncommitted,
    ))
}

/// What `/review` shows of a teammate without a worktree (on the blocking pool): the files
/// inside the lead's repository its tool calls wrote, each with its change against `HEAD`.
fn checkout_summary(checkout: &Checkout, home: &Home) -> Result<ReviewSummary, ReviewError> {
    let name = &checkout.name;
    let top = git::toplevel(&checkout.repo)
        .map_err(|_| ReviewError::NoRepository { name: name.clone() })?;
    let head =
        git::rev(&top, "HEAD").ok_or_else(|| ReviewError::NoCommit { name: name.clone() })?;
    let shared = matches!(checkout.written, Written::Unknown);
    let files = if shared {
        git::changed_files(&top, &head)
            .map_err(reading("Reading the changes in the lead's checkout"))?
    } else {
        let paths: Vec<String> = checkout
            .written
            .paths(home, &checkout.cwd)
            .iter()
            .filter_map(|p| inside(&top, p))
            .collect();
        git::changed_paths(&top, &head, &paths)
            .map_err(reading(format!("Reading the files {name} wrote")))?
    };
    let uncommitted = files.iter().filter(|f| f.status != '=').count();
    let mut summary = ReviewSummary::from_git(
        name,
        git::current_branch(&top),
        &head,
        files,
        Vec::new(),
        uncommitted,
    );
    summary.place = if shared {
        WorkPlace::Shared
    } else {
        WorkPlace::Checkout
    };
    Ok(summary)
}

/// `path` relative to the checkout `top`, when it is inside it (links resolved).
fn inside(top: &Path, path: &Path) -> Option<String> {
    let rel = |top: &Path, p: &Path| {
        p.strip_prefix(top)
            .ok()
            .filter(|r| !r.as_os_str().is_empty())
            .map(|r| r.to_string_lossy().into_owned())
    };
    if let Some(r) = rel(top, path) {
        return Some(r);
    }
    // `/tmp` may be a link: compare the real paths (a deleted file: its directory's).
    let real_top = std::fs::canonicalize(top).ok()?;
    let real = std::fs::canonicalize(path).ok().or_else(|| {
        let dir = std::fs::canonicalize(path.parent()?).ok()?;
        Some(dir.join(path.file_name()?))
    })?;
    rel(&real_top, &real)
}

/// What would keep `target`'s worktree if it were retired now (on the blocking pool), without
/// touching it: with `merged_tip`, an uncommitted file or a commit after the merge (what
/// [`git::retire_merged`] checks); without, any work ([`worktree::retire`]'s rule).
fn keeps(target: &Target, merged_tip: Option<&str>) -> Result<Option<String>, ReviewError> {
    let branch = target.branch()?;
    let w = target.worktree_of(&branch)?;
    let place = target.place();
    // Its changes are in the lead's branch already (squashed or replayed before, maybe by an
    // earlier session or by hand): merged at its tip, whatever its commits say.
    let fetched = match merged_tip {
        Some(_) => None,
        None => Some(target.tip(&branch, true)?),
    };
    let merged_before = fetched
        .as_deref()
        .is_some_and(|t| git::merge_check(&target.repo, "HEAD", t).is_ok_and(|c| c.nothing_left()));
    let tip = match (merged_tip, &fetched) {
        (Some(tip), _) => Some(tip.to_string()),
        (None, Some(t)) if merged_before => git::rev(&target.repo, t),
        _ => None,
    };
    match tip.as_deref() {
        Some(tip) => {
            if place.exists(&w.path)? {
                let left = target.uncommitted()?;
                if left > 0 {
                    return Ok(Some(format!("{left} uncommitted file(s)")));
                }
            }
            let now = worktree::git::commit_of(place, &w.repo, &branch);
            if now.as_deref().map(str::trim) != Some(tip) {
                return Ok(Some("commits made after the merge".to_string()));
            }
            Ok(None)
        }
        None => {
            let survey = worktree::survey_in(place, &w)?;
            Ok((!survey.work.is_empty()).then(|| survey.work.to_string()))
        }
    }
}

/// `/merge` (on the blocking pool): the git work (`backend::git::land`), then what the lead
/// says of it (`merge_words`). `Err` is a refusal, with nothing changed.
fn merge_job(
    target: &Target,
    how: MergeHow,
    dry_run: bool,
    retire: bool,
    running: bool,
) -> Result<MergeDone, ReviewError> {
    let branch = target.branch()?;
    let w = target.worktree_of(&branch)?;
    let tip = target.tip(&branch, true)?;
    let request = git::LandRequest {
        repo: &target.repo,
        worktree: &w,
        place: target.place(),
        tip: &tip,
        who: &target.name,
        how,
        dry_run,
        retire,
    };
    let report = git::land(&request).map_err(|refusal| ReviewError::MergeRefused {
        name: target.name.clone(),
        branch: branch.clone(),
        how,
        refusal,
    })?;
    let subject = merge_words::Subject {
        name: &target.name,
        worktree: &target.worktree,
        how,
        dry_run,
        running,
    };
    Ok(merge_words::done(&subject, report))
}

/// Each branch against the lead's `HEAD` (on the blocking pool).
fn queue_entries(repo: &Path, targets: &[Target]) -> (MergeQueue, HashMap<String, String>) {
    let mut tips = HashMap::new();
    let entries = targets
        .iter()
        .map(|t| {
            let uncommitted = t.uncommitted().unwrap_or(0);
            let mut entry = QueueEntry {
                name: t.name.clone(),
                branch: String::new(),
                ahead: 0,
                behind: 0,
                conflicts: Vec::new(),
                uncommitted,
                already_in: false,
                error: None,
            };
            match t.branch() {
                Err(_) => entry.error = Some("no branch checked out".to_string()),
                Ok(branch) => {
                    let checked = t.tip(&branch, true).and_then(|tip| {
                        let check = git::merge_check(repo, "HEAD", &tip)?;
                        tips.insert(t.name.clone(), tip);
                        Ok(check)
                    });
                    match checked {
                        Ok(c) => {
                            entry.ahead = c.ahead;
                            entry.behind = c.behind;
                            entry.already_in = c.already_in && c.ahead > 0;
                            entry.conflicts = c.conflicts;
                        }
                        Err(e) => entry.error = Some(e.to_string()),
                    }
                    entry.branch = branch;
                }
            }
            entry
        })
        .collect();
    let queue = MergeQueue {
        lead_branch: git::current_branch(repo),
        entries,
        pairs: None,
        opens: false,
    };
    (queue, tips)
}

/// Each pair of branches that conflict with each other (on the blocking pool): in the files
/// both branches changed themselves since they left the lead's branch. A file only one of
/// them changed is not their conflict (one branch started later and carries the lead's own
/// change to it: that conflict is with the lead's branch, shown on the other's row).
fn queue_pairs(repo: &Path, queue: &MergeQueue, tips: &HashMap<String, String>) -> MergeQueue {
    // Each row with what names its branch here (a remote teammate's: the fetched ref).
    let rows: Vec<(&QueueEntry, String, std::collections::HashSet<String>)> = queue
        .entries
        .iter()
        // One with nothing left to merge conflicts with nobody: its changes are in already.
        .filter(|e| e.error.is_none() && !e.nothing_left())
        .filter_map(|e| {
            let tip = tips.get(&e.name)?.clone();
            let own = git::own_changes(repo, "HEAD", &tip).unwrap_or_default();
            Some((e, tip, own))
        })
        .collect();
    let mut pairs = Vec::new();
    for (i, (a, tip_a, own_a)) in rows.iter().enumerate() {
        for (b, tip_b, own_b) in rows.iter().skip(i + 1) {
            if own_a.is_disjoint(own_b) {
                continue;
            }
            if let Ok(files) = git::conflicts(repo, tip_a, tip_b) {
                let files: Vec<String> = files
                    .into_iter()
                    .filter(|f| own_a.contains(f) && own_b.contains(f))
                    .collect();
                if !files.is_empty() {
                    pairs.push(QueuePair {
                        a: a.name.clone(),
                        b: b.name.clone(),
                        files,
                    });
                }
            }
        }
    }
    MergeQueue {
        pairs: Some(pairs),
        opens: false,
        ..queue.clone()
    }
}
