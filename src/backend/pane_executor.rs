//! The [`TeammateExecutor`] for pane teammates: each teammate is a process (`teamlead teammate`
//! or a real `claude`) in a pane of a [`PaneBackend`] (one of `backend::terminals`). Spawning
//! follows PROTOCOL.md 6: create the pane (a placeholder), style it, record `tmuxPaneId`/`backendType`,
//! clear the inbox and write the prompt, then start the command with the backend's respawn. The
//! teammate watches its own inbox, so `wake` is a no-op; `kill` kills the pane; liveness reads
//! the panes' states in one call; adoption binds a pane a previous lead left running. Every
//! terminal call and every write of the team's files runs on the blocking pool, never on the
//! caller's task.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;

use super::detect::BackendChoice;
use super::executor::{
    AdoptRequest, Adopted, ExecutorError, Focus, Liveness, LivenessReport, SpawnRequest, Spawned,
    TeammateExecutor, exit_meaning,
};
use super::launch::{TeammateLaunch, TeammateProgram};
use super::{BackendError, BackendKind, PaneBackend, PaneState};
use crate::protocol::{Color, InboxEntry, LEAD_NAME};
use crate::store::{self, Home};

/// How many lines of a dead pane are kept for the lead.
pub const TAIL_LINES: usize = 5;
/// How long a teammate that approved its shutdown has to close its pane before it is killed.
const RELEASE_WAIT: Duration = Duration::from_secs(3);

/// One teammate's pane and the program it was started with (to read its exit status).
#[derive(Debug, Clone)]
struct PaneEntry {
    pane: String,
    program: String,
}

