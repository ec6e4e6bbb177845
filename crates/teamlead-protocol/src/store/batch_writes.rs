//! Test-only: the writes the batches (`team_batch`, `append_batch`) made, per file, so their
//! tests can check that edits which came at once shared writes.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

static WRITES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// One write of `path` by a batch.
pub(super) fn count(path: &Path) {
    if let Ok(mut w) = WRITES.lock() {
        w.push(path.to_path_buf());
    }
}

/// How many writes of `path` the batches made.
pub(super) fn of(path: &Path) -> usize {
    WRITES
        .lock()
        .map(|w| w.iter().filter(|p| *p == path).count())
        .unwrap_or(0)
}
