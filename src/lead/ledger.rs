//! The message ledger: every message and frame the lead sends a teammate (its answers to
//! permission and plan requests, shutdown and mode requests, task assignments), and how far
//! it got. An entry is *queued* when it was written to the inbox of a teammate that is busy
//! (it reads its inbox when its turn ends), *delivered* once it waits for a teammate that is
//! free (written then, or the turn ended), *read* once the teammate took it (Claude Code sets
//! the entry's `read`; teamlead's teammates do too, or remove it), and *turn started* once the
//! teammate began a turn after reading it (its `isActive`, an in-process turn, or anything it
//! sends): a fact, not a judgement of what it did with it (a `shell` teammate reads a message
//! that holds no command and does nothing else). Receipts only move forward, each state once:
//! queued → delivered → read → turn started (a delivered message whose teammate gets busy
//! again stays delivered; the busy teammate is remembered apart for the unread flag). An
//! answer to a request is never queued: the teammate waits for it mid-turn. An entry that stays unread past
//! [`UNREAD_FLAG_MS`] while its teammate is busy is flagged. The lead shows the receipts beside
//! the message in the transcript, in the teams dialog, in `ctl events` and `inspect`; a
//! frame's preview says what it is (`answer: permission granted`).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::protocol::InboxEntry;
use crate::protocol::frames::Frame;

/// The most messages the ledger keeps (the oldest go first).
const KEPT: usize = 500;

/// A message unread for this long while its teammate is busy is flagged.
pub const UNREAD_FLAG_MS: u64 = 60_000;

/// How far a message got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Receipt {
    /// In the inbox of a teammate that is busy: it reads it when its turn ends.
    Queued,
    /// In the inbox of a teammate that is free.
    Delivered,
    /// The teammate took it.
    Read,
    /// The teammate began a turn after it read it (what it did there is not known).
    #[serde(rename = "turn_started", alias = "acted")]
    TurnStarted,
    /// It could not be written.
    Failed,
    /// Its turn started on it, but what that turn sent back (a permission or plan request,
    /// a message) never reached the lead: its client said so (`controller::claude_facts`).
    ReplyLost,
}

impl Receipt {
    pub fn as_str(self) -> &'static str {
        match self {
            Receipt::Queued => "queued",
            Receipt::Delivered => "delivered",
            Receipt::Read => "read",
            Receipt::TurnStarted => "turn started",
            Receipt::Failed => "not sent",
            Receipt::ReplyLost => "not done: its reply was lost",
        }
    }

    /// Whether the teammate has not taken it yet.
    pub fn unread(self) -> bool {
        matches!(self, Receipt::Queued | Receipt::Delivered)
    }
}

/// One message and its receipt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    pub id: u64,
    pub to: String,
    /// The inbox entry's key (`InboxEntry::dedup_key`): how it is found in the inbox.
    key: String,
    pub preview: String,
    pub sent_ms: u64,
    pub state: Receipt,
    /// When it reached its state.
    pub since_ms: u64,
    /// An answer to a request the teammate waits for mid-turn (never queued).
    answer: bool,
    /// Whether its first receipt (queued, delivered or not sent) was told.
    written: bool,
}

/// A receipt that changed: the message, its new state, and when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub id: u64,
    pub to: String,
    pub state: Receipt,
    pub at_ms: u64,
}

/// Every message sent, with its receipt.
#[derive(Debug, Default)]
pub struct Ledger {
    next: u64,
    sent: VecDeque<Sent>,
    /// The teammates mid-turn now (for the unread flag; receipts never go back for it).
    busy: std::collections::HashSet<String>,
}