/// Runs pane teammates of one team.
pub struct PaneExecutor {
    home: Home,
    team: String,
    backend: Arc<dyn PaneBackend>,
    program: TeammateProgram,
    parent_session_id: Option<String>,
    /// The teamlead executable that runs `guard` in front of a `claude` teammate.
    guard_binary: String,
    panes: Mutex<HashMap<String, PaneEntry>>,
    /// Panes of teammates that left, until [`TeammateExecutor::release`] has closed them:
    /// `quit` closes them too, so a release still waiting when the lead quits leaves no pane
    /// (tmux 3.3a keeps the pane of a program that exited, dead, under `remain-on-exit`).
    releasing: Mutex<Vec<PaneEntry>>,
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
            guard_binary: this_binary(),
            panes: Mutex::new(HashMap::new()),
            releasing: Mutex::new(Vec::new()),
        }
    }

    /// The executor for a pane backend choice (`None` for in-process), its backend opened by
    /// its terminal (`backend::terminals`). Teammates run `claude` when
    /// `claude_by_default`, else `teamlead_binary` (this executable when `None`) `teammate`
    /// with `engine`.
    pub fn for_choice(
        choice: &BackendChoice,
        home: &Home,
        team: &str,
        lead_session_id: &str,
        claude_by_default: bool,
        engine: &str,
        teamlead_binary: Option<&std::path::Path>,
    ) -> Option<PaneExecutor> {
        let teamlead = match teamlead_binary {
            Some(path) => path.to_string_lossy().into_owned(),
            None => this_binary(),
        };
        let program = if claude_by_default {
            TeammateProgram::Claude {
                binary: super::launch::claude_binary(&|k| std::env::var(k).ok()),
            }
        } else {
            TeammateProgram::Teamlead {
                binary: teamlead.clone(),
                engine: engine.to_string(),
            }
        };
        let backend = super::terminals::open(choice)?;
        let parent = Some(lead_session_id.to_string());
        let mut executor = PaneExecutor::new(home, team, backend, program, parent);
        executor.guard_binary = teamlead;
        Some(executor)
    }

    fn panes(&self) -> std::sync::MutexGuard<'_, HashMap<String, PaneEntry>> {
        self.panes.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn releasing(&self) -> std::sync::MutexGuard<'_, Vec<PaneEntry>> {
        self.releasing.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every pane this executor still answers for (running, or being released), taken.
    fn take_all(&self) -> Vec<PaneEntry> {
        let mut entries: Vec<PaneEntry> = self.panes().drain().map(|(_, e)| e).collect();
        entries.append(&mut self.releasing());
        entries
    }

    /// The pane of a teammate this session runs.
    pub fn pane_of(&self, name: &str) -> Result<String, ExecutorError> {
        self.panes()
            .get(name)
            .map(|e| e.pane.clone())
            .ok_or_else(|| ExecutorError::NoSuchTeammate(name.to_string()))
    }

    /// The backend.
    pub fn backend(&self) -> &Arc<dyn PaneBackend> {
        &self.backend
    }

    fn program_for(&self, request: &SpawnRequest) -> TeammateProgram {
        if request.claude {
            TeammateProgram::Claude {
                binary: super::launch::claude_binary(&|k| std::env::var(k).ok()),
            }
        } else {
            self.program.clone()
        }
    }

    /// The command line for one teammate, with the home passed on so `teamlead teammate` finds
    /// the same files as its lead.
    pub fn command_line(&self, request: &SpawnRequest) -> String {
        let program = self.program_for(request);
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
            session_id: request.session_id.clone(),
            guard: Some(super::launch::GuardLaunch {
                binary: self.guard_binary.clone(),
                home: self.home.root.to_string_lossy().into_owned(),
            }),
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
        // The prompt goes to the teammate's inbox while its pane is made (neither needs the
        // other; both come before the start, PROTOCOL.md 6), on the blocking pool: it takes a
        // lock, which a dead writer may hold for seconds.
        let (home, team, prompt_of) = (self.home.clone(), self.team.clone(), name.clone());
        let prompt: Vec<InboxEntry> = request
            .prompt
            .iter()
            .map(|p| InboxEntry::new(LEAD_NAME, p.clone()))
            .collect();
        let prompted = tokio::task::spawn_blocking(move || {
            store::inbox::replace(&home, &team, &prompt_of, &prompt)
        });
        let pane = self
            .blocking(move |b| b.create_styled_pane(&name, color))
            .await;
        // Awaited whatever became of the pane: a spawn that failed leaves no write behind it.
        let prompted = prompted
            .await
            .map_err(|e| ExecutorError::Failed(format!("writing the prompt failed: {e}")))
            .and_then(|r| r.map_err(ExecutorError::from));
        let pane = pane?;
        let kind = self.backend.kind();
        let (home, team, name) = (self.home.clone(), self.team.clone(), request.name.clone());
        let recorded = pane.clone();
        let line = self.command_line(&request);
        let started = async {
            prompted?;
            tokio::task::spawn_blocking(move || {
                store::team::set_pane(&home, &team, &name, &recorded, Some(kind.as_str()))
            })
            .await
            .map_err(|e| ExecutorError::Failed(format!("recording the pane failed: {e}")))??;
            let target = pane.clone();
            self.blocking(move |b| b.run_command(&target, &line)).await
        };
        if let Err(e) = started.await {
            // Nothing of the teammate runs in the pane: it goes with the spawn that failed.
            let made = pane.clone();
            let _ = self.blocking(move |b| b.kill(&made)).await;
            return Err(e);
        }
        let program = program_name(&self.program_for(&request));
        self.panes().insert(
            request.name.clone(),
            PaneEntry {
                pane: pane.clone(),
                program,
            },
        );
        Ok(Spawned {
            pane_id: pane,
            kind,
        })
    }

    /// Kills the pane of `entry` when it is still there.
    fn kill_entry(backend: &Arc<dyn PaneBackend>, entry: &PaneEntry) -> Result<(), BackendError> {
        if backend.pane_alive(&entry.pane) {
            backend.kill(&entry.pane)
        } else {
            Ok(())
        }
    }

    /// What a pane's state means for its teammate.
    fn liveness_of(state: PaneState, program: &str) -> Liveness {
        match state {
            PaneState::Running => Liveness::Running,
            PaneState::Gone => Liveness::Closed,
            PaneState::Dead {
                signal: Some(sig), ..
            } => Liveness::Crashed {
                why: format!("killed by signal {sig}"),
            },
            // The shell that runs the command line reports a signal as 128 + its number.
            PaneState::Dead {
                status: Some(code), ..
            } if (129..=192).contains(&code) => Liveness::Crashed {
                why: format!("killed by signal {}", code - 128),
            },
            PaneState::Dead {
                status: Some(code), ..
            } => Liveness::Exited {
                code: Some(code),
                why: exit_meaning(code, program),
            },
            // tmux 3.3 may keep a pane dead without the status of a program that exited 0.
            PaneState::Dead { .. } => Liveness::Exited {
                code: None,
                why: None,
            },
        }
    }
}

