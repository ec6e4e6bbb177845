//! Helpers shared by the agent tests: a team in a temporary home, a permission asker that
//! records what it is asked and answers by a policy, and waits that poll a condition with a
//! deadline.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Map, Value};
use tokio::sync::{Semaphore, mpsc};

use teamlead::agent::{
    AskError, Asking, EngineKind, PermissionAsker, TeammateConfig, TeammateEvent,
    TeammateEventKind, TeammateHandle, spawn_in_process,
};
use teamlead::protocol::frames::{Frame, PermissionResponse};
use teamlead::protocol::permission::PermissionUpdate;
use teamlead::protocol::{InboxEntry, LEAD_NAME, Member, PermissionMode, Task, TeamFile};
use teamlead::store::{self, Home, TaskList};

/// A team in a temporary home, with a working directory for its teammates.
pub struct TestTeam {
    _dir: tempfile::TempDir,
    pub home: Home,
    pub team: String,
    pub work: PathBuf,
}

impl TestTeam {
    /// A team `t` with the lead and these teammates.
    pub fn new(members: &[&str]) -> TestTeam {
        let dir = tempfile::tempdir().expect("temp dir");
        let home = Home::new(dir.path().join("home"));
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).expect("work dir");
        let team = "t".to_string();
        let mut file = TeamFile::new(&team, None, &work.to_string_lossy());
        for name in members {
            file.members
                .push(Member::new(name, &team, &work.to_string_lossy()));
        }
        store::create_team(&home, &file).expect("create team");
        TestTeam {
            _dir: dir,
            home,
            team,
            work,
        }
    }

    /// A teammate configuration that polls every 100 ms.
    pub fn config(&self, name: &str, mode: PermissionMode) -> TeammateConfig {
        let mut config = TeammateConfig::new(&self.home, &self.team, name, &self.work);
        config.mode = mode;
        config.color = Some("blue".into());
        config.poll_interval = Duration::from_millis(100);
        config
    }

    pub fn tasks(&self) -> TaskList {
        TaskList::new(&self.home, &self.team).expect("task list")
    }

    /// A pending task whose `metadata.command` is `command`.
    pub fn add_task(&self, subject: &str, command: &str) -> Task {
        let mut meta = Map::new();
        meta.insert("command".into(), Value::String(command.into()));
        self.tasks()
            .create(subject, "", Vec::new(), Some(meta))
            .expect("create task")
    }

    pub fn task(&self, id: &str) -> Task {
        self.tasks().get(id).expect("task")
    }

    /// Waits (up to 10 s) until task `id` is completed.
    pub async fn wait_completed(&self, what: &str, id: &str) {
        wait_for(what, 10, || {
            (self.task(id).status == teamlead::protocol::TaskStatus::Completed).then_some(())
        })
        .await
    }

    pub fn member(&self, name: &str) -> Member {
        store::read_team(&self.home, &self.team)
            .expect("team")
            .member(name)
            .cloned()
            .expect("member")
    }

    pub fn inbox(&self, name: &str) -> Vec<InboxEntry> {
        store::inbox::read(&self.home, &self.team, name)
            .expect("inbox")
            .entries
    }

    /// Every frame in the lead's inbox, in order.
    pub fn lead_frames(&self) -> Vec<Frame> {
        self.inbox(LEAD_NAME)
            .iter()
            .filter_map(InboxEntry::parse_frame)
            .collect()
    }

    /// Plain messages (not frames) in the lead's inbox.
    pub fn lead_messages(&self) -> Vec<InboxEntry> {
        self.inbox(LEAD_NAME)
            .into_iter()
            .filter(|e| e.parse_frame().is_none())
            .collect()
    }

    /// Appends a message to `to`'s inbox.
    pub fn send(&self, to: &str, entry: InboxEntry) {
        store::inbox::append(&self.home, &self.team, to, &entry).expect("append");
    }

    pub fn send_frame(&self, from: &str, to: &str, frame: &Frame) {
        self.send(to, InboxEntry::frame(from, frame));
    }

    pub fn file(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.work.join(name)).ok()
    }
}

