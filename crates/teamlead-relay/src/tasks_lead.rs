//! The task list across a link, the lead's side (DESIGN.md "The relay"): the lead's host owns
//! the team's task list. [`TaskFeed`] sends it to the relay's mirror as `tasks` bodies: the
//! whole list after each handshake, then the tasks that changed (found by polling the task
//! directory, as the inboxes are) and every task a host's change touched, accepted or not, so
//! the host always learns the outcome. [`apply_update`] applies a host's `task_update` under
//! the lead's own task locks with the rules of a local claim: the first claim wins, a task
//! owned by someone else is not taken, and a host changes only tasks that are unowned or owned
//! by a member that runs there.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::time::Instant;

use teamlead_protocol::store::tasks::{CLAIM_HELD_KEY, CLAIM_KEY};
use teamlead_protocol::store::{ClaimError, Home, Result, StoreError, TaskList};
use teamlead_protocol::{Task, TaskStatus};

use crate::forward::FULL_SCAN_EVERY;
use crate::task_fields::{changed, with_fields};
use crate::wire::Body;

/// The most task bytes one `tasks` body carries; a longer list goes in several, in order.
pub const MAX_TASKS_BODY: usize = 256 * 1024;

/// A task larger than this (as JSON) cannot cross the link: it is left out of the mirror.
const MAX_TASK: usize = crate::wire::MAX_LINE / 2;

/// The key of a task the lead made for a task created on a host: `<link id>/<host's id>`, so
/// a host's creation sent again (after a crash) finds the task it made before.
pub const ORIGIN_KEY: &str = "teamleadOrigin";

/// What the lead sent of its task list over the current connection.
#[derive(Debug, Default)]
pub struct TaskFeed {
    sent: HashMap<String, Task>,
    /// Ids whose state on the host is not known (a host changed them): sent again.
    dirty: BTreeSet<String>,
    /// The next bodies are a full snapshot.
    full: bool,
    stamp: Option<(u64, i64, i64)>,
    last_full: Option<Instant>,
}

/// The id of the task a problem's file holds (`<id>.json`).
fn problem_id(p: &teamlead_protocol::store::Problem) -> Option<String> {
    p.path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(".json"))
        .map(str::to_string)
}

impl TaskFeed {
    /// A new connection: the whole list goes again (the host may have missed anything).
    pub fn reset(&mut self) {
        self.sent.clear();
        self.dirty.clear();
        self.full = true;
    }

    /// A host changed task `id` (or asked to): its state there is sent again, whatever the
    /// outcome.
    pub fn mark(&mut self, id: &str) {
        self.dirty.insert(id.to_string());
    }

    /// The `tasks` bodies for what changed since the last call (none when nothing did).
    /// `applied` is the lead's `recv`: every host change up to it is in the list read now.
    pub fn bodies(
        &mut self,
        home: &Home,
        team: &str,
        applied: u64,
        now: Instant,
    ) -> Result<Vec<Body>> {
        let list = TaskList::new(home, team)?;
        let full_scan = self
            .last_full
            .is_none_or(|t| now.duration_since(t) >= FULL_SCAN_EVERY);
        let stamp = std::fs::metadata(list.dir())
            .map(|m| (m.ino(), m.mtime(), m.mtime_nsec()))
            .ok();
        if !self.full && self.dirty.is_empty() && !full_scan && stamp == self.stamp {
            return Ok(Vec::new());
        }
        if full_scan {
            self.last_full = Some(now);
        }
        self.stamp = stamp;
        let listing = list.list()?;
        // A task file that cannot be read now is neither sent nor removed on the host.
        let unreadable: HashSet<String> = listing.problems.iter().filter_map(problem_id).collect();
        let present: HashSet<&str> = listing.tasks.iter().map(|t| t.id.as_str()).collect();
        let upserts: Vec<&Task> = listing
            .tasks
            .iter()
            .filter(|t| self.full || self.dirty.contains(&t.id) || self.sent.get(&t.id) != Some(*t))
            .collect();
        let mut removed: Vec<String> = self
            .sent
            .keys()
            .chain(self.dirty.iter())
            .filter(|id| !present.contains(id.as_str()) && !unreadable.contains(*id))
            .cloned()
            .collect();
        removed.sort();
        removed.dedup();
        let keep = self.full.then(|| {
            let mut ids: Vec<String> = present.iter().map(|s| s.to_string()).collect();
            ids.extend(unreadable.iter().cloned());
            ids.sort();
            ids
        });
        if upserts.is_empty() && removed.is_empty() && keep.is_none() {
            self.dirty.clear();
            return Ok(Vec::new());
        }
        let mut chunks: Vec<Vec<Task>> = vec![Vec::new()];
        let mut size = 0;
        for task in upserts {
            self.sent.insert(task.id.clone(), task.clone());
            let bytes = serde_json::to_string(task).map(|s| s.len()).unwrap_or(0);
            if bytes > MAX_TASK {
                tracing::warn!(
                    "task #{} of {team} is {bytes} bytes: too large for the link, not mirrored",
                    task.id
                );
                continue;
            }
            if size + bytes > MAX_TASKS_BODY && chunks.last().is_some_and(|c| !c.is_empty()) {
                chunks.push(Vec::new());
                size = 0;
            }
            size += bytes;
            if let Some(last) = chunks.last_mut() {
                last.push(task.clone());
            }
        }
        for id in &removed {
            self.sent.remove(id);
        }
        self.dirty.clear();
        self.full = false;
        let last = chunks.len().saturating_sub(1);
        Ok(chunks
            .into_iter()
            .enumerate()
            .map(|(i, tasks)| Body::Tasks {
                team: team.to_string(),
                tasks,
                removed: if i == last {
                    removed.clone()
                } else {
                    Vec::new()
                },
                keep: if i == last { keep.clone() } else { None },
                applied,
            })
            .collect())
    }
}

