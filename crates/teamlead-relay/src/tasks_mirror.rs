//! The task list across a link, the relay's side (DESIGN.md "The relay"): the host keeps a
//! mirror of the lead's task list in its own home's task directory, an ordinary task list, so a
//! teammate there reads and claims tasks on local disk as today. [`Mirror`] writes the lead's
//! `tasks` bodies into it under each task's lock and finds the changes that did not come from
//! the lead (a claim, a completion, a release, an edit, a task created or deleted there) by
//! polling the directory, for `task_update` bodies.
//!
//! Per task it keeps, on disk in the link's directory (`mirror.json`), the version it last
//! accounted for (`known`: written from the lead, or sent to it) and the fields of each change
//! it sent that the lead has not answered yet (`pending`, by the seq that carried it). A lead's
//! task is written over the mirror's copy field by field: a field the host changed and the
//! lead has not answered (its `applied` is below the change's seq), or changed and not yet
//! sent, keeps the host's value; every other field takes the lead's. Once the lead answered, its
//! value wins, so a losing claim is set back to the lead's truth.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use teamlead_protocol::Task;
use teamlead_protocol::store::atomic::write_atomic;
use teamlead_protocol::store::lock::{self, DEFAULT_LOCK_TIMEOUT};
use teamlead_protocol::store::safe_file::read_regular;
use teamlead_protocol::store::{Home, Result, StoreError, TaskList};

use crate::forward::FULL_SCAN_EVERY;
use crate::link_dir::LinkDir;
use crate::task_fields::{changed, fields, with_fields};
use crate::wire::Body;

/// The largest `mirror.json` read back.
const MAX_STATE_BYTES: u64 = 1 << 30;

/// A change sent to the lead and not answered yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Pending {
    seq: u64,
    fields: BTreeSet<String>,
}

/// What `mirror.json` holds.
#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    /// A full snapshot of the lead's list was applied: the mirror is the lead's list plus the
    /// host's changes (before it, nothing in the directory is taken for the host's own).
    #[serde(default)]
    synced: bool,
    #[serde(default)]
    known: BTreeMap<String, Task>,
    #[serde(default)]
    pending: BTreeMap<String, Vec<Pending>>,
}

/// A host's change found by [`Mirror::scan`]: the body to send, and what to record once it has
/// its seq ([`Mirror::sent`]).
#[derive(Debug, Clone)]
pub struct Found {
    pub body: Body,
    pub id: String,
    pub after: Option<Task>,
    pub fields: BTreeSet<String>,
}

/// The mirror of one team's task list on a relay's host.
#[derive(Debug)]
pub struct Mirror {
    team: String,
    list: TaskList,
    home: Home,
    path: PathBuf,
    state: State,
    stamp: Option<(u64, i64, i64)>,
    last_full: Option<Instant>,
}

