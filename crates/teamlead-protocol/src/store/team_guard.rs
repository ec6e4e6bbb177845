//! The lead's guard on its team file against writers that do not take `config.json.lock/`.
//!
//! Claude Code 2.1.45 teammates flip their `isActive` with an unlocked read-modify-write that
//! rewrites `config.json` in place (open with truncation, then write). Two things follow, both
//! observed in the conformance suite: a teammate that read the file before the lead added a
//! member writes its stale copy back and the new member is lost; and a teammate that exits
//! (after `shutdown_approved`) between the truncation and the write leaves an EMPTY file, which
//! no reader can parse again.
//!
//! The lead process opts in with [`guard`]. From then on every team-file write of this process
//! (through [`super::team::edit_team`]) leaves its result here as the last good copy, and the
//! lead's reads go through [`read_guarded`]: when the file does not parse after the torn-read
//! window, or lacks a member of the last good copy, the file is repaired under
//! `config.json.lock/` — an unparsable file is replaced by the last good copy, lost members are
//! added back and members the lead removed are removed again (the entries on disk win for
//! every other member) — and the repair is
//! logged and returned for the lead to show. Only the lead opts in: it alone adds and removes
//! members of its team, so a member missing from the file is always a lost write.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::error::{Result, StoreError};
use super::home::Home;
use super::lock::{self, DEFAULT_LOCK_TIMEOUT};
use crate::TeamFile;

/// What the lead keeps of one guarded team file.
#[derive(Debug, Default)]
struct Kept {
    /// The last copy this process wrote or read well (`None` before either).
    good: Option<TeamFile>,
    /// Members this process removed (and has not added again).
    removed: BTreeSet<String>,
}

/// Guarded team files of this process, by path.
fn guarded() -> &'static Mutex<HashMap<PathBuf, Kept>> {
    static GUARDED: OnceLock<Mutex<HashMap<PathBuf, Kept>>> = OnceLock::new();
    GUARDED.get_or_init(Mutex::default)
}

fn with_guarded<R>(f: impl FnOnce(&mut HashMap<PathBuf, Kept>) -> R) -> R {
    let mut map = guarded().lock().unwrap_or_else(|e| e.into_inner());
    f(&mut map)
}

/// This process leads `team`: keep a last good copy of its team file and repair the file from
/// it (see the module documentation). The file as it is now becomes the first good copy.
pub fn guard(home: &Home, team: &str) -> Result<()> {
    let path = home.config_path(team)?;
    let good = super::team::read_team(home, team).ok();
    with_guarded(|m| {
        m.insert(
            path,
            Kept {
                good,
                removed: BTreeSet::new(),
            },
        )
    });
    Ok(())
}

/// Stops guarding `team` (it was deleted, or the lead is done with it).
pub fn unguard(home: &Home, team: &str) {
    if let Ok(path) = home.config_path(team) {
        with_guarded(|m| m.remove(&path));
    }
}

/// Called by the team-file writers with what they wrote.
pub(super) fn wrote(path: &Path, file: &TeamFile) {
    with_guarded(|m| {
        if let Some(kept) = m.get_mut(path) {
            if let Some(before) = &kept.good {
                for gone in before
                    .members
                    .iter()
                    .filter(|b| file.member(&b.name).is_none())
                {
                    kept.removed.insert(gone.name.clone());
                }
            }
            for member in &file.members {
                kept.removed.remove(&member.name);
            }
            kept.good = Some(file.clone());
        }
    });
}

/// The last good copy of a guarded file and the members this process removed (`None` when
/// not guarded or never read well).
fn last_good(path: &Path) -> Option<(TeamFile, BTreeSet<String>)> {
    with_guarded(|m| {
        m.get(path)
            .and_then(|k| k.good.clone().map(|g| (g, k.removed.clone())))
    })
}