/// This binary's path, for builtin pane teammates. A binary replaced while the lead runs (a
/// rebuild) reads as `<path> (deleted)` on Linux: the path itself is what panes should run.
/// Does `pane` run the teammate `agent` (`name@team`)? Known by process: the pane's process
/// tree holds one naming `--agent-id <agent>` (the guard in front of a `claude`, the `claude`
/// or the `teamlead teammate` itself). A terminal that does not tell a pane's pid falls back
/// to the pane's title, or to such a process anywhere of this home (a `claude` retitles its
/// pane). A process scan that did not finish proves nothing: the pane is taken as it is.
fn pane_runs(
    b: &Arc<dyn PaneBackend>,
    pane: &str,
    name: &str,
    agent: &str,
    root: &std::path::Path,
) -> Result<(), String> {
    use super::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
    use super::reap;
    let table = ProcTable::scan(SCAN_DEADLINE);
    match b.pane_pid(pane) {
        Some(pid) => {
            if reap::tree_names(&table, pid, agent) || !table.complete {
                return Ok(());
            }
            let what = table
                .get(pid)
                .map(|p| p.describe())
                .or_else(|| b.title(pane).map(|t| format!("`{t}`")))
                .unwrap_or_else(|| format!("pid {pid}"));
            Err(format!("pane {pane} now belongs to {what}"))
        }
        None => {
            let title = b.title(pane);
            if title.as_deref().is_none_or(|t| t == name)
                || !reap::agent_processes(&table, root, agent, true).is_empty()
                || !table.complete
            {
                return Ok(());
            }
            Err(format!(
                "pane {pane} now belongs to `{}`",
                title.unwrap_or_default()
            ))
        }
    }
}

fn this_binary() -> String {
    match std::env::current_exe() {
        Ok(path) => {
            let path = path.to_string_lossy();
            path.strip_suffix(" (deleted)").unwrap_or(&path).to_string()
        }
        Err(_) => "teamlead".to_string(),
    }
}

/// The program's name as a shell reports it (`claude`, `teamlead`).
fn program_name(program: &TeammateProgram) -> String {
    let binary = match program {
        TeammateProgram::Claude { binary } | TeammateProgram::Teamlead { binary, .. } => binary,
    };
    std::path::Path::new(binary)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| binary.clone())
}

impl TeammateExecutor for PaneExecutor {
    fn kind(&self) -> BackendKind {
        self.backend.kind()
    }

