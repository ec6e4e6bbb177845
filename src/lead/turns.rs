//! Synthetic turns and the lead's `busy` flag. Messages from teammates reach the conversation as
//! turns; while the lead is mid-turn (only with a lead model) they wait here, in arrival order,
//! and are delivered together when the turn ends. Each keeps its inbox entry, which is what a
//! lead model is given (as a `<teammate-message>` block).

use super::contract::TranscriptItem;
use crate::protocol::InboxEntry;

/// One synthetic turn: what the transcript shows, and the entry it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticTurn {
    pub item: TranscriptItem,
    pub entry: InboxEntry,
}

/// Turns waiting for the lead to finish its current one.
#[derive(Debug, Default)]
pub struct TurnQueue {
    busy: bool,
    pending: Vec<SyntheticTurn>,
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
    pub fn offer(&mut self, turn: SyntheticTurn) -> Option<SyntheticTurn> {
        if self.busy {
            self.pending.push(turn);
            None
        } else {
            Some(turn)
        }
    }

    /// Sets the flag; when the turn ends, returns what waited (oldest first).
    pub fn set_busy(&mut self, busy: bool) -> Vec<SyntheticTurn> {
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

    fn turn(text: &str) -> SyntheticTurn {
        SyntheticTurn {
            item: TranscriptItem::System {
                text: text.to_string(),
            },
            entry: InboxEntry::new("builder", text),
        }
    }

    #[test]
    fn turns_wait_while_busy_and_arrive_in_order() {
        let mut q = TurnQueue::new();
        let (a, b, c, d) = (turn("a"), turn("b"), turn("c"), turn("d"));
        assert_eq!(q.offer(a.clone()), Some(a));
        assert!(q.set_busy(true).is_empty());
        assert_eq!(q.offer(b.clone()), None);
        assert_eq!(q.offer(c.clone()), None);
        assert_eq!(q.waiting(), 2);
        assert_eq!(q.set_busy(false), vec![b, c]);
        assert_eq!(q.offer(d.clone()), Some(d));
    }
}
