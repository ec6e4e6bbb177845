//! A teammate's view of the files: its own inbox (read without a lock, consumed 2.1.45-style by
//! marking entries `read: true`, so a waiter can take one answer and leave the rest), messages
//! to others, its `isActive` and `mode` in `config.json`, and the task list. Operations that take
//! a lock directory run on the blocking pool; plain reads are cheap and run inline. The
//! [`Signature`] is what the idle poll compares: two `stat`s, no parsing.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::agent::error::{AgentError, blocking};
use crate::protocol::frames::Frame;
use crate::protocol::{InboxEntry, PermissionMode, Task, TaskStatus};
use crate::store::{self, ClaimError, Home, StoreError, TaskList, TaskListing};

/// How long a teammate on a host waits for the lead's word on a claim it made there.
pub const CLAIM_ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The files one teammate reads and writes.
#[derive(Debug, Clone)]
pub struct Mailroom {
    home: Home,
    team: String,
    name: String,
    color: Option<String>,
}

/// What the idle poll compares: the inbox's size and mtime, the task directory's mtime.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Signature {
    inbox: Option<(u64, Option<SystemTime>)>,
    tasks: Option<Option<SystemTime>>,
}

impl Mailroom {
    pub fn new(home: &Home, team: &str, name: &str, color: Option<&str>) -> Mailroom {
        Mailroom {
            home: home.clone(),
            team: team.to_string(),
            name: name.to_string(),
            color: color.map(str::to_string),
        }
    }

    pub fn home(&self) -> &Home {
        &self.home
    }
    pub fn team(&self) -> &str {
        &self.team
    }
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn color(&self) -> Option<&str> {
        self.color.as_deref()
    }

    /// A message from this teammate, in its color.
    pub fn entry(&self, text: impl Into<String>, summary: Option<&str>) -> InboxEntry {
        InboxEntry::new(&self.name, text)
            .with_summary(summary)
            .with_color(self.color.as_deref())
    }

    /// Appends a message to `to`'s inbox.
    pub async fn send(&self, to: &str, entry: InboxEntry) -> Result<(), AgentError> {
        let (home, team, to) = (self.home.clone(), self.team.clone(), to.to_string());
        blocking(move || store::inbox::append(&home, &team, &to, &entry).map(|_| ())).await
    }

    /// Appends a frame to `to`'s inbox.
    pub async fn send_frame(&self, to: &str, frame: &Frame) -> Result<(), AgentError> {
        self.send(to, self.entry(frame.to_text(), None)).await
    }

    /// The unread entries of the own inbox (no lock).
    pub fn unread(&self) -> Result<Vec<InboxEntry>, AgentError> {
        let read = store::inbox::read(&self.home, &self.team, &self.name)?;
        Ok(read.unread().cloned().collect())
    }

    /// Marks these entries of the own inbox read.
    pub async fn mark_read(&self, entries: &[InboxEntry]) -> Result<(), AgentError> {
        if entries.is_empty() {
            return Ok(());
        }
        let keys: Vec<String> = entries.iter().map(InboxEntry::dedup_key).collect();
        let (home, team, name) = (self.home.clone(), self.team.clone(), self.name.clone());
        blocking(move || store::inbox::mark_read(&home, &team, &name, &keys).map(|_| ())).await
    }

    /// Sets the own `isActive` in `config.json`.
    pub async fn set_active(&self, active: bool) -> Result<(), AgentError> {
        let (home, team, name) = (self.home.clone(), self.team.clone(), self.name.clone());
        blocking(move || store::set_active(&home, &team, &name, active)).await
    }

    /// Records the own `mode` in `config.json` (only when it differs).
    pub async fn set_mode(&self, mode: PermissionMode) -> Result<(), AgentError> {
        let (home, team, name) = (self.home.clone(), self.team.clone(), self.name.clone());
        blocking(move || {
            store::edit_team(&home, &team, |file| {
                if let Some(m) = file.member_mut(&name)
                    && m.mode.as_deref() != Some(mode.as_str())
                {
                    m.mode = Some(mode.as_str().to_string());
                }
                Ok(())
            })
        })
        .await
    }

    /// The team's task list.
    pub fn tasks(&self) -> Result<TaskList, AgentError> {
        Ok(TaskList::new(&self.home, &self.team)?)
    }

    /// Every task (no lock).
    pub fn list_tasks(&self) -> Result<TaskListing, AgentError> {
        Ok(self.tasks()?.list()?)
    }

