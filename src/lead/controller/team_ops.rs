//! The UI's commands, and the team operations behind them: modes (the lead's, one teammate's,
//! "cycle all" in one team-file write), shutdown requests, kill, prune idle, hide/jump,
//! interrupting a teammate's turn, and quit. Runtime operations go through the session's one
//! executor.

use super::outcome::{Done, OpError, OpResult, Outcome, reported};
use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::executor::shutdown_request;
use crate::lead::contract::{LeadCommand, LeadEvent, TeammateStatus};
use crate::lead::view_builder::status_of;
use crate::protocol::frames::{Frame, ModeSetRequest};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};
use crate::store;

impl Controller {
    /// One command from the UI.
    pub fn on_command(&mut self, command: LeadCommand) {
        match command {
            LeadCommand::Submit { target, text } => self.on_submit(target, text),
            LeadCommand::CycleLeadMode => {
                self.lead_mode = self.lead_mode.next();
                let mode = self.lead_mode;
                let team = self.given.team().to_string();
                self.store.submit(
                    Lane::Team,
                    move |home| store::set_modes(home, &team, &[(LEAD_NAME, mode)]),
                    |_, written| {
                        if let Err(e) = written {
                            tracing::warn!("recording the lead's mode: {e}");
                        }
                    },
                );
                self.emit(LeadEvent::LeadMode(mode));
            }
            LeadCommand::CycleAllModes => self.cycle_all_modes(),
            LeadCommand::CycleTeammateMode { name } => {
                let to = name.clone();
                self.with_teammate(&name, move |c, known| {
                    if !known {
                        return c.no_such_teammate(&to);
                    }
                    // A mode asked for and not (yet) taken is where the cycle stands: Shift+Tab
                    // again moves past a mode a claude teammate's own cycle does not offer.
                    let requested = c.roster.get(&to).and_then(|t| t.modes().requested());
                    if let Some(mode) = c.cache.file().member(&to).map(|m| m.permission_mode()) {
                        c.set_teammate_mode(&to, requested.unwrap_or(mode).next());
                    }
                });
            }
            LeadCommand::SetTeammateMode { name, mode } => self.set_teammate_mode(&name, mode),
            LeadCommand::Shutdown { name } => self.shutdown_one(&name, reported()),
            LeadCommand::Kill { name } => self.kill(&name),
            LeadCommand::Prune { shut_down, remove } => self.prune(shut_down, remove),
            LeadCommand::ToggleHidden { name } => {
                self.with_known_teammate(&name, |c, name| c.toggle_hidden(name))
            }
            LeadCommand::Jump { name } => self.with_known_teammate(&name, |c, name| c.jump(name)),
            LeadCommand::AnswerPermission { key, decision } => {
                self.answer_permission(key, decision)
            }
            LeadCommand::AnswerPlan {
                request_id,
                decision,
            } => self.answer_plan(&request_id, decision),
            LeadCommand::InterruptLead => self.interrupt_lead_model(),
            LeadCommand::InterruptTeammate { name } => {
                if !self.given.executor().interrupt(&name) {
                    tracing::debug!("interrupt {name}: no turn running");
                }
            }
            LeadCommand::Quit => self.begin_quit("asked by the user"),
            LeadCommand::Detach => self.detach(),
            LeadCommand::ScreenClosed => self.begin_quit("the terminal is gone"),
            LeadCommand::ReviewFile { name, path } => self.review_file(&name, &path),
            LeadCommand::ReviewComment { name, comment } => self.review_comment(&name, &comment),
            LeadCommand::RetireWorktree { name } => self.retire_worktree(&name),
            LeadCommand::Barrier { token } => self.barrier(token),
            LeadCommand::Tracked { token, command } => {
                let before = self.store.set_origin(Some(token));
                self.on_command(*command);
                self.store.set_origin(before);
            }
            LeadCommand::Note { text } => {
                let text = crate::protocol::display::visible_text(&text).into_owned();
                self.note(text)
            }
        }
    }

