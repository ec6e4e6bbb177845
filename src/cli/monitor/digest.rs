//! One-line digests of file changes for `monitor`: what a change to a team file, an inbox or a
//! task means, found by comparing the new content with the content seen before (`config: 3
//! members [team-lead, a, b] (+b)`, `task 3: in_progress owner=a (was pending)`, `inbox
//! team-lead: +1 permission_request from a — …`). Reads only; never locks.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use crate::protocol::inbox::clip;
use crate::protocol::{InboxEntry, Task, TeamFile};
use crate::store::{Home, StoreError, inbox, read_team, tasks::TaskList};
use crate::watch::{ChangeEvent, ChangeKind, WatchScope};

/// What was last seen at a path.
#[derive(Debug, Clone)]
enum Seen {
    Team(TeamFile),
    Inbox(Vec<InboxEntry>),
    Task(Task),
}

/// What a path is, in the layout of PROTOCOL.md 1.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    TeamDir,
    Config,
    InboxesDir,
    Inbox(String),
    TasksDir,
    Task(String),
    HighWatermark,
    ListLockFile,
    Other(String),
}

/// A digest line: the team it is about and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub team: String,
    pub text: String,
}

/// Remembers file contents to describe changes.
pub struct Digester {
    home: Home,
    seen: HashMap<PathBuf, Seen>,
}

impl Digester {
    pub fn new(home: &Home) -> Digester {
        Digester {
            home: home.clone(),
            seen: HashMap::new(),
        }
    }

    /// Reads every file of the scope once, so the first change is compared with something.
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
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if is_dir && depth < 3 && !crate::watch::is_lock_dir_path(&path) {
                self.prime_dir(scope, &path, depth + 1);
            } else if !is_dir {
                let _ = self.read_and_remember(&path);
            }
        }
    }

    /// The team and place of a path under the home.
    fn locate(&self, path: &Path) -> Option<(String, Place)> {
        let rel = path.strip_prefix(&self.home.root).ok()?;
        let parts: Vec<String> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(s) => s.to_str().map(str::to_string),
                _ => None,
            })
            .collect();
        let team = parts.get(1)?.clone();
        let rest = &parts[2..];
        let place = match (parts[0].as_str(), rest) {
            ("teams", []) => Place::TeamDir,
            ("teams", [f]) if f == "config.json" => Place::Config,
            ("teams", [d]) if d == "inboxes" => Place::InboxesDir,
            ("teams", [d, f]) if d == "inboxes" && f.ends_with(".json") => {
                Place::Inbox(f.trim_end_matches(".json").to_string())
            }
            ("tasks", []) => Place::TasksDir,
            ("tasks", [f]) if f == ".highwatermark" => Place::HighWatermark,
            ("tasks", [f]) if f == ".lock" => Place::ListLockFile,
            ("tasks", [f]) if f.ends_with(".json") => {
                Place::Task(f.trim_end_matches(".json").to_string())
            }
            _ => Place::Other(rest.join("/")),
        };
        Some((team, place))
    }

    /// Reads a file and remembers it; the previous content is returned.
    fn read_and_remember(&mut self, path: &Path) -> Result<Option<Seen>, StoreError> {
        let Some((team, place)) = self.locate(path) else {
            return Ok(None);
        };
        let now = match place {
            Place::Config => Seen::Team(read_team(&self.home, &team)?),
            Place::Inbox(_) => Seen::Inbox(inbox::read_path(path)?.entries),
            Place::Task(ref id) => Seen::Task(TaskList::new(&self.home, &team)?.get(id)?),
            _ => return Ok(None),
        };
        Ok(self.seen.insert(path.to_path_buf(), now))
    }

    /// The digest of one change (`None` for paths outside the home layout).
    pub fn digest(&mut self, event: &ChangeEvent) -> Option<Digest> {
        let (team, place) = self.locate(&event.path)?;
        let text = match event.kind {
            ChangeKind::LockAcquired | ChangeKind::LockReleased => self.lock_text(event),
            ChangeKind::Removed => {
                self.seen.remove(&event.path);
                removed_text(&place)
            }
            ChangeKind::Created | ChangeKind::Modified => self.changed_text(event, &place),
        };
        Some(Digest { team, text })
    }

    fn lock_text(&self, event: &ChangeEvent) -> String {
        let target = event
            .lock_target()
            .and_then(|t| self.locate(&t))
            .map(|(_, place)| match place {
                Place::ListLockFile => "task list".to_string(),
                Place::Config => "config".to_string(),
                Place::Inbox(n) => format!("inbox {n}"),
                Place::Task(id) => format!("task {id}"),
                Place::Other(p) => p,
                other => format!("{other:?}"),
            })
            .unwrap_or_else(|| event.path.display().to_string());
        let verb = if event.kind == ChangeKind::LockAcquired {
            "acquired"
        } else {
            "released"
        };
        format!("lock {verb}: {target}")
    }

    fn changed_text(&mut self, event: &ChangeEvent, place: &Place) -> String {
        let created = event.kind == ChangeKind::Created;
        match place {
            Place::TeamDir => "team directory created".to_string(),
            Place::TasksDir => "task list directory created".to_string(),
            Place::InboxesDir => "inboxes directory created".to_string(),
            Place::HighWatermark => match std::fs::read_to_string(&event.path) {
                Ok(t) => format!("task list: highwatermark {}", t.trim()),
                Err(_) => "task list: highwatermark changed".to_string(),
            },
            Place::ListLockFile => "task list: lock file created".to_string(),
            Place::Other(rel) => {
                let what = if event.is_dir { "directory " } else { "" };
                format!("{what}{rel} {}", event.kind.label())
            }
            Place::Config | Place::Inbox(_) | Place::Task(_) => {
                let before = self.seen.get(&event.path).cloned();
                let now = self.read_and_remember(&event.path);
                let current = self.seen.get(&event.path).cloned();
                match (now, current) {
                    (Err(e), _) => format!("{}: unreadable ({e})", place_label(place)),
                    (Ok(_), Some(current)) => describe(place, before.as_ref(), &current, created),
                    (Ok(_), None) => format!("{} {}", place_label(place), event.kind.label()),
                }
            }
        }
    }
}

