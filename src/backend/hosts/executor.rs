//! The session's executor with teammates on other hosts: a [`TeammateExecutor`] in front of
//! the session's own (panes or in-process) that sends what concerns a remote teammate to
//! [`RemoteTeammates`] (on the blocking pool: every call there is ssh) and everything else to
//! the session's executor. One more terminal behind the same seam: the lead's code paths for
//! spawn, kill, release, liveness, keys and pane reading (`/interrupt`, `/steer`, the mode
//! keys), the turn stop of an own teammate, jump, adoption after a restart and quit stay one
//! (the remote side of each in `remote`, `panes` and `adopt`).

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;

use super::panes::DETACH_KEYS;
use super::remote::RemoteTeammates;
use crate::backend::executor::{
    AdoptRequest, Adopted, ExecutorError, Focus, KeyTyper, LivenessReport, PaneReader,
    SpawnRequest, Spawned, TeammateExecutor, TurnStopper,
};
use crate::protocol::BackendKind;
use crate::protocol::frames::ReportedUsage;
use crate::watch::ChangeEvent;

/// How long an emergency stop waits for the hosts' teammates to be stopped.
const EMERGENCY_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// The session's executor, with remote teammates beside it.
pub struct HostsExecutor {
    pub local: Arc<dyn TeammateExecutor>,
    pub remote: Arc<RemoteTeammates>,
}

impl HostsExecutor {
    fn is_remote(&self, name: &str) -> bool {
        self.remote.host_of(name).is_some()
    }

    /// Runs `f` on the remote teammates, on the blocking pool.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&RemoteTeammates) -> Result<T, ExecutorError> + Send + 'static,
    ) -> Result<T, ExecutorError> {
        let remote = self.remote.clone();
        tokio::task::spawn_blocking(move || f(&remote))
            .await
            .map_err(|e| ExecutorError::Failed(format!("the host call failed: {e}")))?
    }
}

impl TeammateExecutor for HostsExecutor {
    fn kind(&self) -> BackendKind {
        self.local.kind()
    }

    fn check_program(
        &self,
        claude: bool,
    ) -> BoxFuture<'_, Result<(), crate::backend::program::ProgramError>> {
        self.local.check_program(claude)
    }

    fn key_typer(&self, name: &str) -> Option<KeyTyper> {
        match self.remote.pane(name) {
            Some(pane) => Some(Arc::new(move |key| pane.send_key(key))),
            None => self.local.key_typer(name),
        }
    }

    fn pane_reader(&self, name: &str) -> Option<PaneReader> {
        match self.remote.pane(name) {
            Some(pane) => Some(Arc::new(move |lines| pane.tail(lines))),
            None => self.local.pane_reader(name),
        }
    }

    fn turn_stopper(&self, name: &str) -> Option<TurnStopper> {
        match self.remote.pane(name) {
            Some(pane) => Some(Arc::new(move || pane.stop_turn())),
            None => self.local.turn_stopper(name),
        }
    }

    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>> {
        match request.host.clone() {
            None => self.local.spawn(request),
            Some(host) => self.blocking(move |r| r.spawn(&host, &request)).boxed(),
        }
    }

    fn wake(&self, name: &str) {
        if !self.is_remote(name) {
            self.local.wake(name);
        }
    }

    fn hand_off(&self, name: &str, entry: &crate::protocol::InboxEntry) {
        self.remote.hand_off(name, entry);
    }

    fn set_lead_entries(&self, sink: crate::backend::executor::LeadEntrySink) {
        self.remote.set_lead_entries(sink);
    }

    fn on_change(&self, event: &ChangeEvent) {
        self.local.on_change(event);
    }

    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        if !self.is_remote(name) {
            return self.local.kill(name);
        }
        let name = name.to_string();
        self.blocking(move |r| r.kill(&name)).boxed()
    }

    fn release(&self, name: &str) -> BoxFuture<'_, ()> {
        if !self.is_remote(name) {
            return self.local.release(name);
        }
        let name = name.to_string();
        async move {
            // It approved its shutdown and ends by itself; its session goes either way.
            if let Err(e) = self.blocking(move |r| r.kill(&name)).await {
                tracing::warn!("releasing a remote teammate: {e}");
            }
        }
        .boxed()
    }

    fn interrupt(&self, name: &str) -> bool {
        !self.is_remote(name) && self.local.interrupt(name)
    }

    fn hide(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        if self.is_remote(name) {
            // Its pane is a session of its own on its host, never in the lead's terminal:
            // nothing to move out of sight (the choice is still recorded).
            return async { Ok(()) }.boxed();
        }
        self.local.hide(name)
    }

    fn show(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        if self.is_remote(name) {
            return async { Ok(()) }.boxed();
        }
        self.local.show(name)
    }

    fn focus(&self, name: &str) -> BoxFuture<'_, Result<Focus, ExecutorError>> {
        let Some(pane) = self.remote.pane(name) else {
            return self.local.focus(name);
        };
        async move {
            let (argv, hint) = tokio::task::spawn_blocking(move || pane.attach())
                .await
                .map_err(|e| ExecutorError::Failed(format!("the host call failed: {e}")))?
                .map_err(ExecutorError::Failed)?;
            Ok(Focus::Attach {
                argv,
                hint,
                detach: DETACH_KEYS.to_string(),
            })
        }
        .boxed()
    }

    fn liveness(&self) -> BoxFuture<'_, Vec<LivenessReport>> {
        async move {
            let mut reports = self.local.liveness().await;
            let remote = self.remote.clone();
            if let Ok(more) = tokio::task::spawn_blocking(move || remote.liveness()).await {
                reports.extend(more);
            }
            reports
        }
        .boxed()
    }

    fn adopt(&self, request: AdoptRequest) -> BoxFuture<'_, Result<Adopted, ExecutorError>> {
        match request.host.clone() {
            None => self.local.adopt(request),
            Some(host) => self
                .blocking(move |r| r.adopt(&request.name, &host, &request.pane_id))
                .boxed(),
        }
    }

    fn usage(&self, name: &str) -> Option<ReportedUsage> {
        self.local.usage(name)
    }

    fn attach_hint(&self) -> Option<String> {
        self.local.attach_hint()
    }

    fn quit(&self) -> BoxFuture<'_, ()> {
        async move {
            let remote = self.remote.clone();
            let _ = tokio::task::spawn_blocking(move || remote.quit()).await;
            self.local.quit().await;
        }
        .boxed()
    }

    fn detach(&self) {
        self.remote.detach();
        self.local.detach();
    }

    fn emergency_stop(&self) {
        self.local.emergency_stop();
        // The hosts' teammates next, but a host that does not answer must not hold a lead
        // that is going down: at most a few seconds.
        let remote = self.remote.clone();
        let (done, wait) = std::sync::mpsc::channel();
        let started = std::thread::Builder::new()
            .name("hosts-stop".into())
            .spawn(move || {
                remote.quit();
                let _ = done.send(());
            });
        if started.is_ok() {
            let _ = wait.recv_timeout(EMERGENCY_WAIT);
        }
    }

    fn take_over(&self, record: &str) -> BoxFuture<'_, Result<bool, ExecutorError>> {
        self.local.take_over(record)
    }

    fn session_record(&self) -> Option<String> {
        self.local.session_record()
    }

    fn session_label(&self, record: &str) -> String {
        self.local.session_label(record)
    }
}
