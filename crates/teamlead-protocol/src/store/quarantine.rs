//! Quarantine: bad input is never destroyed. Bytes that cannot be used (an inbox that is not a
//! JSON array, entries that fail the schema) are kept under `<home>/quarantine/<team>/` with a
//! timestamped name and a `.why` note, and reported as a [`Problem`].

use std::fmt;
use std::path::{Path, PathBuf};

use super::atomic::write_atomic;
use super::error::Result;
use super::home::Home;
use crate::names::check_path_component;

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

/// Where the bytes of `origin` go in `<home>/quarantine/<team>/` (made if missing, private):
/// `<UTC time>-<origin file name>.<4 hex>.bad`, and the `.why` note beside it.
pub fn place(home: &Home, team: &str, origin: &Path) -> Result<(PathBuf, PathBuf)> {
    let label = origin
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".to_string());
    let (base, why) = place_base(home, team, &label)?;
    let mut kept = base.into_os_string();
    kept.push(".bad");
    Ok((PathBuf::from(kept), why))
}

/// `<home>/quarantine/<team>/<UTC time>-<label>.<4 hex>` (its directory made if missing,
/// private) and its `.why` note's path; nothing is made at the base itself.
fn place_base(home: &Home, team: &str, label: &str) -> Result<(PathBuf, PathBuf)> {
    let dir = home.quarantine_dir().join(check_path_component(team)?);
    home.ensure_dir(&home.quarantine_dir())?;
    home.ensure_dir(&dir)?;
    let label: String = label
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
    let base = format!("{stamp}-{label}.{:04x}", rand::random::<u16>());
    Ok((dir.join(&base), dir.join(format!("{base}.why"))))
}

/// Moves a whole team (`teams/<team>/` and `tasks/<team>/`, whichever exist) as it is into
/// `<home>/quarantine/<team>/<UTC time>-team-<team>.<4 hex>/` (as `team/` and `tasks/`), with
/// a `.why` note beside it: for a team that cannot be read and must not be deleted. Renames
/// only (nothing is copied or rewritten); a quarantine on another file system is an error and
/// nothing is moved. Returns the directory the team is now in.
pub fn quarantine_team(home: &Home, team: &str, reason: &str) -> Result<PathBuf> {
    let team_dir = home.team_dir(team)?;
    let tasks_dir = home.tasks_dir(team)?;
    home.check_inside(&team_dir)?;
    home.check_inside(&tasks_dir)?;
    let (base, why) = place_base(home, team, &format!("team-{team}"))?;
    home.ensure_dir(&base)?;
    let mut moved: Vec<(PathBuf, PathBuf)> = Vec::new();
    for (from, name) in [(&team_dir, "team"), (&tasks_dir, "tasks")] {
        if std::fs::symlink_metadata(from).is_err() {
            continue;
        }
        let to = base.join(name);
        if let Err(e) = std::fs::rename(from, &to) {
            // Put back what was moved, so the team stays whole where it was.
            for (back_to, back_from) in moved {
                let _ = std::fs::rename(back_from, back_to);
            }
            let _ = std::fs::remove_dir(&base);
            return Err(super::error::StoreError::io(from.as_path(), e));
        }
        moved.push((from.clone(), to));
    }
    for dir in [home.teams_dir(), home.tasks_root(), base.clone()] {
        let _ = super::atomic::sync_dir(&dir);
    }
    write_note(&why, &team_dir, reason)?;
    tracing::warn!(
        "moved team {team} into quarantine at {}: {reason}",
        base.display()
    );
    Ok(base)
}

/// Writes the `.why` note of quarantined bytes: where they came from and why.
pub(crate) fn write_note(why: &Path, origin: &Path, reason: &str) -> Result<()> {
    let note = format!(
        "origin: {}\nreason: {}\n",
        origin.display(),
        reason.replace('\n', " ")
    );
    write_atomic(why, note.as_bytes())
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
    let (kept, why) = place(home, team, origin)?;
    write_atomic(&kept, bytes)?;
    write_note(&why, origin, reason)?;
    tracing::warn!(
        "quarantined bad input from {} to {}: {reason}",
        origin.display(),
        kept.display()
    );
    Ok(kept)
}

/// One thing kept in quarantine, as its note tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The kept bytes (`.bad`), or a kept directory.
    pub path: PathBuf,
    /// Where they came from (`origin:` of the note).
    pub origin: String,
    /// Why (`reason:` of the note).
    pub reason: String,
}

/// What `<home>/quarantine/<team>/` holds, oldest first (names start with the time), read from
/// the `.why` notes; never follows a link, reads nothing but the notes (bounded).
pub fn list(home: &Home, team: &str) -> Vec<Kept> {
    let Ok(name) = check_path_component(team) else {
        return Vec::new();
    };
    let dir = home.quarantine_dir().join(name);
    if home.check_inside(&dir).is_err() {
        return Vec::new();
    }
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut notes: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "why"))
        .collect();
    notes.sort();
    notes
        .into_iter()
        .filter_map(|why| {
            let bytes = super::safe_file::read_regular(&why, 64 * 1024).ok()??;
            let text = String::from_utf8_lossy(&bytes);
            let field = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key))
                    .unwrap_or("")
                    .trim()
                    .to_string()
            };
            let bad = why.with_extension("bad");
            let path = if std::fs::symlink_metadata(&bad).is_ok() {
                bad
            } else {
                why.with_extension("")
            };
            Some(Kept {
                path,
                origin: field("origin:"),
                reason: field("reason:"),
            })
        })
        .collect()
}
