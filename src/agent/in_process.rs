//! The in-process [`TeammateExecutor`]: teammates are tokio tasks of the lead's process
//! (see [`crate::agent::runtime`]), they ask permission through the lead's bridge and still
//! talk through the inbox files, so every backend behaves the same. `pane_id` and
//! `backendType` are `in-process`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::mpsc;

use super::asker::PermissionAsker;
use super::engines::EngineKind;
use super::error::blocking;
use super::events::TeammateEvent;
use super::runtime::{TeammateConfig, TeammateHandle, spawn_in_process};
use crate::backend::executor::{
    ExecutorError, Focus, Liveness, LivenessReport, SpawnRequest, Spawned, TeammateExecutor,
};
use crate::protocol::frames::ReportedUsage;
use crate::protocol::{BackendKind, InboxEntry, LEAD_NAME};
use crate::store::{self, Home, StoreError};
use crate::watch::ChangeEvent;

/// `in-process`, as written to `tmuxPaneId` (and, from [`BackendKind`], `backendType`).
pub const IN_PROCESS: &str = "in-process";

/// Adjusts a teammate's configuration before it starts.
type ConfigAdjuster = Box<dyn Fn(&mut TeammateConfig) + Send + Sync>;

/// Runs the teammates of one team inside this process.
pub struct InProcessExecutor {
    home: Home,
    team: String,
    asker: Arc<dyn PermissionAsker>,
    events: mpsc::UnboundedSender<TeammateEvent>,
    /// Applied to every teammate it starts (the poll interval, mostly).
    template: Option<ConfigAdjuster>,
    /// The engine of every teammate it starts (`shell` unless told otherwise).
    engine: EngineKind,
    handles: Mutex<HashMap<String, TeammateHandle>>,
}

impl InProcessExecutor {
    /// An executor for `team`; its teammates ask through `asker` and report on `events`.
    pub fn new(
        home: &Home,
        team: &str,
        asker: Arc<dyn PermissionAsker>,
        events: mpsc::UnboundedSender<TeammateEvent>,
    ) -> InProcessExecutor {
        InProcessExecutor {
            home: home.clone(),
            team: team.to_string(),
            asker,
            events,
            template: None,
            engine: EngineKind::Shell,
            handles: Mutex::new(HashMap::new()),
        }
    }

    /// Adjusts every teammate's configuration before it starts.
    pub fn with_config(
        mut self,
        adjust: impl Fn(&mut TeammateConfig) + Send + Sync + 'static,
    ) -> InProcessExecutor {
        self.template = Some(Box::new(adjust));
        self
    }

    /// Starts every teammate with this engine.
    pub fn with_engine(mut self, engine: EngineKind) -> InProcessExecutor {
        self.engine = engine;
        self
    }

    fn handles(&self) -> std::sync::MutexGuard<'_, HashMap<String, TeammateHandle>> {
        match self.handles.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The handle of a running (or finished, not yet forgotten) teammate.
    pub fn handle(&self, name: &str) -> Option<TeammateHandle> {
        self.handles().get(name).cloned()
    }

    /// Names of the teammates it started that still run.
    pub fn running(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .handles()
            .iter()
            .filter(|(_, h)| h.is_running())
            .map(|(n, _)| n.clone())
            .collect();
        names.sort();
        names
    }

    async fn spawn_inner(&self, request: SpawnRequest) -> Result<Spawned, ExecutorError> {
        if self.handle(&request.name).is_some_and(|h| h.is_running()) {
            return Err(ExecutorError::AlreadyRunning(request.name));
        }
        let (home, team, name) = (self.home.clone(), self.team.clone(), request.name.clone());
        // The first message is written already read and handed to the teammate: it is taken
        // the moment it is written (one process), and its read mark would be a second locked
        // rewrite of the inbox per spawn.
        let first: Vec<InboxEntry> = request
            .prompt
            .iter()
            .map(|p| {
                let mut entry = InboxEntry::new(LEAD_NAME, p.clone());
                entry.read = Some(true);
                entry
            })
            .collect();
        let written = first.clone();
        blocking(move || -> Result<(), StoreError> {
            let kind = BackendKind::InProcess.as_str();
            store::set_pane(&home, &team, &name, IN_PROCESS, Some(kind))?;
            store::inbox::replace(&home, &team, &name, &written)
        })
        .await
        .map_err(|e| ExecutorError::Failed(e.to_string()))?;

        let mut config = TeammateConfig::new(&self.home, &self.team, &request.name, &request.cwd);
        config.color = request.color.clone();
        config.mode = request.mode;
        config.plan_mode_required = request.plan_mode_required;
        config.handed = first;
        if let Some(adjust) = &self.template {
            adjust(&mut config);
        }
        // An `llm` teammate uses the model the lead asked for (a `shell` one has none).
        let mut engine = self.engine.clone();
        engine.set_model(request.model.as_deref());
        let handle = spawn_in_process(
            config,
            engine.engine(),
            self.asker.clone(),
            self.events.clone(),
        );
        self.handles().insert(request.name.clone(), handle);
        Ok(Spawned {
            pane_id: IN_PROCESS.to_string(),
            kind: BackendKind::InProcess,
        })
    }
}

