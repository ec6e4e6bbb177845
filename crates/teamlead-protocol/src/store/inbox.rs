//! Inboxes (PROTOCOL.md 3): appending a message under the inbox's lock directory, reading
//! without a lock, and consuming: the lead's drain (record durably, then remove), 2.1.45-style
//! `mark_read`, and 2.1.329-style `take_unread`. The array is handled as raw JSON values so an
//! append or a rewrite never drops an entry it does not understand. An inbox that cannot be
//! parsed (not UTF-8, not JSON, too deep, not an array — for an append, not an array of
//! objects) is never rewritten: every writer fails with a `Parse` error naming it and leaves
//! its bytes as they are. Entries of a valid array that fail the schema when consumed are
//! moved to quarantine. The one exception is the lead's own inbox: the lead moves an inbox it
//! cannot read, as it is, into quarantine and starts a fresh one ([`recover_unreadable`]).

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::atomic::{
    Parsed, create_exclusive, parse_json, pretty_bytes, read_parsed, write_atomic,
};
use super::delivery::DeliveryLog;
use super::error::{Result, StoreError};
use super::home::Home;
pub use super::inbox_memo::{InboxMemo, keep_if_fresh};
use super::json_check::array_of_objects;
use super::lock::{self, DEFAULT_LOCK_TIMEOUT};
use super::quarantine::quarantine_bytes;
use super::safe_file::{MAX_FILE_BYTES, PRIVATE_FILE_MODE, read_regular};
use crate::InboxEntry;
use crate::inbox::parse_entries;

/// What an append did besides appending.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Appended {
    /// Always `None`: an inbox that is not a JSON array of objects is now refused (a `Parse`
    /// error), never quarantined and restarted. Kept so callers still build.
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

/// The inbox as raw values, under its lock. A missing file is `None`; a file that is not a
/// JSON array (after torn-read retries) is a `Parse` error and stays as it is.
fn load_locked(path: &Path) -> Result<Option<Vec<Value>>> {
    let parsed = read_parsed(path, |bytes| {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // Created with O_EXCL but not yet (or never) written: an empty inbox.
            return Ok(Vec::new());
        }
        as_array(parse_json(bytes)?)
    })?;
    match parsed {
        Parsed::Missing => Ok(None),
        Parsed::Ok(items) => Ok(Some(items)),
        Parsed::Invalid { detail, .. } => Err(refused(path, &detail)),
    }
}

/// The error of a writer that will not touch an inbox it cannot parse.
fn refused(path: &Path, detail: &str) -> StoreError {
    StoreError::parse(path, format!("{detail}; the inbox was left as it is"))
}

fn as_array(v: Value) -> std::result::Result<Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items),
        other => Err(format!("not a JSON array (found {})", json_kind(&other))),
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

/// The inbox's path, its folder made. The inbox itself is not made here: a writer that finds
/// none makes it whole, with its entries ([`create_new_inbox`]). (Claude Code creates `[]`
/// first because its lock, proper-lockfile, needs the file to exist; an empty inbox made first
/// would cost a file and a folder fsync more per new inbox — every spawn.) A path that is
/// there but not a regular file (a symlink, a folder, a FIFO) is refused.
fn ensure_inbox(home: &Home, team: &str, member: &str) -> Result<PathBuf> {
    let path = home.inbox_path(team, member)?;
    home.check_inside(&path)?;
    home.ensure_dir(&home.inboxes_dir(team)?)?;
    super::atomic::check_regular_file(&path)?;
    Ok(path)
}

/// Makes a new inbox with `bytes` (written and fsynced under a temp name, then a rename that
/// never replaces, then the folder fsynced); `false` when an inbox is there (nothing written).
/// No lock is needed: a rename that never replaces cannot lose anyone's entries, because every
/// writer makes a missing inbox this way — teamlead's under the lock too ([`put_locked`]), and
/// Claude Code's with O_EXCL (`[]`, before it takes the lock, which it cannot take on a file
/// that is not there). A new inbox (every spawn's) thus costs no lock directory: six folder
/// changes fewer in the shared inbox folder.
fn create_new_inbox(path: &Path, bytes: &[u8]) -> Result<bool> {
    if !create_exclusive(path, bytes)? {
        return Ok(false);
    }
    if let Some(dir) = path.parent() {
        super::atomic::sync_dir(dir)?;
    }
    Ok(true)
}

