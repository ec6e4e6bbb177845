//! One-line digests of file changes for `monitor`: what a change to a team file, an inbox, a
//! task or a lead's delivery log means, found by comparing the new content with the content
//! seen before (`config: 3 members [team-lead, a, b] (+b)`, `task 3: in_progress owner=a (was
//! pending)`, `inbox team-lead: +1 permission_request from a — …`). Files are read with the
//! store's safe reader (no symlink followed, no FIFO blocked on, bounded size): whatever sits
//! where a protocol file should be is reported as one line, never read. The text may hold
//! anything a file held; the caller escapes it. Reads only; never locks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::messages::Messages;
use super::places::{Place, label, locate, removed_text};
use crate::protocol::inbox::{clip, parse_entries};
use crate::protocol::{InboxEntry, Task, TeamFile};
use crate::store::safe_file::{FileKind, MAX_SMALL_FILE_BYTES, read_regular};
use crate::store::{Home, StoreError};
use crate::watch::{ChangeEvent, ChangeKind, WatchScope};

/// The largest file monitor reads.
pub const MAX_READ_BYTES: u64 = 16 * 1024 * 1024;
/// Parse failures are read again this many times (Claude Code 2.1.329 writes in place, so a
/// read can see half a file).
const TORN_RETRIES: usize = 2;

/// What was last seen at a path.
#[derive(Debug, Clone)]
enum Seen {
    Team(TeamFile),
    Inbox(Vec<InboxEntry>),
    Task(Task),
}

/// A digest line: the team it is about and the text (unescaped).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub team: String,
    pub text: String,
}

/// Remembers file contents to describe changes.
pub struct Digester {
    home: Home,
    seen: HashMap<PathBuf, Seen>,
    messages: Messages,
}

/// Why a file could not be read, in a few words.
fn read_error(path: &Path, error: &StoreError) -> String {
    match error {
        StoreError::Symlink { .. } => "is a symbolic link, not followed".to_string(),
        StoreError::NotAFile { .. } => match FileKind::at(path) {
            Ok(Some(kind)) => format!("is {}, not read", kind.describe()),
            _ => "is not a regular file, not read".to_string(),
        },
        StoreError::Parse { detail, .. } => format!("unreadable ({detail})"),
        other => format!("unreadable ({other})"),
    }
}

/// Reads and parses a protocol file; `Ok(None)` when nothing is there.
fn read_seen(path: &Path, place: &Place) -> Result<Option<Seen>, String> {
    let mut attempt = 0;
    loop {
        let bytes = match read_regular(path, MAX_READ_BYTES) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) => return Err(read_error(path, &e)),
        };
        match parse_seen(&bytes, place) {
            Ok(seen) => return Ok(seen),
            Err(detail) if attempt >= TORN_RETRIES => return Err(format!("unreadable ({detail})")),
            Err(_) => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
        }
    }
}

fn parse_seen(bytes: &[u8], place: &Place) -> Result<Option<Seen>, String> {
    Ok(Some(match place {
        Place::Config => {
            let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?;
            Seen::Team(TeamFile::parse(text).map_err(|e| format!("not a valid team file: {e}"))?)
        }
        Place::Inbox(_) => match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Array(items)) => Seen::Inbox(parse_entries(items).0),
            Ok(_) => return Err("not a JSON array".to_string()),
            Err(e) => return Err(format!("not valid JSON: {e}")),
        },
        Place::Task(_) => Seen::Task(
            serde_json::from_slice::<Task>(bytes).map_err(|e| format!("not a valid task: {e}"))?,
        ),
        _ => return Ok(None),
    }))
}

impl Digester {
    pub fn new(home: &Home) -> Digester {
        Digester {
            home: home.clone(),
            seen: HashMap::new(),
            messages: Messages::default(),
        }
    }

    /// Reads every file of the scope once, so the first change is compared with something,
    /// and follows delivery logs from their end.
    pub fn prime(&mut self, scope: &WatchScope) {
        for root in scope.roots() {
            self.prime_dir(scope, root, 0);
        }
    }