/// Who a file change should wake.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WakeTarget {
    /// The owner of the inbox that changed.
    One(String),
    /// Everyone (the task list changed).
    All,
}

/// Who a change under the home concerns: an inbox's owner, or everyone for a task file.
pub fn wake_target(home: &Home, team: &str, event: &ChangeEvent) -> Option<WakeTarget> {
    if event.kind.is_lock() || event.is_dir {
        return None;
    }
    let name = event.file_name()?;
    let parent = event.path.parent()?;
    if home.inboxes_dir(team).ok().as_deref() == Some(parent) {
        return name
            .strip_suffix(".json")
            .map(|n| WakeTarget::One(n.to_string()));
    }
    if home.tasks_dir(team).ok().as_deref() == Some(parent) && name.ends_with(".json") {
        return Some(WakeTarget::All);
    }
    None
}

impl TeammateExecutor for InProcessExecutor {
    fn kind(&self) -> BackendKind {
        BackendKind::InProcess
    }

    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>> {
        self.spawn_inner(request).boxed()
    }

    fn wake(&self, name: &str) {
        if let Some(h) = self.handle(name) {
            h.wake();
        }
    }

    /// A change of `inboxes/<name>.json` wakes `name`; a change in the task directory wakes
    /// every teammate. Lock directories and other files wake nobody.
    fn on_change(&self, event: &ChangeEvent) {
        match wake_target(&self.home, &self.team, event) {
            Some(WakeTarget::One(name)) => self.wake(&name),
            Some(WakeTarget::All) => {
                for handle in self.handles().values() {
                    handle.wake();
                }
            }
            None => {}
        }
    }

    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let handle = self.handles().remove(name);
        let name = name.to_string();
        async move {
            let handle = handle.ok_or(ExecutorError::NoSuchTeammate(name))?;
            handle.kill();
            handle.join().await;
            Ok(())
        }
        .boxed()
    }

    fn release(&self, name: &str) -> BoxFuture<'_, ()> {
        if let Some(handle) = self.handles().remove(name) {
            handle.kill();
        }
        async {}.boxed()
    }

    /// Stops only the current turn of `name` (Esc in its view).
    fn interrupt(&self, name: &str) -> bool {
        self.handle(name).is_some_and(|h| h.interrupt_turn())
    }

    fn focus(&self, _name: &str) -> BoxFuture<'_, Result<Focus, ExecutorError>> {
        async { Ok(Focus::InlineView) }.boxed()
    }

    /// A task that ended without being killed or released (its loop failed or panicked)
    /// crashed.
    fn liveness(&self) -> BoxFuture<'_, Vec<LivenessReport>> {
        let mut reports: Vec<LivenessReport> = self
            .handles()
            .iter()
            .map(|(name, h)| LivenessReport {
                name: name.clone(),
                liveness: if h.is_running() {
                    Liveness::Running
                } else {
                    Liveness::Crashed {
                        why: "its task ended".to_string(),
                    }
                },
                tail: Vec::new(),
            })
            .collect();
        reports.sort_by(|a, b| a.name.cmp(&b.name));
        async move { reports }.boxed()
    }

    fn usage(&self, name: &str) -> Option<ReportedUsage> {
        self.handle(name).and_then(|h| h.usage().reported())
    }

    fn quit(&self) -> BoxFuture<'_, ()> {
        let handles: Vec<TeammateHandle> = self.handles().drain().map(|(_, h)| h).collect();
        async move {
            for handle in &handles {
                handle.kill();
            }
            for handle in handles {
                handle.join().await;
            }
        }
        .boxed()
    }

    fn emergency_stop(&self) {
        for handle in self.handles().values() {
            handle.kill();
        }
    }
}

impl Drop for InProcessExecutor {
    /// The teammates die with the executor (their commands are killed).
    fn drop(&mut self) {
        for handle in self.handles().values() {
            handle.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::watch::ChangeKind;

    #[test]
    fn changes_wake_the_inbox_owner_or_everyone() {
        let home = Home::new("/h");
        let ev = |p: &str, kind| ChangeEvent::new(p, kind, false);
        assert_eq!(
            wake_target(
                &home,
                "t",
                &ev("/h/teams/t/inboxes/alpha.json", ChangeKind::Modified)
            ),
            Some(WakeTarget::One("alpha".into()))
        );
        assert_eq!(
            wake_target(&home, "t", &ev("/h/tasks/t/3.json", ChangeKind::Created)),
            Some(WakeTarget::All)
        );
        assert_eq!(
            wake_target(
                &home,
                "t",
                &ev("/h/teams/t/config.json", ChangeKind::Modified)
            ),
            None
        );
        assert_eq!(
            wake_target(
                &home,
                "t",
                &ev(
                    "/h/teams/t/inboxes/alpha.json.lock",
                    ChangeKind::LockAcquired
                )
            ),
            None
        );
        assert_eq!(
            wake_target(
                &home,
                "u",
                &ev("/h/teams/t/inboxes/alpha.json", ChangeKind::Modified)
            ),
            None
        );
    }
}
