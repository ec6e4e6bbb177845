//! The delivery log: a JSONL file under the team's `.teamlead/` directory that records every
//! inbox entry the lead has delivered, fsynced before the entry is removed from the inbox.
//! It is loaded into a set of de-duplication keys at open, so an entry delivered before a
//! crash is not delivered twice.
//!
//! Taking an entry (showing it, the entry staying in the inbox) only writes its line
//! ([`DeliveryLog::note`]): a lead that crashes still finds the line (the kernel has it), and
//! only a machine that loses power before the next sync can show such an entry again, which the
//! inbox still holds. The fsync comes before anything leaves the inbox ([`DeliveryLog::record`],
//! [`DeliveryLog::sync`]), so no entry is ever lost, and a delivery does not wait for the disk.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::{Result, StoreError, io_at};
use crate::InboxEntry;

/// The largest delivery log read at open (a long session's log stays far below it).
const MAX_LOG_BYTES: u64 = 512 * 1024 * 1024;

/// An open delivery log.
#[derive(Debug)]
pub struct DeliveryLog {
    path: PathBuf,
    keys: HashSet<String>,
    /// Lines written since the last fsync (and whether the file was created since).
    unsynced: Option<Unsynced>,
}

/// What a [`DeliveryLog::sync`] still owes the disk.
#[derive(Debug, Clone, Copy)]
struct Unsynced {
    created: bool,
}

impl DeliveryLog {
    /// Opens (creating when missing) the log at `path` and loads its keys. A torn last line
    /// (a crash mid-write) is skipped; the parent directory must exist or be creatable.
    pub fn open(path: &Path) -> Result<DeliveryLog> {
        if let Some(parent) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(super::safe_file::PRIVATE_DIR_MODE)
                .create(parent)
                .map_err(io_at(parent))?;
        }
        // Never through a symlink, never blocking on a FIFO, bounded.
        let text = match super::safe_file::read_regular(path, MAX_LOG_BYTES)? {
            Some(b) => String::from_utf8_lossy(&b).into_owned(),
            None => String::new(),
        };
        let mut keys = HashSet::new();
        for line in text.lines() {
            if let Ok(v) = serde_json::from_str::<Value>(line)
                && let Some(k) = v.get("key").and_then(Value::as_str)
            {
                keys.insert(k.to_string());
            }
        }
        // A torn last line would glue onto the next record: end it first.
        if !text.is_empty() && !text.ends_with('\n') {
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
                .open(path)
                .map_err(io_at(path))?;
            f.write_all(b"\n")
                .and_then(|()| f.sync_all())
                .map_err(io_at(path))?;
        }
        Ok(DeliveryLog {
            path: path.to_path_buf(),
            keys,
            unsynced: None,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Was an entry with this de-duplication key delivered already?
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// How many keys are recorded.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// True when nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Appends one line per entry (`{"key", "deliveredAt", "entry"}`) and fsyncs (what was
    /// noted before too): before entries leave an inbox.
    pub fn record(&mut self, entries: &[InboxEntry]) -> Result<()> {
        self.note(entries)?;
        self.sync()
    }

    /// Appends one line per entry without waiting for the disk (see the module's header): for
    /// entries taken while they stay in the inbox.
    pub fn note(&mut self, entries: &[InboxEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let now = crate::time::now_iso();
        let mut buf = String::new();
        for e in entries {
            let line = json!({"key": e.dedup_key(), "deliveredAt": now, "entry": e});
            buf.push_str(&serde_json::to_string(&line).unwrap_or_default());
            buf.push('\n');
        }
        let created = !self.path.exists();
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(super::safe_file::PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&self.path)
            .map_err(io_at(&self.path))?;
        let before = f.metadata().map(|m| m.len()).ok();
        if let Err(e) = f.write_all(buf.as_bytes()) {
            // A full disk may have taken part of the lines: cut them off, or the next record
            // would be glued to a torn line and unreadable at the next open.
            if let Some(len) = before {
                let _ = f.set_len(len);
            }
            return Err(StoreError::io(&self.path, e));
        }
        let created = created || self.unsynced.is_some_and(|u| u.created);
        self.unsynced = Some(Unsynced { created });
        for e in entries {
            self.keys.insert(e.dedup_key());
        }
        Ok(())
    }

    /// Makes every line written so far durable (nothing when all are).
    pub fn sync(&mut self) -> Result<()> {
        let Some(owed) = self.unsynced else {
            return Ok(());
        };
        let f = std::fs::OpenOptions::new()
            .append(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&self.path)
            .map_err(io_at(&self.path))?;
        f.sync_all().map_err(io_at(&self.path))?;
        if owed.created
            && let Some(dir) = self.path.parent()
        {
            super::atomic::sync_dir(dir)?;
        }
        self.unsynced = None;
        Ok(())
    }
}

/// One record of a delivery log.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    /// The entry's de-duplication key ([`InboxEntry::dedup_key`]).
    pub key: String,
    pub entry: InboxEntry,
}

/// Why a tail started over from the beginning of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Restart {
    /// Another file now has the name (replaced, or removed and created again).
    Replaced,
    /// The file is shorter than what was read of it.
    Truncated,
}

/// What one [`DeliveryTail::read_new`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TailRead {
    /// Complete records appended since the last read, in file order.
    pub records: Vec<Delivered>,
    /// Complete lines that are not records (a torn line ended by a later writer, junk).
    pub bad_lines: usize,
    /// The tail started over (every record of the new file is in `records`).
    pub restarted: Option<Restart>,
}

