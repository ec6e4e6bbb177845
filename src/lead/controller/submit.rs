//! Composer text: slash commands, `@name text`, text in a teammate's view, and plain text
//! (to the lead model when the session has one, else the user is told how to address
//! teammates). Also the task commands and starting a demo plan; spawning is in `spawn`.

use serde_json::{Map, Value};

use super::outcome::{Done, OpError, OpResult, Outcome, TaskStep, reported};
use super::spawn::SpawnFlags;
use super::state::Controller;
use super::store_worker::{Lane, worker_gone};
use crate::lead::commands::{Input, ShutdownTarget, SlashCommand, help_text, parse_input};
use crate::lead::contract::{LeadEvent, TeammateStatus, TranscriptItem, ViewTarget};
use crate::lead::view_builder::status_of;
use crate::protocol::PermissionMode;
use crate::protocol::{InboxEntry, LEAD_NAME, Task};
use crate::store::StoreError;
use crate::store::tasks::TaskList;

/// What a user is told when plain text has nowhere to go.
pub const NO_LEAD_MODEL: &str = "There is no lead model in this session (start teamlead with --lead-model for one): address teammates with `@name text`, `/msg @name text` or `/broadcast text` (/help lists every command).";

impl Controller {
    /// Text submitted in a view.
    pub fn on_submit(&mut self, target: ViewTarget, text: String) {
        // A slash command is the lead's from any view, never chat for a teammate.
        if let ViewTarget::Teammate(name) = target
            && !text.trim_start().starts_with('/')
        {
            return self.message_teammate(&name, &text, false);
        }
        match parse_input(&text) {
            Ok(Input::Empty) => {}
            Ok(Input::Mention { to, text }) => self.message_teammate(&to, &text, true),
            Ok(Input::Plain(text)) => {
                self.echo(text.clone());
                if !self.ask_lead_model(text) {
                    self.note(NO_LEAD_MODEL);
                }
            }
            Ok(Input::Slash(SlashCommand::Msg { to, text })) => {
                self.message_teammate(&to, &text, true)
            }
            Ok(Input::Slash(SlashCommand::Broadcast { text })) => self.broadcast(&text),
            Ok(Input::Slash(command)) => {
                self.echo(text);
                self.run_slash(command);
            }
            Err(e) => {
                self.echo(text);
                self.refuse();
                self.note(e.to_string());
            }
        }
    }

    /// The command as the transcript shows it: typed on a screen, or sent by `ctl` (said as
    /// such, so no screen shows it as if typed there).
    fn echo(&mut self, text: String) {
        let item = if self.store.origin().is_some() {
            TranscriptItem::Ctl { text }
        } else {
            TranscriptItem::User { text }
        };
        self.emit(LeadEvent::Transcript(item));
    }