/// A task of the mirror as it is on disk now (`None`: no file).
fn read(list: &TaskList, id: &str) -> Result<Option<Task>> {
    match list.get(id) {
        Ok(t) => Ok(Some(t)),
        Err(StoreError::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

impl Mirror {
    /// The mirror of `team`'s list for `link`, with its state loaded from the link's directory.
    pub fn load(home: &Home, team: &str, link: &str) -> Result<Mirror> {
        let path = LinkDir::path(home, team, link)?.join("mirror.json");
        let state = match read_regular(&path, MAX_STATE_BYTES)? {
            Some(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                StoreError::parse(&path, format!("not the state of a task mirror: {e}"))
            })?,
            None => State::default(),
        };
        Ok(Mirror {
            team: team.to_string(),
            list: TaskList::new(home, team)?,
            home: home.clone(),
            path,
            state,
            stamp: None,
            last_full: None,
        })
    }

    /// Whether a full snapshot of the lead's list was applied (changes are looked for only
    /// then).
    pub fn synced(&self) -> bool {
        self.state.synced
    }

    fn save(&self) -> Result<()> {
        let bytes = serde_json::to_vec(&self.state)
            .map_err(|e| StoreError::parse(&self.path, e.to_string()))?;
        write_atomic(&self.path, &bytes)
    }

    /// Writes `task` as the mirror's task `id` (under its lock).
    fn write(&self, task: &Task) -> Result<()> {
        self.home.ensure_dir(self.list.dir())?;
        let path = self.list.task_path(&task.id)?;
        self.home.check_inside(&path)?;
        let bytes =
            serde_json::to_vec_pretty(task).map_err(|e| StoreError::parse(&path, e.to_string()))?;
        write_atomic(&path, &bytes)
    }

    /// The lead's `tasks` body: each task written over the mirror's, keeping what the host
    /// changed and the lead has not answered; `removed` and (with `keep`) every other task
    /// the host has no unanswered change of leave the mirror.
    pub fn apply(
        &mut self,
        tasks: Vec<Task>,
        removed: &[String],
        keep: Option<&[String]>,
        applied: u64,
    ) -> Result<()> {
        let overwrite = !self.state.synced;
        if overwrite {
            // Nothing here is known as the host's own yet: the lead's list is the mirror.
            self.state.pending.clear();
        }
        for pend in self.state.pending.values_mut() {
            pend.retain(|p| p.seq > applied);
        }
        self.state.pending.retain(|_, p| !p.is_empty());
        let upserted: HashSet<String> = tasks.iter().map(|t| t.id.clone()).collect();
        for lead in tasks {
            self.upsert(lead, overwrite)?;
        }
        let mut gone: BTreeSet<String> = removed.iter().cloned().collect();
        if let Some(keep) = keep {
            let keep: HashSet<&str> = keep.iter().map(String::as_str).collect();
            let on_disk = self.list.list()?;
            let ids = on_disk
                .tasks
                .iter()
                .map(|t| t.id.clone())
                .chain(self.state.known.keys().cloned());
            gone.extend(ids.filter(|id| !keep.contains(id.as_str()) && !upserted.contains(id)));
            self.state.synced = true;
        }
        for id in gone {
            self.remove(&id, overwrite)?;
        }
        self.save()
    }

    fn upsert(&mut self, lead: Task, overwrite: bool) -> Result<()> {
        let id = lead.id.clone();
        let path = self.list.task_path(&id)?;
        self.home.check_inside(&path)?;
        self.home.ensure_dir(self.list.dir())?;
        let _guard = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
        let mirror = read(&self.list, &id)?;
        if overwrite {
            if mirror.as_ref() != Some(&lead) {
                self.write(&lead)?;
            }
            self.state.known.insert(id, lead);
            return Ok(());
        }
        let known = self.state.known.get(&id);
        let unanswered: BTreeSet<String> = self
            .state
            .pending
            .get(&id)
            .into_iter()
            .flatten()
            .flat_map(|p| p.fields.iter().cloned())
            .collect();
        if mirror.is_none() && (known.is_some() || !unanswered.is_empty()) {
            // Deleted here: the deletion is on its way to the lead (or about to be).
            return Ok(());
        }
        let unsent = if mirror.is_none() && known.is_none() {
            BTreeSet::new()
        } else {
            changed(known, mirror.as_ref())
        };
        let accounted = with_fields(&lead, known, &unanswered);
        let merged = with_fields(&accounted, mirror.as_ref(), &unsent);
        if mirror.as_ref() != Some(&merged) {
            self.write(&merged)?;
        }
        self.state.known.insert(id, accounted);
        Ok(())
    }

    fn remove(&mut self, id: &str, overwrite: bool) -> Result<()> {
        if self.state.pending.contains_key(id) {
            return Ok(());
        }
        let path = self.list.task_path(id)?;
        self.home.check_inside(&path)?;
        self.home.ensure_dir(self.list.dir())?;
        let _guard = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
        let mirror = read(&self.list, id)?;
        if !overwrite && mirror.as_ref() != self.state.known.get(id) {
            // Changed here and not sent yet: the change goes to the lead first.
            return Ok(());
        }
        if mirror.is_some() {
            std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
        }
        self.state.known.remove(id);
        Ok(())
    }

    /// The changes made on this host since the last scan, found by reading the mirror (when
    /// its directory changed, and in full every second). None before the first full snapshot.
    pub fn scan(&mut self, now: Instant) -> Result<Vec<Found>> {
        if !self.state.synced {
            return Ok(Vec::new());
        }
        let full = self
            .last_full
            .is_none_or(|t| now.duration_since(t) >= FULL_SCAN_EVERY);
        let stamp = std::fs::metadata(self.list.dir())
            .map(|m| (m.ino(), m.mtime(), m.mtime_nsec()))
            .ok();
        if !full && stamp == self.stamp {
            return Ok(Vec::new());
        }
        if full {
            self.last_full = Some(now);
        }
        self.stamp = stamp;
        let listing = self.list.list()?;
        let unreadable: HashSet<String> = listing
            .problems
            .iter()
            .filter_map(|p| {
                p.path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .map(str::to_string)
            })
            .collect();
        let mut found = Vec::new();
        for task in &listing.tasks {
            let known = self.state.known.get(&task.id);
            if known == Some(task) || (known.is_none() && task.is_internal()) {
                continue;
            }
            found.push(self.found(&task.id, known.cloned(), Some(task.clone())));
        }
        let present: HashSet<&str> = listing.tasks.iter().map(|t| t.id.as_str()).collect();
        for (id, known) in &self.state.known {
            if !present.contains(id.as_str()) && !unreadable.contains(id) {
                found.push(self.found(id, Some(known.clone()), None));
            }
        }
        Ok(found)
    }

    fn found(&self, id: &str, before: Option<Task>, after: Option<Task>) -> Found {
        let fields = if before.is_none() || after.is_none() {
            fields(before.as_ref().or(after.as_ref()))
                .keys()
                .cloned()
                .collect()
        } else {
            changed(before.as_ref(), after.as_ref())
        };
        // A dependency on a task made here and not yet made on the lead's list: its id here is
        // not the lead's (the lead links the new task to its blockers itself).
        let lead_ids = |ids: &mut Vec<String>| ids.retain(|i| self.state.known.contains_key(i));
        let told = after.clone().map(|mut t| {
            lead_ids(&mut t.blocks);
            lead_ids(&mut t.blocked_by);
            Box::new(t)
        });
        Found {
            body: Body::TaskUpdate {
                team: self.team.clone(),
                id: id.to_string(),
                before: before.map(Box::new),
                after: told,
            },
            id: id.to_string(),
            after,
            fields,
        }
    }

    /// The changes of a scan are in the outbox under these seqs: accounted for, and waiting for
    /// the lead's answer.
    pub fn sent(&mut self, sent: Vec<(u64, Found)>) -> Result<()> {
        if sent.is_empty() {
            return Ok(());
        }
        for (seq, found) in sent {
            match found.after {
                Some(task) => self.state.known.insert(found.id.clone(), task),
                None => self.state.known.remove(&found.id),
            };
            self.state
                .pending
                .entry(found.id)
                .or_default()
                .push(Pending {
                    seq,
                    fields: found.fields,
                });
        }
        self.save()
    }
}
