//! Which messages `monitor` has reported. A message can be seen twice: in an inbox, and in the
//! delivery log of a teamlead lead, which records each entry there as it comes and removes it
//! from the inbox once the inbox is quiet (an older lead removed it within milliseconds, often
//! before monitor read it). Both sightings are one message: each is
//! reported once, under its de-duplication key ([`InboxEntry::dedup_key`]), per inbox. Entries a
//! reader takes out of an inbox (teamlead, Claude Code 2.1.329) or marks `read: true` (2.1.45)
//! are named in one line per change.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use crate::protocol::InboxEntry;
use crate::protocol::inbox::{clip, first_line};
use crate::store::delivery::{DeliveryTail, Restart};

/// The most keys remembered per inbox (the oldest are forgotten first).
const MAX_KEYS: usize = 100_000;
/// How many entries a "delivered"/"marked read" line names one by one.
const NAMED_ENTRIES: usize = 4;

/// A bounded set of keys.
#[derive(Debug, Default)]
struct KeySet {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl KeySet {
    /// Adds a key; false when it was there already.
    fn insert(&mut self, key: String) -> bool {
        if self.set.contains(&key) {
            return false;
        }
        if self.order.len() >= MAX_KEYS
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.order.push_back(key.clone());
        self.set.insert(key)
    }
}

/// The reported messages of every inbox, and the tails of the delivery logs.
#[derive(Debug, Default)]
pub struct Messages {
    reported: HashMap<(String, String), KeySet>,
    tails: HashMap<PathBuf, DeliveryTail>,
}

/// `message`, or the frame's type.
pub fn entry_kind(entry: &InboxEntry) -> String {
    entry
        .parse_frame()
        .map(|f| f.kind().to_string())
        .unwrap_or_else(|| "message".to_string())
}

/// A plain message as its quoted summary or first line, a frame as its one-liner (an idle
/// notification names who, why, and the task it completed).
pub fn entry_preview(entry: &InboxEntry) -> String {
    if entry.parse_frame().is_some() {
        clip(&entry.one_liner(), 90)
    } else {
        let body = entry
            .summary
            .clone()
            .unwrap_or_else(|| first_line(&entry.text));
        format!("\"{}\"", clip(&body, 80))
    }
}

fn entry_line(member: &str, entry: &InboxEntry, suffix: &str) -> String {
    format!(
        "inbox {member}: +1 {} from {} — {}{suffix}",
        entry_kind(entry),
        entry.from,
        entry_preview(entry)
    )
}

fn named(entries: &[&InboxEntry]) -> String {
    let mut names: Vec<String> = entries
        .iter()
        .take(NAMED_ENTRIES)
        .map(|e| format!("{} from {}", entry_kind(e), e.from))
        .collect();
    if entries.len() > NAMED_ENTRIES {
        names.push("…".to_string());
    }
    names.join(", ")
}

impl Messages {
    fn keys(&mut self, team: &str, member: &str) -> &mut KeySet {
        self.reported
            .entry((team.to_string(), member.to_string()))
            .or_default()
    }

    /// Entries already in an inbox when monitoring starts: known, not reported.
    pub fn prime_inbox(&mut self, team: &str, member: &str, entries: &[InboxEntry]) {
        let keys = self.keys(team, member);
        for e in entries {
            keys.insert(e.dedup_key());
        }
    }

    /// A delivery log present when monitoring starts: followed from its end.
    pub fn prime_log(&mut self, path: &Path) {
        if let Ok(tail) = DeliveryTail::from_end(path) {
            self.tails.insert(path.to_path_buf(), tail);
        }
    }

