//! What the lead tracks about one teammate besides the team file ([`Tracking`]), in parts
//! with private fields: its activity and the lead's own `isActive` mark (here), its shutdown
//! wait ([`shutdown`]), its mode bookkeeping ([`modes`]), a `claude` teammate's transcript
//! facts ([`claude`]) and its start and client prompt ([`client_watch`]). The controller's
//! roster (`controller::roster`) holds one per teammate; `view_builder` reads them.

pub mod claude;
pub mod client_watch;
pub mod modes;
pub mod shutdown;

use std::collections::VecDeque;

use crate::protocol::frames::ReportedUsage;

pub use claude::{ClaudeFacts, FactsRead};
pub use client_watch::ClientWatch;
pub use modes::{HeldMode, ModeBook};
pub use shutdown::ShutdownWait;

/// How many one-liners of a teammate's recent messages are kept.
pub const RECENT_MESSAGES: usize = 5;

/// What a teammate was last seen doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activity {
    /// Nothing heard yet: `isActive` in the team file decides.
    #[default]
    Unknown,
    Working,
    Idle {
        since_ms: u64,
    },
    /// Its runtime ended (the member may still be listed).
    Exited,
}

/// What the lead tracks about one teammate besides the team file.
#[derive(Debug, Clone, Default)]
pub struct Tracking {
    activity: Activity,
    /// The time (its frame's own, bounded by the lead's clock) of the latest thing it sent.
    last_acted_ms: Option<u64>,
    /// Its host's link is down: (host, since epoch ms).
    unreachable: Option<(String, u64)>,
    /// The last few messages it sent, as one-liners (oldest first).
    recent: VecDeque<String>,
    /// Its runtime ended without shutting down (the status shown), until it is respawned.
    stopped: Option<String>,
    /// What its model used, as its last idle notification (or transcript) reported.
    usage: Option<ReportedUsage>,
    /// Until when (epoch ms) its rate or usage limit holds, as its idle notification or its
    /// transcript says.
    rate_limited_until: Option<u64>,
    /// `isActive` as last read from the team file.
    last_is_active: Option<bool>,
    /// An in-process teammate: its runtime's events (`Working`, `Idle`) say when its turns
    /// start and end, in order, so neither a read of the team file nor its idle notification
    /// (through the lead's inbox), either of which can be a turn behind, changes its activity.
    events_drive: bool,
    /// The lead wrote this `claude` teammate's `isActive: true` itself before it delivered an
    /// entry (`controller::files`), and the client has shown no turn of its own since: a
    /// `true` in the team file is then the lead's word, not a turn.
    lead_mark: Option<LeadMark>,
    /// The text of the last plain message it sent the lead (a final answer repeating it is
    /// not shown twice).
    last_message: Option<String>,
    /// How many of its turns the lead saw end: an off-loop wait for the next one (a plan
    /// verdict held until the turn that asked for it has ended, `controller::incoming`).
    turn_ends: TurnEnds,
    shutdown: ShutdownWait,
    modes: ModeBook,
    claude: ClaudeFacts,
    client: ClientWatch,
}

