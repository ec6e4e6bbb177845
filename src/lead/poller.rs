//! The lead's inbox poller: drains `inboxes/team-lead.json` through the delivery log (recorded
//! durably before removal, de-duplicated across crashes) and sorts every entry into what the
//! controller does with it ([`LeadIncoming`]). An inbox it cannot read is moved to quarantine
//! and a fresh one started (`store::inbox::recover_unreadable`), then drained again. Woken by the file event on the inboxes directory,
//! with the controller's slow safety poll as a fallback.

use std::collections::HashSet;
use std::path::PathBuf;

use super::contract::TranscriptItem;
use crate::protocol::frames::{
    Frame, IdleNotification, PermissionRequest, PlanApprovalRequest, SandboxPermissionRequest,
    ShutdownApproved, ShutdownRejected,
};
use crate::protocol::inbox::frame_one_liner;
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::{self, DeliveryLog, Home, StoreError};

/// The lead's inbox, its delivery log, and what the last take read of the file.
#[derive(Debug)]
pub struct Poller {
    home: Home,
    team: String,
    log: DeliveryLog,
    memo: store::inbox::InboxMemo,
}

/// What one drain produced.
#[derive(Debug, Default)]
pub struct Polled {
    pub incoming: Vec<LeadIncoming>,
    /// Files where bad input was kept.
    pub quarantined: Vec<PathBuf>,
    /// The inbox could not be read and was moved to quarantine (a fresh one was started).
    pub recovered: Vec<store::inbox::Recovered>,
    /// Why the drain stopped early. What it recorded before is in `incoming` all the same
    /// (the delivery log would skip it next time); the rest waits in the inbox for the next
    /// drain (a full disk, a lock in the way).
    pub problem: Option<StoreError>,
}

impl Poller {
    /// Opens the delivery log of the lead's inbox of `team`.
    pub fn open(home: &Home, team: &str) -> Result<Poller, StoreError> {
        let log = DeliveryLog::open(&home.delivery_log_path(team, LEAD_NAME)?)?;
        Ok(Poller {
            home: home.clone(),
            team: team.to_string(),
            log,
            memo: store::inbox::InboxMemo::default(),
        })
    }

    /// Takes every new entry out of the lead's inbox, sorted into actions, in inbox order.
    pub fn poll(&mut self) -> Polled {
        // The drain rewrites the file: what the last take read of it is of no more use, and
        // its bytes are freed while the inbox stays quiet.
        self.memo.forget();
        let mut polled = self.drain();
        // An inbox the lead cannot read would make it deaf: its bytes go to quarantine, a
        // fresh inbox is started, and what arrived since is drained at once.
        for _ in 0..2 {
            let inbox = self.home.inbox_path(&self.team, LEAD_NAME).ok();
            let unreadable = matches!(&polled.problem,
                Some(StoreError::Parse { path, .. }) if Some(path) == inbox.as_ref());
            if !unreadable {
                break;
            }
            match store::inbox::recover_unreadable(&self.home, &self.team, LEAD_NAME) {
                Ok(found) => {
                    polled.recovered.extend(found);
                    let again = self.drain();
                    polled.incoming.extend(again.incoming);
                    polled.quarantined.extend(again.quarantined);
                    polled.problem = again.problem;
                }
                Err(e) => {
                    polled.problem = Some(e);
                    break;
                }
            }
        }
        polled
    }

    /// Takes every new entry without touching the inbox (no lock, no write), sorted into
    /// actions, and whether unread entries stay in the file for a later [`Poller::poll`]. A
    /// file that does not parse goes through [`Poller::poll`] at once (its recovery).
    pub fn take(&mut self) -> (Polled, store::inbox::Taken) {
        let mut delivered = Vec::new();
        let taken = store::inbox::take_unread_into(
            &self.home,
            &self.team,
            LEAD_NAME,
            &mut self.log,
            &mut self.memo,
            &mut delivered,
        );
        let mut polled = Polled {
            incoming: delivered.into_iter().map(classify).collect(),
            ..Polled::default()
        };
        match taken {
            Ok(store::inbox::Taken::Unparsed) => {
                let rest = self.poll();
                polled.incoming.extend(rest.incoming);
                polled.quarantined = rest.quarantined;
                polled.recovered = rest.recovered;
                polled.problem = rest.problem;
                (polled, store::inbox::Taken::Empty)
            }
            Ok(taken) => (polled, taken),
            Err(e) => {
                // What the take could not record waits for the next one.
                polled.problem = Some(e);
                (polled, store::inbox::Taken::Pending)
            }
        }
    }

    /// Entries handed over before they are in the inbox (a teammate's on another host, as the
    /// host's link reads them): those the delivery log does not hold are noted there and
    /// sorted into actions, so the take that later finds them in the file passes them by. A
    /// log that cannot be written takes nothing here: the file's take delivers them (and says
    /// what is wrong).
    pub fn take_handed(&mut self, entries: Vec<InboxEntry>) -> Polled {
        let (mut fresh, mut seen) = (Vec::with_capacity(entries.len()), HashSet::new());
        for entry in entries {
            store::inbox::keep_if_fresh(entry, &self.log, &mut seen, &mut fresh);
        }
        if self.log.note(&fresh).is_err() {
            return Polled::default();
        }
        Polled {
            incoming: fresh.into_iter().map(classify).collect(),
            ..Polled::default()
        }
    }