    /// Why `name` can take no message or mode: it stopped (exited, crashed, its pane closed)
    /// and was not respawned. `what` says what was not done.
    pub fn not_running(&self, name: &str, what: &str) -> Option<OpError> {
        let t = self.roster.get(name)?;
        let how = t.stopped().map(str::to_string).or_else(|| {
            (t.activity() == crate::lead::tracking::Activity::Exited).then(|| "exited".to_string())
        })?;
        Some(OpError::Stopped {
            name: name.to_string(),
            how,
            what: what.to_string(),
        })
    }

    pub fn no_such_teammate(&mut self, name: &str) {
        let e = self.no_such_teammate_error(name);
        self.refuse();
        self.note(e.to_string());
    }

    /// The error for a name that is no teammate, listing those there are.
    pub fn no_such_teammate_error(&self, name: &str) -> OpError {
        OpError::NoSuchTeammate {
            name: name.to_string(),
            known: self.cache.teammate_names(),
        }
    }

    /// Shows an operation's outcome (or why it was not done) as a note.
    pub fn report(&mut self, result: OpResult) {
        match result {
            Ok(outcome) => self.note(outcome.to_string()),
            Err(e) => {
                self.refuse();
                self.note(e.to_string());
            }
        }
    }

    /// Sends `mode_set_request` to each of `names` (after the team file was written); `then`
    /// runs once every one is written (or could not be: that is told).
    pub(super) fn send_mode_requests(
        &mut self,
        names: &[String],
        mode: PermissionMode,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        let countdown = Countdown::new(names.len(), then);
        if names.is_empty() {
            return countdown.one(self);
        }
        for name in names {
            let countdown = countdown.clone();
            let frame = Frame::ModeSetRequest(ModeSetRequest {
                mode,
                from: LEAD_NAME.to_string(),
            });
            let to = name.clone();
            self.deliver(
                name,
                InboxEntry::frame(LEAD_NAME, &frame),
                move |c, sent| {
                    match sent {
                        // Clients that ignore the request adopt the mode at their next request
                        // (controller::mode_sync).
                        Ok(()) => c.roster.entry(&to).modes_mut().set_sent(mode),
                        Err(e) => c.note(format!("Could not send the mode to {to}: {e}")),
                    }
                    countdown.one(c);
                },
            );
        }
    }

    /// Sets `modes`: `claude` teammates are brought to theirs by their own mode key and report
    /// it themselves (`controller::mode_keys`); for teamlead's own, the modes go into
    /// `config.json` in its lane, then the `mode_set_request`s go out, the copy is re-read and
    /// `done_note` is told (or why it was not done).
    fn write_modes(&mut self, modes: Vec<(String, PermissionMode)>, done_note: String) {
        let (claude, modes): (Vec<_>, Vec<_>) = modes
            .into_iter()
            .partition(|(name, _)| self.is_claude(name));
        let some_claude = !claude.is_empty();
        for (name, mode) in claude {
            self.drive_claude_mode(&name, mode);
        }
        if modes.is_empty() {
            return;
        }
        let done_note = if some_claude {
            let names: Vec<&str> = modes.iter().map(|(n, _)| n.as_str()).collect();
            let mode = modes.first().map_or(PermissionMode::Default, |(_, m)| *m);
            let verb = if names.len() == 1 { "is" } else { "are" };
            format!("{} {verb} now in {mode} mode.", names.join(", "))
        } else {
            done_note
        };
        let team = self.given.team().to_string();
        let pairs = modes.clone();
        let clock = self.cache.clock();
        self.store.submit(
            Lane::Team,
            move |home| {
                let pairs: Vec<(&str, PermissionMode)> =
                    pairs.iter().map(|(n, m)| (n.as_str(), *m)).collect();
                let written = store::set_modes(home, &team, &pairs);
                let ticket = clock.stamp();
                (
                    written,
                    ticket,
                    store::read_team(home, &team).map(|f| (f, None)),
                )
            },
            move |c, (written, ticket, read)| {
                c.apply_team(read, ticket);
                if let Err(e) = written {
                    let whose = match modes.as_slice() {
                        [(name, _)] => format!("{name}'s mode"),
                        _ => "the modes".to_string(),
                    };
                    c.note(format!("Could not change {whose}: {e}"));
                    return;
                }
                // One mode for all (cycle all) or one teammate: told once every request is out.
                let names: Vec<String> = modes.iter().map(|(n, _)| n.clone()).collect();
                let mode = modes.first().map_or(PermissionMode::Default, |(_, m)| *m);
                c.send_mode_requests(&names, mode, move |c| c.note(done_note));
            },
        );
    }

