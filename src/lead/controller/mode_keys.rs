//! Modes that are true for `claude` teammates. A `claude` teammate's mode is the one it shows
//! (its pane's status line) and writes into its member entry of `config.json`; the lead writes
//! a mode there only once it has seen the client take it. To change it the lead presses Claude
//! Code's own mode key in the teammate's pane ([`crate::lead::mode_drive`], off the loop, in
//! the teammate's `Keys` lane) until the client shows the mode asked for; until then the teams
//! dialog shows the mode in force with the one requested beside it, and the note says what
//! happened. Where the terminal cannot type into a pane (iTerm2, Zellij), the lead falls
//! back to what the protocol offers (`mode_set_request`, which 2.1.45 applies, and the
//! `setMode` answer that can only loosen, `controller::mode_sync`) and says plainly that the
//! mode is not confirmed.

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::PaneKey;
use crate::lead::contract::{LeadEvent, TranscriptItem};
use crate::lead::mode_drive::{self, DriveEnd, STEP_TIMEOUT};
use crate::protocol::{InboxEntry, LEAD_NAME, PermissionMode};
use crate::store;

impl Controller {
    /// Writes a mode the teammate was seen to take into its member entry when the entry says
    /// otherwise.
    fn record_confirmed_mode(&mut self, name: &str, mode: PermissionMode) {
        let written = self
            .team_file
            .member(name)
            .and_then(|m| m.mode.as_deref())
            .unwrap_or("default");
        if written == mode.as_str() {
            return;
        }
        let (team, member) = (self.team.clone(), name.to_string());
        self.store.submit(
            Lane::Team,
            move |home| store::set_modes(home, &team, &[(member.as_str(), mode)]),
            |c, _| c.reload_team(),
        );
    }

    /// `/interrupt NAME`: stops the teammate's current turn. In-process teammates through
    /// their turn's token; a `claude` teammate by Esc typed into its pane (Claude Code stops
    /// the turn, and idles with `interrupted`).
    /// `then` runs once the turn stopped (or the teammate had none running).
    /// `quiet_when_idle`: a claude teammate known idle is not told about (a steer just
    /// delivers its message).
    pub(super) fn interrupt_teammate(
        &mut self,
        name: &str,
        quiet_when_idle: bool,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        let name = name.to_string();
        self.with_teammate(&name.clone(), move |c, known| {
            if known {
                c.interrupt_known(&name, quiet_when_idle, then)
            } else {
                c.no_such_teammate(&name)
            }
        });
    }

    /// Whether the lead knows `name` idle with nothing of the lead's waiting to start a turn
    /// (a message just delivered may start one before the lead hears of it).
    fn settled_idle(&self, name: &str) -> bool {
        let idle = self.tracking.get(name).is_some_and(|t| {
            matches!(t.activity, crate::lead::view_builder::Activity::Idle { .. })
        });
        idle && !self.ledger.may_start_turn(name)
    }