    fn prime_dir(&mut self, scope: &WatchScope, dir: &Path, depth: usize) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !scope.contains(&path) {
                continue;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && depth < 3 && !crate::watch::is_lock_dir_path(&path) {
                self.prime_dir(scope, &path, depth + 1);
            } else if kind.is_file() {
                let Some((team, place)) = locate(&self.home.root, &path) else {
                    continue;
                };
                match &place {
                    Place::DeliveryLog(_) => self.messages.prime_log(&path),
                    _ => {
                        if let Ok(Some(seen)) = read_seen(&path, &place) {
                            if let (Place::Inbox(member), Seen::Inbox(entries)) = (&place, &seen) {
                                self.messages.prime_inbox(&team, member, entries);
                            }
                            self.seen.insert(path, seen);
                        }
                    }
                }
            }
        }
    }

    /// The digest lines of one change (none for paths outside the home layout).
    pub fn digest(&mut self, event: &ChangeEvent) -> Vec<Digest> {
        let Some((team, place)) = locate(&self.home.root, &event.path) else {
            return Vec::new();
        };
        let lines = match event.kind {
            ChangeKind::LockAcquired | ChangeKind::LockReleased => vec![self.lock_text(event)],
            ChangeKind::Removed => {
                self.seen.remove(&event.path);
                if matches!(place, Place::DeliveryLog(_)) {
                    self.messages.log_removed(&event.path);
                }
                vec![removed_text(&place)]
            }
            ChangeKind::Created | ChangeKind::Modified => self.changed(event, &team, &place),
        };
        lines
            .into_iter()
            .map(|text| Digest {
                team: team.clone(),
                text,
            })
            .collect()
    }

    fn lock_text(&self, event: &ChangeEvent) -> String {
        let target = event
            .lock_target()
            .and_then(|t| locate(&self.home.root, &t))
            .map(|(_, place)| match place {
                Place::ListLockFile => "task list".to_string(),
                other => label(&other),
            })
            .unwrap_or_else(|| event.path.display().to_string());
        let verb = if event.kind == ChangeKind::LockAcquired {
            "acquired"
        } else {
            "released"
        };
        format!("lock {verb}: {target}")
    }

    fn changed(&mut self, event: &ChangeEvent, team: &str, place: &Place) -> Vec<String> {
        let created = event.kind == ChangeKind::Created;
        let path = &event.path;
        let expected = match place {
            Place::Config
            | Place::Inbox(_)
            | Place::Task(_)
            | Place::DeliveryLog(_)
            | Place::HighWatermark => Some(FileKind::Regular),
            Place::TeamDir | Place::TasksDir | Place::InboxesDir => Some(FileKind::Directory),
            _ => None,
        };
        if let Some(expected) = expected
            && let Ok(Some(kind)) = FileKind::at(path)
            && kind != expected
        {
            self.seen.remove(path);
            let verb = if expected == FileKind::Regular {
                "read"
            } else {
                "followed"
            };
            return vec![format!(
                "{}: is now {}, not {verb}",
                label(place),
                kind.describe()
            )];
        }
        let text = match place {
            Place::TeamDir => "team directory created".to_string(),
            Place::TasksDir => "task list directory created".to_string(),
            Place::InboxesDir => "inboxes directory created".to_string(),
            Place::HighWatermark => match read_regular(path, MAX_SMALL_FILE_BYTES) {
                Ok(Some(t)) => format!(
                    "task list: highwatermark {}",
                    clip(String::from_utf8_lossy(&t).trim(), 40)
                ),
                Ok(None) => "task list: highwatermark removed".to_string(),
                Err(e) => format!("highwatermark: {}", read_error(path, &e)),
            },
            Place::ListLockFile => "task list: lock file created".to_string(),
            Place::DeliveryLog(member) => return self.messages.log_changed(team, member, path),
            Place::Teamlead(_) | Place::Other(_) => {
                let what = if event.is_dir { "directory " } else { "" };
                format!("{what}{} {}", label(place), event.kind.label())
            }
            Place::Config | Place::Inbox(_) | Place::Task(_) => {
                let before = self.seen.get(path).cloned();
                match read_seen(path, place) {
                    Err(why) => {
                        self.seen.remove(path);
                        format!("{}: {why}", label(place))
                    }
                    Ok(None) => format!("{} {}", label(place), event.kind.label()),
                    Ok(Some(now)) => {
                        self.seen.insert(path.clone(), now.clone());
                        match (&now, place) {
                            (Seen::Inbox(entries), Place::Inbox(member)) => {
                                let old: &[InboxEntry] = match &before {
                                    Some(Seen::Inbox(e)) => e,
                                    _ => &[],
                                };
                                return self
                                    .messages
                                    .inbox_changed(team, member, old, entries, created);
                            }
                            (Seen::Team(file), _) => config_text(before.as_ref(), file),
                            (Seen::Task(task), _) => task_text(before.as_ref(), task, created),
                            (Seen::Inbox(_), _) => label(place),
                        }
                    }
                }
            }
        };
        vec![text]
    }
}