    fn run_slash(&mut self, command: SlashCommand) {
        match command {
            SlashCommand::Spawn {
                name,
                plan_mode_required,
                mode,
                claude,
                worktree,
                host,
                prompt,
            } => {
                let flags = SpawnFlags {
                    plan_mode_required,
                    mode,
                    claude: claude.then_some(true),
                    worktree: worktree.then_some(true),
                    host,
                };
                self.spawn_teammate_with(&name, flags, &prompt, reported());
            }
            SlashCommand::TaskAdd {
                subject,
                description,
                blocked_by,
                command,
            } => self.add_task(
                &subject,
                &description,
                blocked_by,
                command.as_deref(),
                reported(),
            ),
            SlashCommand::TaskSet { id, change } => self.change_task(&id, change),
            SlashCommand::TaskEdit {
                id,
                subject,
                description,
            } => self.edit_task(
                &id,
                crate::store::tasks::TaskEdit {
                    subject,
                    description,
                },
            ),
            SlashCommand::TaskList => self.list_tasks(),
            SlashCommand::TaskAssign { id, name } => self.assign_task(&id, &name, reported()),
            SlashCommand::Msg { to, text } => self.message_teammate(&to, &text, true),
            SlashCommand::Broadcast { text } => self.broadcast(&text),
            SlashCommand::Shutdown {
                target: ShutdownTarget::All,
                force,
            } => {
                self.shutdown_all();
                self.force_shutdowns(None, force);
            }
            SlashCommand::Shutdown {
                target: ShutdownTarget::One(name),
                force,
            } => {
                self.shutdown_one(&name, reported());
                self.force_shutdowns(Some(&name), force);
            }
            SlashCommand::Kill { name } => self.kill(&name),
            SlashCommand::Interrupt { name } => self.interrupt_teammate(&name, false, |_| {}),
            SlashCommand::Steer { to, text } => self.steer(&to, &text),
            SlashCommand::Respawn { name } => self.respawn(&name, reported()),
            SlashCommand::Mode { name, mode, force } => {
                if !force && self.leaves_required_plan(&name, mode) {
                    self.note(format!(
                        "{name} requires plan mode: it must have its plan approved before it changes anything. \
                         To move it to {mode} anyway: /mode {name} {mode} --force"
                    ));
                } else {
                    self.set_teammate_mode(&name, mode);
                }
            }
            SlashCommand::Team => self.show_team(),
            SlashCommand::TeamDelete => {
                let left = self.cache.file().teammates().count();
                if left > 0 {
                    self.note(format!(
                        "The team still has {left} teammate(s): shut them down first (/shutdown all), or /quit."
                    ));
                } else {
                    self.note("Deleting the team.");
                    self.begin_quit("/team delete");
                }
            }
            SlashCommand::Review { name } => self.review(&name),
            SlashCommand::Merge {
                name,
                how,
                dry_run,
                retire,
            } => self.merge(&name, how, dry_run, retire),
            SlashCommand::Queue => self.merge_queue(),
            SlashCommand::Help => self.note(help_text()),
            SlashCommand::Version => self.note(format!("teamlead {}", env!("CARGO_PKG_VERSION"))),
            SlashCommand::Budget { name, micros } => self.set_budget(name.as_deref(), micros),
            SlashCommand::Budgets => self.show_budgets(),
            SlashCommand::Limits(command) => self.limits_command(command),
            SlashCommand::Clean => self.clean_orphans(),
            SlashCommand::Quit => self.begin_quit("asked by the user"),
            // Without a server in between, leaving the screen is leaving the team.
            SlashCommand::Detach | SlashCommand::DetachScreen => self.detach(),
        }
    }

    /// Sends `text` to a teammate's inbox from `team-lead` (in the background); `echo` shows
    /// it in the transcript once it is written.
    pub fn message_teammate(&mut self, to: &str, text: &str, echo: bool) {
        let (to, text) = (to.trim_start_matches('@').to_string(), text.to_string());
        self.with_teammate(&to.clone(), move |c, known| {
            c.message_known(&to, &text, echo, known)
        });
    }