/// Writes `bytes` as the inbox under its lock: over the file read under it, or, when none was
/// there, as a new inbox that never replaces one made meanwhile without the lock
/// ([`create_new_inbox`]). `false`: an inbox appeared; read again.
fn put_locked(path: &Path, bytes: &[u8], was_there: bool) -> Result<bool> {
    if was_there {
        write_atomic(path, bytes)?;
        return Ok(true);
    }
    create_new_inbox(path, bytes)
}

/// Appends `entry` to `<team>/inboxes/<to>.json`: a missing inbox is made with it
/// ([`create_new_inbox`]); else take `<inbox>.lock/`, read, push, write atomically, release.
pub fn append(home: &Home, team: &str, to: &str, entry: &InboxEntry) -> Result<Appended> {
    append_many(home, team, to, std::slice::from_ref(entry))
}

/// Appends several entries in one locked read-modify-write (with the appends of other threads
/// of this process that come at the same time: `append_batch`; it returns once they are on
/// disk). The existing text is kept byte
/// for byte (it is checked strictly as a JSON array of objects — UTF-8, nesting depth,
/// escapes — and never re-serialized), so entries the store does not understand survive and
/// an append stays cheap as the inbox grows. An inbox that fails the check is refused with a
/// `Parse` error and left untouched.
///
/// The lock is held only to check that the inbox is unchanged and rename the prepared file
/// over it (written and fsynced before, the directory fsynced after): a Claude Code teammate
/// that sees the new entry takes this lock at once to mark it read, and its turn-start
/// `isActive` write waits for that (docs/PROTOCOL.md §4). After a few changed inboxes in a
/// row, the whole read-modify-write is done under the lock.
pub fn append_many(home: &Home, team: &str, to: &str, entries: &[InboxEntry]) -> Result<Appended> {
    let path = ensure_inbox(home, team, to)?;
    // Appends of this process that come at once are written together (`append_batch`).
    super::append_batch::append(&path, entries, |all| {
        // (Looked at first, so an inbox that is there costs no text made for nothing.)
        if !super::atomic::check_regular_file(&path)?
            && create_new_inbox(&path, &appended_text(b"", 0, all))?
        {
            return Ok(());
        }
        for _ in 0..3 {
            if let Swap::Done(_) = append_prepared(&path, all, false)? {
                return Ok(());
            }
        }
        locked_append(&path, all, false).map(|_| ())
    })?;
    Ok(Appended::default())
}

/// Appends `entry` unless an entry of the inbox already carries its relay id (`relayId`), in
/// one step under the inbox's lock: the check and the append see the same bytes, so two calls
/// with the same id append once. Returns whether it appended. An entry without a relay id is
/// always appended. This is how teamlead's link between hosts applies a forwarded entry
/// exactly once (docs/PROTOCOL.md, "teamlead's own link").
pub fn append_once(home: &Home, team: &str, to: &str, entry: &InboxEntry) -> Result<bool> {
    Ok(append_new(home, team, to, std::slice::from_ref(entry))? == 1)
}

/// [`append_once`] for several entries in one locked swap: appends, in order, those whose
/// relay id no entry of the inbox carries yet (and the first of repeats within `entries`).
/// Returns how many it appended.
pub fn append_new(home: &Home, team: &str, to: &str, entries: &[InboxEntry]) -> Result<usize> {
    let path = ensure_inbox(home, team, to)?;
    if !super::atomic::check_regular_file(&path)? {
        let fresh = not_yet_there(b"", entries);
        if create_new_inbox(&path, &appended_text(b"", 0, &fresh))? {
            return Ok(fresh.len());
        }
    }
    for _ in 0..3 {
        match append_prepared(&path, entries, true)? {
            Swap::Done(n) => return Ok(n),
            Swap::Changed => {}
        }
    }
    locked_append(&path, entries, true)
}

