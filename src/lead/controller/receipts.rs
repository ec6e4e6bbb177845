//! The controller's side of the message ledger (`lead::ledger`): a message written is queued
//! or delivered by whether its teammate is busy; a teammate's inbox that changes while it has
//! messages waiting is read (off the loop) to see what it took; its next turn (or anything it
//! sends) after that marks them *turn started*. Every change is a [`LeadEvent::Receipt`], and the
//! teammates' views carry their newest receipts and the unread flag.

use super::state::Controller;
use crate::lead::contract::{LeadEvent, MessageReceipt, TeammateStatus, TeammateView};
use crate::lead::ledger::{Change, Receipt};
use crate::lead::tracking::Activity;
use crate::protocol::time::now_ms;
use crate::store;

/// How many receipts each teammate's view carries.
const RECEIPTS_SHOWN: usize = 3;

impl Controller {
    /// Whether `name` is mid-turn (a message now waits for its turn to end).
    fn is_busy(&self, name: &str) -> bool {
        self.roster
            .get(name)
            .is_some_and(|t| t.activity() == Activity::Working)
    }

    /// A message of the ledger was written (or could not be).
    pub(super) fn ledger_written(&mut self, id: u64, ok: bool) {
        let now = now_ms();
        let Some(sent) = self.ledger.find(id) else {
            return;
        };
        let busy = self.is_busy(&sent.to);
        // Told only when it changed (once per state: `lead::ledger`).
        if let Some(change) = self.ledger.written(id, ok, busy, now) {
            self.tell_receipts(vec![change]);
        }
    }

    pub(super) fn tell_receipts(&mut self, changes: Vec<Change>) {
        for c in changes {
            self.emit(LeadEvent::Receipt {
                id: c.id,
                to: c.to,
                state: c.state,
                at_ms: c.at_ms,
            });
        }
    }

    /// `name`'s inbox changed: when it has messages waiting, read it (lock-free, off the loop)
    /// and see what it took.
    pub(super) fn check_inbox_receipts(&mut self, name: &str) {
        if !self.ledger.waiting_for(name) {
            return;
        }
        let (team, who) = (self.given.team().to_string(), name.to_string());
        self.store.read_then(
            move |home| store::inbox::read(home, &team, &who).map(|r| r.entries),
            {
                let who = name.to_string();
                move |c, read| {
                    // A missing inbox was taken whole (a runtime that removes what it reads).
                    let entries = match read {
                        Ok(entries) => entries,
                        Err(store::StoreError::NotFound { .. }) => Vec::new(),
                        Err(_) => return,
                    };
                    let now = now_ms();
                    let mut changes = c.ledger.inbox_seen(&who, &entries, now);
                    let taken = changes.iter().any(|ch| ch.state == Receipt::Read);
                    // Read, and seen read only now: a frame it sent after the message was
                    // sent (already handled) showed it acted on it.
                    // (Not for an in-process teammate: its runtime's events say it.)
                    let acted = c
                        .roster
                        .get(&who)
                        .filter(|t| !t.events_drive())
                        .and_then(|t| t.last_acted_ms());
                    if taken && let Some(acted) = acted {
                        changes.extend(c.ledger.acted_after_sent(&who, acted, now));
                    }
                    // A teammate on another host: its read marks come over the link, after
                    // its turn may already show as working (both travel on their own); one
                    // that took the entry and works now started its turn on it.
                    if taken && c.host_of(&who).is_some() && c.is_busy(&who) {
                        changes.extend(c.ledger.turn_started(&who, now_ms()));
                    }
                    c.tell_receipts(changes);
                    // It took what the lead sent while the lead's own `isActive: true` stands:
                    // its transcript tells when its turn begins.
                    if taken && let Some(mark) = c.roster.get(&who).and_then(|t| t.lead_mark()) {
                        c.read_claude_transcript_for_turn(&who, Some(mark.at_ms()));
                    }
                }
            },
        );
    }

    /// `name` started a turn or sent something, at `at_ms` (its own time): what it read is
    /// marked *turn started*, and the lead's own `isActive: true` for it (`LeadMark`) gives way
    /// to the client's. Something it sent before the lead marked it (an idle notification of
    /// the turn before, drained late) is no sign of a turn on what the lead sent since.
    pub(super) fn teammate_acted(&mut self, name: &str, at_ms: u64) {
        if let Some(t) = self.roster.get_mut(name) {
            if t.lead_mark().is_some_and(|m| at_ms < m.at_ms()) {
                return;
            }
            t.turn_seen(at_ms);
        }
        // Only what was sent before the frame: a frame of the turn before, drained after it
        // took a new message, is no sign of a turn on that one. A host's clock is not the
        // lead's.
        let now = now_ms();
        let by = if self.host_of(name).is_some() {
            now
        } else {
            at_ms.min(now)
        };
        let mut events_drive = false;
        if let Some(t) = self.roster.get_mut(name) {
            t.acted(by);
            events_drive = t.events_drive();
        }
        if events_drive {
            // An in-process teammate's runtime says when it takes a message and when its turn
            // starts, in order: a frame of its (an idle notification of the turn before, drained
            // after it took a message queued meanwhile) says nothing more, and would mark that
            // message's turn started while the teammate shows idle.
            return;
        }
        let changes = self.ledger.acted_after_sent(name, by, now);
        self.tell_receipts(changes);
    }

    /// Before the views are published: waiting messages follow their teammates' business,
    /// a teammate at work has started a turn after what it read, and each view gets its
    /// receipts.
    pub(super) fn publish_receipts(&mut self, team: &mut [TeammateView]) {
        let now = now_ms();
        for view in team.iter_mut() {
            let working = view.status == TeammateStatus::Working;
            let mut changes = self.ledger.busy(&view.name, working, now);
            if working {
                changes.extend(self.ledger.turn_started(&view.name, now));
            }
            self.tell_receipts(changes);
            view.messages = self
                .ledger
                .recent(&view.name, RECEIPTS_SHOWN)
                .into_iter()
                .map(|s| MessageReceipt {
                    id: s.id,
                    preview: s.preview,
                    state: s.state,
                    sent_ms: s.sent_ms,
                    since_ms: s.since_ms,
                })
                .collect();
            view.unread_since = self.ledger.unread_since(&view.name, now);
        }
    }
}