impl Ledger {
    /// `entry` is being written to `to`'s inbox: its id.
    pub fn sending(&mut self, to: &str, entry: &InboxEntry, now_ms: u64) -> u64 {
        self.next += 1;
        let frame = entry.parse_frame();
        let preview: String = match &frame {
            Some(frame) => frame_preview(frame),
            None => entry.text.chars().take(80).collect(),
        };
        self.sent.push_back(Sent {
            id: self.next,
            to: to.to_string(),
            key: entry.dedup_key(),
            preview,
            sent_ms: now_ms,
            state: Receipt::Queued,
            since_ms: now_ms,
            answer: frame.as_ref().is_some_and(is_answer),
            written: false,
        });
        while self.sent.len() > KEPT {
            self.sent.pop_front();
        }
        self.next
    }

    /// The message is in the inbox (`busy`: its teammate is mid-turn), or could not be
    /// written: its first receipt, told once (a late one after a read tells nothing).
    pub fn written(&mut self, id: u64, ok: bool, busy: bool, now_ms: u64) -> Option<Change> {
        let sent = self.sent.iter_mut().find(|s| s.id == id)?;
        let state = match (ok, busy && !sent.answer) {
            (false, _) => Receipt::Failed,
            (true, true) => Receipt::Queued,
            (true, false) => Receipt::Delivered,
        };
        let first = !std::mem::replace(&mut sent.written, true);
        if first && sent.state == state {
            // Made `queued` by `sending`: the first receipt says so once.
            sent.since_ms = now_ms;
            return Some(Change {
                id: sent.id,
                to: sent.to.clone(),
                state,
                at_ms: now_ms,
            });
        }
        set(sent, state, now_ms)
    }

    /// Message `id`, if it is still kept.
    pub fn find(&self, id: u64) -> Option<Sent> {
        self.sent.iter().find(|s| s.id == id).cloned()
    }

    /// Whether `to` has messages not yet acted on (its inbox is worth reading).
    pub fn waiting_for(&self, to: &str) -> bool {
        self.sent
            .iter()
            .any(|s| s.to == to && matches!(s.state, Receipt::Queued | Receipt::Delivered))
    }

    /// Whether `to` may be about to start a turn on something the lead sent it: an entry not
    /// acted on yet (waiting in its inbox, or taken a moment ago).
    pub fn may_start_turn(&self, to: &str) -> bool {
        self.sent.iter().any(|s| {
            s.to == to
                && matches!(
                    s.state,
                    Receipt::Queued | Receipt::Delivered | Receipt::Read
                )
        })
    }

    /// The oldest message to `to` it has not started a turn on (written, or read), answers
    /// left out.
    pub fn not_turned(&self, to: &str) -> Option<Sent> {
        self.sent
            .iter()
            .find(|s| {
                s.to == to
                    && !s.answer
                    && s.written
                    && matches!(s.state, Receipt::Delivered | Receipt::Read)
            })
            .cloned()
    }

    /// `to`'s inbox as read now: messages marked read, or gone from it, are read.
    pub fn inbox_seen(&mut self, to: &str, inbox: &[InboxEntry], now_ms: u64) -> Vec<Change> {
        let mut changes = Vec::new();
        for sent in self
            .sent
            .iter_mut()
            .filter(|s| s.to == to && s.state.unread())
        {
            let entry = inbox.iter().find(|e| e.dedup_key() == sent.key);
            // Gone from the inbox is read only once it was there: a read of the inbox that
            // came before the lead's own write landed does not have it yet.
            let read = match entry {
                Some(e) => e.read == Some(true),
                None => sent.written,
            };
            if read {
                changes.extend(set(sent, Receipt::Read, now_ms));
            }
        }
        changes
    }

    /// `to` took the entry with this key into a turn (an in-process teammate says so as it
    /// happens): the message is read.
    pub fn taken(&mut self, to: &str, key: &str, now_ms: u64) -> Option<Change> {
        let sent = self
            .sent
            .iter_mut()
            .find(|s| s.to == to && s.key == key && s.state.unread())?;
        set(sent, Receipt::Read, now_ms)
    }