/// What became of a host's change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Applied (or found applied before).
    Applied,
    /// A task created on the host, made on the lead's list under the lead's id.
    Created { id: String },
    /// Not applied: the host's mirror is set back to the lead's task.
    Refused {
        /// Why, in words for the teammate and the log ("it went to bob first").
        why: String,
        /// The member whose claim lost, who is told so.
        claimant: Option<String>,
    },
}

/// Applies a host's change of task `id` (`before` → `after`, see [`Body::TaskUpdate`]) to the
/// lead's task list of `team`. `hosted`: the members that run on that host; `link`: the link's
/// id (for the origin of a task created there). A store error other than a missing task is
/// returned (the link breaks and the change comes again).
pub fn apply_update(
    home: &Home,
    team: &str,
    link: &str,
    hosted: &[String],
    id: &str,
    before: Option<&Task>,
    after: Option<&Task>,
) -> Result<Outcome> {
    let list = TaskList::new(home, team)?;
    let runs_here = |name: &str| hosted.iter().any(|h| h == name);
    match (before, after) {
        (_, None) => delete(&list, id, &runs_here),
        (None, Some(new)) => create(&list, link, id, new, &runs_here),
        (Some(before), Some(after)) => change(&list, id, before, after, &runs_here),
    }
}

fn refused(why: impl Into<String>, claimant: Option<&str>) -> Outcome {
    Outcome::Refused {
        why: why.into(),
        claimant: claimant.map(str::to_string),
    }
}

/// Who may change a task from this host: nobody owns it, or a member that runs there does.
fn may_change(task: &Task, runs_here: &impl Fn(&str) -> bool) -> bool {
    task.owner.as_deref().is_none_or(runs_here)
}

fn delete(list: &TaskList, id: &str, runs_here: &impl Fn(&str) -> bool) -> Result<Outcome> {
    let task = match list.get(id) {
        Ok(t) => t,
        Err(StoreError::NotFound { .. }) => return Ok(Outcome::Applied),
        Err(e) => return Err(e),
    };
    if !may_change(&task, runs_here) {
        return Ok(refused(
            format!("{} belongs to {}", task.label(), owner_of(&task)),
            None,
        ));
    }
    match list.delete(id) {
        Ok(_) | Err(StoreError::NotFound { .. }) => Ok(Outcome::Applied),
        Err(e) => Err(e),
    }
}

fn owner_of(task: &Task) -> &str {
    task.owner.as_deref().unwrap_or("nobody")
}

fn create(
    list: &TaskList,
    link: &str,
    host_id: &str,
    new: &Task,
    runs_here: &impl Fn(&str) -> bool,
) -> Result<Outcome> {
    let origin = serde_json::Value::String(format!("{link}/{host_id}"));
    let all = list.list()?.tasks;
    if let Some(made) = all
        .iter()
        .find(|t| t.extra.get(ORIGIN_KEY) == Some(&origin))
    {
        return Ok(Outcome::Created {
            id: made.id.clone(),
        });
    }
    let blocked_by: Vec<String> = new
        .blocked_by
        .iter()
        .filter(|b| all.iter().any(|t| &t.id == *b))
        .cloned()
        .collect();
    let made = list.create(
        &new.subject,
        &new.description,
        blocked_by,
        new.metadata.clone(),
    )?;
    list.update(&made.id, |t| {
        for (k, v) in &new.extra {
            t.extra.insert(k.clone(), v.clone());
        }
        t.extra.insert(ORIGIN_KEY.to_string(), origin.clone());
        t.active_form = new.active_form.clone();
        if let Some(owner) = new.owner.as_deref().filter(|o| runs_here(o)) {
            t.owner = Some(owner.to_string());
            t.status = new.status;
        }
        Ok(())
    })?;
    Ok(Outcome::Created { id: made.id })
}

