//! Quarantine: bad input is never destroyed. Bytes that cannot be used (an inbox that is not a
//! JSON array, entries that fail the schema) are kept under `<home>/quarantine/<team>/` with a
//! timestamped name and a `.why` note, and reported as a [`Problem`].

use std::fmt;
use std::path::{Path, PathBuf};

use super::atomic::write_atomic;
use super::error::Result;
use super::home::Home;
use crate::protocol::names::check_path_component;

/// Something wrong found while reading: which file, and what, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: PathBuf,
    pub message: String,
}

impl Problem {
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = self.message.replace('\n', " ");
        write!(f, "{}: {}", self.path.display(), message)
    }
}

/// Keeps `bytes` (that came from `origin`) under `<home>/quarantine/<team>/` as
/// `<UTC time>-<origin file name>.<4 hex>.bad`, with `<same>.why` holding the origin and the
/// reason. Returns the path of the kept bytes.
pub fn quarantine_bytes(
    home: &Home,
    team: &str,
    origin: &Path,
    bytes: &[u8],
    reason: &str,
) -> Result<PathBuf> {
    let dir = home.quarantine_dir().join(check_path_component(team)?);
    home.ensure_dir(&dir)?;
    let origin_name: String = origin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".to_string())
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let base = format!("{stamp}-{origin_name}.{:04x}", rand::random::<u16>());
    let kept = dir.join(format!("{base}.bad"));
    let why = dir.join(format!("{base}.why"));
    write_atomic(&kept, bytes)?;
    let note = format!("origin: {}\nreason: {}\n", origin.display(), reason);
    write_atomic(&why, note.as_bytes())?;
    tracing::warn!(
        "quarantined bad input from {} to {}: {reason}",
        origin.display(),
        kept.display()
    );
    Ok(kept)
}