    fn check_program(
        &self,
        claude: bool,
    ) -> BoxFuture<'_, Result<(), super::program::ProgramError>> {
        let (program, from_env) =
            super::program::for_spawn(claude, &self.program, &|k| std::env::var(k).ok());
        let path = std::env::var("PATH").ok();
        async move {
            tokio::task::spawn_blocking(move || {
                super::program::resolve(&program, path.as_deref(), from_env)
            })
            .await
            .map_err(|e| super::program::ProgramError::Unchecked(e.to_string()))?
            .map(|_| ())
        }
        .boxed()
    }

    fn spawn(&self, request: SpawnRequest) -> BoxFuture<'_, Result<Spawned, ExecutorError>> {
        self.spawn_inner(request).boxed()
    }

    fn wake(&self, _name: &str) {
        // Pane teammates watch their own inbox.
    }

    fn kill(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let name = name.to_string();
        let entry = self.panes().remove(&name);
        let agent = format!("{name}@{}", self.team);
        let root = self.home.root.clone();
        async move {
            // The pane, then whatever still runs as this teammate (known by process: a pane a
            // previous lead lost, a program that left its pane).
            let found = self
                .blocking(move |b| {
                    if let Some(entry) = &entry {
                        PaneExecutor::kill_entry(&b, entry)?;
                    }
                    use super::lead_probe::procs::{ProcTable, SCAN_DEADLINE};
                    let table = ProcTable::scan(SCAN_DEADLINE);
                    let pids: Vec<u32> = super::reap::agent_processes(&table, &root, &agent, false)
                        .iter()
                        .map(|p| p.pid)
                        .collect();
                    let stopped = super::reap::stop_trees(&table, &pids, super::reap::TERM_WAIT);
                    Ok(entry.is_some() || stopped > 0)
                })
                .await?;
            if found {
                Ok(())
            } else {
                Err(ExecutorError::NoSuchTeammate(name))
            }
        }
        .boxed()
    }

    fn release(&self, name: &str) -> BoxFuture<'_, ()> {
        let entry = self.panes().remove(name);
        if let Some(entry) = &entry {
            self.releasing().push(entry.clone());
        }
        async move {
            let Some(entry) = entry else { return };
            let deadline = tokio::time::Instant::now() + RELEASE_WAIT;
            loop {
                let pane = vec![entry.pane.clone()];
                let state = self
                    .blocking(move |b| Ok(b.pane_states(&pane)))
                    .await
                    .ok()
                    .and_then(|s| s.first().copied());
                if state != Some(PaneState::Running) || tokio::time::Instant::now() >= deadline {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let pane = entry.pane.clone();
            let _ = self
                .blocking(move |b| PaneExecutor::kill_entry(&b, &entry))
                .await;
            self.releasing().retain(|e| e.pane != pane);
        }
        .boxed()
    }

    fn hide(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let pane = self.pane_of(name);
        async move {
            let pane = pane?;
            self.blocking(move |b| b.hide(&pane)).await
        }
        .boxed()
    }

    fn show(&self, name: &str) -> BoxFuture<'_, Result<(), ExecutorError>> {
        let pane = self.pane_of(name);
        async move {
            let pane = pane?;
            self.blocking(move |b| b.show(&pane)).await
        }
        .boxed()
    }

    fn focus(&self, name: &str) -> BoxFuture<'_, Result<Focus, ExecutorError>> {
        let pane = self.pane_of(name);
        async move {
            let pane = pane?;
            self.blocking(move |b| {
                b.focus(&pane)?;
                Ok(match b.attach() {
                    Some((argv, hint)) => Focus::Attach {
                        argv,
                        hint,
                        detach: b.detach_keys().to_string(),
                    },
                    None => Focus::Focused,
                })
            })
            .await
        }
        .boxed()
    }

    fn liveness(&self) -> BoxFuture<'_, Vec<LivenessReport>> {
        let mut entries: Vec<(String, PaneEntry)> = self
            .panes()
            .iter()
            .map(|(n, e)| (n.clone(), e.clone()))
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        async move {
            if entries.is_empty() {
                return Vec::new();
            }
            self.blocking(move |b| {
                let panes: Vec<String> = entries.iter().map(|(_, e)| e.pane.clone()).collect();
                let states = b.pane_states(&panes);
                Ok(entries
                    .into_iter()
                    .zip(states)
                    .map(|((name, entry), state)| {
                        let liveness = PaneExecutor::liveness_of(state, &entry.program);
                        let tail = match state {
                            PaneState::Dead { .. } => b.tail(&entry.pane, TAIL_LINES),
                            _ => Vec::new(),
                        };
                        LivenessReport {
                            name,
                            liveness,
                            tail,
                        }
                    })
                    .collect())
            })
            .await
            .unwrap_or_default()
        }
        .boxed()
    }

    fn adopt(&self, request: AdoptRequest) -> BoxFuture<'_, Result<Adopted, ExecutorError>> {
        async move {
            let (name, pane) = (request.name.clone(), request.pane_id.clone());
            let agent = format!("{}@{}", request.name, self.team);
            let root = self.home.root.clone();
            let checked = self
                .blocking(move |b| {
                    let state = b.pane_states(std::slice::from_ref(&pane)).first().copied();
                    if state != Some(PaneState::Running) {
                        return Ok(Err(format!("its pane {pane} is not running")));
                    }
                    if let Err(why) = pane_runs(&b, &pane, &name, &agent, &root) {
                        return Ok(Err(why));
                    }
                    b.adopt_pane(&pane);
                    Ok(Ok(()))
                })
                .await?;
            checked.map_err(ExecutorError::Failed)?;
            self.panes().insert(
                request.name.clone(),
                PaneEntry {
                    pane: request.pane_id.clone(),
                    program: program_name(&self.program),
                },
            );
            Ok(Adopted {
                name: request.name,
                pane_id: request.pane_id,
            })
        }
        .boxed()
    }

    fn attach_hint(&self) -> Option<String> {
        self.backend.attach().map(|(_, hint)| hint)
    }

    fn pane_reader(&self, name: &str) -> Option<super::executor::PaneReader> {
        let pane = self.pane_of(name).ok()?;
        let backend = self.backend.clone();
        Some(std::sync::Arc::new(move |lines| backend.tail(&pane, lines)))
    }

    fn key_typer(&self, name: &str) -> Option<super::executor::KeyTyper> {
        let pane = self.pane_of(name).ok()?;
        let backend = self.backend.clone();
        Some(std::sync::Arc::new(move |key| backend.send_key(&pane, key)))
    }

    fn quit(&self) -> BoxFuture<'_, ()> {
        let entries = self.take_all();
        async move {
            let _ = self
                .blocking(move |b| {
                    for entry in &entries {
                        let _ = PaneExecutor::kill_entry(&b, entry);
                    }
                    b.shutdown();
                    Ok(())
                })
                .await;
        }
        .boxed()
    }

    fn detach(&self) {
        self.panes().clear();
        self.releasing().clear();
    }

    fn emergency_stop(&self) {
        let entries = self.take_all();
        for entry in &entries {
            let _ = self.backend.kill(&entry.pane);
        }
        self.backend.shutdown();
    }

    fn session_record(&self) -> Option<String> {
        self.backend.session_record()
    }

    fn session_label(&self, record: &str) -> String {
        self.backend.session_label(record)
    }

    fn take_over(&self, record: &str) -> BoxFuture<'_, Result<bool, ExecutorError>> {
        let record = record.to_string();
        async move { self.blocking(move |b| b.take_over(&record)).await }.boxed()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::protocol::{Member, TeamFile};

    /// The member's pane and its prompt are written on the blocking pool: a lock on the team
    /// file held elsewhere delays the spawn, never the runtime's one thread.
    #[tokio::test(flavor = "current_thread")]
    async fn a_held_team_lock_holds_the_spawn_not_the_runtime() {
        let (dir, home) = team_with_alpha();
        let executor = executor_on(&home, &Arc::new(Recording::default()));

        let held = store::lock::acquire_default(&home.config_path("t").unwrap()).unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(600));
            drop(held);
        });
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticking = ticks.clone();
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                ticking.fetch_add(1, Ordering::Relaxed);
            }
        });
        let spawned = executor
            .spawn(SpawnRequest::new("alpha", dir.path()))
            .await
            .unwrap();
        let during = ticks.load(Ordering::Relaxed);
        ticker.abort();
        release.join().unwrap();
        assert_eq!(spawned.pane_id, "%1");
        let member = store::read_team(&home, "t").unwrap();
        assert_eq!(member.member("alpha").unwrap().tmux_pane_id, "%1");
        assert!(
            during >= 20,
            "the runtime stood still while the lock was held ({during} ticks of 10 ms in 600 ms)"
        );
    }

    /// A terminal whose panes exist only in memory and run nothing; it remembers what it was
    /// asked, and (given a home) what the team's files said when the command started.
    #[derive(Default)]
    struct Recording {
        home: Option<Home>,
        killed: Mutex<Vec<String>>,
        /// At each start: the pane recorded for `alpha`, and its inbox's texts.
        started: Mutex<Vec<(String, Vec<String>)>>,
    }

    impl PaneBackend for Recording {
        fn kind(&self) -> BackendKind {
            BackendKind::Tmux
        }
        fn create_pane(&self) -> Result<String, BackendError> {
            Ok("%1".to_string())
        }
        fn run_command(&self, _pane: &str, _command: &str) -> Result<(), BackendError> {
            let Some(home) = self.home.as_ref() else {
                return Ok(());
            };
            let team = store::read_team(home, "t").unwrap();
            let pane = team.member("alpha").unwrap().tmux_pane_id.clone();
            let texts = store::inbox::read(home, "t", "alpha")
                .map(|r| r.entries.into_iter().map(|e| e.text).collect())
                .unwrap_or_default();
            self.started.lock().unwrap().push((pane, texts));
            Ok(())
        }
        fn style(&self, _: &str, _: &str, _: Option<Color>) -> Result<(), BackendError> {
            Ok(())
        }
        fn kill(&self, pane: &str) -> Result<(), BackendError> {
            self.killed.lock().unwrap().push(pane.to_string());
            Ok(())
        }
        fn hide(&self, _pane: &str) -> Result<(), BackendError> {
            Ok(())
        }
        fn show(&self, _pane: &str) -> Result<(), BackendError> {
            Ok(())
        }
        fn focus(&self, _pane: &str) -> Result<(), BackendError> {
            Ok(())
        }
        fn pane_alive(&self, _pane: &str) -> bool {
            true
        }
    }

    fn team_with_alpha() -> (tempfile::TempDir, Home) {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path().join("home"));
        let cwd = dir.path().to_string_lossy().into_owned();
        store::team::create_team(&home, &TeamFile::new("t", None, &cwd)).unwrap();
        store::team::add_member(&home, "t", Member::new("alpha", "t", &cwd)).unwrap();
        (dir, home)
    }

    fn executor_on(home: &Home, backend: &Arc<Recording>) -> PaneExecutor {
        let program = TeammateProgram::Teamlead {
            binary: "teamlead".into(),
            engine: "shell".into(),
        };
        PaneExecutor::new(home, "t", backend.clone(), program, None)
    }

    /// `alpha` spawned with the prompt `say hello` on a recording terminal that reads the
    /// team's files at the start.
    async fn spawn_alpha(
        dir: &tempfile::TempDir,
        home: &Home,
    ) -> (Arc<Recording>, PaneExecutor, Result<Spawned, ExecutorError>) {
        let backend = Arc::new(Recording {
            home: Some(home.clone()),
            ..Recording::default()
        });
        let executor = executor_on(home, &backend);
        let mut request = SpawnRequest::new("alpha", dir.path());
        request.prompt = Some("say hello".into());
        let spawned = executor.spawn(request).await;
        (backend, executor, spawned)
    }

    /// The prompt is written while the pane is made, and the command still starts only once
    /// the pane is recorded and the prompt is in the inbox (PROTOCOL.md 6).
    #[tokio::test]
    async fn the_command_starts_after_the_pane_is_recorded_and_the_prompt_written() {
        let (dir, home) = team_with_alpha();
        let (backend, _executor, spawned) = spawn_alpha(&dir, &home).await;
        spawned.unwrap();
        let started = backend.started.lock().unwrap().clone();
        assert_eq!(started, [("%1".to_string(), vec!["say hello".to_string()])]);
        assert!(backend.killed.lock().unwrap().is_empty());
    }

    /// A spawn that cannot write the prompt starts nothing and leaves no pane behind (the
    /// inbox is a directory here, so writing it fails).
    #[tokio::test]
    async fn a_spawn_that_cannot_write_its_prompt_closes_the_pane_it_made() {
        let (dir, home) = team_with_alpha();
        std::fs::create_dir_all(home.inbox_path("t", "alpha").unwrap()).unwrap();
        let (backend, executor, spawned) = spawn_alpha(&dir, &home).await;
        let error = spawned.expect_err("the prompt");
        assert!(backend.started.lock().unwrap().is_empty(), "{error}");
        assert_eq!(*backend.killed.lock().unwrap(), ["%1"]);
        assert!(executor.pane_of("alpha").is_err());
    }
}
