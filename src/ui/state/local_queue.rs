//! The UI's local view of a controller queue (permissions, plans): the controller's latest
//! snapshot minus what this UI has already answered, so a key press never answers the same
//! request twice while the controller's next snapshot is on its way. It also tells when a
//! snapshot brings a request the UI has not seen before (the dialog reopens for it).

use std::collections::{HashSet, VecDeque};
use std::hash::Hash;

use crate::lead::contract::{PendingPermission, PendingPlan};

/// Something with a queue-unique key.
pub trait Keyed {
    type Key: Clone + Eq + Hash;
    fn key(&self) -> Self::Key;
}

impl Keyed for PendingPermission {
    type Key = u64;
    fn key(&self) -> u64 {
        self.key
    }
}

impl Keyed for PendingPlan {
    type Key = String;
    fn key(&self) -> String {
        self.request_id.clone()
    }
}

/// A FIFO of pending requests, as this UI sees it.
#[derive(Debug, Clone)]
pub struct LocalQueue<T: Keyed> {
    items: VecDeque<T>,
    answered: HashSet<T::Key>,
    seen: HashSet<T::Key>,
}

impl<T: Keyed> Default for LocalQueue<T> {
    fn default() -> Self {
        LocalQueue {
            items: VecDeque::new(),
            answered: HashSet::new(),
            seen: HashSet::new(),
        }
    }
}

impl<T: Keyed> LocalQueue<T> {
    /// Takes a snapshot from the controller (oldest first). Returns whether it holds a request
    /// not seen before.
    pub fn replace(&mut self, snapshot: Vec<T>) -> bool {
        let keys: HashSet<T::Key> = snapshot.iter().map(Keyed::key).collect();
        // Answers the controller has processed drop out of the snapshot: forget them.
        self.answered.retain(|k| keys.contains(k));
        let fresh = keys.iter().any(|k| !self.seen.contains(k));
        self.seen = keys;
        self.items = snapshot
            .into_iter()
            .filter(|item| !self.answered.contains(&item.key()))
            .collect();
        fresh
    }

    /// The oldest unanswered request.
    pub fn head(&self) -> Option<&T> {
        self.items.front()
    }

    /// Removes the head and remembers it as answered.
    pub fn take_head(&mut self) -> Option<T> {
        let head = self.items.pop_front()?;
        self.answered.insert(head.key());
        Some(head)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(id: &str) -> PendingPlan {
        PendingPlan {
            request_id: id.to_string(),
            from: "w".to_string(),
            color: None,
            plan: String::new(),
            in_part: None,
            host: None,
        }
    }

    #[test]
    fn answered_requests_stay_hidden_until_the_controller_drops_them() {
        let mut q = LocalQueue::default();
        assert!(q.replace(vec![plan("a"), plan("b")]));
        assert_eq!(q.take_head().map(|p| p.request_id), Some("a".to_string()));
        // A stale snapshot still holding "a" does not bring it back, and is not news.
        assert!(!q.replace(vec![plan("a"), plan("b")]));
        assert_eq!(q.head().map(|p| p.request_id.as_str()), Some("b"));
        assert_eq!(q.len(), 1);
        // A new request is news.
        assert!(q.replace(vec![plan("b"), plan("c")]));
        assert_eq!(q.len(), 2);
    }
}