/// The whole read-modify-write of an append under the inbox's lock; with `once`, entries whose
/// relay id is there already are left out. Returns how many were appended.
fn locked_append(path: &Path, entries: &[InboxEntry], once: bool) -> Result<usize> {
    let _lock = lock::acquire(path, DEFAULT_LOCK_TIMEOUT)?;
    loop {
        let (existing, count, was_there) = match read_parsed(path, |bytes| {
            array_of_objects(bytes).map(|n| (bytes.to_vec(), n))
        })? {
            Parsed::Missing => (Vec::new(), 0, false),
            Parsed::Ok((bytes, n)) => (bytes, n, true),
            Parsed::Invalid { detail, .. } => return Err(refused(path, &detail)),
        };
        let fresh = if once {
            not_yet_there(&existing, entries)
        } else {
            entries.to_vec()
        };
        if fresh.is_empty() {
            return Ok(0);
        }
        if put_locked(path, &appended_text(&existing, count, &fresh), was_there)? {
            return Ok(fresh.len());
        }
    }
}

/// The entries whose relay id no entry of the inbox text `bytes` carries (entries without one
/// all stay), the first of repeats within `entries` kept. The inbox is read once for its relay
/// ids (only that field of each entry is kept): an inbox that only grows, and a batch of a few
/// hundred entries, cost one pass over the file, not one per entry.
fn not_yet_there(bytes: &[u8], entries: &[InboxEntry]) -> Vec<InboxEntry> {
    let mut seen: HashSet<String> = HashSet::new();
    if entries.iter().any(|e| e.relay_id.is_some()) {
        match serde_json::from_slice::<Vec<RelayIdOnly>>(bytes) {
            Ok(items) => seen.extend(items.into_iter().filter_map(|item| match item.relay_id {
                Some(Value::String(id)) => Some(id),
                _ => None,
            })),
            // Not an array of objects (a hand-edited file): what parses as JSON still counts.
            Err(_) => {
                if let Ok(Value::Array(items)) = parse_json(bytes) {
                    seen.extend(
                        items
                            .iter()
                            .filter_map(|v| v.get("relayId").and_then(Value::as_str))
                            .map(str::to_string),
                    );
                }
            }
        }
    }
    entries
        .iter()
        .filter(|e| match &e.relay_id {
            None => true,
            Some(id) => seen.insert(id.clone()),
        })
        .cloned()
        .collect()
}

/// One inbox entry read for its relay id alone (every other field is skipped).
#[derive(serde::Deserialize)]
struct RelayIdOnly {
    #[serde(rename = "relayId", default)]
    relay_id: Option<Value>,
}

/// What one attempt of an append with the lock held only for the swap did.
enum Swap {
    /// Appended this many (with `once`, 0 when every relay id was there already).
    Done(usize),
    /// The inbox changed between the read and the swap: nothing was written.
    Changed,
}

/// One attempt of an append with the lock held only for the swap.
fn append_prepared(path: &Path, entries: &[InboxEntry], once: bool) -> Result<Swap> {
    let found = read_regular(path, MAX_FILE_BYTES)?;
    let was_there = found.is_some();
    let before = found.unwrap_or_default();
    let count = if before.iter().all(u8::is_ascii_whitespace) {
        0
    } else {
        // A torn or bad file: the locked path reads it again and decides.
        match array_of_objects(&before) {
            Ok(n) => n,
            Err(_) => return Ok(Swap::Changed),
        }
    };
    let fresh;
    let entries = if once {
        fresh = not_yet_there(&before, entries);
        if fresh.is_empty() {
            // Every id was there when read, and an entry is only ever added with its id:
            // applied before, nothing to do.
            return Ok(Swap::Done(0));
        }
        &fresh[..]
    } else {
        entries
    };
    let existing = if before.iter().all(u8::is_ascii_whitespace) {
        &[][..]
    } else {
        &before[..]
    };
    let temp = prepare_temp(path, &appended_text(existing, count, entries))?;
    let swapped = (|| -> Result<bool> {
        let _lock = lock::acquire(path, DEFAULT_LOCK_TIMEOUT)?;
        let now = read_regular(path, MAX_FILE_BYTES)?;
        if now.is_some() != was_there || now.unwrap_or_default() != before {
            return Ok(false);
        }
        if !was_there {
            // Never over an inbox made meanwhile without the lock (`create_new_inbox`).
            return match super::lock::create::rename_no_replace(&temp, path) {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
                Err(e) => Err(StoreError::io(path, e)),
            };
        }
        super::atomic::check_regular_file(path)?;
        std::fs::rename(&temp, path).map_err(|e| StoreError::io(path, e))?;
        Ok(true)
    })();
    if !matches!(swapped, Ok(true)) {
        let _ = std::fs::remove_file(&temp);
    }
    if !swapped? {
        return Ok(Swap::Changed);
    }
    if let Some(dir) = path.parent() {
        super::atomic::sync_dir(dir)?;
    }
    Ok(Swap::Done(entries.len()))
}