    /// The lines for an inbox that changed from `before` to `now`.
    pub fn inbox_changed(
        &mut self,
        team: &str,
        member: &str,
        before: &[InboxEntry],
        now: &[InboxEntry],
        created: bool,
    ) -> Vec<String> {
        let mut lines = Vec::new();
        let keys = self.keys(team, member);
        for e in now {
            if keys.insert(e.dedup_key()) {
                lines.push(entry_line(member, e, ""));
            }
        }
        let now_keys: HashMap<String, bool> =
            now.iter().map(|e| (e.dedup_key(), e.is_unread())).collect();
        let removed: Vec<&InboxEntry> = before
            .iter()
            .filter(|e| !now_keys.contains_key(&e.dedup_key()))
            .collect();
        let newly_read: Vec<&InboxEntry> = before
            .iter()
            .filter(|e| e.is_unread() && now_keys.get(&e.dedup_key()) == Some(&false))
            .collect();
        let mut parts = Vec::new();
        if !removed.is_empty() {
            parts.push(format!(
                "-{} delivered ({})",
                removed.len(),
                named(&removed)
            ));
        }
        if !newly_read.is_empty() {
            parts.push(format!(
                "{} marked read ({})",
                newly_read.len(),
                named(&newly_read)
            ));
        }
        if !parts.is_empty() {
            lines.push(format!("inbox {member}: {}", parts.join(", ")));
        }
        // A rewrite that changed nothing (the lead's drain of an empty inbox) is no news.
        if lines.is_empty() && created {
            lines.push(format!("inbox {member}: created ({} entries)", now.len()));
        }
        lines
    }

    /// The lines for a delivery log that grew (or appeared, or was replaced): one per entry not
    /// reported before.
    pub fn log_changed(&mut self, team: &str, member: &str, path: &Path) -> Vec<String> {
        let tail = self
            .tails
            .entry(path.to_path_buf())
            .or_insert_with(|| DeliveryTail::from_start(path));
        let read = match tail.read_new() {
            Ok(read) => read,
            Err(e) => return vec![format!("delivery log of {member}: unreadable ({e})")],
        };
        let mut lines = Vec::new();
        match read.restarted {
            Some(Restart::Replaced) => lines.push(format!(
                "delivery log of {member}: replaced, read again from the start"
            )),
            Some(Restart::Truncated) => lines.push(format!(
                "delivery log of {member}: truncated, read again from the start"
            )),
            None => {}
        }
        if read.bad_lines > 0 {
            lines.push(format!(
                "delivery log of {member}: {} line(s) that are no delivery record skipped",
                read.bad_lines
            ));
        }
        let keys = self.keys(team, member);
        for record in &read.records {
            if keys.insert(record.key.clone()) {
                lines.push(entry_line(member, &record.entry, " (delivered)"));
            }
        }
        lines
    }

    /// A delivery log went away: a new file there is read from its start.
    pub fn log_removed(&mut self, path: &Path) {
        self.tails.remove(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::DeliveryLog;

    #[test]
    fn an_entry_seen_in_the_inbox_and_the_log_is_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("delivered-team-lead.jsonl");
        let mut m = Messages::default();
        m.prime_log(&log_path);
        let a = InboxEntry::new("alpha", "first");
        let b = InboxEntry::new("alpha", "second");
        let lines = m.inbox_changed("t", "team-lead", &[], std::slice::from_ref(&a), false);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].contains("+1 message from alpha — \"first\""),
            "{lines:?}"
        );
        let mut log = DeliveryLog::open(&log_path).unwrap();
        log.record(&[a.clone(), b.clone()]).unwrap();
        let lines = m.log_changed("t", "team-lead", &log_path);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains("\"second\" (delivered)"), "{lines:?}");
        let lines = m.inbox_changed("t", "team-lead", &[a], &[], false);
        assert_eq!(
            lines,
            ["inbox team-lead: -1 delivered (message from alpha)"]
        );
        assert!(m.log_changed("t", "team-lead", &log_path).is_empty());
    }

    #[test]
    fn a_rewrite_that_changed_nothing_says_nothing() {
        let mut m = Messages::default();
        assert_eq!(
            m.inbox_changed("t", "team-lead", &[], &[], true),
            ["inbox team-lead: created (0 entries)"]
        );
        assert!(
            m.inbox_changed("t", "team-lead", &[], &[], false)
                .is_empty()
        );
        let a = InboxEntry::new("alpha", "first");
        m.inbox_changed("t", "team-lead", &[], std::slice::from_ref(&a), false);
        let same = std::slice::from_ref(&a);
        assert!(
            m.inbox_changed("t", "team-lead", same, same, false)
                .is_empty()
        );
    }
}