/// What a repair did, for the lead's transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// The file did not parse (`detail`, e.g. empty after a writer died mid-write) and was
    /// replaced by the last good copy.
    Restored { detail: String },
    /// A stale in-place write had dropped members of the last good copy (added back) or
    /// brought back members the lead had removed (removed again).
    Members {
        added_back: Vec<String>,
        removed_again: Vec<String>,
    },
}

impl std::fmt::Display for Repair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Repair::Restored { detail } => write!(
                f,
                "config.json could not be read ({detail}); restored the lead's last good copy"
            ),
            Repair::Members {
                added_back,
                removed_again,
            } => {
                write!(f, "an unlocked in-place write from a stale copy")?;
                if !added_back.is_empty() {
                    write!(f, " dropped {} (added back)", added_back.join(", "))?;
                }
                if !removed_again.is_empty() {
                    write!(
                        f,
                        " brought back {} (removed again)",
                        removed_again.join(", ")
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// `before` repaired against the last good copy and the members this process removed:
/// `None` when nothing is to repair.
fn merged(
    before: &TeamFile,
    (good, removed): &(TeamFile, BTreeSet<String>),
) -> Option<(TeamFile, Repair)> {
    let lost: Vec<_> = good
        .members
        .iter()
        .filter(|m| before.member(&m.name).is_none())
        .cloned()
        .collect();
    let back: Vec<String> = before
        .members
        .iter()
        .filter(|m| removed.contains(&m.name) && good.member(&m.name).is_none())
        .map(|m| m.name.clone())
        .collect();
    if lost.is_empty() && back.is_empty() {
        return None;
    }
    let added_back = lost.iter().map(|m| m.name.clone()).collect();
    let mut file = before.clone();
    file.members.retain(|m| !back.contains(&m.name));
    file.members.extend(lost);
    Some((
        file,
        Repair::Members {
            added_back,
            removed_again: back,
        },
    ))
}

/// The file as the lead must see it, repaired when guarded: the on-disk team file if it
/// parses, else (guarded) the last good copy. Called with the lock held. The repair is
/// already applied to the returned file but not yet written.
pub(super) fn repaired(path: &Path, read: Result<TeamFile>) -> Result<(TeamFile, Option<Repair>)> {
    let good = last_good(path);
    match (read, good) {
        (Ok(file), Some(good)) => Ok(match merged(&file, &good) {
            Some((file, repair)) => (file, Some(repair)),
            None => (file, None),
        }),
        (Ok(file), None) => Ok((file, None)),
        (Err(StoreError::Parse { detail, .. }), Some((good, _))) => {
            Ok((good, Some(Repair::Restored { detail })))
        }
        (Err(e), _) => Err(e),
    }
}

/// The lead's read of its team file: a plain read (torn reads retried); when the file does not
/// parse or lost a member of the last good copy, the repair under `config.json.lock/`. An
/// unguarded team is only read.
pub fn read_guarded(home: &Home, team: &str) -> Result<(TeamFile, Option<Repair>)> {
    let path = home.config_path(team)?;
    let read = super::team::read_team(home, team);
    let good = last_good(&path);
    let needs_repair = match (&read, &good) {
        (Ok(file), Some(good)) => merged(file, good).is_some(),
        (Err(StoreError::Parse { .. }), Some(_)) => true,
        _ => false,
    };
    if !needs_repair {
        if let Ok(file) = &read
            && good.is_none()
        {
            // The first good read of a guarded file becomes its first good copy.
            with_guarded(|m| {
                if let Some(kept) = m.get_mut(&path)
                    && kept.good.is_none()
                {
                    kept.good = Some(file.clone());
                }
            });
        }
        return read.map(|f| (f, None));
    }
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    let (file, repair) = repaired(&path, super::team::read_team(home, team))?;
    if let Some(repair) = &repair {
        super::atomic::write_atomic(&path, file.to_text().as_bytes())?;
        wrote(&path, &file);
        tracing::warn!(path = %path.display(), "team file repaired: {repair}");
    }
    Ok((file, repair))
}