    /// Claims task `id` for this teammate.
    ///
    /// On a host other than its lead's, a claim of a free task (`check_busy`) is only a
    /// proposal: it is made on the host's mirror of the lead's list, and another teammate
    /// elsewhere may claim the same task at the same moment. So it carries a mark of its own
    /// (`CLAIM_KEY`), and this returns once the lead's word on it is back in the mirror:
    /// held (`CLAIM_HELD_KEY` is the mark), or lost (another owner: `AlreadyClaimed`). The work
    /// of a task starts only after that, so a task never runs twice. A lead that does not
    /// answer within [`CLAIM_ANSWER_WAIT`] (its link is down): nothing runs, the claim stays,
    /// and the next look waits again ([`Self::ready_to_work`]).
    pub async fn claim(&self, id: &str, check_busy: bool) -> Result<Task, ClaimError> {
        let list = TaskList::new(&self.home, &self.team)?;
        let dir = list.dir().to_path_buf();
        let mark = (check_busy && self.on_a_host())
            .then(|| format!("{}/{}", self.name, uuid::Uuid::new_v4().simple()));
        let (task_id, name, m) = (id.to_string(), self.name.clone(), mark.clone());
        let claimed = match tokio::task::spawn_blocking(move || {
            list.claim_marked(&task_id, &name, check_busy, m.as_deref())
        })
        .await
        {
            Ok(r) => r,
            Err(e) => Err(ClaimError::Store(StoreError::io(
                &dir,
                std::io::Error::other(e.to_string()),
            ))),
        }?;
        match mark {
            None => Ok(claimed),
            Some(mark) => self.claim_answered(id, &mark).await,
        }
    }

    /// Whether this teammate runs on another host than its lead's (its member entry names
    /// the host).
    fn on_a_host(&self) -> bool {
        store::read_team(&self.home, &self.team)
            .ok()
            .and_then(|f| f.member(&self.name).map(|m| m.host().is_some()))
            .unwrap_or(false)
    }

    /// `task`, owned by this teammate and in progress: itself when its work may start, after
    /// the lead's word when it is a claim of this teammate's on a host that the lead has not
    /// answered yet (see [`Self::claim`]).
    pub async fn ready_to_work(&self, task: &Task) -> Result<Task, ClaimError> {
        let mark = task
            .extra
            .get(store::tasks::CLAIM_KEY)
            .and_then(|v| v.as_str())
            .filter(|m| m.split('/').next() == Some(self.name.as_str()));
        let held = task
            .extra
            .get(store::tasks::CLAIM_HELD_KEY)
            .and_then(|v| v.as_str());
        match mark {
            Some(mark) if held != Some(mark) && self.on_a_host() => {
                self.claim_answered(&task.id, mark).await
            }
            _ => Ok(task.clone()),
        }
    }

    /// Waits for the lead's word on the claim of task `id` marked `mark` (see [`Self::claim`]).
    async fn claim_answered(&self, id: &str, mark: &str) -> Result<Task, ClaimError> {
        let list = TaskList::new(&self.home, &self.team)?;
        let deadline = tokio::time::Instant::now() + CLAIM_ANSWER_WAIT;
        loop {
            let task = list.get(id).map_err(ClaimError::Store)?;
            if task.owner.as_deref() != Some(self.name.as_str()) {
                return Err(ClaimError::AlreadyClaimed {
                    owner: task.owner.unwrap_or_else(|| "nobody".to_string()),
                });
            }
            if task
                .extra
                .get(store::tasks::CLAIM_HELD_KEY)
                .and_then(|v| v.as_str())
                == Some(mark)
            {
                return Ok(task);
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ClaimError::Store(StoreError::io(
                    list.dir(),
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        format!(
                            "the lead did not answer the claim of task #{id} within {} s",
                            CLAIM_ANSWER_WAIT.as_secs()
                        ),
                    ),
                )));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Marks task `id` completed.
    pub async fn complete(&self, id: &str) -> Result<Task, AgentError> {
        let list = self.tasks()?;
        let id = id.to_string();
        blocking(move || list.complete(&id)).await
    }

    /// Gives task `id` back: `pending`, no owner (only if this teammate still owns it).
    pub async fn release(&self, id: &str) -> Result<(), AgentError> {
        let list = self.tasks()?;
        let (id, name) = (id.to_string(), self.name.clone());
        blocking(move || {
            list.update(&id, |t| {
                if t.owner.as_deref() == Some(name.as_str()) && t.status != TaskStatus::Completed {
                    t.owner = None;
                    t.status = TaskStatus::Pending;
                }
                Ok(())
            })
        })
        .await
    }

    /// Two `stat`s: the own inbox and the task directory.
    pub fn signature(&self) -> Signature {
        let stat = |p: Option<PathBuf>| p.and_then(|p| std::fs::metadata(p).ok());
        let inbox = stat(self.home.inbox_path(&self.team, &self.name).ok())
            .map(|m| (m.len(), m.modified().ok()));
        let tasks = stat(self.home.tasks_dir(&self.team).ok()).map(|m| m.modified().ok());
        Signature { inbox, tasks }
    }
}
