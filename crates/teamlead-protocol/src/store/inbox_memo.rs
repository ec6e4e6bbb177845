//! What a reader that takes an inbox's new entries again and again (the lead, on every change
//! of its inbox) remembers of the file it read last, so the next read parses only what was
//! appended. Every writer appends by rewriting the whole array with the old entries' bytes
//! unchanged (teamlead's textual append, Claude Code's `JSON.stringify` of the same values),
//! and the lead leaves taken entries in the file until it has been quiet for a while: without
//! this, a teammate's stream of frames made every take parse every entry still waiting, the
//! whole inbox once per frame.
//!
//! The rule is byte-exact: when the new file begins with the old file's bytes up to its
//! closing `]`, a JSON parser is in the same state at that point of both (between two elements
//! of the top-level array), so the old entries are the same values and only the rest needs
//! parsing. Anything else (an entry rewritten, the removal of taken entries, a torn or odd
//! file) is a full scan, as before.

use std::collections::HashSet;

use super::atomic::parse_json;
use super::delivery::DeliveryLog;
use crate::InboxEntry;

/// The largest file remembered (an inbox of a few thousand ordinary entries): a reader's
/// memory stays bounded by this, not by what a teammate writes (a 20 MB frame is parsed in
/// full each time, as before, and not kept).
const MAX_REMEMBERED: usize = 1024 * 1024;

/// The last file a reader scanned in full or in part: its bytes and what they held.
#[derive(Debug, Default)]
pub struct InboxMemo {
    /// The file's bytes as read (empty: nothing remembered).
    bytes: Vec<u8>,
    /// Where its last entry ends (the blanks and the closing `]` of the array after it are
    /// not compared: an append puts its comma there).
    close: usize,
    /// How many of its entries are unread (each one in the delivery log once taken).
    unread: usize,
}

/// What the remembered prefix and the new file's rest say.
#[derive(Debug, PartialEq)]
pub(crate) struct TailScan {
    /// Unread entries of the whole file.
    pub unread: usize,
    /// The unread entries of the rest that the log does not hold, in file order.
    pub fresh: Vec<InboxEntry>,
}

impl InboxMemo {
    /// Forgets the file (it is gone, or was rewritten by a drain), and frees its bytes.
    pub fn forget(&mut self) {
        self.bytes = Vec::new();
        self.close = 0;
        self.unread = 0;
    }

    /// Remembers `bytes`, a whole inbox that holds `unread` unread entries, all of them now in
    /// the log. A file without a closing bracket, with no entry, or larger than
    /// [`MAX_REMEMBERED`] is not remembered.
    pub(crate) fn remember(&mut self, bytes: Vec<u8>, unread: usize) {
        if bytes.len() > MAX_REMEMBERED {
            self.forget();
            return;
        }
        match end_of_last_entry(&bytes) {
            Some(close) if has_an_entry(&bytes[..close]) => {
                self.bytes = bytes;
                self.close = close;
                self.unread = unread;
            }
            _ => self.forget(),
        }
    }

    /// The new entries of `bytes` when it is the remembered file with entries appended (or the
    /// same file); `None` when it is not, or its rest does not read as whole entries: the
    /// caller then scans it all.
    pub(crate) fn scan_rest(&self, bytes: &[u8], log: &DeliveryLog) -> Option<TailScan> {
        if self.bytes.is_empty() || bytes.len() < self.close {
            return None;
        }
        if bytes[..self.close] != self.bytes[..self.close] {
            return None;
        }
        let rest = trim_start(&bytes[self.close..]);
        let items = match rest.first()? {
            b']' => {
                return trim_start(&rest[1..]).is_empty().then_some(TailScan {
                    unread: self.unread,
                    fresh: Vec::new(),
                });
            }
            b',' => {
                let mut array = Vec::with_capacity(rest.len());
                array.push(b'[');
                array.extend_from_slice(&rest[1..]);
                match parse_json(&array).ok()? {
                    serde_json::Value::Array(items) => items,
                    _ => return None,
                }
            }
            _ => return None,
        };
        let mut unread = self.unread;
        let mut fresh = Vec::new();
        let mut seen = HashSet::new();
        for v in items {
            let e: InboxEntry = serde_json::from_value(v).ok()?;
            if e.is_unread() {
                unread += 1;
                keep_if_fresh(e, log, &mut seen, &mut fresh);
            }
        }
        Some(TailScan { unread, fresh })
    }
}

/// Puts the unread entry `e` into `fresh` unless the log holds it or `fresh` has it already
/// (by its key, `seen` holding those of `fresh`): what a scan of the whole file, a scan of its
/// rest and the lead's entries handed over before the file has them all do with each one.
pub fn keep_if_fresh(
    e: InboxEntry,
    log: &DeliveryLog,
    seen: &mut HashSet<String>,
    fresh: &mut Vec<InboxEntry>,
) {
    let key = e.dedup_key();
    if !log.contains(&key) && seen.insert(key) {
        fresh.push(e);
    }
}

