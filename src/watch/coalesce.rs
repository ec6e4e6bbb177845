//! Collapses a burst of events into what a reader needs to know: one event per path, in the
//! order the paths first changed. "Created then written" is one `Created`, "written three
//! times" one `Modified`, "replaced" (removed then created) one `Modified`, "created then
//! removed" nothing. Lock events are kept as they are, in order: they are the churn a monitor
//! may want to see.

use std::collections::HashMap;
use std::path::PathBuf;

use super::event::{ChangeEvent, ChangeKind};

/// One event per path (locks excepted), in first-seen order.
pub(crate) fn coalesce(events: Vec<ChangeEvent>) -> Vec<ChangeEvent> {
    let mut slots: Vec<Option<ChangeEvent>> = Vec::new();
    let mut index: HashMap<PathBuf, usize> = HashMap::new();
    for event in events {
        if event.kind.is_lock() {
            slots.push(Some(event));
            continue;
        }
        match index.get(&event.path) {
            None => {
                index.insert(event.path.clone(), slots.len());
                slots.push(Some(event));
            }
            Some(&i) => {
                slots[i] = merge(slots[i].take(), event);
            }
        }
    }
    slots.into_iter().flatten().collect()
}

/// What `first` followed by `next` on the same path amounts to.
fn merge(first: Option<ChangeEvent>, next: ChangeEvent) -> Option<ChangeEvent> {
    use ChangeKind::*;
    let Some(first) = first else {
        return Some(next);
    };
    let kind = match (first.kind, next.kind) {
        (Created, Modified) | (Created, Created) => Created,
        (Created, Removed) => return None,
        (Modified, Removed) | (Removed, Removed) => Removed,
        (Removed, Created) | (Removed, Modified) => {
            if next.is_dir {
                Created
            } else {
                Modified
            }
        }
        (Modified, _) => Modified,
        (_, k) => k,
    };
    Some(ChangeEvent::new(next.path, kind, next.is_dir))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ChangeKind::*;

    fn ev(p: &str, k: ChangeKind) -> ChangeEvent {
        ChangeEvent::new(p, k, false)
    }

    #[test]
    fn bursts_collapse() {
        let out = coalesce(vec![
            ev("/a", Created),
            ev("/b", Modified),
            ev("/a", Modified),
            ev("/l.lock", LockAcquired),
            ev("/b", Modified),
            ev("/l.lock", LockReleased),
            ev("/c", Created),
            ev("/c", Removed),
            ev("/d", Removed),
            ev("/d", Created),
        ]);
        assert_eq!(
            out,
            vec![
                ev("/a", Created),
                ev("/b", Modified),
                ev("/l.lock", LockAcquired),
                ev("/l.lock", LockReleased),
                ev("/d", Modified),
            ]
        );
    }
}
