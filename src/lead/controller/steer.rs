//! Stopping a teammate's turn and steering it (`/interrupt NAME`, `/steer @NAME TEXT`).
//! An in-process teammate through its turn's token; one of teamlead's own teammates in a
//! pane by a signal to its process (`backend::turn_signal`; on another host through the
//! executor's `turn_stopper`, over ssh); a `claude` teammate by Esc typed
//! into its pane, confirmed by the pane's `Interrupted` (Claude Code writes no idle
//! notification for an interrupted turn, so the lead shows it idle itself). A pane teammate
//! the lead knows idle, with nothing of the lead's left to start a turn on, is left alone. A
//! steer delivers its message once the turn stopped, so the next turn is about it. What the
//! interrupted teammate had in progress is held by the lead (`task_ops::hold_interrupted`)
//! before anything else is sent: it does not resume it, nobody claims it, and the note says
//! how to give it out again.

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::{BackendError, PaneKey};
use crate::lead::contract::{LeadEvent, TranscriptItem};
use crate::protocol::{InboxEntry, LEAD_NAME};

impl Controller {
    /// `/interrupt NAME`: stops the teammate's current turn (see the module header). `then` runs
    /// once the turn stopped (or the teammate had none running). `quiet_when_idle`: a pane
    /// teammate known idle is not told about (a steer just delivers its message).
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
        let idle = self
            .roster
            .get(name)
            .is_some_and(|t| matches!(t.activity(), crate::lead::tracking::Activity::Idle { .. }));
        idle && !self.ledger.may_start_turn(name)
    }

    fn interrupt_known(
        &mut self,
        name: &str,
        quiet_when_idle: bool,
        then: impl FnOnce(&mut Controller) + Send + 'static,
    ) {
        if self.given.executor().interrupt(name) {
            self.note(format!("Interrupted {name}'s turn."));
            return self.hold_interrupted(name, then);
        }
        let remote = self.given.executor().turn_stopper(name).is_some();
        if self.given.kind() == crate::protocol::BackendKind::InProcess && !remote {
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
            .given
            .executor()
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
        let screen = self.given.executor().pane_reader(name);
        self.store.submit(
            Lane::Keys(who.clone()),
            move |_| {
                typer(PaneKey::Escape)?;
                // Claude Code says so in its pane (`Interrupted · What should Claude do
                // instead?`); it writes no idle notification for an interrupted turn.
                let Some(read) = screen else {
                    return Ok(false);
                };
                Ok(crate::backend::executor::pane_shows_within(
                    &read,
                    12,
                    std::time::Duration::from_secs(3),
                    |lines| lines.iter().any(|l| l.contains("Interrupted")),
                ))
            },
            move |c, typed: Result<bool, crate::backend::BackendError>| match typed {
                Ok(true) => {
                    if let Some(t) = c.roster.get_mut(&who) {
                        t.interrupted(crate::protocol::time::now_ms());
                    }
                    c.note(format!(
                        "Interrupted {who}'s turn (Esc in its pane); it takes your next message."
                    ));
                    c.publish();
                    c.hold_interrupted(&who, then);
                }
                Ok(false) => {
                    c.note(format!(
                        "Pressed Esc in {who}'s pane; it did not show that its turn stopped."
                    ));
                    c.hold_interrupted(&who, then);
                }
                Err(e) => {
                    c.refuse();
                    c.note(format!("Could not interrupt {who}: {e}"));
                }
            },
        );
    }

    /// One of teamlead's own teammates in a process of its own (`teamlead teammate` in a
    /// pane): its process is told to stop the current turn (`backend::turn_signal`, or the
    /// executor's [`turn_stopper`] when it runs on another host; off the loop); `then` runs
    /// after.
    ///
    /// [`turn_stopper`]: crate::backend::executor::TeammateExecutor::turn_stopper
    fn signal_own_turn(&mut self, name: &str, then: impl FnOnce(&mut Controller) + Send + 'static) {
        let agent = format!("{name}@{}", self.given.team());
        let who = name.to_string();
        let stopper = self.given.executor().turn_stopper(name);
        self.store.submit(
            Lane::Keys(who.clone()),
            move |home| {
                Ok::<Result<usize, BackendError>, std::convert::Infallible>(match stopper {
                    Some(stop) => stop(),
                    None => Ok(crate::backend::turn_signal::interrupt_turn(
                        &home.root, &agent,
                    )),
                })
            },
            move |c, told: Result<Result<usize, BackendError>, std::convert::Infallible>| {
                let told = told.unwrap_or_else(|never| match never {});
                if told.as_ref().is_ok_and(|n| *n > 0) {
                    c.note(format!("Interrupted {who}'s turn."));
                    return c.hold_interrupted(&who, then);
                } else if let Err(e) = told {
                    c.refuse();
                    c.note(format!("Could not interrupt {who}: {e}"));
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
}