    /// `to` is busy (`true`) or free: when free, its queued messages are delivered (waiting for
    /// a free teammate); a delivered one never goes back to queued.
    pub fn busy(&mut self, to: &str, busy: bool, now_ms: u64) -> Vec<Change> {
        if busy {
            self.busy.insert(to.to_string());
            return Vec::new();
        }
        self.busy.remove(to);
        self.sent
            .iter_mut()
            .filter(|s| s.to == to && s.state == Receipt::Queued && s.written)
            .filter_map(|s| set(s, Receipt::Delivered, now_ms))
            .collect()
    }

    /// `to` started a turn (or sent something) at `now_ms`: what it had read is marked
    /// *turn started*.
    pub fn turn_started(&mut self, to: &str, now_ms: u64) -> Vec<Change> {
        self.sent
            .iter_mut()
            .filter(|s| s.to == to && s.state == Receipt::Read && s.since_ms <= now_ms)
            .filter_map(|s| set(s, Receipt::TurnStarted, now_ms))
            .collect()
    }

    /// `to` sent something at `acted_ms` (its frame's own time), seen by the lead at `now_ms`:
    /// what it has read of what was sent before that is marked *turn started*. Judged by when
    /// each was sent, not by when the lead saw it read: the lead's look at an inbox can come
    /// after the frame (a loaded machine), and a frame of the turn before (an idle
    /// notification drained late) is older than what was sent after it.
    pub fn acted_after_sent(&mut self, to: &str, acted_ms: u64, now_ms: u64) -> Vec<Change> {
        self.sent
            .iter_mut()
            .filter(|s| s.to == to && s.state == Receipt::Read && s.sent_ms <= acted_ms)
            .filter_map(|s| set(s, Receipt::TurnStarted, now_ms))
            .collect()
    }

    /// What `to` sent back on its newest message (read, or its turn started) never reached the lead:
    /// that message is not done.
    pub fn reply_lost(&mut self, to: &str, now_ms: u64) -> Option<Change> {
        let sent = self
            .sent
            .iter_mut()
            .rev()
            .find(|s| s.to == to && !s.answer)?;
        if !matches!(sent.state, Receipt::Read | Receipt::TurnStarted) {
            return None;
        }
        set(sent, Receipt::ReplyLost, now_ms)
    }

    /// `to`'s newest `n` messages, newest first.
    pub fn recent(&self, to: &str, n: usize) -> Vec<Sent> {
        self.sent
            .iter()
            .rev()
            .filter(|s| s.to == to)
            .take(n)
            .cloned()
            .collect()
    }

    /// Since when `to` has left a message unread while busy, when that is longer than
    /// [`UNREAD_FLAG_MS`].
    pub fn unread_since(&self, to: &str, now_ms: u64) -> Option<u64> {
        let busy = self.busy.contains(to);
        self.sent
            .iter()
            .filter(|s| s.to == to && s.state.unread() && !s.answer)
            .filter(|_| busy)
            .map(|s| s.sent_ms)
            .min()
            .filter(|since| now_ms.saturating_sub(*since) >= UNREAD_FLAG_MS)
    }
}

/// Answers to a request the teammate waits for (it reads them mid-turn).
fn is_answer(frame: &Frame) -> bool {
    matches!(
        frame,
        Frame::PermissionResponse(_)
            | Frame::SandboxPermissionResponse(_)
            | Frame::PlanApprovalResponse(_)
    )
}

/// A frame in a few words, for the ledger's rows.
fn frame_preview(frame: &Frame) -> String {
    match frame {
        Frame::PermissionResponse(r) if r.approved() => "answer: permission granted".into(),
        Frame::PermissionResponse(_) => "answer: permission denied".into(),
        Frame::SandboxPermissionResponse(r) => format!(
            "answer: network access to {} {}",
            crate::protocol::display::visible_line(&r.host),
            if r.allow { "allowed" } else { "denied" }
        ),
        Frame::PlanApprovalResponse(r) if r.approved => "answer: plan approved".into(),
        Frame::PlanApprovalResponse(_) => "answer: plan rejected".into(),
        Frame::ShutdownRequest(_) => "shutdown request".into(),
        Frame::ModeSetRequest(r) => format!("mode set to {}", r.mode),
        Frame::TaskAssignment(t) => format!(
            "task #{} assigned",
            crate::protocol::display::visible_line(&t.task_id)
        ),
        other => other.kind().replace('_', " "),
    }
}

