//! Synthetic turns and the lead's `busy` flag. Messages from teammates reach the conversation as
//! turns; while the lead is mid-turn (only with a lead model) they wait here, in arrival order,
//! and are delivered together when the turn ends.

use super::view::TranscriptItem;

/// Turns waiting for the lead to finish its current one.
#[derive(Debug, Default)]
pub struct TurnQueue {
    busy: bool,
    pending: Vec<TranscriptItem>,
}

impl TurnQueue {
    pub fn new() -> TurnQueue {
        TurnQueue::default()
    }

    /// Is the lead mid-turn?
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// A synthetic turn arrived: returned to deliver now, or kept while the lead is busy.
    pub fn offer(&mut self, item: TranscriptItem) -> Option<TranscriptItem> {
        if self.busy {
            self.pending.push(item);
            None
        } else {
            Some(item)
        }
    }

    /// Sets the flag; when the turn ends, returns what waited (oldest first).
    pub fn set_busy(&mut self, busy: bool) -> Vec<TranscriptItem> {
        self.busy = busy;
        if busy {
            Vec::new()
        } else {
            std::mem::take(&mut self.pending)
        }
    }

    /// How many turns wait.
    pub fn waiting(&self) -> usize {
        self.pending.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(text: &str) -> TranscriptItem {
        TranscriptItem::System {
            text: text.to_string(),
        }
    }

    #[test]
    fn turns_wait_while_busy_and_arrive_in_order() {
        let mut q = TurnQueue::new();
        assert_eq!(q.offer(note("a")), Some(note("a")));
        assert!(q.set_busy(true).is_empty());
        assert_eq!(q.offer(note("b")), None);
        assert_eq!(q.offer(note("c")), None);
        assert_eq!(q.waiting(), 2);
        assert_eq!(q.set_busy(false), vec![note("b"), note("c")]);
        assert_eq!(q.offer(note("d")), Some(note("d")));
    }
}
