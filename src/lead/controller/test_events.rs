//! What the controller's own tests wait for in its event stream: the next event that matches
//! (with a deadline and what was awaited in the failure), and a lead's note holding a text.

use std::time::Duration;

use tokio::sync::mpsc;

use crate::lead::contract::{LeadEvent, TranscriptItem};

/// The next event for which `pred` holds, within 30 s (`what` names it when none comes).
pub(super) async fn next_matching(
    events: &mut mpsc::Receiver<LeadEvent>,
    what: &str,
    pred: impl Fn(&LeadEvent) -> bool,
) -> LeadEvent {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
            .expect("the lead runs");
        if pred(&event) {
            return event;
        }
    }
}

/// Whether `e` is a note of the lead's holding `needle`.
pub(super) fn note_with(e: &LeadEvent, needle: &str) -> bool {
    matches!(e, LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains(needle))
}