fn set(sent: &mut Sent, state: Receipt, now_ms: u64) -> Option<Change> {
    // Receipts only move forward, each state once (a late `written` never undoes a read; a
    // delivered message never goes back to queued).
    let rank = |r: Receipt| match r {
        Receipt::Queued => 0,
        Receipt::Delivered => 1,
        Receipt::Read => 2,
        Receipt::TurnStarted => 3,
        Receipt::Failed | Receipt::ReplyLost => 4,
    };
    if sent.state == state || rank(state) < rank(sent.state) {
        return None;
    }
    sent.state = state;
    sent.since_ms = now_ms;
    Some(Change {
        id: sent.id,
        to: sent.to.clone(),
        state,
        at_ms: now_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_goes_queued_delivered_read_turn_started() {
        let mut ledger = Ledger::default();
        let entry = InboxEntry::new("team-lead", "rebase on main");
        let id = ledger.sending("alpha", &entry, 1_000);
        assert!(ledger.busy("alpha", true, 1_005).is_empty());
        let c = ledger
            .written(id, true, true, 1_010)
            .expect("its first receipt");
        assert_eq!(c.state, Receipt::Queued);
        assert!(ledger.waiting_for("alpha"));
        assert_eq!(ledger.unread_since("alpha", 2_000), None);
        assert_eq!(ledger.unread_since("alpha", 61_000), Some(1_000));
        // Its turn ends: the message waits for a free teammate.
        let c = ledger.busy("alpha", false, 5_000);
        assert_eq!(c[0].state, Receipt::Delivered);
        // Still in the inbox, unread: nothing changes; marked read: read.
        let mut inbox = vec![entry.clone()];
        assert!(ledger.inbox_seen("alpha", &inbox, 6_000).is_empty());
        inbox[0].read = Some(true);
        let c = ledger.inbox_seen("alpha", &inbox, 7_000);
        assert_eq!((c[0].id, c[0].state), (id, Receipt::Read));
        // A late "written" never goes back.
        assert_eq!(ledger.written(id, true, true, 7_500), None);
        assert!(
            ledger.may_start_turn("alpha"),
            "read, its turn may be starting"
        );
        let c = ledger.turn_started("alpha", 8_000);
        assert_eq!(c[0].state, Receipt::TurnStarted);
        assert_eq!(Receipt::TurnStarted.as_str(), "turn started");
        assert!(!ledger.waiting_for("alpha"));
        assert!(!ledger.may_start_turn("alpha"));
        assert_eq!(ledger.recent("alpha", 3)[0].state, Receipt::TurnStarted);
        // What its turn sent back was lost: the message is not done, and stays so.
        let c = ledger.reply_lost("alpha", 9_000).unwrap();
        assert_eq!((c.id, c.state), (id, Receipt::ReplyLost));
        assert_eq!(c.state.as_str(), "not done: its reply was lost");
        assert!(ledger.turn_started("alpha", 9_500).is_empty());
        assert_eq!(ledger.reply_lost("alpha", 9_600), None, "told once");
    }

    #[test]
    fn a_message_not_yet_written_is_not_read_by_its_absence() {
        let mut ledger = Ledger::default();
        let entry = InboxEntry::new("team-lead", "rebase on main");
        let id = ledger.sending("alpha", &entry, 1_000);
        // The inbox read before the lead's own write landed: no entry, nothing read.
        assert!(ledger.inbox_seen("alpha", &[], 1_001).is_empty());
        let c = ledger.written(id, true, false, 1_002).expect("written");
        assert_eq!(c.state, Receipt::Delivered);
        // Once it was written, gone from the inbox is taken (a runtime that removes what it
        // reads).
        let c = ledger.inbox_seen("alpha", &[], 1_003);
        assert_eq!((c[0].id, c[0].state), (id, Receipt::Read));
    }

    #[test]
    fn a_frame_moves_what_was_sent_before_it_and_read_whenever_the_lead_saw_the_read() {
        let mut ledger = Ledger::default();
        let first = InboxEntry::new("team-lead", "first");
        let id = ledger.sending("alpha", &first, 1_000);
        ledger.written(id, true, false, 1_000);
        // Read, seen by the lead only after the frame the teammate wrote at 3_000.
        let mut inbox = vec![first.clone()];
        inbox[0].read = Some(true);
        ledger.inbox_seen("alpha", &inbox, 5_000);
        let c = ledger.acted_after_sent("alpha", 3_000, 5_100);
        assert_eq!((c[0].id, c[0].state), (id, Receipt::TurnStarted));
        // Sent after the frame (a late idle notification of the turn before): not moved.
        let second = InboxEntry::new("team-lead", "second");
        let id2 = ledger.sending("alpha", &second, 6_000);
        ledger.written(id2, true, false, 6_000);
        inbox.push(second);
        inbox[1].read = Some(true);
        ledger.inbox_seen("alpha", &inbox, 6_500);
        assert!(ledger.acted_after_sent("alpha", 5_900, 6_600).is_empty());
    }

    #[test]
    fn a_message_an_in_process_teammate_takes_is_read_then_turn_started_in_order() {
        let mut ledger = Ledger::default();
        let entry = InboxEntry::new("team-lead", "stop that");
        let other = InboxEntry::new("team-lead", "and this");
        let id = ledger.sending("alpha", &entry, 1_000);
        let later = ledger.sending("alpha", &other, 1_001);
        ledger.written(id, true, false, 1_010);
        ledger.written(later, true, false, 1_011);
        // The runtime's `Received` (with the entry's key), then its `Working`, then `Idle`,
        // all before any read of its inbox: each message it took ends turn started.
        let c = ledger.taken("alpha", &entry.dedup_key(), 2_000).unwrap();
        assert_eq!((c.id, c.state), (id, Receipt::Read));
        assert_eq!(
            ledger.taken("alpha", &entry.dedup_key(), 2_001),
            None,
            "once"
        );
        let c = ledger.turn_started("alpha", 2_002);
        assert_eq!(c.iter().map(|c| c.id).collect::<Vec<_>>(), [id]);
        assert_eq!(ledger.find(id).unwrap().state, Receipt::TurnStarted);
        // The one it has not taken yet stays delivered, and a late read of the inbox (both
        // gone from it) moves only that one.
        assert_eq!(ledger.find(later).unwrap().state, Receipt::Delivered);
        let c = ledger.inbox_seen("alpha", &[], 3_000);
        assert_eq!(
            c.iter().map(|c| (c.id, c.state)).collect::<Vec<_>>(),
            [(later, Receipt::Read)]
        );
        // Another teammate's entry with the same text is not this one.
        assert_eq!(ledger.taken("beta", &entry.dedup_key(), 3_100), None);
    }

    #[test]
    fn receipts_never_go_back_and_each_state_is_told_once() {
        let mut ledger = Ledger::default();
        let entry = InboxEntry::new("team-lead", "look at this");
        let id = ledger.sending("alpha", &entry, 1);
        let mut told = Vec::new();
        // Written while alpha is free, then alpha gets busy, free, busy again, unread.
        told.extend(ledger.written(id, true, false, 2));
        for (t, busy) in [(3, true), (4, false), (5, true), (6, false), (7, true)] {
            told.extend(ledger.busy("alpha", busy, t));
        }
        // A second report of the write tells nothing.
        told.extend(ledger.written(id, true, true, 8));
        let mut read = entry.clone();
        read.read = Some(true);
        told.extend(ledger.inbox_seen("alpha", &[read.clone()], 9));
        told.extend(ledger.inbox_seen("alpha", &[read], 10));
        told.extend(ledger.turn_started("alpha", 11));
        told.extend(ledger.turn_started("alpha", 12));
        told.extend(ledger.busy("alpha", false, 13));
        let states: Vec<Receipt> = told.iter().map(|c| c.state).collect();
        assert_eq!(
            states,
            vec![Receipt::Delivered, Receipt::Read, Receipt::TurnStarted]
        );
        // Busy with the message unread for a minute: flagged, though it stays delivered.
        let late = ledger.sending("alpha", &InboxEntry::new("team-lead", "two"), 100);
        ledger.written(late, true, false, 100);
        ledger.busy("alpha", true, 200);
        assert_eq!(
            ledger.unread_since("alpha", 100 + UNREAD_FLAG_MS),
            Some(100)
        );
        assert_eq!(ledger.find(late).unwrap().state, Receipt::Delivered);
        // Queued first, then delivered when its turn ends: two receipts, in order.
        let q = ledger.sending("beta", &InboxEntry::new("team-lead", "three"), 300);
        let first = ledger.written(q, true, true, 301).map(|c| c.state);
        let then: Vec<Receipt> = ledger
            .busy("beta", false, 302)
            .iter()
            .map(|c| c.state)
            .collect();
        assert_eq!(
            (first, then),
            (Some(Receipt::Queued), vec![Receipt::Delivered])
        );
    }

    #[test]
    fn an_answer_is_never_queued_and_says_what_it_is() {
        use crate::protocol::frames::{PermissionRequest, PermissionResponse, ShutdownRequest};
        let mut ledger = Ledger::default();
        let request: PermissionRequest = serde_json::from_value(serde_json::json!({
            "type": "permission_request", "request_id": "perm-1", "agent_id": "alpha",
            "tool_name": "Bash", "tool_use_id": "toolu_1", "description": "tests",
            "input": {"command": "make test"}, "permission_suggestions": []
        }))
        .unwrap();
        let answer = InboxEntry::frame(
            "team-lead",
            &Frame::PermissionResponse(PermissionResponse::deny(&request, None)),
        );
        let id = ledger.sending("alpha", &answer, 1);
        // alpha is mid-turn, waiting for this very answer: delivered, not queued.
        let c = ledger.written(id, true, true, 2).unwrap();
        assert_eq!(c.state, Receipt::Delivered);
        assert!(ledger.busy("alpha", true, 3).is_empty());
        assert_eq!(
            ledger.recent("alpha", 1)[0].preview,
            "answer: permission denied"
        );
        // A shutdown request waits for the turn to end, as a message does.
        let shutdown = InboxEntry::frame(
            "team-lead",
            &Frame::ShutdownRequest(ShutdownRequest {
                request_id: "shutdown-1".into(),
                from: "team-lead".into(),
                reason: None,
                timestamp: "2026-01-01T00:00:00.000Z".into(),
            }),
        );
        let id = ledger.sending("alpha", &shutdown, 4);
        ledger.written(id, true, true, 5);
        assert_eq!(ledger.find(id).unwrap().state, Receipt::Queued);
        assert_eq!(ledger.recent("alpha", 1)[0].preview, "shutdown request");
    }

    #[test]
    fn a_message_gone_from_the_inbox_was_read_and_others_are_untouched() {
        let mut ledger = Ledger::default();
        let a = ledger.sending("alpha", &InboxEntry::new("team-lead", "one"), 1);
        let b = ledger.sending("beta", &InboxEntry::new("team-lead", "two"), 1);
        ledger.written(a, true, false, 2);
        ledger.written(b, true, false, 2);
        let c = ledger.inbox_seen("alpha", &[], 3);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].id, a);
        assert_eq!(ledger.recent("beta", 1)[0].state, Receipt::Delivered);
        let x = ledger.sending("beta", &InboxEntry::new("team-lead", "x"), 4);
        assert_eq!(
            ledger.written(x, false, false, 5).map(|c| c.state),
            Some(Receipt::Failed)
        );
    }
}
