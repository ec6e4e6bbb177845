//! What the controller tells the UI: events queued during a step and sent after it, the
//! snapshots (team, tasks, permissions, plans) sent only when they changed since the last
//! ones, and problems told once. Every event's strings are bounded (`lead::shown`). When the UI stops listening, the events are dropped and the
//! controller hears it once (to start a graceful quit).

use std::collections::HashSet;

use tokio::sync::mpsc;

use crate::lead::contract::{LeadEvent, PendingPermission, PendingPlan, TaskView, TeammateView};

/// The controller's side of the event channel.
pub(crate) struct Publisher {
    events: mpsc::Sender<LeadEvent>,
    outbox: Vec<LeadEvent>,
    last: Snapshots,
    ui_gone: bool,
    /// Problems already reported (each is told once).
    reported: HashSet<String>,
}

/// The snapshots last sent to the UI.
#[derive(Debug, Default)]
struct Snapshots {
    team: Option<Vec<TeammateView>>,
    tasks: Option<Vec<TaskView>>,
    permissions: Option<Vec<PendingPermission>>,
    plans: Option<Vec<PendingPlan>>,
}

/// A UI that stopped listening (the flush that found it out).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct UiGone;

impl Publisher {
    pub fn new(events: mpsc::Sender<LeadEvent>) -> Publisher {
        Publisher {
            events,
            outbox: Vec::new(),
            last: Snapshots::default(),
            ui_gone: false,
            reported: HashSet::new(),
        }
    }

    /// Queues an event for the UI, its strings bounded (`lead::shown::bound_event`: a teammate's
    /// huge message, name or task subject cannot make an event longer than a screen reads).
    pub fn emit(&mut self, event: LeadEvent) {
        if !self.ui_gone {
            self.outbox.push(crate::lead::shown::bound_event(event));
        }
    }

    /// Whether `text` is told for the first time (it is remembered).
    pub fn first_time(&mut self, text: &str) -> bool {
        self.reported.insert(text.to_string())
    }

    /// Queues the snapshots that differ from the last ones sent.
    pub fn snapshots(
        &mut self,
        team: Vec<TeammateView>,
        tasks: Vec<TaskView>,
        permissions: Vec<PendingPermission>,
        plans: Vec<PendingPlan>,
    ) {
        if self.last.team.as_ref() != Some(&team) {
            self.last.team = Some(team.clone());
            self.emit(LeadEvent::Team(team));
        }
        if self.last.tasks.as_ref() != Some(&tasks) {
            self.last.tasks = Some(tasks.clone());
            self.emit(LeadEvent::Tasks(tasks));
        }
        if self.last.permissions.as_ref() != Some(&permissions) {
            self.last.permissions = Some(permissions.clone());
            self.emit(LeadEvent::Permissions(permissions));
        }
        if self.last.plans.as_ref() != Some(&plans) {
            self.last.plans = Some(plans.clone());
            self.emit(LeadEvent::Plans(plans));
        }
    }

    /// Sends what is queued. `Err(UiGone)` the first time the UI is found gone; later flushes
    /// drop everything quietly.
    pub async fn flush(&mut self) -> Result<(), UiGone> {
        let events = std::mem::take(&mut self.outbox);
        let was_gone = self.ui_gone;
        for event in events {
            if self.ui_gone {
                break;
            }
            if self.events.send(event).await.is_err() {
                self.ui_gone = true;
            }
        }
        self.outbox.clear();
        if self.ui_gone && !was_gone {
            return Err(UiGone);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::TranscriptItem;

    fn note(text: &str) -> LeadEvent {
        LeadEvent::Transcript(TranscriptItem::System {
            text: text.to_string(),
        })
    }

    #[tokio::test]
    async fn snapshots_go_out_only_when_they_changed() {
        let (tx, mut rx) = mpsc::channel(16);
        let mut p = Publisher::new(tx);
        p.snapshots(Vec::new(), Vec::new(), Vec::new(), Vec::new());
        p.flush().await.unwrap();
        let mut first = 0;
        while rx.try_recv().is_ok() {
            first += 1;
        }
        assert_eq!(first, 4, "the first snapshots all go out");
        p.snapshots(Vec::new(), Vec::new(), Vec::new(), Vec::new());
        p.flush().await.unwrap();
        assert!(
            rx.try_recv().is_err(),
            "the same snapshots again send nothing"
        );
    }

    #[tokio::test]
    async fn a_gone_ui_is_told_once_and_events_are_dropped() {
        let (tx, rx) = mpsc::channel(16);
        let mut p = Publisher::new(tx);
        drop(rx);
        p.emit(note("a"));
        assert_eq!(p.flush().await, Err(UiGone));
        p.emit(note("b"));
        assert_eq!(p.flush().await, Ok(()));
    }

    #[test]
    fn a_problem_is_told_once() {
        let (tx, _rx) = mpsc::channel(1);
        let mut p = Publisher::new(tx);
        assert!(p.first_time("x"));
        assert!(!p.first_time("x"));
        assert!(p.first_time("y"));
    }
}