/// Polls `check` every 20 ms until it gives `Some`, or panics after `secs` seconds.
pub async fn wait_for<T>(what: &str, secs: u64, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// How the test asker answers.
#[derive(Clone)]
pub enum Policy {
    Approve,
    /// Approve with the request's own suggestions ("yes, and don't ask again").
    ApproveAlways,
    Deny(String),
    /// Approve, but only after `release` is called once per request.
    ApproveWhenReleased,
}

/// A [`PermissionAsker`] that records every request and answers by its policy. Clones share
/// the record.
#[derive(Clone)]
pub struct RecordingAsker {
    state: Arc<AskerState>,
}

struct AskerState {
    asked: Mutex<Vec<Asking>>,
    policy: Mutex<Policy>,
    gate: Semaphore,
}

impl RecordingAsker {
    pub fn new(policy: Policy) -> RecordingAsker {
        RecordingAsker {
            state: Arc::new(AskerState {
                asked: Mutex::new(Vec::new()),
                policy: Mutex::new(policy),
                gate: Semaphore::new(0),
            }),
        }
    }

    /// This asker, as a teammate takes it.
    pub fn shared(&self) -> Arc<dyn PermissionAsker> {
        Arc::new(self.clone())
    }

    pub fn count(&self) -> usize {
        self.state.asked.lock().unwrap().len()
    }

    pub fn requests(&self) -> Vec<Asking> {
        self.state.asked.lock().unwrap().clone()
    }

    pub fn set_policy(&self, policy: Policy) {
        *self.state.policy.lock().unwrap() = policy;
    }

    /// Lets one held request through.
    pub fn release(&self) {
        self.state.gate.add_permits(1);
    }
}

impl PermissionAsker for RecordingAsker {
    fn ask(&self, asking: Asking) -> BoxFuture<'static, Result<PermissionResponse, AskError>> {
        let state = self.state.clone();
        async move {
            state.asked.lock().unwrap().push(asking.clone());
            let policy = state.policy.lock().unwrap().clone();
            let req = &asking.request;
            Ok(match policy {
                Policy::Approve => PermissionResponse::approve(req, Vec::new()),
                Policy::ApproveAlways => {
                    let updates: Vec<PermissionUpdate> = req.suggestions();
                    PermissionResponse::approve(req, updates)
                }
                Policy::Deny(feedback) => PermissionResponse::deny(req, Some(&feedback)),
                Policy::ApproveWhenReleased => {
                    let permit = state.gate.acquire().await.map_err(|_| AskError::LeadGone)?;
                    permit.forget();
                    PermissionResponse::approve(req, Vec::new())
                }
            })
        }
        .boxed()
    }
}

/// A spawned teammate and everything it reported.
pub struct Running {
    pub handle: TeammateHandle,
    rx: mpsc::UnboundedReceiver<TeammateEvent>,
    pub events: Vec<TeammateEventKind>,
}

impl Running {
    /// Takes the events that arrived so far.
    pub fn collect(&mut self) -> &[TeammateEventKind] {
        while let Ok(e) = self.rx.try_recv() {
            self.events.push(e.kind);
        }
        &self.events
    }

    /// Waits until an event satisfies `check`.
    pub async fn wait_event(&mut self, what: &str, check: impl Fn(&TeammateEventKind) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if self.collect().iter().any(&check) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for event: {what}"
            );
            let _ = tokio::time::timeout(Duration::from_millis(50), async {
                if let Some(e) = self.rx.recv().await {
                    self.events.push(e.kind);
                }
            })
            .await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.handle.kill();
    }
}

/// A teammate's configuration with the engine it runs (a bare configuration runs `shell`).
pub struct WithEngine(pub TeammateConfig, pub EngineKind);

impl From<TeammateConfig> for WithEngine {
    fn from(config: TeammateConfig) -> WithEngine {
        WithEngine(config, EngineKind::Shell)
    }
}

/// Spawns an in-process teammate with `asker`.
pub fn spawn(teammate: impl Into<WithEngine>, asker: Arc<dyn PermissionAsker>) -> Running {
    let WithEngine(config, engine) = teammate.into();
    let (tx, rx) = mpsc::unbounded_channel();
    Running {
        handle: spawn_in_process(config, engine.engine(), asker, tx),
        rx,
        events: Vec::new(),
    }
}

/// The idle notifications in the lead's inbox.
pub fn idles(team: &TestTeam) -> Vec<teamlead::protocol::frames::IdleNotification> {
    team.lead_frames()
        .into_iter()
        .filter_map(|f| match f {
            Frame::IdleNotification(n) => Some(n),
            _ => None,
        })
        .collect()
}