/// A count of a teammate's turn ends, shared with off-loop waits.
#[derive(Debug, Clone, Default)]
pub struct TurnEnds(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl TurnEnds {
    /// How many were seen so far.
    pub fn count(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn bump(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Waits (polling, without holding a thread) until more than `seen` turns ended, at most
    /// `within`: whether one did.
    pub async fn wait_past(&self, seen: u64, within: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        while self.count() <= seen {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        true
    }
}

/// The lead's own `isActive: true` for an idle `claude` teammate (docs/DESIGN.md, "The lead
/// marks an idle claude teammate active before it delivers"). It stands until the client shows
/// a turn of its own: its transcript begins a turn, it sends something, or it writes
/// `isActive: false` (its turn ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadMark {
    /// When the lead decided to write it (epoch ms): what the client does from then on is its
    /// answer to it.
    at_ms: u64,
    /// Its write is done (until then a `false` read is the turn before's end, not this one's).
    written: bool,
    /// A `true` was read while the write was on its way (the client's own if the lead's write
    /// found the file not idle and wrote nothing).
    true_seen: bool,
    /// The teammate was told as not starting a turn on it.
    reported: bool,
}

impl LeadMark {
    /// When the lead decided to write it (epoch ms).
    pub fn at_ms(&self) -> u64 {
        self.at_ms
    }

    /// Was the teammate told as not starting a turn on it?
    pub fn reported(&self) -> bool {
        self.reported
    }
}

impl Tracking {
    /// What it was last seen doing.
    pub fn activity(&self) -> Activity {
        self.activity
    }

    /// Its runtime ended (the member may still be listed).
    pub fn exited(&mut self) {
        self.activity = Activity::Exited;
    }

    /// Its idle notification (through the inbox) says a turn ended at `since_ms`: taken unless
    /// it exited or its runtime's events speak for it.
    pub fn idle_reported(&mut self, since_ms: u64) {
        if self.activity != Activity::Exited && !self.events_drive {
            self.went_idle(since_ms);
        }
    }

    /// An in-process teammate's runtime event: from now on its events decide its activity.
    pub fn follow_events(&mut self) {
        self.events_drive = true;
    }

    /// Do its runtime's events decide its activity (an in-process teammate)?
    pub fn events_drive(&self) -> bool {
        self.events_drive
    }

    /// Its runtime began a turn.
    pub fn turn_began(&mut self) {
        if self.activity != Activity::Exited {
            self.activity = Activity::Working;
        }
    }

    /// Its runtime ended a turn at `now_ms` (a second end, or one after it exited, is none).
    pub fn turn_ended(&mut self, now_ms: u64) {
        if !matches!(self.activity, Activity::Idle { .. } | Activity::Exited) {
            self.went_idle(now_ms);
        }
    }

    /// How many of its turns were seen to end (shared with off-loop waits).
    pub fn turn_ends(&self) -> &TurnEnds {
        &self.turn_ends
    }

    /// The time of the latest thing it sent.
    pub fn last_acted_ms(&self) -> Option<u64> {
        self.last_acted_ms
    }

    /// It sent something at `by` (the latest time stands).
    pub fn acted(&mut self, by: u64) {
        self.last_acted_ms = self.last_acted_ms.max(Some(by));
    }

    /// Its host's link is down: (host, since epoch ms).
    pub fn unreachable(&self) -> Option<&(String, u64)> {
        self.unreachable.as_ref()
    }

    /// Its host's link went down (`Some`) or came back (`None`).
    pub fn set_unreachable(&mut self, down: Option<(String, u64)>) {
        self.unreachable = down;
    }

    /// The last few messages it sent, oldest first.
    pub fn recent(&self) -> &VecDeque<String> {
        &self.recent
    }

    /// Records a message one-liner, keeping the last [`RECENT_MESSAGES`].
    pub fn remember(&mut self, line: String) {
        self.recent.push_back(line);
        while self.recent.len() > RECENT_MESSAGES {
            self.recent.pop_front();
        }
    }

    /// How its runtime ended without shutting down, until it is respawned.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// It stopped (`status` is shown): nothing of its start or client prompt is awaited.
    pub fn stop(&mut self, status: String) {
        self.stopped = Some(status);
        self.client.clear();
    }

    /// What its model used, as last reported.
    pub fn usage(&self) -> Option<ReportedUsage> {
        self.usage
    }

    /// Its model's use as reported now (an idle notification, or its transcript).
    pub fn set_usage(&mut self, usage: ReportedUsage) {
        self.usage = Some(usage);
    }

    /// Until when (epoch ms) its rate or usage limit holds.
    pub fn rate_limited_until(&self) -> Option<u64> {
        self.rate_limited_until
    }

    /// Its limit holds until `until` (`None`: lifted): whether one was lifted just now.
    pub fn set_rate_limited_until(&mut self, until: Option<u64>) -> bool {
        let lifted = self.rate_limited_until.is_some() && until.is_none();
        self.rate_limited_until = until;
        lifted
    }

    /// It sent the lead a plain message `text`.
    pub fn said(&mut self, text: String) {
        self.last_message = Some(text);
    }

    /// The last plain message it sent, taken (a final answer repeating it is not shown).
    pub fn take_said(&mut self) -> Option<String> {
        self.last_message.take()
    }

    /// Its turn was interrupted at `now_ms` (Esc in a `claude` teammate's pane, its pane
    /// showing `Interrupted`): idle now. The client writes neither an idle notification nor
    /// `isActive: false` for an interrupted turn, and does not write `true` at its next turn's
    /// start while the file says `true` already, so the `true` its interrupted turn wrote says
    /// nothing from now on: it stands as the lead's word (a mark) until the client shows a
    /// turn of its own. A read of that `true` that reaches the lead after the interrupt (a
    /// loaded machine) made it `working` again, for good.
    pub fn interrupted(&mut self, now_ms: u64) {
        if self.activity == Activity::Exited {
            return;
        }
        self.went_idle(now_ms);
        self.true_is_the_leads(now_ms);
    }

    /// The lead's own mark of it as active, while it stands.
    pub fn lead_mark(&self) -> Option<LeadMark> {
        self.lead_mark
    }

    /// The `true` in the team file is the lead's word, not a turn, from `now_ms` until the
    /// client shows a turn of its own: a `claude` teammate just started (its member says
    /// `isActive: true` from the start), or its turn was interrupted. Not reported as a turn
    /// not taken: a first turn is watched by the first-turn check.
    pub fn true_is_the_leads(&mut self, now_ms: u64) {
        self.lead_mark = Some(LeadMark {
            at_ms: now_ms,
            written: true,
            true_seen: false,
            reported: true,
        });
    }

    /// The mark goes (a start that failed).
    pub fn drop_mark(&mut self) {
        self.lead_mark = None;
    }

    /// The mark's teammate is told as not starting a turn on it: whether it was not yet.
    pub fn mark_reported(&mut self) -> bool {
        match self.lead_mark.as_mut() {
            Some(mark) if !mark.reported => {
                mark.reported = true;
                true
            }
            _ => false,
        }
    }

    /// Its shutdown wait.
    pub fn shutdown(&self) -> &ShutdownWait {
        &self.shutdown
    }

    /// Its shutdown wait, to change.
    pub fn shutdown_mut(&mut self) -> &mut ShutdownWait {
        &mut self.shutdown
    }

    /// Its mode bookkeeping.
    pub fn modes(&self) -> &ModeBook {
        &self.modes
    }

    /// Its mode bookkeeping, to change.
    pub fn modes_mut(&mut self) -> &mut ModeBook {
        &mut self.modes
    }

    /// A `claude` teammate's transcript facts.
    pub fn claude(&self) -> &ClaudeFacts {
        &self.claude
    }

    /// A `claude` teammate's transcript facts, to change.
    pub fn claude_mut(&mut self) -> &mut ClaudeFacts {
        &mut self.claude
    }

    /// Its start and client prompt.
    pub fn client(&self) -> &ClientWatch {
        &self.client
    }

    /// Its start and client prompt, to change.
    pub fn client_mut(&mut self) -> &mut ClientWatch {
        &mut self.client
    }

    /// Has it shown no sign of a turn yet (no activity, no message, no usage)?
    pub fn not_turned(&self) -> bool {
        self.activity == Activity::Unknown
            && self.recent.is_empty()
            && self.usage.is_none_or(|u| u.turns == 0)
    }

    /// Follows `isActive` changes in the team file: `true` → working, `false` → idle; a `true`
    /// the lead wrote itself ([`LeadMark`]) is not a turn. Returns whether the client ended a
    /// turn the lead had not seen start (its `false` after the lead's mark: a turn ran).
    pub fn observe_is_active(&mut self, is_active: Option<bool>, now_ms: u64) -> bool {
        if is_active == self.last_is_active {
            return false;
        }
        self.last_is_active = is_active;
        let ended_unseen = is_active == Some(false)
            && match self.lead_mark.as_mut() {
                Some(mark) if mark.written => self.lead_mark.take().is_some(),
                Some(mark) => {
                    mark.true_seen = false;
                    false
                }
                None => false,
            };
        if self.activity == Activity::Exited || self.events_drive {
            return false;
        }
        match is_active {
            Some(true) => match self.lead_mark.as_mut() {
                Some(mark) => mark.true_seen = true,
                None => self.activity = Activity::Working,
            },
            Some(false) if !matches!(self.activity, Activity::Idle { .. }) => {
                self.went_idle(now_ms)
            }
            _ => {}
        }
        ended_unseen
    }

    /// Its turn ended (seen at `since_ms`).
    pub fn went_idle(&mut self, since_ms: u64) {
        self.activity = Activity::Idle { since_ms };
        self.turn_ends.bump();
    }

    /// The lead is about to write `isActive: true` for this teammate before a delivery, unless
    /// a mark of its stands or it has exited: whether it should. The store writes only over a
    /// `false` in the file (the client's own word that it went idle), so the lead's copy,
    /// which can be a moment behind the file, does not decide.
    pub fn mark_before_delivery(&mut self, now_ms: u64) -> bool {
        if self.lead_mark.is_some() || self.activity == Activity::Exited {
            return false;
        }
        self.lead_mark = Some(LeadMark {
            at_ms: now_ms,
            written: false,
            true_seen: false,
            reported: false,
        });
        true
    }

    /// The lead's write is done: `wrote` false means the file was not idle and nothing was
    /// written, so the mark goes (a `true` read meanwhile was the client's: a turn).
    pub fn mark_written(&mut self, wrote: bool) {
        if wrote {
            if let Some(mark) = self.lead_mark.as_mut() {
                mark.written = true;
            }
            return;
        }
        if let Some(mark) = self.lead_mark.take()
            && mark.true_seen
            && self.activity != Activity::Exited
        {
            self.activity = Activity::Working;
        }
    }

    /// The client showed a turn of its own at `at_ms` (its transcript began one, or it sent
    /// something): the lead's mark, if it is older, goes, and the `true` in the file is the
    /// teammate's at work. Returns whether a mark went.
    pub fn turn_seen(&mut self, at_ms: u64) -> bool {
        if self.lead_mark.is_none_or(|m| at_ms < m.at_ms) {
            return false;
        }
        self.lead_mark = None;
        if self.last_is_active == Some(true) && self.activity != Activity::Exited {
            self.activity = Activity::Working;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lead's own `isActive: true` (its mark before a delivery) is not a turn: the status
    /// stays idle until the client shows one (a turn in its transcript or something it sent,
    /// not older than the mark), or its `false` says a turn ran and ended.
    #[test]
    fn the_leads_own_true_is_not_a_turn() {
        let idle = |t: &Tracking| matches!(t.activity, Activity::Idle { .. });
        let mut t = Tracking::default();
        t.observe_is_active(Some(false), 50);
        assert!(t.mark_before_delivery(100));
        assert!(!t.mark_before_delivery(101), "one mark at a time");
        assert!(
            !t.observe_is_active(Some(true), 110),
            "the lead's write read back"
        );
        t.mark_written(true);
        assert!(idle(&t), "the lead's true: still idle");
        assert!(!t.turn_seen(90), "a sign older than the mark");
        assert!(idle(&t) && t.lead_mark.is_some());
        assert!(t.turn_seen(120), "its transcript begins a turn");
        assert_eq!(t.activity, Activity::Working);
        assert!(t.lead_mark.is_none());
        // Its turn ends; marked again while its `false` is still on its way (the turn
        // before's end, read while the lead's write waits for it): no turn yet.
        t.observe_is_active(Some(true), 150);
        t.activity = Activity::Idle { since_ms: 160 };
        assert!(t.mark_before_delivery(170));
        assert!(
            !t.observe_is_active(Some(false), 180),
            "the turn before's end"
        );
        assert!(t.lead_mark.is_some());
        t.mark_written(true);
        t.observe_is_active(Some(true), 190);
        assert!(idle(&t), "the lead's true");
        assert!(
            t.observe_is_active(Some(false), 195),
            "its turn ran and ended"
        );
        // Marked again, and this time only its `false` is seen: a turn ran.
        t.observe_is_active(Some(false), 200);
        assert!(t.mark_before_delivery(300));
        t.observe_is_active(Some(true), 310);
        t.mark_written(true);
        assert!(t.observe_is_active(Some(false), 400), "a turn ran unseen");
        assert!(idle(&t) && t.lead_mark.is_none());
        // Marked, but the file was not idle (the client's own true came first): a turn.
        assert!(t.mark_before_delivery(500));
        t.observe_is_active(Some(true), 510);
        t.mark_written(false);
        assert_eq!(t.activity, Activity::Working);
        t.activity = Activity::Exited;
        assert!(!t.mark_before_delivery(600), "exited: no mark");
    }

    /// An interrupted `claude` teammate is idle, and the `true` of its interrupted turn, read
    /// only after the interrupt, does not make it working; its next turn does.
    #[test]
    fn the_true_of_an_interrupted_turn_read_late_is_not_a_turn() {
        let idle = |t: &Tracking| matches!(t.activity, Activity::Idle { .. });
        let mut t = Tracking::default();
        t.observe_is_active(Some(false), 50);
        assert!(t.mark_before_delivery(100));
        t.mark_written(true);
        // Its transcript begins the turn before the lead read the file's `true` (the lead's
        // own write, which the client's start kept).
        assert!(t.turn_seen(120), "its transcript begins the turn");
        t.interrupted(200);
        assert!(idle(&t));
        t.observe_is_active(Some(true), 210);
        assert!(idle(&t), "the interrupted turn's true, read late");
        assert!(
            !t.mark_before_delivery(300),
            "the file says true: nothing to write"
        );
        assert!(!t.turn_seen(150), "the interrupted turn itself");
        assert!(idle(&t));
        assert!(t.turn_seen(310), "its next turn");
        assert_eq!(t.activity, Activity::Working);
    }

    #[test]
    fn an_in_process_teammates_activity_follows_its_events_not_a_late_read_of_the_file() {
        let mut t = Tracking {
            events_drive: true,
            activity: Activity::Idle { since_ms: 1 },
            ..Tracking::default()
        };
        // Its turn before: the file said true; its Idle event came, then its new turn's
        // Working event; the read of the file that still says the turn before's false comes
        // last and changes nothing.
        t.observe_is_active(Some(true), 10);
        t.activity = Activity::Working;
        assert!(!t.observe_is_active(Some(false), 20));
        assert_eq!(t.activity, Activity::Working);
        // A teammate the file speaks for (a pane's) goes idle on the same read.
        let mut pane = Tracking::default();
        pane.observe_is_active(Some(true), 10);
        pane.observe_is_active(Some(false), 20);
        assert_eq!(pane.activity, Activity::Idle { since_ms: 20 });
    }
}