/// The most bytes one read takes in (the rest waits for the next call).
const TAIL_CHUNK: u64 = 16 * 1024 * 1024;
/// A line longer than this is skipped rather than buffered.
const MAX_LINE: usize = 4 * 1024 * 1024;

/// Follows a delivery log as it grows, for readers other than the lead (`monitor`): each call
/// returns the records appended since the last one. A torn last line waits for its end; a file
/// replaced or truncated under it is read again from the start (say so, de-duplicate by key);
/// a symlink, FIFO or directory in its place is an error, never followed or blocked on.
#[derive(Debug)]
pub struct DeliveryTail {
    path: PathBuf,
    offset: u64,
    identity: Option<(u64, u64)>,
    partial: Vec<u8>,
    /// Drop bytes up to the next newline (the middle of a line, or a line too long).
    skipping: bool,
}

impl DeliveryTail {
    /// A tail that will return every record from the start of the file.
    pub fn from_start(path: &Path) -> DeliveryTail {
        DeliveryTail {
            path: path.to_path_buf(),
            offset: 0,
            identity: None,
            partial: Vec::new(),
            skipping: false,
        }
    }

    /// A tail that returns only records appended from now on.
    pub fn from_end(path: &Path) -> Result<DeliveryTail> {
        let mut tail = DeliveryTail::from_start(path);
        if let Some(file) = open_log(path)? {
            let meta = file.metadata().map_err(io_at(path))?;
            tail.identity = Some(identity(&meta));
            tail.offset = meta.len();
            // In the middle of a line: its end is not a record of its own.
            tail.skipping = meta.len() > 0 && !ends_with_newline(&file, meta.len());
        }
        Ok(tail)
    }

    /// The file followed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The records appended since the last call. A missing file has none.
    pub fn read_new(&mut self) -> Result<TailRead> {
        use std::io::{Read, Seek, SeekFrom};
        let mut out = TailRead::default();
        let Some(mut file) = open_log(&self.path)? else {
            if self.identity.take().is_some() {
                self.restart();
            }
            return Ok(out);
        };
        let meta = file.metadata().map_err(io_at(&self.path))?;
        let id = identity(&meta);
        if self.identity.is_some_and(|old| old != id) {
            self.restart();
            out.restarted = Some(Restart::Replaced);
        } else if meta.len() < self.offset {
            self.restart();
            out.restarted = Some(Restart::Truncated);
        }
        self.identity = Some(id);
        if meta.len() == self.offset {
            return Ok(out);
        }
        file.seek(SeekFrom::Start(self.offset))
            .map_err(io_at(&self.path))?;
        let mut bytes = Vec::new();
        file.take(TAIL_CHUNK)
            .read_to_end(&mut bytes)
            .map_err(io_at(&self.path))?;
        self.offset += bytes.len() as u64;
        for &b in &bytes {
            if b == b'\n' {
                if !std::mem::take(&mut self.skipping) {
                    self.take_line(&mut out);
                }
                self.partial.clear();
            } else if !self.skipping {
                self.partial.push(b);
                if self.partial.len() > MAX_LINE {
                    self.partial.clear();
                    self.skipping = true;
                    out.bad_lines += 1;
                }
            }
        }
        Ok(out)
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.partial.clear();
        self.skipping = false;
    }

    fn take_line(&mut self, out: &mut TailRead) {
        if self.partial.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        match parse_record(&self.partial) {
            Some(record) => out.records.push(record),
            None => out.bad_lines += 1,
        }
    }
}

/// A record line: `{"key", "deliveredAt", "entry"}` (the key is recomputed when absent).
fn parse_record(line: &[u8]) -> Option<Delivered> {
    let value: Value = serde_json::from_slice(line).ok()?;
    let entry: InboxEntry = serde_json::from_value(value.get("entry")?.clone()).ok()?;
    let key = value
        .get("key")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| entry.dedup_key());
    Some(Delivered { key, entry })
}

