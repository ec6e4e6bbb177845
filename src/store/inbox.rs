//! Inboxes (PROTOCOL.md 3): appending a message under the inbox's lock directory, reading
//! without a lock, and consuming: the lead's drain (record durably, then remove), 2.1.45-style
//! `mark_read`, and 2.1.329-style `take_unread`. The array is handled as raw JSON values so an
//! append or a rewrite never drops an entry it does not understand; an inbox that is not an
//! array, and entries that fail the schema when consumed, are moved to quarantine.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::atomic::{
    Parsed, create_exclusive, parse_json, pretty_bytes, read_parsed, write_atomic,
};
use super::delivery::DeliveryLog;
use super::error::{Result, StoreError};
use super::home::Home;
use super::lock::{self, DEFAULT_LOCK_TIMEOUT};
use super::quarantine::quarantine_bytes;
use crate::protocol::InboxEntry;
use crate::protocol::inbox::parse_entries;

/// What an append did besides appending.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Appended {
    /// The inbox was not a JSON array: its bytes were kept here and a fresh inbox started.
    pub quarantined: Option<PathBuf>,
}

/// An inbox as read: entries that follow the schema, and raw values that do not.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct InboxRead {
    pub entries: Vec<InboxEntry>,
    pub bad: Vec<Value>,
}

impl InboxRead {
    /// Entries with `read != true`.
    pub fn unread(&self) -> impl Iterator<Item = &InboxEntry> {
        self.entries.iter().filter(|e| e.is_unread())
    }
}

/// What a drain took out of an inbox.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Drained {
    /// New entries, in inbox order, now recorded in the delivery log.
    pub delivered: Vec<InboxEntry>,
    /// Files where bad input was kept (bad entries, or the whole inbox if not an array).
    pub quarantined: Vec<PathBuf>,
}

/// The inbox as raw values, under its lock. A missing file is an empty inbox; a file that is
/// not an array (after torn-read retries) is quarantined and replaced by `[]`.
fn load_locked(
    home: &Home,
    team: &str,
    path: &Path,
    quarantined: &mut Vec<PathBuf>,
) -> Result<Option<Vec<Value>>> {
    let parsed = read_parsed(path, |bytes| {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // Created with O_EXCL but not yet (or never) written: an empty inbox.
            return Ok(Value::Array(Vec::new()));
        }
        match parse_json(bytes)? {
            v @ Value::Array(_) => Ok(v),
            other => Err(format!("not a JSON array (found {})", json_kind(&other))),
        }
    })?;
    match parsed {
        Parsed::Missing => Ok(None),
        Parsed::Ok(Value::Array(items)) => Ok(Some(items)),
        Parsed::Ok(_) => Ok(Some(Vec::new())),
        Parsed::Invalid { bytes, detail } => {
            let kept = quarantine_bytes(home, team, path, &bytes, &detail)?;
            write_atomic(path, b"[]")?;
            quarantined.push(kept);
            Ok(Some(Vec::new()))
        }
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn ensure_inbox(home: &Home, team: &str, member: &str) -> Result<PathBuf> {
    let path = home.inbox_path(team, member)?;
    let dir = home.inboxes_dir(team)?;
    home.ensure_dir(&dir)?;
    create_exclusive(&path, b"[]")?;
    Ok(path)
}

/// Appends `entry` to `<team>/inboxes/<to>.json`: create as `[]` with O_EXCL if missing, take
/// `<inbox>.lock/`, read, push, write atomically, release.
pub fn append(home: &Home, team: &str, to: &str, entry: &InboxEntry) -> Result<Appended> {
    append_many(home, team, to, std::slice::from_ref(entry))
}

/// Appends several entries in one locked read-modify-write. The existing text is kept byte
/// for byte (it is validated as a JSON array, never re-serialized), so entries the store
/// does not understand survive and an append stays cheap as the inbox grows.
pub fn append_many(home: &Home, team: &str, to: &str, entries: &[InboxEntry]) -> Result<Appended> {
    let path = ensure_inbox(home, team, to)?;
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    let mut appended = Appended::default();
    let existing = match read_parsed(&path, |bytes| array_len(bytes).map(|_| bytes.to_vec()))? {
        Parsed::Missing => Vec::new(),
        Parsed::Ok(bytes) => bytes,
        Parsed::Invalid { bytes, detail } => {
            appended.quarantined = Some(quarantine_bytes(home, team, &path, &bytes, &detail)?);
            Vec::new()
        }
    };
    write_atomic(&path, &appended_text(&existing, entries))?;
    Ok(appended)
}

/// The number of elements of a JSON array text (whitespace only counts as `[]`), without
/// building the values.
fn array_len(bytes: &[u8]) -> std::result::Result<usize, String> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(0);
    }
    serde_json::from_slice::<Vec<serde::de::IgnoredAny>>(bytes)
        .map(|v| v.len())
        .map_err(|e| format!("not a JSON array: {e}"))
}

