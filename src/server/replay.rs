//! What a client that attaches late is shown: the last of every snapshot event (team, tasks,
//! queues, mode, usage) and the transcripts so far (bounded), replayed as ordinary
//! [`LeadEvent`]s so a screen applies them exactly as it applies live ones.

use std::collections::{BTreeMap, VecDeque};

use crate::lead::contract::{
    LeadEvent, PendingPermission, PendingPlan, TaskView, TeammateView, TranscriptItem, UsageView,
};
use crate::protocol::PermissionMode;

/// How many items of the main transcript a late screen gets.
pub const TRANSCRIPT_KEPT: usize = 5000;
/// How many items of each teammate's inline view.
pub const INLINE_KEPT: usize = 1000;
/// And at most this many bytes (as JSON) of the main transcript, and of each inline view: a
/// teammate's long messages cannot make the replay hold more than this (each string of an item
/// is already cut at 64 KiB, `lead::shown`).
pub const TRANSCRIPT_BYTES: usize = 16 * 1024 * 1024;
pub const INLINE_BYTES: usize = 4 * 1024 * 1024;

/// The state a late client needs.
#[derive(Debug, Default)]
pub struct Replay {
    started: Option<LeadEvent>,
    lead_mode: Option<PermissionMode>,
    team: Option<Vec<TeammateView>>,
    tasks: Option<Vec<TaskView>>,
    permissions: Vec<PendingPermission>,
    plans: Vec<PendingPlan>,
    busy: bool,
    usage: Option<UsageView>,
    transcript: Kept,
    inline: BTreeMap<String, Kept>,
    /// The last receipt of each message in the transcript kept (by ledger id).
    receipts: BTreeMap<u64, LeadEvent>,
}

/// Transcript items kept, bounded in number and in bytes.
#[derive(Debug, Default)]
struct Kept {
    items: VecDeque<(usize, TranscriptItem)>,
    bytes: usize,
}

impl Kept {
    fn iter(&self) -> impl Iterator<Item = &TranscriptItem> {
        self.items.iter().map(|(_, i)| i)
    }
}

fn push_bounded(kept: &mut Kept, item: TranscriptItem, limit: usize, bytes: usize) {
    let size = crate::lead::shown::json_len(&item);
    kept.bytes += size;
    kept.items.push_back((size, item));
    while kept.items.len() > limit || (kept.bytes > bytes && kept.items.len() > 1) {
        if let Some((gone, _)) = kept.items.pop_front() {
            kept.bytes -= gone;
        }
    }
}

impl Replay {
    /// Takes one event into account.
    pub fn apply(&mut self, event: &LeadEvent) {
        match event {
            LeadEvent::Started { .. } => self.started = Some(event.clone()),
            LeadEvent::Transcript(item) => {
                push_bounded(
                    &mut self.transcript,
                    item.clone(),
                    TRANSCRIPT_KEPT,
                    TRANSCRIPT_BYTES,
                );
                // Receipts of messages no longer kept go with them.
                let kept: std::collections::BTreeSet<u64> = self
                    .transcript
                    .iter()
                    .filter_map(|i| match i {
                        TranscriptItem::ToTeammate { receipt, .. } => *receipt,
                        _ => None,
                    })
                    .collect();
                self.receipts.retain(|id, _| kept.contains(id));
            }
            LeadEvent::Receipt { id, .. } => {
                self.receipts.insert(*id, event.clone());
            }
            LeadEvent::TeammateTranscript { name, item } => push_bounded(
                self.inline.entry(name.clone()).or_default(),
                item.clone(),
                INLINE_KEPT,
                INLINE_BYTES,
            ),
            LeadEvent::LeadMode(mode) => self.lead_mode = Some(*mode),
            LeadEvent::Team(team) => self.team = Some(team.clone()),
            LeadEvent::Permissions(queue) => self.permissions = queue.clone(),
            LeadEvent::Plans(queue) => self.plans = queue.clone(),
            LeadEvent::Tasks(tasks) => self.tasks = Some(tasks.clone()),
            LeadEvent::Busy(busy) => self.busy = *busy,
            LeadEvent::LeadUsage(usage) => self.usage = Some(usage.clone()),
            LeadEvent::HandOverTerminal { .. }
            | LeadEvent::Exited
            | LeadEvent::Barrier { .. }
            | LeadEvent::Review(_)
            | LeadEvent::ReviewFile { .. } => {}
            // The review's dialogs are for the screens there when they come.
            LeadEvent::ReviewPr { .. }
            | LeadEvent::MergeQueue(_)
            | LeadEvent::Merged(_)
            | LeadEvent::WorktreesAtQuit(_) => {}
        }
    }

    /// The events that bring a new client to the present: the team before the transcript
    /// (names get their colours), the queues last (a dialog opens over what led to it).
    pub fn snapshot(&self, transcripts: bool) -> Vec<LeadEvent> {
        let mut out = Vec::new();
        out.extend(self.started.clone());
        out.extend(self.lead_mode.map(LeadEvent::LeadMode));
        out.extend(self.team.clone().map(LeadEvent::Team));
        out.extend(self.tasks.clone().map(LeadEvent::Tasks));
        out.extend(self.usage.clone().map(LeadEvent::LeadUsage));
        if self.busy {
            out.push(LeadEvent::Busy(true));
        }
        if transcripts {
            out.extend(self.transcript.iter().cloned().map(LeadEvent::Transcript));
            out.extend(self.receipts.values().cloned());
            for (name, items) in &self.inline {
                out.extend(items.iter().map(|item| LeadEvent::TeammateTranscript {
                    name: name.clone(),
                    item: item.clone(),
                }));
            }
        }
        out.push(LeadEvent::Plans(self.plans.clone()));
        out.push(LeadEvent::Permissions(self.permissions.clone()));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_keeps_the_last_of_each_and_the_transcript_in_order() {
        let mut r = Replay::default();
        for i in 0..3 {
            r.apply(&LeadEvent::Transcript(TranscriptItem::System {
                text: format!("n{i}"),
            }));
            r.apply(&LeadEvent::Tasks(vec![]));
        }
        r.apply(&LeadEvent::LeadMode(PermissionMode::Plan));
        let snap = r.snapshot(true);
        let notes: Vec<_> = snap
            .iter()
            .filter_map(|e| match e {
                LeadEvent::Transcript(TranscriptItem::System { text }) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(notes, ["n0", "n1", "n2"]);
        assert_eq!(
            snap.iter()
                .filter(|e| matches!(e, LeadEvent::Tasks(_)))
                .count(),
            1
        );
        assert!(matches!(snap.last(), Some(LeadEvent::Permissions(_))));
        assert!(
            !r.snapshot(false)
                .iter()
                .any(|e| matches!(e, LeadEvent::Transcript(_)))
        );
    }
}
