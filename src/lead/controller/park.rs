//! Park and resume at a usage limit, on the controller (the state machine is `lead::park`).
//! A limit becomes known from a `claude` teammate's transcript (`claude_facts`) or from one of
//! teamlead's own teammates' idle notification (`teamleadLimitUntil`, `incoming`); the lead
//! says when it resets and, when resuming is on, parks the team: what the lead sends a parked
//! teammate that would start a turn (a message, a task assignment) is held here, acknowledged
//! as sent, and written when the teammate is resumed (answers, shutdowns and modes are never
//! held). At the reset each teammate is resumed once, staggered: a `claude` 2.1.45 teammate's
//! pane first loses the client's own `/rate-limit-options` dialog (Esc: its "Stop and wait"
//! choice, pressed again while it stays, `lead::limit_dialog`; read and typed off the loop, in
//! the `Keys` lane), then a teammate whose work the
//! limit stopped is told to go on, and what was held for it is delivered. `/limits` shows and
//! sets it.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use tokio::time::Instant;

use super::state::Controller;
use super::store_worker::Lane;
use crate::backend::PaneKey;
use crate::lead::commands::LimitsCommand;
use crate::lead::contract::{ParkedView, TeammateView};
use crate::lead::limit_dialog::{self, DialogAnswer};
use crate::lead::park::{Limited, Park, ParkStep, STAGGER, Stopped};
use crate::protocol::frames::Frame;
use crate::protocol::time::{local_clock, now_ms};
use crate::protocol::{InboxEntry, LEAD_NAME};

/// What a teammate whose work the limit stopped is told when it is resumed.
pub const GO_ON: &str = "The usage limit has reset. Go on with the work you were doing when \
                         it stopped you; do not repeat what is already done.";

/// How far in the past a reset may be and still park the team (a limit read late, a clock a
/// little off); an older one is a limit that is long over.
const STALE_MS: u64 = 5 * 60_000;

/// One entry held for a parked teammate, with its id in the message ledger.
#[derive(Debug)]
pub struct HeldEntry {
    pub to: String,
    pub entry: InboxEntry,
    pub id: u64,
}

/// The park and what it keeps.
#[derive(Debug, Default)]
pub struct ParkRoom {
    park: Park,
    held: Vec<HeldEntry>,
    /// Teammates whose work a limit of this park stopped (told to go on when resumed).
    hit: BTreeSet<String>,
    /// The limits already acted on (teammate → reset, epoch ms).
    seen: BTreeMap<String, u64>,
}

impl ParkRoom {
    pub fn new(settings: crate::lead::park::ParkSettings) -> ParkRoom {
        ParkRoom {
            park: Park::new(settings),
            ..ParkRoom::default()
        }
    }
}

/// Whether `entry` starts a turn that a park holds: a message, or a task assignment.
fn is_work(entry: &InboxEntry) -> bool {
    matches!(entry.parse_frame(), None | Some(Frame::TaskAssignment(_)))
}

/// `16:18` (local), or the epoch time when it cannot be shown.
fn clock(ms: u64) -> String {
    local_clock(ms).unwrap_or_else(|| crate::protocol::time::iso_from_ms(ms))
}

/// `16:18:05` (local): the resume times are seconds apart.
fn clock_s(ms: u64) -> String {
    crate::protocol::time::local_clock_seconds(ms).unwrap_or_else(|| clock(ms))
}

impl Controller {
    /// Does the park hold `entry` for `to`? Then it is kept (with its ledger id `id`), and
    /// `true` is returned.
    pub(super) fn hold_for_park(&mut self, to: &str, entry: &InboxEntry, id: u64) -> bool {
        if !self.park.park.holds(to) || !is_work(entry) {
            return false;
        }
        self.park.held.push(HeldEntry {
            to: to.to_string(),
            entry: entry.clone(),
            id,
        });
        let when = self.park.park.resume_of(to).map_or(
            "when the team is resumed (/limits resume now)".to_string(),
            |at| format!("when it is resumed at {}", clock_s(at)),
        );
        self.note(format!(
            "{to} is parked at the usage limit: this is held and delivered {when}."
        ));
        self.publish();
        true
    }

    /// The teammates that run, in the order they are resumed after the one that hit a limit.
    fn parkable_teammates(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .cache
            .file()
            .teammates()
            .map(|m| m.name.clone())
            .filter(|n| {
                self.roster
                    .get(n)
                    .is_none_or(|t| t.stopped().is_none() && !t.shutdown().is_waiting())
            })
            .collect();
        names.sort();
        names
    }