fn place_label(place: &Place) -> String {
    match place {
        Place::Config => "config".to_string(),
        Place::Inbox(n) => format!("inbox {n}"),
        Place::Task(id) => format!("task {id}"),
        Place::TeamDir => "team".to_string(),
        Place::TasksDir => "task list".to_string(),
        Place::InboxesDir => "inboxes".to_string(),
        Place::HighWatermark => "highwatermark".to_string(),
        Place::ListLockFile => "task list lock file".to_string(),
        Place::Other(rel) => rel.clone(),
    }
}

fn removed_text(place: &Place) -> String {
    match place {
        Place::TeamDir => "team removed".to_string(),
        Place::TasksDir => "task list removed".to_string(),
        Place::Task(id) => format!("task {id}: deleted"),
        other => format!("{}: removed", place_label(other)),
    }
}

fn describe(place: &Place, before: Option<&Seen>, now: &Seen, created: bool) -> String {
    match now {
        Seen::Team(team) => config_text(before, team),
        Seen::Inbox(entries) => {
            let name = match place {
                Place::Inbox(n) => n.as_str(),
                _ => "?",
            };
            inbox_text(name, before, entries, created)
        }
        Seen::Task(task) => task_text(before, task, created),
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
            None => changes.push(format!("+{}", m.name)),
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

fn entry_kind(entry: &InboxEntry) -> String {
    entry
        .parse_frame()
        .map(|f| f.kind().to_string())
        .unwrap_or_else(|| "message".to_string())
}

/// A plain message as its quoted summary or first line, a frame as its one-liner.
fn entry_preview(entry: &InboxEntry) -> String {
    if entry.parse_frame().is_some() {
        clip(&entry.one_liner(), 90)
    } else {
        let body = entry
            .summary
            .clone()
            .unwrap_or_else(|| crate::protocol::inbox::first_line(&entry.text));
        format!("\"{}\"", clip(&body, 80))
    }
}

/// How many new entries are named one by one in a digest.
const NAMED_ENTRIES: usize = 4;

fn inbox_text(name: &str, before: Option<&Seen>, now: &[InboxEntry], created: bool) -> String {
    let old: &[InboxEntry] = match before {
        Some(Seen::Inbox(e)) => e,
        _ => &[],
    };
    let old_read: HashMap<String, bool> = old
        .iter()
        .map(|e| (e.dedup_key(), !e.is_unread()))
        .collect();
    let now_keys: HashSet<String> = now.iter().map(InboxEntry::dedup_key).collect();
    let added: Vec<&InboxEntry> = now
        .iter()
        .filter(|e| !old_read.contains_key(&e.dedup_key()))
        .collect();
    let removed = old
        .iter()
        .filter(|e| !now_keys.contains(&e.dedup_key()))
        .count();
    let newly_read = now
        .iter()
        .filter(|e| !e.is_unread() && old_read.get(&e.dedup_key()) == Some(&false))
        .count();
    let mut parts = Vec::new();
    match added.as_slice() {
        [] => {}
        [one] => parts.push(format!(
            "+1 {} from {} — {}",
            entry_kind(one),
            one.from,
            entry_preview(one)
        )),
        many => {
            let mut named: Vec<String> = many
                .iter()
                .take(NAMED_ENTRIES)
                .map(|e| format!("{} from {}", entry_kind(e), e.from))
                .collect();
            if many.len() > NAMED_ENTRIES {
                named.push("…".to_string());
            }
            parts.push(format!("+{}: {}", many.len(), named.join(", ")));
        }
    }
    if removed > 0 {
        parts.push(format!("-{removed} delivered"));
    }
    if newly_read > 0 {
        parts.push(format!("{newly_read} marked read"));
    }
    if parts.is_empty() && created {
        return format!("inbox {name}: created ({} entries)", now.len());
    }
    if parts.is_empty() {
        return format!("inbox {name}: rewritten, no change ({} entries)", now.len());
    }
    format!("inbox {name}: {}", parts.join(", "))
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
