//! The delivery log: a JSONL file under the team's `.teamlead/` directory that records every
//! inbox entry the lead has delivered, fsynced before the entry is removed from the inbox.
//! It is loaded into a set of de-duplication keys at open, so an entry delivered before a
//! crash is not delivered twice.

use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::error::{Result, StoreError, io_at};
use crate::protocol::InboxEntry;

/// An open delivery log.
#[derive(Debug)]
pub struct DeliveryLog {
    path: PathBuf,
    keys: HashSet<String>,
}

impl DeliveryLog {
    /// Opens (creating when missing) the log at `path` and loads its keys. A torn last line
    /// (a crash mid-write) is skipped; the parent directory must exist or be creatable.
    pub fn open(path: &Path) -> Result<DeliveryLog> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io_at(parent))?;
        }
        super::atomic::check_regular_file(path)?;
        let text = match std::fs::read(path) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(StoreError::io(path, e)),
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
                .open(path)
                .map_err(io_at(path))?;
            f.write_all(b"\n")
                .and_then(|()| f.sync_all())
                .map_err(io_at(path))?;
        }
        Ok(DeliveryLog {
            path: path.to_path_buf(),
            keys,
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

    /// Appends one line per entry (`{"key", "deliveredAt", "entry"}`) and fsyncs.
    pub fn record(&mut self, entries: &[InboxEntry]) -> Result<()> {
        if entries.is_empty() {
            return Ok(());
        }
        let now = crate::protocol::time::now_iso();
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
            .open(&self.path)
            .map_err(io_at(&self.path))?;
        f.write_all(buf.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(io_at(&self.path))?;
        if created && let Some(dir) = self.path.parent() {
            super::atomic::sync_dir(dir)?;
        }
        for e in entries {
            self.keys.insert(e.dedup_key());
        }
        Ok(())
    }
}