/// `existing` (a valid JSON array text of `count` elements, or empty) with `entries` appended
/// in the layout of `JSON.stringify(array, null, 2)`.
fn appended_text(existing: &[u8], count: usize, entries: &[InboxEntry]) -> Vec<u8> {
    let mut out = Vec::with_capacity(existing.len() + 512 * entries.len());
    let end = existing
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map(|i| i + 1)
        .unwrap_or(0);
    let body = &existing[..end];
    let has_items = count > 0;
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
        let text = crate::json::to_pretty(entry).unwrap_or_default();
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
/// Like every writer, it refuses an inbox it cannot parse as a JSON array.
pub fn replace(home: &Home, team: &str, member: &str, entries: &[InboxEntry]) -> Result<()> {
    let path = ensure_inbox(home, team, member)?;
    let bytes = pretty_bytes(entries);
    if create_new_inbox(&path, &bytes)? {
        return Ok(());
    }
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    while !put_locked(&path, &bytes, load_locked(&path)?.is_some())? {}
    Ok(())
}

/// Reads an inbox without a lock. Missing → empty; not an array (after torn-read retries) →
/// `Parse` error.
pub fn read(home: &Home, team: &str, member: &str) -> Result<InboxRead> {
    let path = home.inbox_path(team, member)?;
    home.check_inside(&path)?;
    read_path(&path)
}

/// [`read`] for an inbox file given by path. The file itself is opened safely (no symlink,
/// no FIFO, bounded); directories above it are not checked — call [`Home::check_inside`]
/// first for a path below a home.
pub fn read_path(path: &Path) -> Result<InboxRead> {
    let parsed = read_parsed(path, |bytes| as_array(parse_json(bytes)?))?;
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
    home.check_inside(&path)?;
    if !super::atomic::check_regular_file(&path)? {
        return Ok(None);
    }
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    let mut quarantined = Vec::new();
    let Some(items) = load_locked(&path)? else {
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

/// The lead's consumption: takes every entry with `read != true`, records the new ones durably
/// in `log` (fsync) BEFORE the inbox is rewritten without them, and skips those the log already
/// holds (a crash between the two steps). Entries that fail the schema are quarantined and
/// removed. Entries marked `read: true` stay.
///
/// The inbox's lock is held as briefly as possible, because Claude Code's writers give up after
/// well under a second of a busy lock ("mailbox write failed"): the log is written and the new
/// inbox prepared (written and fsynced as a temp file) without the lock; under it the inbox is
/// only read again and, when its bytes have not changed, the temp file renamed over it. An
/// inbox that changed in between is tried again; bad entries, or an inbox that keeps changing,
/// take the slow path (everything under the lock).
pub fn drain_unread(
    home: &Home,
    team: &str,
    member: &str,
    log: &mut DeliveryLog,
) -> Result<Drained> {
    let mut delivered = Vec::new();
    let quarantined = drain_unread_into(home, team, member, log, &mut delivered)?;
    Ok(Drained {
        delivered,
        quarantined,
    })
}

/// [`drain_unread`] that puts the delivered entries into `delivered` as soon as they are
/// recorded in `log`, so a step that fails after the record (a full disk refusing the new
/// inbox, a lock in the way) still hands them over: the log says they were delivered and the
/// next drain skips them, so an entry recorded and then dropped with the error would never be
/// shown. Returns the quarantine files.
pub fn drain_unread_into(
    home: &Home,
    team: &str,
    member: &str,
    log: &mut DeliveryLog,
    delivered: &mut Vec<InboxEntry>,
) -> Result<Vec<PathBuf>> {
    let path = home.inbox_path(team, member)?;
    home.check_inside(&path)?;
    for _ in 0..3 {
        match drain_prepared(&path, log, delivered)? {
            Prepared::Done => return Ok(Vec::new()),
            Prepared::Changed => continue,
            Prepared::SlowPath => break,
        }
    }
    drain_locked(home, team, member, log, delivered)
}

/// What one attempt of the fast drain did.
enum Prepared {
    /// The inbox holds no unread entry any more (or none was there).
    Done,
    /// The inbox changed between the two reads; what was recorded stays in `delivered`.
    Changed,
    /// Bad entries, or a file that does not parse: the locked path decides.
    SlowPath,
}

/// What a lock-free read of an inbox found for the lead's consumption.
enum Scan {
    /// No unread entry (or no inbox).
    Nothing,
    /// Bad entries, or a file that does not parse: the locked path decides.
    Bad,
    /// Unread entries: the file's bytes, the entries that stay (read ones), and the unread
    /// ones the log does not hold yet, and how many are unread in all.
    Unread {
        before: Vec<u8>,
        keep: Vec<Value>,
        fresh: Vec<InboxEntry>,
        unread: usize,
    },
}

fn scan(path: &Path, log: &DeliveryLog) -> Result<Scan> {
    match read_for_scan(path)? {
        None => Ok(Scan::Nothing),
        Some(before) => Ok(scan_bytes(before, log)),
    }
}

/// The inbox's bytes for a lock-free scan (`None`: no inbox, or nothing written in it yet).
fn read_for_scan(path: &Path) -> Result<Option<Vec<u8>>> {
    if !super::atomic::check_regular_file(path)? {
        return Ok(None);
    }
    let Some(before) = read_regular(path, MAX_FILE_BYTES)? else {
        return Ok(None);
    };
    if before.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    Ok(Some(before))
}

fn scan_bytes(before: Vec<u8>, log: &DeliveryLog) -> Scan {
    let Ok(items) = parse_json(&before).and_then(as_array) else {
        return Scan::Bad;
    };
    let mut keep = Vec::new();
    let mut fresh = Vec::new();
    let mut seen = HashSet::new();
    let mut unread = 0;
    for v in items {
        match serde_json::from_value::<InboxEntry>(v.clone()) {
            Err(_) => return Scan::Bad,
            Ok(e) if !e.is_unread() => keep.push(v),
            Ok(e) => {
                unread += 1;
                keep_if_fresh(e, log, &mut seen, &mut fresh);
            }
        }
    }
    if unread == 0 {
        return Scan::Nothing;
    }
    Scan::Unread {
        before,
        keep,
        fresh,
        unread,
    }
}

/// What [`take_unread_into`] left in the inbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Taken {
    /// No unread entry is left in the file.
    Empty,
    /// Unread entries stay in the file (all of them recorded in the log): a
    /// [`drain_unread_into`] later removes them.
    Pending,
    /// The file does not parse or holds bad entries: only [`drain_unread_into`] handles it.
    Unparsed,
}

/// The lead's consumption without touching the inbox: notes the unread entries the log does
/// not hold yet (written, made durable by the drain that removes them: [`DeliveryLog::note`])
/// and puts them into `delivered`, taking no lock and writing nothing
/// to the inbox. Claude Code 2.1.45 gives up at once on a busy inbox lock, so the lead takes
/// new entries this way as they come and removes them with [`drain_unread_into`] only once
/// the inbox has been quiet for a while (a teammate's frames come in bursts).
pub fn take_unread_into(
    home: &Home,
    team: &str,
    member: &str,
    log: &mut DeliveryLog,
    memo: &mut InboxMemo,
    delivered: &mut Vec<InboxEntry>,
) -> Result<Taken> {
    let path = home.inbox_path(team, member)?;
    home.check_inside(&path)?;
    let Some(bytes) = read_for_scan(&path)? else {
        memo.forget();
        return Ok(Taken::Empty);
    };
    // Entries appended to the file read last: only they are parsed; else the whole file.
    let (bytes, fresh, unread) = match memo.scan_rest(&bytes, log) {
        Some(rest) => (bytes, rest.fresh, rest.unread),
        None => match scan_bytes(bytes, log) {
            Scan::Unread {
                before,
                fresh,
                unread,
                ..
            } => (before, fresh, unread),
            Scan::Nothing => {
                memo.forget();
                return Ok(Taken::Empty);
            }
            Scan::Bad => {
                memo.forget();
                return Ok(Taken::Unparsed);
            }
        },
    };
    // Shown at once; durable before the entries leave the inbox (`drain_prepared`). On an
    // error the memo still describes the file it read last, whose entries are all noted.
    log.note(&fresh)?;
    delivered.extend(fresh);
    memo.remember(bytes, unread);
    Ok(if unread == 0 {
        Taken::Empty
    } else {
        Taken::Pending
    })
}

/// One attempt of the fast drain: read and record without the lock, then swap under it.
fn drain_prepared(
    path: &Path,
    log: &mut DeliveryLog,
    delivered: &mut Vec<InboxEntry>,
) -> Result<Prepared> {
    let (before, keep, fresh) = match scan(path, log)? {
        Scan::Nothing => return Ok(Prepared::Done),
        Scan::Bad => return Ok(Prepared::SlowPath),
        Scan::Unread {
            before,
            keep,
            fresh,
            ..
        } => (before, keep, fresh),
    };
    // Durable before anything leaves the inbox; the log de-duplicates by key, so recording
    // entries that a retry finds again does nothing.
    log.record(&fresh)?;
    delivered.extend(fresh);
    let temp = prepare_temp(path, &pretty_bytes(&keep))?;
    let swapped = (|| -> Result<bool> {
        let _lock = lock::acquire(path, DEFAULT_LOCK_TIMEOUT)?;
        if read_regular(path, MAX_FILE_BYTES)?.as_deref() != Some(&before[..]) {
            return Ok(false);
        }
        std::fs::rename(&temp, path).map_err(|e| StoreError::io(path, e))?;
        Ok(true)
    })();
    if !matches!(swapped, Ok(true)) {
        let _ = std::fs::remove_file(&temp);
    }
    if !swapped? {
        return Ok(Prepared::Changed);
    }
    if let Some(dir) = path.parent() {
        super::atomic::sync_dir(dir)?;
    }
    Ok(Prepared::Done)
}

/// Writes `bytes` to a new private temp file beside `path` (named as the atomic writer names
/// its temp files, which readers and watchers skip) and fsyncs it.
fn prepare_temp(path: &Path, bytes: &[u8]) -> Result<PathBuf> {
    let mut name = path.file_name().unwrap_or_default().to_owned();
    name.push(format!(".tmp.{:08x}", rand::random::<u32>()));
    let temp = path.with_file_name(name);
    let written = (|| -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temp)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(StoreError::io(&temp, e));
    }
    Ok(temp)
}

/// The slow path of [`drain_unread`]: everything under the lock (quarantines bad entries).
/// What is recorded goes into `delivered` at once (see [`drain_unread_into`]).
fn drain_locked(
    home: &Home,
    team: &str,
    member: &str,
    log: &mut DeliveryLog,
    delivered: &mut Vec<InboxEntry>,
) -> Result<Vec<PathBuf>> {
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
        delivered.extend(fresh);
        Ok(Rewrite {
            keep: changed.then_some(keep),
            bad,
            result: (),
        })
    })?;
    Ok(outcome
        .map(|((), quarantined)| quarantined)
        .unwrap_or_default())
}