/// Where the text before the array's closing `]` ends (blanks left out), when the last
/// non-blank byte is that `]`.
fn end_of_last_entry(bytes: &[u8]) -> Option<usize> {
    let last = bytes.iter().rposition(|b| !b.is_ascii_whitespace())?;
    if bytes[last] != b']' {
        return None;
    }
    Some(
        bytes[..last]
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1),
    )
}

/// Whether the array's text before its closing bracket holds an element (anything after the
/// opening `[` but blanks): the rest of a file with none starts without a comma.
fn has_an_entry(before_close: &[u8]) -> bool {
    let text = trim_start(before_close);
    text.first() == Some(&b'[') && !trim_start(&text[1..]).is_empty()
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str, read: bool) -> InboxEntry {
        let mut e = InboxEntry::new("w", text);
        e.read = Some(read);
        e
    }

    fn pretty(entries: &[InboxEntry]) -> Vec<u8> {
        super::super::atomic::pretty_bytes(entries)
    }

    fn log() -> (tempfile::TempDir, DeliveryLog) {
        let dir = tempfile::tempdir().unwrap();
        let log = DeliveryLog::open(&dir.path().join("log")).unwrap();
        (dir, log)
    }

    #[test]
    fn entries_appended_to_the_remembered_file_are_the_only_ones_parsed() {
        let (_d, mut log) = log();
        let a = entry("a", false);
        let old = [a.clone(), entry("seen", true)];
        log.note(std::slice::from_ref(&a)).unwrap();
        let mut memo = InboxMemo::default();
        memo.remember(pretty(&old), 1);
        let b = entry("b", false);
        let c = entry("c", true);
        let new = pretty(&[old[0].clone(), old[1].clone(), b.clone(), c]);
        assert_eq!(
            memo.scan_rest(&new, &log),
            Some(TailScan {
                unread: 2,
                fresh: vec![b]
            })
        );
        // The same file again: nothing new, the unread count kept.
        assert_eq!(
            memo.scan_rest(&pretty(&old), &log),
            Some(TailScan {
                unread: 1,
                fresh: Vec::new()
            })
        );
    }

    #[test]
    fn a_changed_entry_a_shorter_file_or_a_torn_rest_is_scanned_in_full() {
        let (_d, log) = log();
        let old = [entry("a", false), entry("b", false)];
        let mut memo = InboxMemo::default();
        memo.remember(pretty(&old), 2);
        let mut marked = old.clone();
        marked[0].read = Some(true);
        assert_eq!(memo.scan_rest(&pretty(&marked), &log), None, "rewritten");
        assert_eq!(memo.scan_rest(&pretty(&old[..1]), &log), None, "shorter");
        let whole = pretty(&[old[0].clone(), old[1].clone(), entry("c", false)]);
        assert_eq!(
            memo.scan_rest(&whole[..whole.len() - 5], &log),
            None,
            "torn"
        );
        let mut odd = pretty(&old);
        odd.truncate(end_of_last_entry(&odd).unwrap());
        odd.extend_from_slice(b", 7]");
        assert_eq!(memo.scan_rest(&odd, &log), None, "not an entry");
        let mut trailing = pretty(&old);
        trailing.extend_from_slice(b" x");
        assert_eq!(
            memo.scan_rest(&trailing, &log),
            None,
            "text after the array"
        );
    }

    #[test]
    fn an_empty_array_or_no_array_is_not_remembered() {
        let (_d, log) = log();
        let mut memo = InboxMemo::default();
        memo.remember(b"[]\n".to_vec(), 0);
        assert_eq!(memo.scan_rest(b"[]", &log), None);
        memo.remember(b"{}".to_vec(), 0);
        assert_eq!(memo.scan_rest(b"{}", &log), None);
        memo.remember(pretty(&[entry("a", false)]), 1);
        memo.forget();
        assert_eq!(memo.scan_rest(&pretty(&[entry("a", false)]), &log), None);
    }

    #[test]
    fn a_file_larger_than_the_limit_is_not_kept() {
        let (_d, log) = log();
        let mut memo = InboxMemo::default();
        let big = entry(&"x".repeat(MAX_REMEMBERED), false);
        let bytes = pretty(std::slice::from_ref(&big));
        memo.remember(bytes.clone(), 1);
        assert_eq!(memo.bytes.capacity(), 0, "a big inbox's bytes were kept");
        assert_eq!(memo.scan_rest(&bytes, &log), None);
    }

    #[test]
    fn an_entry_twice_in_the_rest_is_fresh_once() {
        let (_d, log) = log();
        let a = entry("a", true);
        let mut memo = InboxMemo::default();
        memo.remember(pretty(std::slice::from_ref(&a)), 0);
        let b = entry("b", false);
        let new = pretty(&[a, b.clone(), b.clone()]);
        let scan = memo.scan_rest(&new, &log).unwrap();
        assert_eq!((scan.unread, scan.fresh), (2, vec![b]));
    }
}