    /// Shift+Tab in the teams dialog: all equal → next, mixed → default; one team-file write,
    /// then one `mode_set_request` per teammate.
    pub fn cycle_all_modes(&mut self) {
        self.with_fresh_team(|c| c.cycle_all_modes_now());
    }

    fn cycle_all_modes_now(&mut self) {
        let members: Vec<(String, PermissionMode)> = self
            .cache
            .file()
            .teammates()
            .map(|m| (m.name.clone(), m.permission_mode()))
            .collect();
        if members.is_empty() {
            self.note("There are no teammates to change.");
            return;
        }
        let modes: Vec<PermissionMode> = members.iter().map(|(_, m)| *m).collect();
        let target = PermissionMode::cycle_all(&modes);
        let pairs: Vec<(String, PermissionMode)> =
            members.into_iter().map(|(n, _)| (n, target)).collect();
        self.write_modes(pairs, format!("Every teammate is now in {target} mode."));
    }

    /// One teammate's mode: team-file write, then `mode_set_request`.
    pub fn set_teammate_mode(&mut self, name: &str, mode: PermissionMode) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if !known {
                return c.no_such_teammate(&name);
            }
            if let Some(e) = c.not_running(&name, "its mode was not changed") {
                return c.report(Err(e));
            }
            c.write_modes(
                vec![(name.clone(), mode)],
                format!("{name} is now in {mode} mode."),
            );
        });
    }

    /// Writes a `shutdown_request` to `name`'s inbox (in the background) and remembers its id
    /// at once, so an answer that comes quickly is matched; `then` hears whether it was
    /// written (a failure is told, and the id forgotten).
    pub fn send_shutdown_request(
        &mut self,
        name: &str,
        reason: Option<&str>,
        then: impl FnOnce(&mut Controller, bool) + Send + 'static,
    ) {
        let (request_id, entry) = shutdown_request(name, reason);
        let patience = self.settings.shutdown();
        let deadline = tokio::time::Instant::now() + patience.wait;
        let force = patience.then_kill;
        let t = self.roster.entry(name);
        t.shutdown_mut().begin(
            request_id.clone(),
            crate::protocol::time::now_ms(),
            deadline,
            force,
        );
        let to = name.to_string();
        self.deliver(name, entry, move |c, sent| {
            if let Err(e) = &sent {
                if let Some(t) = c.roster.get_mut(&to) {
                    t.shutdown_mut().end(&request_id);
                }
                c.note(format!("Could not ask {to} to shut down: {e}"));
            }
            then(c, sent.is_ok())
        });
    }

    /// Asks one teammate to shut down; `done` hears once the request is written.
    pub fn shutdown_one(&mut self, name: &str, done: Done) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if !known {
                let e = c.no_such_teammate_error(&name);
                return done(c, Err(e));
            }
            let to = name.clone();
            c.send_shutdown_request(&name, None, move |c, sent| {
                let result = if sent {
                    Ok(Outcome::ShutdownAsked { name: to })
                } else {
                    Err(OpError::NotAskedToShutDown { name: to })
                };
                done(c, result)
            });
        });
    }

    /// Asks every teammate to shut down (a request that cannot be written is told apart).
    pub fn shutdown_all(&mut self) {
        self.with_fresh_team(|c| c.shutdown_all_now());
    }

    fn shutdown_all_now(&mut self) {
        let names: Vec<String> = self.cache.teammate_names();
        if names.is_empty() {
            self.note("There are no teammates to shut down.");
            return;
        }
        for name in &names {
            self.send_shutdown_request(name, None, |_, _| {});
        }
        self.note(format!("Asked {} teammate(s) to shut down.", names.len()));
    }

    /// Stops a teammate now: its runtime is killed, it leaves the team, its tasks are freed.
    pub fn kill(&mut self, name: &str) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if !known {
                return c.no_such_teammate(&name);
            }
            c.kill_runtime(&name, "killing", |c, name| {
                c.remove_teammate(name, "was killed")
            });
        });
    }

    /// Kills `name`'s runtime (pane, process or task) in its runtime lane, then `then` runs on
    /// the loop (a failure is logged with `what`: a pane already gone is no error to tell).
    pub(super) fn kill_runtime(
        &mut self,
        name: &str,
        what: &'static str,
        then: impl FnOnce(&mut Controller, &str) + Send + 'static,
    ) {
        let executor = self.given.executor().clone();
        let (who, name) = (name.to_string(), name.to_string());
        self.runtime_job(
            &name.clone(),
            move |_| async move { executor.kill(&who).await },
            move |c, killed| {
                if let Err(e) = killed {
                    tracing::info!("{what} {name}: {e}");
                }
                then(c, &name)
            },
        );
    }

    /// Prunes as the person confirmed it: asks `shut_down` to shut down (those still in the
    /// team and not already gone), and removes from the team those of `remove` that exited or
    /// stopped. Nobody else is touched.
    pub fn prune(&mut self, shut_down: Vec<String>, remove: Vec<String>) {
        self.with_fresh_team(move |c| c.prune_now(shut_down, remove));
    }

    fn prune_now(&mut self, shut_down: Vec<String>, remove: Vec<String>) {
        let status = |c: &Controller, name: &str| {
            c.cache
                .file()
                .teammates()
                .find(|m| m.name == name)
                .map(|m| status_of(m, c.roster.get(&m.name), false))
        };
        let asked: Vec<String> = shut_down
            .into_iter()
            .filter(|n| {
                matches!(
                    status(self, n),
                    Some(s) if !matches!(s, TeammateStatus::Gone | TeammateStatus::Stopped { .. })
                )
            })
            .collect();
        let removed: Vec<String> = remove
            .into_iter()
            .filter(|n| {
                matches!(
                    status(self, n),
                    Some(TeammateStatus::Gone | TeammateStatus::Stopped { .. })
                )
            })
            .collect();
        if asked.is_empty() && removed.is_empty() {
            self.note("Nothing to prune: no idle or exited teammate.");
            return;
        }
        for name in &asked {
            self.send_shutdown_request(name, Some("idle"), |_, _| {});
        }
        if !asked.is_empty() {
            self.note(format!(
                "Asked {} idle teammate(s) to shut down: {}",
                asked.len(),
                asked.join(", ")
            ));
        }
        for name in &removed {
            // Whatever is left of its pane goes too.
            self.kill_runtime(name, "pruning", |c, name| {
                c.remove_teammate(name, "was pruned from the team")
            });
        }
    }

    /// Runs `then` when `name` is a teammate (told when not).
    fn with_known_teammate(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller, &str) + Send + 'static,
    ) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if known {
                then(c, &name)
            } else {
                c.no_such_teammate(&name)
            }
        });
    }
}

/// Runs its action once `count` parts are done (the last part runs it, on the loop).
#[derive(Clone)]
struct Countdown {
    state: std::sync::Arc<std::sync::Mutex<CountdownState>>,
}

type Action = Box<dyn FnOnce(&mut Controller) + Send>;

struct CountdownState {
    left: usize,
    action: Option<Action>,
}

impl Countdown {
    fn new(count: usize, action: impl FnOnce(&mut Controller) + Send + 'static) -> Countdown {
        Countdown {
            state: std::sync::Arc::new(std::sync::Mutex::new(CountdownState {
                left: count,
                action: Some(Box::new(action)),
            })),
        }
    }

    /// One part is done.
    fn one(&self, c: &mut Controller) {
        let action = match self.state.lock() {
            Ok(mut state) => {
                state.left = state.left.saturating_sub(1);
                if state.left == 0 {
                    state.action.take()
                } else {
                    None
                }
            }
            Err(_) => None,
        };
        if let Some(action) = action {
            action(c);
        }
    }
}