fn config_text(before: Option<&Seen>, team: &TeamFile) -> String {
    let names: Vec<&str> = team.members.iter().map(|m| m.name.as_str()).collect();
    let mut text = format!(
        "config: {} member{} [{}]",
        names.len(),
        if names.len() == 1 { "" } else { "s" },
        names.join(", ")
    );
    let Some(Seen::Team(old)) = before else {
        return text;
    };
    let mut changes = Vec::new();
    for m in &team.members {
        match old.member(&m.name) {
            None => changes.push(match m.host() {
                Some(host) => format!("+{} · {host}", m.name),
                None => format!("+{}", m.name),
            }),
            Some(o) => {
                if o.active() != m.active() {
                    changes.push(format!(
                        "{} {}",
                        m.name,
                        if m.active() { "active" } else { "idle" }
                    ));
                }
                if o.mode != m.mode {
                    changes.push(format!(
                        "{} mode={}",
                        m.name,
                        m.mode.as_deref().unwrap_or("default")
                    ));
                }
                if o.tmux_pane_id != m.tmux_pane_id && !m.tmux_pane_id.is_empty() {
                    changes.push(format!("{} pane={}", m.name, m.tmux_pane_id));
                }
            }
        }
    }
    for o in &old.members {
        if team.member(&o.name).is_none() {
            changes.push(format!("-{}", o.name));
        }
    }
    if old.hidden_pane_ids != team.hidden_pane_ids {
        changes.push("hidden panes changed".to_string());
    }
    if !changes.is_empty() {
        text.push_str(&format!(" ({})", changes.join(", ")));
    }
    text
}

fn task_text(before: Option<&Seen>, task: &Task, created: bool) -> String {
    let mut text = format!("task {}: {}", task.id, task.status.as_str());
    if let Some(owner) = &task.owner {
        text.push_str(&format!(" owner={owner}"));
    }
    if !task.blocked_by.is_empty() {
        let ids: Vec<String> = task.blocked_by.iter().map(|b| format!("#{b}")).collect();
        text.push_str(&format!(" blockedBy={}", ids.join(",")));
    }
    if task.is_internal() {
        text.push_str(" [internal]");
    }
    match before {
        Some(Seen::Task(old)) if !created => {
            let mut was = Vec::new();
            if old.status != task.status {
                was.push(old.status.as_str().to_string());
            }
            if old.owner != task.owner {
                was.push(format!("owner={}", old.owner.as_deref().unwrap_or("none")));
            }
            if !was.is_empty() {
                text.push_str(&format!(" (was {})", was.join(" ")));
            }
        }
        _ => text.push_str(&format!(" (new) \"{}\"", clip(&task.subject, 60))),
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Member;

    #[test]
    fn a_member_joining_on_another_host_is_named_with_it() {
        let before = TeamFile::new("t", None, "/w");
        let mut after = before.clone();
        let mut far = Member::new("far", "t", "/w");
        far.extra.insert(
            crate::protocol::HOST_KEY.to_string(),
            serde_json::Value::from("build"),
        );
        after.members.push(far);
        after.members.push(Member::new("near", "t", "/w"));
        let text = config_text(Some(&Seen::Team(before)), &after);
        assert!(text.ends_with("(+far · build, +near)"), "{text}");
    }
}