/// An inbox that could not be read, moved to quarantine by [`recover_unreadable`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Where its bytes are now (`<home>/quarantine/<team>/…-<name>.json.<hex>.bad`).
    pub kept: PathBuf,
    /// Why it could not be read.
    pub detail: String,
    /// How many bytes were moved.
    pub bytes: u64,
}

/// Why the inbox at `path` cannot be read as a JSON array (`None`: it can, or it is missing).
/// `retry` allows the torn-read retries. A file too large for the reader is unreadable too.
fn unreadable(path: &Path, retry: bool) -> Result<Option<String>> {
    let parse = |bytes: &[u8]| {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        as_array(parse_json(bytes)?).map(|_| ())
    };
    let judged = if retry {
        read_parsed(path, parse)
    } else {
        read_regular(path, MAX_FILE_BYTES).map(|b| match b {
            None => Parsed::Missing,
            Some(bytes) => match parse(&bytes) {
                Ok(()) => Parsed::Ok(()),
                Err(detail) => Parsed::Invalid { detail },
            },
        })
    };
    match judged {
        Ok(Parsed::Missing | Parsed::Ok(())) => Ok(None),
        Ok(Parsed::Invalid { detail, .. }) => Ok(Some(detail)),
        // Too large for the reader: a Parse error naming the size.
        Err(StoreError::Parse { detail, .. }) => Ok(Some(detail)),
        Err(e) => Err(e),
    }
}