    fn interrupt_known(
        &mut self,
        name: &str,
        quiet_when_idle: bool,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        if self.executor.interrupt(name) {
            self.note(format!("Interrupted {name}'s turn."));
            return then(self);
        }
        if self.kind == crate::protocol::BackendKind::InProcess {
            // No turn running: nothing to stop.
            return then(self);
        }
        if self.settled_idle(name) {
            // Nothing to stop: Esc in an idle claude pane would confirm nothing, and the note
            // would say a turn was interrupted when there was none.
            if !quiet_when_idle {
                self.note(format!("{name} has no turn running: nothing to interrupt."));
            }
            return then(self);
        }
        if !self.is_claude(name) {
            return self.signal_own_turn(name, then);
        }
        let typer = self
            .executor
            .key_typer(name)
            .filter(|_| self.is_claude(name));
        let Some(typer) = typer else {
            self.refuse();
            self.note(format!(
                "Cannot interrupt {name} from here: it has no turn running in this process \
                 and no pane the lead can type Esc into. Jump to it and press Esc, or \
                 /shutdown {name}."
            ));
            return then(self);
        };
        let who = name.to_string();
        let screen = self.executor.pane_reader(name);
        self.store.submit(
            Lane::Keys(who.clone()),
            move |_| {
                typer(PaneKey::Escape)?;
                // Claude Code says so in its pane (`Interrupted · What should Claude do
                // instead?`); it writes no idle notification for an interrupted turn.
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
                let Some(read) = screen else {
                    return Ok(false);
                };
                loop {
                    if read(12).iter().any(|l| l.contains("Interrupted")) {
                        return Ok(true);
                    }
                    if std::time::Instant::now() >= deadline {
                        return Ok(false);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            },
            move |c, typed: Result<bool, String>| match typed {
                Ok(true) => {
                    if let Some(t) = c.tracking.get_mut(&who) {
                        t.activity = crate::lead::view_builder::Activity::Idle {
                            since_ms: crate::protocol::time::now_ms(),
                        };
                    }
                    c.note(format!(
                        "Interrupted {who}'s turn (Esc in its pane); it takes your next message."
                    ));
                    c.publish();
                    then(c);
                }
                Ok(false) => {
                    c.note(format!(
                        "Pressed Esc in {who}'s pane; it did not show that its turn stopped."
                    ));
                    then(c);
                }
                Err(e) => {
                    c.refuse();
                    c.note(format!("Could not interrupt {who}: {e}"));
                }
            },
        );
    }

    /// One of teamlead's own teammates in a process of its own (`teamlead teammate` in a
    /// pane): its process is told to stop the current turn (`backend::turn_signal`, off the
    /// loop); `then` runs after.
    fn signal_own_turn(&mut self, name: &str, then: impl FnOnce(&mut Controller) + Send + 'static) {
        let agent = format!("{name}@{}", self.team);
        let who = name.to_string();
        self.store.submit(
            Lane::Keys(who.clone()),
            move |home| {
                Ok::<usize, String>(crate::backend::turn_signal::interrupt_turn(
                    &home.root, &agent,
                ))
            },
            move |c, told: Result<usize, String>| {
                if told.is_ok_and(|n| n > 0) {
                    c.note(format!("Interrupted {who}'s turn."));
                } else {
                    c.refuse();
                    c.note(format!(
                        "Cannot interrupt {who} from here: no process of it that takes the \
                         lead's interrupt was found. Jump to it and stop it there, or \
                         /shutdown {who}."
                    ));
                }
                then(c);
            },
        );
    }

    /// `/steer @NAME TEXT`: interrupts its turn, then gives it the message (so its next turn
    /// is about it).
    pub(super) fn steer(&mut self, to: &str, text: &str) {
        let (name, said) = (to.to_string(), text.to_string());
        self.interrupt_teammate(to, true, move |c| {
            let (who, echo) = (name.clone(), said.clone());
            c.send_message(
                &name,
                InboxEntry::new(LEAD_NAME, said),
                move |c, sent, id| match sent {
                    Ok(()) => c.emit(LeadEvent::Transcript(TranscriptItem::ToTeammate {
                        to: who,
                        text: echo,
                        receipt: Some(id),
                    })),
                    Err(e) => c.note(format!("Could not send the message to {who}: {e}")),
                },
            );
        });
    }

    /// Is `name` a real `claude` process (as this lead or the one before started it)?
    pub(super) fn is_claude(&self, name: &str) -> bool {
        self.record.teammates.get(name).is_some_and(|r| r.claude)
    }

    /// Brings the `claude` teammate `name` to `mode` (see the module header); the outcome is
    /// told as a note.
    pub(super) fn drive_claude_mode(&mut self, name: &str, mode: PermissionMode) {
        self.tracking
            .entry(name.to_string())
            .or_default()
            .mode_requested = Some(mode);
        self.publish();
        let Some(typer) = self.executor.key_typer(name) else {
            let who = name.to_string();
            let names = [name.to_string()];
            return self.send_mode_requests(&names, mode, move |c| {
                c.note(format!(
                    "Asked {who} for {mode} mode. Its terminal cannot be typed into, so this is \
                     not confirmed: Claude Code 2.1.329 and later ignore the request (press \
                     Shift+Tab in its pane, or /kill and /spawn it with --mode {mode}). The \
                     teams dialog shows the mode {who} reports."
                ))
            });
        };
        let (team, who) = (self.team.clone(), name.to_string());
        let screen = self.executor.pane_reader(name);
        // What the client shows in its pane first; what it wrote into config.json where its
        // pane cannot be read.
        let reported = move |home: &store::Home| {
            screen
                .as_ref()
                .and_then(|read| {
                    let lines = read(8);
                    tracing::debug!("mode drive screen: {lines:?}");
                    mode_drive::pane_mode(&lines).map(str::to_string)
                })
                .or_else(|| {
                    store::read_team(home, &team).ok().and_then(|f| {
                        f.member(&who)
                            .map(|m| m.mode.clone().unwrap_or_else(|| "default".to_string()))
                    })
                })
        };
        let who = name.to_string();
        self.store.submit(
            Lane::Keys(who.clone()),
            move |home| {
                mode_drive::drive(
                    mode.as_str(),
                    || reported(home),
                    || typer(PaneKey::BackTab),
                    STEP_TIMEOUT,
                )
            },
            move |c, drive| {
                tracing::info!(
                    "{who}: mode drive to {mode}: {:?} after {} press(es), {} ms, read {:?}",
                    drive.end,
                    drive.presses,
                    drive.took.as_millis(),
                    drive.seen
                );
                c.reload_team();
                let requested = c.tracking.get(&who).and_then(|t| t.mode_requested);
                let now = drive.now.clone().unwrap_or_else(|| "unknown".to_string());
                let ms = drive.took.as_millis();
                if drive.end == DriveEnd::Reached {
                    if requested == Some(mode)
                        && let Some(t) = c.tracking.get_mut(&who)
                    {
                        t.mode_requested = None;
                    }
                    tracing::info!(
                        "{who}: {mode} confirmed after {} key press(es), {ms} ms",
                        drive.presses
                    );
                    // The client shows it; config.json says so too (2.1.45 can lose its own
                    // write of it).
                    c.record_confirmed_mode(&who, mode);
                    c.note(format!("{who} is now in {mode} mode."));
                    return c.publish();
                }
                let why = match &drive.end {
                    DriveEnd::NotInCycle => format!("its mode key does not offer {mode}"),
                    DriveEnd::NoAnswer => "it did not answer its mode key".to_string(),
                    DriveEnd::Failed(e) => e.clone(),
                    DriveEnd::Reached => String::new(),
                };
                c.refuse();
                c.note(format!(
                    "{who} is still in {now} mode, not {mode}: {why}. /kill {who} and /spawn \
                     it with --mode {mode}, or press Shift+Tab in its pane."
                ));
                c.publish();
            },
        );
    }
}