/// `existing` (a valid JSON array text, or empty) with `entries` appended in the layout of
/// `JSON.stringify(array, null, 2)`.
fn appended_text(existing: &[u8], entries: &[InboxEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(existing.len() + 512 * entries.len());
    let end = existing
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map(|i| i + 1)
        .unwrap_or(0);
    let body = &existing[..end];
    let has_items = array_len(body).map(|n| n > 0).unwrap_or(false);
    let mut first = !has_items;
    if has_items {
        // Drop the closing `]` and the whitespace before it.
        let inner = &body[..body.len() - 1];
        let inner_end = inner
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map(|i| i + 1)
            .unwrap_or(0);
        out.extend_from_slice(&inner[..inner_end]);
    } else {
        out.push(b'[');
    }
    for entry in entries {
        out.extend_from_slice(if first { b"\n  " } else { b",\n  " });
        first = false;
        let text = crate::protocol::json::to_pretty(entry).unwrap_or_default();
        out.extend_from_slice(text.replace('\n', "\n  ").as_bytes());
    }
    if first {
        out.push(b']');
    } else {
        out.extend_from_slice(b"\n]");
    }
    out
}

/// Replaces the whole inbox with `entries` under its lock (a teammate's inbox is cleared and
/// its prompt written as the first message when it is spawned).
pub fn replace(home: &Home, team: &str, member: &str, entries: &[InboxEntry]) -> Result<()> {
    let path = ensure_inbox(home, team, member)?;
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    write_atomic(&path, &pretty_bytes(entries))
}

/// Reads an inbox without a lock. Missing → empty; not an array (after torn-read retries) →
/// `Parse` error.
pub fn read(home: &Home, team: &str, member: &str) -> Result<InboxRead> {
    let path = home.inbox_path(team, member)?;
    read_path(&path)
}

/// [`read`] for an inbox file given by path.
pub fn read_path(path: &Path) -> Result<InboxRead> {
    let parsed = read_parsed(path, |bytes| match parse_json(bytes)? {
        Value::Array(items) => Ok(items),
        other => Err(format!("not a JSON array (found {})", json_kind(&other))),
    })?;
    match parsed {
        Parsed::Missing => Ok(InboxRead::default()),
        Parsed::Ok(items) => {
            let (entries, bad) = parse_entries(items);
            Ok(InboxRead { entries, bad })
        }
        Parsed::Invalid { detail, .. } => Err(StoreError::parse(path, detail)),
    }
}

/// Runs `f` on the raw inbox under its lock and writes the result back if `f` changed it.
/// Values `f` reports as bad are quarantined (one file) and removed.
fn rewrite_locked<R>(
    home: &Home,
    team: &str,
    member: &str,
    f: impl FnOnce(Vec<Value>) -> Result<Rewrite<R>>,
) -> Result<Option<(R, Vec<PathBuf>)>> {
    let path = home.inbox_path(team, member)?;
    if !super::atomic::check_regular_file(&path)? {
        return Ok(None);
    }
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    let mut quarantined = Vec::new();
    let Some(items) = load_locked(home, team, &path, &mut quarantined)? else {
        return Ok(None);
    };
    let rewrite = f(items)?;
    if !rewrite.bad.is_empty() {
        let bytes = pretty_bytes(&rewrite.bad);
        let reason = format!(
            "{} inbox entr{} without string from/text/timestamp",
            rewrite.bad.len(),
            if rewrite.bad.len() == 1 { "y" } else { "ies" }
        );
        quarantined.push(quarantine_bytes(home, team, &path, &bytes, &reason)?);
    }
    if let Some(keep) = rewrite.keep {
        write_atomic(&path, &pretty_bytes(&keep))?;
    }
    Ok(Some((rewrite.result, quarantined)))
}

struct Rewrite<R> {
    /// The new content, or `None` to leave the file as it is.
    keep: Option<Vec<Value>>,
    /// Values to quarantine (already left out of `keep`).
    bad: Vec<Value>,
    result: R,
}

/// The lead's consumption: under the lock, takes every entry with `read != true`, records the
/// new ones durably in `log` (fsync) BEFORE rewriting the inbox without them, and skips those
/// the log already holds (a crash between the two steps). Entries that fail the schema are
/// quarantined and removed. Entries marked `read: true` stay.
pub fn drain_unread(
    home: &Home,
    team: &str,
    member: &str,
    log: &mut DeliveryLog,
) -> Result<Drained> {
    let outcome = rewrite_locked(home, team, member, |items| {
        let mut keep = Vec::new();
        let mut bad = Vec::new();
        let mut fresh: Vec<InboxEntry> = Vec::new();
        let mut seen = HashSet::new();
        let mut changed = false;
        for v in items {
            match serde_json::from_value::<InboxEntry>(v.clone()) {
                Err(_) => {
                    bad.push(v);
                    changed = true;
                }
                Ok(e) if !e.is_unread() => keep.push(v),
                Ok(e) => {
                    changed = true;
                    let key = e.dedup_key();
                    if !log.contains(&key) && seen.insert(key) {
                        fresh.push(e);
                    }
                }
            }
        }
        log.record(&fresh)?;
        Ok(Rewrite {
            keep: changed.then_some(keep),
            bad,
            result: fresh,
        })
    })?;
    Ok(match outcome {
        None => Drained::default(),
        Some((delivered, quarantined)) => Drained {
            delivered,
            quarantined,
        },
    })
}

/// 2.1.45-style consumption: sets `read: true` on the entries whose de-duplication key is in
/// `keys` and keeps them. Returns how many were marked.
pub fn mark_read(home: &Home, team: &str, member: &str, keys: &[String]) -> Result<usize> {
    let wanted: HashSet<&str> = keys.iter().map(String::as_str).collect();
    let outcome = rewrite_locked(home, team, member, |mut items| {
        let mut marked = 0;
        for v in &mut items {
            let Ok(e) = serde_json::from_value::<InboxEntry>(v.clone()) else {
                continue;
            };
            if e.is_unread()
                && wanted.contains(e.dedup_key().as_str())
                && let Some(obj) = v.as_object_mut()
            {
                obj.insert("read".into(), Value::Bool(true));
                marked += 1;
            }
        }
        Ok(Rewrite {
            keep: (marked > 0).then_some(items),
            bad: Vec::new(),
            result: marked,
        })
    })?;
    Ok(outcome.map(|(n, _)| n).unwrap_or(0))
}

/// 2.1.329-style consumption for a teammate reading its own inbox: removes and returns every
/// entry with `read != true`; bad entries are quarantined and removed; read entries stay.
pub fn take_unread(home: &Home, team: &str, member: &str) -> Result<Drained> {
    let outcome = rewrite_locked(home, team, member, |items| {
        let mut keep = Vec::new();
        let mut bad = Vec::new();
        let mut taken = Vec::new();
        for v in items {
            match serde_json::from_value::<InboxEntry>(v.clone()) {
                Err(_) => bad.push(v),
                Ok(e) if !e.is_unread() => keep.push(v),
                Ok(e) => taken.push(e),
            }
        }
        let changed = !bad.is_empty() || !taken.is_empty();
        Ok(Rewrite {
            keep: changed.then_some(keep),
            bad,
            result: taken,
        })
    })?;
    Ok(match outcome {
        None => Drained::default(),
        Some((delivered, quarantined)) => Drained {
            delivered,
            quarantined,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> InboxEntry {
        let mut e = InboxEntry::new("a", text);
        e.msg_id = None;
        e.timestamp = "2026-01-01T00:00:00.000Z".into();
        e
    }

    #[test]
    fn textual_append_matches_json_stringify_layout() {
        let one = appended_text(b"", &[entry("x")]);
        let expected = pretty_bytes(&vec![entry("x")]);
        assert_eq!(
            String::from_utf8_lossy(&one),
            String::from_utf8_lossy(&expected)
        );
        let two = appended_text(&one, &[entry("y"), entry("z")]);
        let expected = pretty_bytes(&vec![entry("x"), entry("y"), entry("z")]);
        assert_eq!(
            String::from_utf8_lossy(&two),
            String::from_utf8_lossy(&expected)
        );
        let from_empty = appended_text(b"[]\n", &[entry("x")]);
        assert_eq!(from_empty, pretty_bytes(&vec![entry("x")]));
        let compact = appended_text(br#"[{"odd":1}]"#, &[entry("x")]);
        let v: Value = serde_json::from_slice(&compact).unwrap();
        assert_eq!(v[0], serde_json::json!({"odd": 1}));
        assert_eq!(v[1]["text"], "x");
    }
}