/// The lead's way out of an inbox it cannot read (not UTF-8, not JSON, not an array, too
/// large): under the inbox's lock, the file is renamed as it is into `<home>/quarantine/<team>/`
/// (outside the team directory, so removing the team keeps it), a `.why` note is written beside
/// it, and a fresh `[]` inbox is made, so messages flow again. Nothing is copied, so not a byte
/// is lost: a writer that appends to the file it opened before the move appends to the kept
/// file, and one that opens the path after it finds the fresh inbox (or makes one). A file
/// that had become a valid inbox by the time it was moved (replaced between the read and the
/// rename by a writer that ignores the lock) is put back. `None` when there is nothing to
/// recover (the inbox is readable, missing, or not a regular file, which is left for a human).
pub fn recover_unreadable(home: &Home, team: &str, member: &str) -> Result<Option<Recovered>> {
    let path = home.inbox_path(team, member)?;
    home.check_inside(&path)?;
    if !super::atomic::check_regular_file(&path)? {
        return Ok(None);
    }
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    for _ in 0..3 {
        let Some(mut detail) = unreadable(&path, true)? else {
            return Ok(None);
        };
        let (kept, why) = super::quarantine::place(home, team, &path)?;
        match std::fs::rename(&path, &kept) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                // The quarantine is on another file system: copy, then remove the inbox only
                // if it still holds exactly what was copied.
                let Some(bytes) = read_regular(&path, 1 << 40)? else {
                    return Ok(None);
                };
                write_atomic(&kept, &bytes)?;
                if read_regular(&path, 1 << 40)?.as_deref() != Some(&bytes[..]) {
                    let _ = std::fs::remove_file(&kept);
                    continue;
                }
                std::fs::remove_file(&path).map_err(|e| StoreError::io(&path, e))?;
            }
            Err(e) => return Err(StoreError::io(&path, e)),
        }
        if unreadable(&kept, false)?.is_none() {
            // Replaced by a valid inbox between the read and the rename: put it back.
            match super::lock::create::rename_no_replace(&kept, &path) {
                Ok(()) => continue,
                Err(_) => {
                    detail = format!(
                        "{detail}; it had become a valid inbox by the time it was moved and a \
                         new inbox was already there, so its entries are kept here"
                    )
                }
            }
        }
        create_exclusive(&path, b"[]")?;
        if let Some(dir) = path.parent() {
            super::atomic::sync_dir(dir)?;
        }
        if let Some(dir) = kept.parent() {
            super::atomic::sync_dir(dir)?;
        }
        let bytes = std::fs::symlink_metadata(&kept)
            .map(|m| m.len())
            .unwrap_or(0);
        super::quarantine::write_note(
            &why,
            &path,
            &format!("the inbox could not be read ({bytes} bytes): {detail}"),
        )?;
        tracing::warn!(
            "moved the unreadable inbox {} to {} ({bytes} bytes): {detail}",
            path.display(),
            kept.display()
        );
        return Ok(Some(Recovered {
            kept,
            detail,
            bytes,
        }));
    }
    Ok(None)
}