    /// `name` hit a usage or rate limit that resets at `until_ms`: said once per reset, and,
    /// when resuming is on, the team is parked.
    pub(super) fn on_limit(&mut self, name: &str, until_ms: u64) {
        if self.park.seen.get(name) == Some(&until_ms) {
            return;
        }
        self.park.seen.insert(name.to_string(), until_ms);
        let now = now_ms();
        if until_ms + STALE_MS < now {
            return;
        }
        let team = self.parkable_teammates();
        let at = clock(until_ms);
        match self.park.park.limit(name, until_ms, now, &team) {
            Limited::NotParked => self.note(format!(
                "{name} hit the usage limit of its account, which resets at {at}. \
                 /limits resume on parks the team at a limit and resumes it at the reset."
            )),
            Limited::Parked {
                resume_at_ms,
                stopped: None,
            } => {
                self.park.hit.insert(name.to_string());
                self.note(format!(
                    "{name} hit the usage limit of its account, which resets at {at}. The team \
                     is parked: no message or task from the lead starts a turn until then. It \
                     resumes at {}, one teammate every {} s, {name} first. /limits resume off \
                     ends the park.",
                    clock_s(resume_at_ms),
                    STAGGER.as_secs()
                ));
            }
            Limited::Parked {
                stopped: Some(Stopped::CutOff { cutoff_ms, .. }),
                ..
            } => {
                self.park.hit.insert(name.to_string());
                self.note(format!(
                    "{name} hit the usage limit of its account, which resets at {at}. The team \
                     is parked, and stays parked: the reset is past the cut-off ({}). \
                     /limits resume now resumes it.",
                    clock(cutoff_ms)
                ));
            }
            Limited::Extended { resume_at_ms } => {
                self.park.hit.insert(name.to_string());
                self.note(format!(
                    "{name} hit the usage limit too (it resets at {at}): the team now resumes \
                     at {}.",
                    clock_s(resume_at_ms)
                ));
            }
            Limited::Known => {
                self.park.hit.insert(name.to_string());
            }
        }
        self.publish();
    }

    /// When the park has something to do next.
    pub(super) fn park_due(&self) -> Option<Instant> {
        let due = self.park.park.due_ms()?;
        Some(Instant::now() + Duration::from_millis(due.saturating_sub(now_ms())))
    }

    /// Does what the park has due now.
    pub(super) fn on_park_due(&mut self) {
        while let Some(step) = self.park.park.tick(now_ms()) {
            match step {
                ParkStep::Resume { name, number, of } => self.resume_parked(&name, number, of),
                ParkStep::Done => self.park.hit.clear(),
                ParkStep::CutOff(Stopped::CutOff { cutoff_ms, .. }) => {
                    let left = self.park.park.queue().join(", ");
                    self.note(format!(
                        "Not resuming {left}: it is past the cut-off ({}). They stay parked; \
                         /limits resume now resumes them.",
                        clock(cutoff_ms)
                    ));
                }
            }
        }
        if !self.park.park.active() {
            self.park.hit.clear();
        }
        self.publish();
    }

    /// Resumes `name` (`number` of `of`): the client's own limit dialog answered, told to go
    /// on when its work was stopped, what was held for it delivered.
    fn resume_parked(&mut self, name: &str, number: usize, of: usize) {
        let hit = self.park.hit.remove(name);
        let (held, kept): (Vec<HeldEntry>, Vec<HeldEntry>) = std::mem::take(&mut self.park.held)
            .into_iter()
            .partition(|h| h.to == name);
        self.park.held = kept;
        let stopped = self
            .roster
            .get(name)
            .and_then(|t| t.stopped().map(str::to_string));
        if let Some(how) = stopped
            .filter(|_| self.knows_teammate(name))
            .or_else(|| (!self.knows_teammate(name)).then(|| "no longer in the team".to_string()))
        {
            self.note(format!(
                "Not resuming {name} ({number} of {of}): it is not running ({how}); what was \
                 held for it is not sent."
            ));
            return self.drop_held(held);
        }
        if let Some(why) = self.over_budget(name) {
            self.note(format!(
                "Not resuming {name} ({number} of {of}): it is paused, {why}; what was held \
                 for it is not sent. /budget {name} DOLLARS raises it."
            ));
            return self.drop_held(held);
        }
        let what = match (hit, held.len()) {
            (true, 0) => "told to go on with its work".to_string(),
            (true, n) => format!("told to go on with its work, and {n} held for it delivered"),
            (false, 0) => "nothing was held for it".to_string(),
            (false, n) => format!("{n} held for it delivered"),
        };
        self.note(format!(
            "Resumed {name} ({number} of {of}) after the usage limit's reset: {what}."
        ));
        let typer = self
            .given
            .executor()
            .key_typer(name)
            .filter(|_| self.is_claude(name));
        let reader = self.given.executor().pane_reader(name);
        let (Some(typer), Some(reader)) = (typer, reader) else {
            return self.deliver_resumed(name, hit, held);
        };
        let who = name.to_string();
        self.store.submit(
            Lane::Keys(who.clone()),
            move |_| {
                let lines = crate::lead::client_prompt::PROMPT_LINES;
                limit_dialog::close(
                    || reader(lines),
                    || typer(PaneKey::Escape),
                    limit_dialog::GONE_WITHIN,
                )
            },
            move |c, answer: DialogAnswer| {
                match &answer {
                    DialogAnswer::NotShown => {}
                    DialogAnswer::Closed { presses } => tracing::info!(
                        teammate = %who,
                        "answered its client's limit dialog (Esc, {presses} press(es))"
                    ),
                    DialogAnswer::StillShown => c.note(format!(
                        "{who}'s client still shows its usage-limit dialog after {} Esc \
                         presses: what was held for it is delivered, but it starts no turn \
                         until the dialog is closed. Jump to its pane and press Esc.",
                        limit_dialog::MAX_PRESSES
                    )),
                    DialogAnswer::KeyFailed(e) => c.note(format!(
                        "Could not close {who}'s usage-limit dialog ({e}): it starts no turn \
                         until the dialog is closed. Jump to its pane and press Esc."
                    )),
                }
                c.deliver_resumed(&who, hit, held);
            },
        );
    }