    fn drain(&mut self) -> Polled {
        let mut delivered = Vec::new();
        let drained = store::inbox::drain_unread_into(
            &self.home,
            &self.team,
            LEAD_NAME,
            &mut self.log,
            &mut delivered,
        );
        let (quarantined, problem) = match drained {
            Ok(quarantined) => (quarantined, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        Polled {
            incoming: delivered.into_iter().map(classify).collect(),
            quarantined,
            recovered: Vec::new(),
            problem,
        }
    }

    /// How many entries were ever delivered (the log's size).
    pub fn delivered(&self) -> usize {
        self.log.len()
    }
}

/// One inbox entry, as the lead acts on it.
#[derive(Debug, Clone, PartialEq)]
pub enum LeadIncoming {
    /// The sender's turn ended.
    Idle {
        entry: InboxEntry,
        notification: IdleNotification,
    },
    /// A tool-use confirmation for the queue.
    Permission {
        entry: InboxEntry,
        request: PermissionRequest,
    },
    /// A sandbox network confirmation for the queue.
    Sandbox {
        entry: InboxEntry,
        request: SandboxPermissionRequest,
    },
    /// A plan for the plan queue.
    Plan {
        entry: InboxEntry,
        request: PlanApprovalRequest,
    },
    ShutdownApproved {
        entry: InboxEntry,
        approved: ShutdownApproved,
    },
    ShutdownRejected {
        entry: InboxEntry,
        rejected: ShutdownRejected,
    },
    /// Everything else: a synthetic turn (plain text, or a frame shown as a one-liner).
    Turn {
        entry: InboxEntry,
        frame: Option<Frame>,
    },
}

impl LeadIncoming {
    /// The entry it came from.
    pub fn entry(&self) -> &InboxEntry {
        match self {
            LeadIncoming::Idle { entry, .. }
            | LeadIncoming::Permission { entry, .. }
            | LeadIncoming::Sandbox { entry, .. }
            | LeadIncoming::Plan { entry, .. }
            | LeadIncoming::ShutdownApproved { entry, .. }
            | LeadIncoming::ShutdownRejected { entry, .. }
            | LeadIncoming::Turn { entry, .. } => entry,
        }
    }
}

/// Sorts one entry.
pub fn classify(entry: InboxEntry) -> LeadIncoming {
    match entry.parse_frame() {
        Some(Frame::IdleNotification(notification)) => LeadIncoming::Idle {
            entry,
            notification,
        },
        Some(Frame::PermissionRequest(request)) => LeadIncoming::Permission { entry, request },
        Some(Frame::SandboxPermissionRequest(request)) => LeadIncoming::Sandbox { entry, request },
        Some(Frame::PlanApprovalRequest(request)) => LeadIncoming::Plan { entry, request },
        Some(Frame::ShutdownApproved(approved)) => {
            LeadIncoming::ShutdownApproved { entry, approved }
        }
        Some(Frame::ShutdownRejected(rejected)) => {
            LeadIncoming::ShutdownRejected { entry, rejected }
        }
        frame => LeadIncoming::Turn { entry, frame },
    }
}

/// The transcript item of a synthetic turn: the message itself, or a frame's one-liner (never
/// raw JSON). `color` is the sender's color when the entry carries none.
pub fn turn_item(
    entry: &InboxEntry,
    frame: Option<&Frame>,
    color: Option<String>,
) -> TranscriptItem {
    let color = entry.color.clone().or(color);
    match frame {
        Some(frame) => TranscriptItem::Frame {
            from: entry.from.clone(),
            color,
            line: frame_one_liner(frame, &entry.from),
        },
        None => TranscriptItem::Teammate {
            from: entry.from.clone(),
            color,
            summary: entry.summary.clone(),
            text: entry.text.clone(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frames::TaskCompleted;

    #[test]
    fn frames_are_sorted_and_shown_as_one_liners() {
        let plain = InboxEntry::new("builder", "all done").with_summary(Some("done"));
        assert!(matches!(
            classify(plain.clone()),
            LeadIncoming::Turn { frame: None, .. }
        ));
        assert_eq!(
            turn_item(&plain, None, Some("red".into())),
            TranscriptItem::Teammate {
                from: "builder".into(),
                color: Some("red".into()),
                summary: Some("done".into()),
                text: "all done".into()
            }
        );
        let done = InboxEntry::frame(
            "builder",
            &Frame::TaskCompleted(TaskCompleted {
                from: Some("builder".into()),
                task_id: "3".into(),
                task_subject: Some("count".into()),
                timestamp: None,
            }),
        );
        let LeadIncoming::Turn { entry, frame } = classify(done) else {
            panic!("not a turn")
        };
        match turn_item(&entry, frame.as_ref(), None) {
            TranscriptItem::Frame { line, .. } => {
                assert_eq!(line, "task #3 completed \"count\"");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn fixture_lead_inbox_is_classified() {
        let text = include_str!(
            "../../tests/fixtures/claude-code-2.1.329/teams/session-abc12345/inboxes/team-lead.json"
        );
        let values: Vec<serde_json::Value> = serde_json::from_str(text).unwrap();
        let (entries, bad) = crate::protocol::inbox::parse_entries(values);
        assert!(bad.is_empty());
        let kinds: Vec<&str> = entries
            .into_iter()
            .map(|e| match classify(e) {
                LeadIncoming::Idle { .. } => "idle",
                LeadIncoming::Permission { .. } => "permission",
                LeadIncoming::Sandbox { .. } => "sandbox",
                LeadIncoming::Plan { .. } => "plan",
                LeadIncoming::ShutdownApproved { .. } => "approved",
                LeadIncoming::ShutdownRejected { .. } => "rejected",
                LeadIncoming::Turn { .. } => "turn",
            })
            .collect();
        assert!(kinds.contains(&"permission"));
        assert!(kinds.contains(&"idle"));
        assert!(kinds.contains(&"approved"));
        assert!(kinds.contains(&"turn"));
    }
}