/// 2.1.45-style consumption: sets `read: true` on the entries whose de-duplication key is in
/// `keys` and keeps them. Returns how many were marked.
pub fn mark_read(home: &Home, team: &str, member: &str, keys: &[String]) -> Result<usize> {
    let wanted: HashSet<&str> = keys.iter().map(String::as_str).collect();
    mark_read_where(home, team, member, |e| {
        wanted.contains(e.dedup_key().as_str())
    })
}

/// [`mark_read`] of the unread entries `which` picks, in one read of the inbox under its lock;
/// how many were marked.
pub fn mark_read_where(
    home: &Home,
    team: &str,
    member: &str,
    which: impl Fn(&InboxEntry) -> bool,
) -> Result<usize> {
    let outcome = rewrite_locked(home, team, member, |mut items| {
        let mut marked = 0;
        for v in &mut items {
            let Ok(e) = serde_json::from_value::<InboxEntry>(v.clone()) else {
                continue;
            };
            if e.is_unread()
                && which(&e)
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
        let one = appended_text(b"", 0, &[entry("x")]);
        let expected = pretty_bytes(&vec![entry("x")]);
        assert_eq!(
            String::from_utf8_lossy(&one),
            String::from_utf8_lossy(&expected)
        );
        let two = appended_text(&one, 1, &[entry("y"), entry("z")]);
        let expected = pretty_bytes(&vec![entry("x"), entry("y"), entry("z")]);
        assert_eq!(
            String::from_utf8_lossy(&two),
            String::from_utf8_lossy(&expected)
        );
        let from_empty = appended_text(b"[]\n", 0, &[entry("x")]);
        assert_eq!(from_empty, pretty_bytes(&vec![entry("x")]));
        let compact = appended_text(br#"[{"odd":1}]"#, 1, &[entry("x")]);
        let v: Value = serde_json::from_slice(&compact).unwrap();
        assert_eq!(v[0], serde_json::json!({"odd": 1}));
        assert_eq!(v[1]["text"], "x");
    }

    /// How many times a file named `name` was renamed into `dir` while `f` ran.
    fn renames_into(dir: &Path, name: &str, f: impl FnOnce()) -> usize {
        let mut watch = teamlead_test_support::renames::RenameWatch::new(dir);
        f();
        watch.count(name)
    }

    #[test]
    fn a_new_inbox_is_written_once_with_its_entries() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::new(dir.path());
        let inboxes = home.inboxes_dir("t").unwrap();
        home.ensure_dir(&inboxes).unwrap();
        let appended = renames_into(&inboxes, "a.json", || {
            append(&home, "t", "a", &entry("first")).unwrap();
        });
        let replaced = renames_into(&inboxes, "b.json", || {
            replace(&home, "t", "b", &[entry("prompt")]).unwrap();
        });
        assert_eq!(
            (appended, replaced),
            (1, 1),
            "no empty inbox made first (a file and a folder fsync more per new inbox)"
        );
        assert_eq!(read(&home, "t", "a").unwrap().entries[0].text, "first");
        assert_eq!(read(&home, "t", "b").unwrap().entries[0].text, "prompt");
        // A writer that found no inbox under the lock never writes over one made meanwhile
        // without it: it reads again.
        let b = home.inbox_path("t", "b").unwrap();
        assert!(!put_locked(&b, &pretty_bytes(&vec![entry("late")]), false).unwrap());
        assert_eq!(read(&home, "t", "b").unwrap().entries[0].text, "prompt");
        // A path there that is not a file is still refused.
        std::fs::create_dir(inboxes.join("c.json")).unwrap();
        assert!(append(&home, "t", "c", &entry("x")).is_err());
    }
}