    /// [`Controller::message_teammate`] once it is known whether `to` is a teammate.
    fn message_known(&mut self, to: &str, text: &str, echo: bool, known: bool) {
        if !known {
            if echo {
                self.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
                    to: to.to_string(),
                    text: text.to_string(),
                    receipt: None,
                }));
            }
            return self.no_such_teammate(to);
        }
        if let Some(e) = self.not_running(to, "nothing was sent") {
            if echo {
                self.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
                    to: to.to_string(),
                    text: text.to_string(),
                    receipt: None,
                }));
            }
            return self.report(Err(e));
        }
        if text.trim().is_empty() {
            self.note(format!("Nothing to send to {to}."));
            return;
        }
        if let Some(why) = self.over_budget(to) {
            self.refuse();
            self.note(format!(
                "{to} is paused: {why}. Nothing was sent; /budget {to} DOLLARS (or /budget team DOLLARS) raises it."
            ));
            return;
        }
        let (name, said) = (to.to_string(), text.to_string());
        self.send_message(
            to,
            InboxEntry::new(LEAD_NAME, text),
            move |c, sent, id| match sent {
                Ok(()) if echo => c.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
                    to: name,
                    text: said,
                    receipt: Some(id),
                })),
                Ok(()) => {}
                Err(e) => c.note(format!("Could not send the message to {name}: {e}")),
            },
        );
    }

    /// Sends `text` to every teammate.
    pub fn broadcast(&mut self, text: &str) {
        let text = text.to_string();
        self.with_fresh_team(move |c| c.broadcast_now(&text));
    }

    fn broadcast_now(&mut self, text: &str) {
        let names: Vec<String> = self.cache.teammate_names();
        self.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
            to: "everyone".to_string(),
            text: text.to_string(),
            receipt: None,
        }));
        if names.is_empty() {
            self.note("There are no teammates to send it to.");
            return;
        }
        for name in names {
            let what = format!("Could not send the message to {name}");
            self.deliver_or_note(&name, InboxEntry::new(LEAD_NAME, text), what);
        }
    }

    /// `/task add`: a pending task, optionally with a command for shell teammates; created in
    /// the task lane, `done` hears when it is.
    pub fn add_task(
        &mut self,
        subject: &str,
        description: &str,
        blocked_by: Vec<String>,
        command: Option<&str>,
        done: Done,
    ) {
        let create = task_creator(&self.task_list, subject, description, &blocked_by, command);
        self.store.submit(Lane::Tasks, create, move |c, created| {
            c.reload_tasks();
            done(c, task_added(created, blocked_by))
        });
    }

    /// The same as [`Controller::add_task`], awaited (the demo needs each id for the next).
    async fn add_task_now(
        &mut self,
        subject: &str,
        description: &str,
        blocked_by: Vec<String>,
        command: Option<&str>,
    ) -> OpResult {
        let create = task_creator(&self.task_list, subject, description, &blocked_by, command);
        let created = self
            .store
            .wait(Lane::Tasks, create)
            .await
            .unwrap_or_else(|| Err(worker_gone()));
        task_added(created, blocked_by)
    }

    fn list_tasks(&mut self) {
        self.with_fresh_tasks(|c| c.list_tasks_now());
    }

    fn list_tasks_now(&mut self) {
        let views = crate::lead::view_builder::task_views(self.cache.tasks());
        let lines: Vec<String> = views
            .iter()
            .filter(|t| !t.internal)
            .map(|t| {
                let owner = t
                    .owner
                    .as_deref()
                    .map(|o| format!(" ({o})"))
                    .unwrap_or_default();
                let blocked = if t.blocked_by.is_empty() {
                    String::new()
                } else {
                    format!(
                        " — blocked by {}",
                        t.blocked_by
                            .iter()
                            .map(|b| format!("#{b}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                format!("#{} [{}] {}{owner}{blocked}", t.id, t.status, t.subject)
            })
            .collect();
        if lines.is_empty() {
            self.note("No tasks yet: /task add SUBJECT [--description D] [--blocked-by 1,2] [--command CMD]");
        } else {
            self.note(format!("Tasks:\n{}", lines.join("\n")));
        }
    }

    /// Would moving `name` to `mode` take a plan-mode-required teammate out of plan mode?
    fn leaves_required_plan(&self, name: &str, mode: PermissionMode) -> bool {
        self.cache.file().member(name).is_some_and(|m| {
            let now = m
                .mode
                .as_deref()
                .and_then(|s| s.parse::<PermissionMode>().ok());
            m.plan_mode_required == Some(true)
                && now.unwrap_or(PermissionMode::Plan) == PermissionMode::Plan
                && mode != PermissionMode::Plan
        })
    }

    fn show_team(&mut self) {
        self.with_fresh_team(|c| c.show_team_now());
    }

    fn show_team_now(&mut self) {
        let waiting = self.permissions.waiting_by_worker();
        let mut lines = vec![format!(
            "Team {} — lead mode {}, backend {}",
            self.given.team(),
            self.lead_mode,
            self.given.kind()
        )];
        for m in self.cache.file().teammates() {
            let status = status_of(
                m,
                self.roster.get(&m.name),
                waiting.contains_key(&m.name) || self.plans.has_worker(&m.name),
            );
            let status = match status {
                TeammateStatus::Working => "working".to_string(),
                TeammateStatus::WaitingForApproval => "waiting for approval".to_string(),
                TeammateStatus::OnClientPrompt { title, .. } => {
                    format!("waiting in its pane: {title}")
                }
                TeammateStatus::Idle { .. } => "idle".to_string(),
                TeammateStatus::ShuttingDown { .. } => "shutting down".to_string(),
                TeammateStatus::Gone => "gone".to_string(),
                TeammateStatus::Unreachable { host, .. } => format!("unreachable ({host})"),
                TeammateStatus::Stopped { how } => how,
            };
            let backend = m
                .backend_kind()
                .map_or_else(|| "unknown".to_string(), |k| k.to_string());
            lines.push(format!(
                "  {} — {status}, {} mode, {backend}",
                m.name,
                m.permission_mode(),
            ));
        }
        if lines.len() == 1 {
            lines.push("  no teammates yet: /spawn NAME PROMPT".to_string());
        }
        self.note(lines.join("\n"));
    }

    /// Creates the demo's tasks and spawns its teammates (at start).
    pub async fn start_demo(&mut self) {
        let Some(plan) = self.demo.as_ref() else {
            return;
        };
        let tasks = plan.tasks.clone();
        let teammates = plan.teammates.clone();
        let workdir = plan.workdir().display().to_string();
        self.note(format!(
            "Demo: {} teammates work on {} tasks in {workdir}. Approve their Bash requests and the plan when asked; /quit shuts the team down and removes everything.",
            teammates.len(),
            tasks.len()
        ));
        let mut ids: Vec<String> = Vec::new();
        for task in &tasks {
            let blocked_by: Vec<String> = task
                .blocked_by
                .iter()
                .filter_map(|i| ids.get(*i).cloned())
                .collect();
            let added = self
                .add_task_now(
                    &task.subject,
                    &task.description,
                    blocked_by,
                    Some(&task.command),
                )
                .await;
            let id = match &added {
                Ok(Outcome::TaskAdded { id, .. }) => id.clone(),
                _ => return self.report(added),
            };
            self.report(added);
            // Owners are set before anyone runs, so no teammate claims another's task.
            if let Some(owner) = &task.owner {
                let (list, owner, task_id) = (self.task_list.clone(), owner.clone(), id.clone());
                let set = move |_: &crate::store::Home| {
                    list.update(&task_id, |t| {
                        t.owner = Some(owner);
                        Ok(())
                    })
                };
                if let Some(Err(e)) = self.store.wait(Lane::Tasks, set).await {
                    self.note(format!("Cannot assign task #{id}: {e}"));
                }
            }
            ids.push(id);
        }
        self.fresh_tasks().await;
        for mate in &teammates {
            // Each teammate hears of its tasks once it runs (spawning clears its inbox).
            let (ids, tasks, name) = (ids.clone(), tasks.clone(), mate.name.clone());
            let done: Done = Box::new(move |c, started| {
                let ok = started.is_ok();
                c.report(started);
                if !ok {
                    return;
                }
                for (task, id) in tasks.iter().zip(&ids) {
                    if task.owner.as_deref() == Some(name.as_str())
                        && let Some(assigned) =
                            c.cache.tasks().iter().find(|t| &t.id == id).cloned()
                    {
                        c.send_assignment(&assigned, &name, |_| {});
                    }
                }
            });
            self.spawn_teammate(
                &mate.name,
                mate.plan_mode_required,
                Some(mate.mode),
                &mate.prompt,
                done,
            );
        }
    }
}

/// The job that creates one task (on the blocking pool, in the task lane).
fn task_creator(
    list: &TaskList,
    subject: &str,
    description: &str,
    blocked_by: &[String],
    command: Option<&str>,
) -> impl FnOnce(&crate::store::Home) -> Result<Task, StoreError> + Send + 'static {
    let metadata = command.map(|c| {
        let mut m = Map::new();
        m.insert("command".to_string(), Value::String(c.to_string()));
        m
    });
    let (list, subject, description, blocked_by) = (
        list.clone(),
        subject.to_string(),
        description.to_string(),
        blocked_by.to_vec(),
    );
    move |_| list.create(&subject, &description, blocked_by, metadata)
}

/// What creating a task did, as an operation's result.
fn task_added(created: Result<Task, StoreError>, blocked_by: Vec<String>) -> OpResult {
    let task = created.map_err(|e| OpError::Task {
        step: TaskStep::Add,
        id: None,
        why: e.to_string(),
    })?;
    Ok(Outcome::TaskAdded {
        id: task.id,
        subject: task.subject,
        blocked_by,
    })
}
