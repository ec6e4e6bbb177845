//! The files a teamlead teammate's Write and Edit calls were allowed to write: one JSON line
//! a file (`{"path": "/abs/path", "at": "…"}`), the first time only, in
//! `teams/<team>/.teamlead/written-<name>.jsonl`. The teammate's runtime writes it (in-process
//! or in its pane: one path for both, `agent::events::EventSink::wrote`); the lead reads it to
//! review a teammate without a worktree of its own, which works in the lead's checkout where
//! git cannot tell its changes from anyone else's. The `.teamlead` directory is never made
//! here (a team without a teamlead lead has no reader), no link is followed, and a write that
//! fails is logged and forgotten: it never stops the teammate.

use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::{Value, json};

use super::home::Home;
use super::safe_file::{PRIVATE_FILE_MODE, read_regular};
use crate::names::check_path_component;

/// The largest log read (a teammate writes far fewer files).
const MAX_LOG_BYTES: u64 = 8 * 1024 * 1024;

/// Where `name`'s written files are logged.
pub fn log_path(home: &Home, team: &str, name: &str) -> Option<PathBuf> {
    let name = check_path_component(name).ok()?;
    Some(
        home.teamlead_dir(team)
            .ok()?
            .join(format!("written-{name}.jsonl")),
    )
}

/// One teammate's log, as its runtime appends to it.
#[derive(Debug)]
pub struct WrittenLog {
    home: Home,
    path: PathBuf,
    seen: Mutex<HashSet<PathBuf>>,
}

impl WrittenLog {
    /// The log of `name` in `team` (`None` for a name that is no safe file name).
    pub fn new(home: &Home, team: &str, name: &str) -> Option<WrittenLog> {
        Some(WrittenLog {
            home: home.clone(),
            path: log_path(home, team, name)?,
            seen: Mutex::new(HashSet::new()),
        })
    }

    /// Records that `file` was written (once per file; errors are logged, never returned).
    pub fn record(&self, file: &Path) {
        {
            let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
            if !seen.insert(file.to_path_buf()) {
                return;
            }
        }
        if let Err(e) = self.append(file) {
            tracing::debug!(
                "recording {} in {}: {e}",
                file.display(),
                self.path.display()
            );
        }
    }

    fn append(&self, file: &Path) -> Result<(), String> {
        let dir = self.path.parent().ok_or("no directory")?;
        if !dir.is_dir() {
            return Err("the team has no .teamlead directory".into());
        }
        self.home
            .check_inside(&self.path)
            .map_err(|e| e.to_string())?;
        let line = json!({
            "path": file.to_string_lossy(),
            "at": crate::time::now_iso(),
        })
        .to_string()
            + "\n";
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(&self.path)
            .map_err(|e| e.to_string())?;
        // One write: appends of two writers never interleave within a line.
        f.write_all(line.as_bytes()).map_err(|e| e.to_string())
    }
}

/// The files `name` recorded, each once, in the order first written (an unreadable log, or
/// none, is none).
pub fn read(home: &Home, team: &str, name: &str) -> Vec<PathBuf> {
    let Some(path) = log_path(home, team, name) else {
        return Vec::new();
    };
    if home.check_inside(&path).is_err() {
        return Vec::new();
    }
    let Ok(Some(bytes)) = read_regular(&path, MAX_LOG_BYTES) else {
        return Vec::new();
    };
    let mut seen = HashSet::new();
    String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v.get("path")?.as_str().map(PathBuf::from))
        .filter(|p| seen.insert(p.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_each_file_once_and_reads_them_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let log = WrittenLog::new(&home, "t", "alpha").unwrap();
        // No team directory yet: nothing is made.
        log.record(Path::new("/w/a.rs"));
        assert!(!tmp.path().join("teams").exists());
        assert!(read(&home, "t", "alpha").is_empty());
        std::fs::create_dir_all(home.teamlead_dir("t").unwrap()).unwrap();
        let log = WrittenLog::new(&home, "t", "alpha").unwrap();
        for f in ["/w/b.rs", "/w/a.rs", "/w/b.rs"] {
            log.record(Path::new(f));
        }
        // Another writer (a restarted teammate) appends too; a torn line is skipped.
        let other = WrittenLog::new(&home, "t", "alpha").unwrap();
        other.record(Path::new("/w/a.rs"));
        other.record(Path::new("/w/c.rs"));
        let path = log_path(&home, "t", "alpha").unwrap();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"path\": \"/w/torn").unwrap();
        assert_eq!(
            read(&home, "t", "alpha"),
            vec![
                PathBuf::from("/w/b.rs"),
                PathBuf::from("/w/a.rs"),
                PathBuf::from("/w/c.rs")
            ]
        );
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(WrittenLog::new(&home, "t", "../x").is_none());
    }
}