    /// Writes what a resumed teammate gets: the word to go on, then what was held.
    fn deliver_resumed(&mut self, name: &str, hit: bool, held: Vec<HeldEntry>) {
        if hit {
            let entry = InboxEntry::new(LEAD_NAME, GO_ON).with_summary(Some("limit reset: go on"));
            self.deliver_or_note(name, entry, format!("Could not resume {name}"));
        }
        for h in held {
            self.write_entry(&h.to, h.entry, h.id, |_, _, _| {});
        }
    }

    /// What was held for a teammate that is not resumed: told in the ledger as not sent.
    fn drop_held(&mut self, held: Vec<HeldEntry>) {
        for h in held {
            self.ledger_written(h.id, false);
        }
        self.publish();
    }

    /// The park's state on each teammate's view.
    pub(super) fn apply_park(&self, team: &mut [TeammateView]) {
        let Some(reset_ms) = self.park.park.reset_ms() else {
            return;
        };
        for view in team.iter_mut() {
            if !self.park.park.holds(&view.name) {
                continue;
            }
            view.parked = Some(ParkedView {
                reset_ms,
                resume_at_ms: self.park.park.resume_of(&view.name),
                held: self.park.held.iter().filter(|h| h.to == view.name).count(),
            });
        }
    }

    /// `/limits …`.
    pub(super) fn limits_command(&mut self, command: LimitsCommand) {
        let now = now_ms();
        match command {
            LimitsCommand::Show => {
                let text = self.limits_report(now);
                self.note(text);
            }
            LimitsCommand::Resume(true) => {
                self.park.park.settings.resume = true;
                self.note(
                    "Resuming after a usage limit is on: at a limit the team is parked, and \
                     resumed at the reset.",
                );
                // A limit that holds now parks the team at once.
                let limited: Vec<(String, u64)> = self
                    .roster
                    .iter()
                    .filter_map(|(n, t)| t.rate_limited_until().map(|u| (n.clone(), u)))
                    .filter(|(_, u)| *u > now)
                    .collect();
                for (name, until) in limited {
                    self.park.seen.remove(&name);
                    self.on_limit(&name, until);
                }
            }
            LimitsCommand::Resume(false) => {
                self.park.park.settings.resume = false;
                let left = self.park.park.release();
                self.park.hit.clear();
                let held = std::mem::take(&mut self.park.held);
                if left.is_empty() {
                    self.note("Resuming after a usage limit is off: a limit parks nothing.");
                } else {
                    self.note(format!(
                        "Resuming after a usage limit is off: the park ended ({} no longer \
                         parked); {} held message{} delivered now.",
                        left.join(", "),
                        held.len(),
                        if held.len() == 1 { " is" } else { "s are" }
                    ));
                }
                for h in held {
                    self.write_entry(&h.to, h.entry, h.id, |_, _, _| {});
                }
            }
            LimitsCommand::ResumeNow => {
                if self.park.park.resume_now(now) {
                    self.note("Resuming the parked team now, one teammate at a time.");
                    self.on_park_due();
                } else {
                    self.refuse();
                    self.note("Nothing is parked.");
                }
            }
            LimitsCommand::Until(until) => {
                self.park.park.set_until(until, now);
                match until {
                    Some(t) => self.note(format!(
                        "No resume after a usage limit starts past {} (its next occurrence).",
                        t.format("%H:%M")
                    )),
                    None => self.note("No cut-off: a parked team resumes at any hour."),
                }
            }
        }
        self.publish();
    }

    /// What `/limits` says.
    fn limits_report(&self, now: u64) -> String {
        let settings = self.park.park.settings;
        let mut lines = vec![format!(
            "Resume after a usage limit: {}{}.",
            if settings.resume { "on" } else { "off" },
            settings
                .until
                .map(|t| format!(", no resume past {}", t.format("%H:%M")))
                .unwrap_or_default()
        )];
        match self.park.park.reset_ms() {
            Some(reset) => {
                let queue = self.park.park.queue();
                let next = queue
                    .first()
                    .and_then(|n| self.park.park.resume_of(n))
                    .map_or("not by itself (past the cut-off)".to_string(), clock_s);
                lines.push(format!(
                    "Parked: the limit resets at {}; resuming {} at {next}; {} held.",
                    clock(reset),
                    queue.join(", "),
                    self.park.held.len()
                ));
            }
            None => lines.push("Not parked.".to_string()),
        }
        for (name, t) in self.roster.iter() {
            if let Some(until) = t.rate_limited_until().filter(|u| *u > now) {
                lines.push(format!("{name} is limited until {}.", clock(until)));
            }
        }
        lines.join("\n")
    }
}
