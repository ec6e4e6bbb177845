//! The [`TeammateExecutor`] for pane teammates: each teammate is a process (`teamlead teammate`
//! or a real `claude`) in a pane of a [`PaneBackend`] (tmux or iTerm2). Spawning follows
//! PROTOCOL.md 6: create the pane (a placeholder), style it, record `tmuxPaneId`/`backendType`,
//! clear the inbox and write the prompt, then start the command with the backend's respawn. The
//! teammate watches its own inbox, so `wake` is a no-op; `kill` kills the pane.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;

use super::executor::{
    ExecutorError, SpawnRequest, Spawned, TeammateExecutor, shutdown_request_id,
};
use super::launch::{TeammateLaunch, TeammateProgram};
use super::{BackendError, PaneBackend};
use crate::protocol::frames::{Frame, ShutdownRequest};
use crate::protocol::time::now_iso;
use crate::protocol::{Color, InboxEntry, LEAD_NAME};
use crate::store::{self, Home};

/// Runs pane teammates of one team.
pub struct PaneExecutor {
    home: Home,
    team: String,
    backend: Arc<dyn PaneBackend>,
    program: TeammateProgram,
    parent_session_id: Option<String>,
    panes: Mutex<HashMap<String, String>>,
}

impl PaneExecutor {
    pub fn new(
        home: &Home,
        team: &str,
        backend: Arc<dyn PaneBackend>,
        program: TeammateProgram,
        parent_session_id: Option<String>,
    ) -> PaneExecutor {
        PaneExecutor {
            home: home.clone(),
            team: team.to_string(),
            backend,
            program,
            parent_session_id,
            panes: Mutex::new(HashMap::new()),
        }
    }

    fn panes(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.panes.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The pane of a teammate started here.
    pub fn pane_of(&self, name: &str) -> Result<String, ExecutorError> {
        self.panes()
            .get(name)
            .cloned()
            .ok_or_else(|| ExecutorError::NoSuchTeammate(name.to_string()))
    }

    /// The backend (for hide/show/focus and the attach hint).
    pub fn backend(&self) -> &Arc<dyn PaneBackend> {
        &self.backend
    }

    /// The command line for one teammate, with the home passed on so `teamlead teammate` finds
    /// the same files as its lead.
    pub fn command_line(&self, request: &SpawnRequest) -> String {
        let program = if request.claude {
            TeammateProgram::Claude {
                binary: super::launch::claude_binary(&|k| std::env::var(k).ok()),
            }
        } else {
            self.program.clone()
        };
        let is_teamlead = matches!(program, TeammateProgram::Teamlead { .. });
        let launch = TeammateLaunch {
            program,
            cwd: request.cwd.to_string_lossy().into_owned(),
            name: request.name.clone(),
            team: self.team.clone(),
            color: request.color.clone(),
            parent_session_id: self.parent_session_id.clone(),
            plan_mode_required: request.plan_mode_required,
            agent_type: Some(request.agent_type.clone()),
            model: request.model.clone(),
            lead_mode: request.mode,
        };
        let root = self.home.root.to_string_lossy().into_owned();
        launch.command_line(&|key| {
            if key == "TEAMLEAD_HOME" && is_teamlead {
                Some(root.clone())
            } else {
                std::env::var(key).ok().filter(|v| !v.is_empty())
            }
        })
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(Arc<dyn PaneBackend>) -> Result<T, BackendError> + Send + 'static,
    ) -> Result<T, ExecutorError> {
        let backend = self.backend.clone();
        tokio::task::spawn_blocking(move || f(backend))
            .await
            .map_err(|e| ExecutorError::Failed(format!("pane task failed: {e}")))?
            .map_err(ExecutorError::from)
    }

    async fn spawn_inner(&self, request: SpawnRequest) -> Result<Spawned, ExecutorError> {
        if self.panes().contains_key(&request.name) {
            return Err(ExecutorError::AlreadyRunning(request.name));
        }
        let name = request.name.clone();
        let color = request.color.as_deref().and_then(Color::parse);
        let pane = self
            .blocking(move |b| {
                let pane = b.create_pane()?;
                b.style(&pane, &name, color)?;
                Ok(pane)
            })
            .await?;
        let label = self.backend.label();
        store::team::set_pane(&self.home, &self.team, &request.name, &pane, Some(label))?;
        let prompt = request
            .prompt
            .iter()
            .map(|p| InboxEntry::new(LEAD_NAME, p.clone()))
            .collect::<Vec<_>>();
        store::inbox::replace(&self.home, &self.team, &request.name, &prompt)?;
        let line = self.command_line(&request);
        let target = pane.clone();
        self.blocking(move |b| b.run_command(&target, &line))
            .await?;
        self.panes().insert(request.name.clone(), pane.clone());
        Ok(Spawned {
            pane_id: pane,
            backend_type: label.to_string(),
        })
    }

    /// Moves a teammate's pane out of sight (tmux: into the hidden session).
    pub async fn hide(&self, name: &str) -> Result<(), ExecutorError> {
        let pane = self.pane_of(name)?;
        self.blocking(move |b| b.hide(&pane)).await
    }

    /// Brings a hidden pane back.
    pub async fn show(&self, name: &str) -> Result<(), ExecutorError> {
        let pane = self.pane_of(name)?;
        self.blocking(move |b| b.show(&pane)).await
    }

    /// Focuses a teammate's pane.
    pub async fn focus(&self, name: &str) -> Result<(), ExecutorError> {
        let pane = self.pane_of(name)?;
        self.blocking(move |b| b.focus(&pane)).await
    }

    /// The teammates whose panes this executor still holds (panes being released after a
    /// shutdown included).
    pub fn names(&self) -> Vec<String> {
        self.panes().keys().cloned().collect()
    }

    /// Forgets a teammate whose pane closed by itself (after its shutdown).
    pub fn forget(&self, name: &str) {
        self.panes().remove(name);
    }
}

impl TeammateExecutor for PaneExecutor {
    fn backend_type(&self) -> &'static str {
        self.backend.label()
    }

    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>> {
        self.spawn_inner(request).boxed()
    }

    fn send(&self, name: &str, entry: InboxEntry) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let name = name.to_string();
        async move {
            store::inbox::append(&self.home, &self.team, &name, &entry)?;
            Ok(())
        }
        .boxed()
    }

    fn wake(&self, _name: &str) {
        // Pane teammates watch their own inbox.
    }

    fn terminate(
        &self,
        name: &str,
        reason: Option<&str>,
    ) -> BoxFuture<'_, Result<String, ExecutorError>> {
        let name = name.to_string();
        let reason = reason.map(str::to_string);
        async move {
            let request_id = shutdown_request_id(&name);
            let frame = Frame::ShutdownRequest(ShutdownRequest {
                request_id: request_id.clone(),
                from: LEAD_NAME.to_string(),
                reason,
                timestamp: now_iso(),
            });
            store::inbox::append(
                &self.home,
                &self.team,
                &name,
                &InboxEntry::frame(LEAD_NAME, &frame),
            )?;
            Ok(request_id)
        }
        .boxed()
    }

    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let name = name.to_string();
        async move {
            let pane = self.pane_of(&name)?;
            self.panes().remove(&name);
            self.blocking(move |b| {
                if b.pane_alive(&pane) {
                    b.kill(&pane)
                } else {
                    Ok(())
                }
            })
            .await
        }
        .boxed()
    }

    fn is_active(&self, name: &str) -> bool {
        match self.panes().get(name) {
            Some(pane) => self.backend.pane_running(pane),
            None => false,
        }
    }
}