fn change(
    list: &TaskList,
    id: &str,
    before: &Task,
    after: &Task,
    runs_here: &impl Fn(&str) -> bool,
) -> Result<Outcome> {
    let keys = changed(Some(before), Some(after));
    if keys.is_empty() {
        return Ok(Outcome::Applied);
    }
    let claimant = after.owner.as_deref().filter(|_| keys.contains("owner"));
    if let Some(who) = claimant {
        if !runs_here(who) {
            return Ok(refused(format!("{who} does not run on that host"), None));
        }
        let lead = list.get(id).ok();
        let label = lead
            .as_ref()
            .map_or_else(|| format!("task #{id}"), Task::label);
        match list.claim(id, who, false) {
            Ok(_) => {}
            Err(ClaimError::AlreadyClaimed { owner }) => {
                return Ok(refused(format!("{label} went to {owner} first"), Some(who)));
            }
            Err(ClaimError::AlreadyResolved) => {
                // Claimed and completed by another before this claim came: name the winner.
                let why = match lead.as_ref().and_then(|t| t.owner.as_deref()) {
                    Some(owner) if owner != who => {
                        format!("{label} went to {owner} first, who completed it")
                    }
                    _ => format!("{label} was already completed"),
                };
                return Ok(refused(why, Some(who)));
            }
            Err(ClaimError::Blocked { by }) => {
                let by: Vec<String> = by.iter().map(|b| format!("#{b}")).collect();
                return Ok(refused(
                    format!("{label} is blocked by {}", by.join(", ")),
                    Some(who),
                ));
            }
            Err(ClaimError::TaskNotFound { .. }) => {
                return Ok(refused(format!("task #{id} is gone"), Some(who)));
            }
            Err(ClaimError::AgentBusy { task }) => {
                return Ok(refused(
                    format!("{who} already works on task #{task}"),
                    Some(who),
                ));
            }
            Err(ClaimError::Store(e)) => return Err(e),
        }
    }
    let result = list.update(id, |task| {
        if !may_change(task, runs_here) {
            return Ok(Some(format!(
                "{} belongs to {}",
                task.label(),
                owner_of(task)
            )));
        }
        if keys.contains("owner") && after.owner.is_none() {
            // A release holds only while the one who released it still owns it.
            if task.owner != before.owner {
                return Ok(Some(format!(
                    "{} is no longer {}'s",
                    task.label(),
                    owner_of(before)
                )));
            }
            task.owner = None;
        }
        let plain: BTreeSet<String> = keys
            .iter()
            .filter(|k| !matches!(k.as_str(), "id" | "owner" | "blocks" | "blockedBy"))
            .cloned()
            .collect();
        let owner = task.owner.clone();
        *task = with_fields(task, Some(after), &plain);
        task.owner = owner;
        if keys.contains("blocks") {
            merge_ids(&mut task.blocks, &before.blocks, &after.blocks);
        }
        if keys.contains("blockedBy") {
            merge_ids(&mut task.blocked_by, &before.blocked_by, &after.blocked_by);
        }
        if task.owner.is_none() && task.status == TaskStatus::InProgress {
            task.status = TaskStatus::Pending;
        }
        // A claim of the task's owner here holds: its mark comes back to the host as the
        // lead's word on it, and its teammate starts the work (`CLAIM_HELD_KEY`). The mark may
        // come on its own (the lead gave the task to that teammate meanwhile, and the mirror
        // took the owner from the lead's copy).
        if let Some(mark) = after
            .extra
            .get(CLAIM_KEY)
            .and_then(serde_json::Value::as_str)
            && task
                .owner
                .as_deref()
                .is_some_and(|o| mark.split('/').next() == Some(o))
        {
            task.extra.insert(
                CLAIM_HELD_KEY.to_string(),
                serde_json::Value::String(mark.to_string()),
            );
        }
        Ok(None)
    });
    match result {
        Ok(None) => Ok(Outcome::Applied),
        Ok(Some(why)) => Ok(refused(why, None)),
        Err(StoreError::NotFound { .. }) => Ok(refused(format!("task #{id} is gone"), None)),
        Err(e) => Err(e),
    }
}

/// The ids the host added to a list go in, the ones it removed go out; the lead's others stay.
fn merge_ids(lead: &mut Vec<String>, before: &[String], after: &[String]) {
    lead.retain(|id| after.contains(id) || !before.contains(id));
    for id in after {
        if !before.contains(id) && !lead.contains(id) {
            lead.push(id.clone());
        }
    }
}
