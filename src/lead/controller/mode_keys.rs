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
use crate::lead::mode_drive::{self, DriveEnd, STEP_TIMEOUT};
use crate::protocol::{PermissionMode, TeamFile};
use crate::store;

impl Controller {
    /// Writes a mode the teammate was seen to take into its member entry when the entry says
    /// otherwise.
    fn record_confirmed_mode(&mut self, name: &str, mode: PermissionMode) {
        let written = self
            .cache
            .file()
            .member(name)
            .and_then(|m| m.mode.as_deref())
            .unwrap_or("default");
        if written == mode.as_str() {
            return;
        }
        self.record_mode(name, mode, |_| {});
    }

    /// `name` (a `claude` teammate) is in `mode` now, as the lead saw or caused it, having
    /// left `left`: held against its own stale write of `left` (see
    /// [`Controller::keep_held_modes`]).
    pub(super) fn hold_mode(&mut self, name: &str, mode: PermissionMode, left: PermissionMode) {
        if mode == left || !self.is_claude(name) {
            return;
        }
        self.roster.entry(name).modes_mut().hold(mode, left);
    }

    /// Puts right a `claude` teammate's own stale write of the mode it left, in a fresh read
    /// of the team file: 2.1.45 writes its member entry at a turn's end, unlocked, from a copy
    /// it read before its mode changed (PROTOCOL.md 7), and the lead would then show, and
    /// cycle on from, the mode it left. The copy keeps the mode held and the file gets it
    /// again. Any other mode is the client's own change (its Shift+Tab goes one step at a
    /// time and writes each step): the hold ends. A drive under way steps through modes and
    /// is left alone.
    pub(super) fn keep_held_modes(&mut self, file: &mut TeamFile) {
        let mut rewrite = Vec::new();
        for member in file.members.iter_mut() {
            let Some(t) = self.roster.get_mut(&member.name) else {
                continue;
            };
            let Some(held) = t.modes().held() else {
                continue;
            };
            let now = member.permission_mode();
            if now == held.mode {
                continue;
            }
            if now == held.left {
                member.mode = Some(held.mode.as_str().to_string());
                rewrite.push((member.name.clone(), held));
            } else {
                t.modes_mut().release();
            }
        }
        for (name, held) in rewrite {
            tracing::info!(
                "{name}: config.json went back to {} (its own stale write); {} written again",
                held.left,
                held.mode
            );
            self.record_mode(&name, held.mode, |_| {});
        }
    }

    /// Is `name` a real `claude` process (as this lead or the one before started it)?
    pub(super) fn is_claude(&self, name: &str) -> bool {
        self.record.is_claude(name)
    }

    /// Brings the `claude` teammate `name` to `mode` (see the module header); the outcome is
    /// told as a note.
    pub(super) fn drive_claude_mode(&mut self, name: &str, mode: PermissionMode) {
        let left = self
            .cache
            .file()
            .member(name)
            .map(|m| m.permission_mode())
            .unwrap_or_default();
        let tracking = self.roster.entry(name);
        tracking.modes_mut().request(mode);
        self.publish();
        let Some(typer) = self.given.executor().key_typer(name) else {
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
        let (team, who) = (self.given.team().to_string(), name.to_string());
        let screen = self.given.executor().pane_reader(name);
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
                let requested = c.roster.get(&who).and_then(|t| t.modes().requested());
                let now = drive.now.clone().unwrap_or_else(|| "unknown".to_string());
                let ms = drive.took.as_millis();
                if drive.end == DriveEnd::Reached {
                    if requested == Some(mode)
                        && let Some(t) = c.roster.get_mut(&who)
                    {
                        t.modes_mut().request_done();
                    }
                    tracing::info!(
                        "{who}: {mode} confirmed after {} key press(es), {ms} ms",
                        drive.presses
                    );
                    // The client shows it; config.json says so too (2.1.45 can lose its own
                    // write of it).
                    c.record_confirmed_mode(&who, mode);
                    c.hold_mode(&who, mode, left);
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