/// Opens the log for reading without following a symlink or blocking on a FIFO; `None` when
/// it does not exist; an error when something other than a regular file is there.
fn open_log(path: &Path) -> Result<Option<std::fs::File>> {
    use super::safe_file::{FileKind, wrong_kind};
    use std::os::unix::fs::OpenOptionsExt;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(wrong_kind(path, FileKind::Symlink));
        }
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let meta = file.metadata().map_err(io_at(path))?;
    match FileKind::of(&meta) {
        FileKind::Regular => Ok(Some(file)),
        kind => Err(wrong_kind(path, kind)),
    }
}

fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

fn ends_with_newline(file: &std::fs::File, len: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let mut last = [0u8; 1];
    file.read_at(&mut last, len - 1).is_ok_and(|n| n == 1) && last[0] == b'\n'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(text: &str) -> InboxEntry {
        InboxEntry::new("alpha", text)
    }

    #[test]
    fn a_noted_entry_is_kept_for_a_restarted_lead_and_owed_to_the_disk_until_a_sync() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".teamlead/delivered-team-lead.jsonl");
        let mut log = DeliveryLog::open(&path).unwrap();
        let taken = entry("taken");
        log.note(std::slice::from_ref(&taken)).unwrap();
        assert!(
            log.unsynced.is_some_and(|u| u.created),
            "the line waits for a sync"
        );
        // A lead process that ends here (the kernel keeps the line) does not show it again.
        assert!(
            DeliveryLog::open(&path)
                .unwrap()
                .contains(&taken.dedup_key())
        );
        // A drain that removes entries from the inbox syncs first, even with nothing new.
        log.record(&[]).unwrap();
        assert!(log.unsynced.is_none());
        log.note(&[entry("more")]).unwrap();
        assert!(log.unsynced.is_some_and(|u| !u.created));
        log.sync().unwrap();
        assert!(log.unsynced.is_none());
    }

    #[test]
    fn tail_follows_appends_torn_lines_and_replacement() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".teamlead/delivered-team-lead.jsonl");
        let mut tail = DeliveryTail::from_start(&path);
        assert_eq!(
            tail.read_new().unwrap(),
            TailRead::default(),
            "missing file"
        );
        let mut log = DeliveryLog::open(&path).unwrap();
        let (one, two) = (entry("one"), entry("two"));
        log.record(&[one.clone(), two]).unwrap();
        let read = tail.read_new().unwrap();
        let texts: Vec<&str> = read.records.iter().map(|r| r.entry.text.as_str()).collect();
        assert_eq!(texts, ["one", "two"]);
        assert_eq!(read.records[0].key, one.dedup_key());
        assert!(tail.read_new().unwrap().records.is_empty(), "nothing new");

        // A line written in two pieces is returned once, when complete.
        let line = serde_json::to_string(&json!({"key": "k3", "entry": entry("three")})).unwrap();
        let (a, b) = line.split_at(10);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(a.as_bytes()).unwrap();
        assert!(tail.read_new().unwrap().records.is_empty());
        f.write_all(format!("{b}\n").as_bytes()).unwrap();
        let read = tail.read_new().unwrap();
        assert_eq!(read.records.len(), 1);
        assert_eq!(read.records[0].key, "k3");
        f.write_all(b"not json\n").unwrap();
        assert_eq!(tail.read_new().unwrap().bad_lines, 1);

        // Replaced: read again from the start.
        let other = dir.path().join("other");
        std::fs::write(&other, format!("{line}\n")).unwrap();
        std::fs::rename(&other, &path).unwrap();
        let read = tail.read_new().unwrap();
        assert_eq!(read.restarted, Some(Restart::Replaced));
        assert_eq!(read.records.len(), 1);

        // Truncated in place.
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let read = tail.read_new().unwrap();
        assert_eq!(read.restarted, Some(Restart::Truncated));
        assert!(read.records.is_empty());
    }

    #[test]
    fn tail_from_end_skips_what_was_there_and_refuses_odd_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let mut log = DeliveryLog::open(&path).unwrap();
        log.record(&[entry("old")]).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"torn")
            .unwrap();
        let mut tail = DeliveryTail::from_end(&path).unwrap();
        let mut log = DeliveryLog::open(&path).unwrap();
        log.record(&[entry("new")]).unwrap();
        let read = tail.read_new().unwrap();
        let texts: Vec<&str> = read.records.iter().map(|r| r.entry.text.as_str()).collect();
        assert_eq!(texts, ["new"]);
        assert_eq!(read.bad_lines, 0, "the torn end was skipped, not parsed");

        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
        assert!(matches!(tail.read_new(), Err(StoreError::Symlink { .. })));
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(tail.read_new(), Err(StoreError::NotAFile { .. })));
    }
}
