//! The team file (PROTOCOL.md 2): create, read (torn-read retry, entries that are not members
//! kept aside), edit as one read-modify-write under `config.json.lock/` with one atomic write
//! (unknown keys kept; a file that does not parse is refused, never rewritten), member
//! conveniences, and deletion. Every path is checked with `Home::check_inside` first.

use std::path::Path;

use super::atomic::{Parsed, check_regular_file, read_parsed, write_atomic};
use super::error::{Result, StoreError, io_at};
use super::home::{DELETED_MARKER, Home};
use super::json_check::utf8_text;
use super::lock::{self, DEFAULT_LOCK_TIMEOUT};
use super::safe_file::FileKind;
use crate::names::{NameError, is_canonical};
use crate::{Member, PermissionMode, TeamFile};

fn parse_team(bytes: &[u8]) -> std::result::Result<TeamFile, String> {
    let text = utf8_text(bytes)?;
    TeamFile::parse(text).map_err(|e| format!("not a valid team file: {e}"))
}

fn read_team_at(team: &str, path: &Path) -> Result<TeamFile> {
    match read_parsed(path, parse_team)? {
        Parsed::Missing => Err(StoreError::not_found(format!("team `{team}`"))),
        Parsed::Ok(t) => Ok(t),
        Parsed::Invalid { detail, .. } => Err(StoreError::parse(path, detail)),
    }
}

/// teamlead only creates names matching `^[a-z0-9][a-z0-9-]{0,63}$` (PROTOCOL.md 1).
fn require_canonical(name: &str) -> Result<()> {
    if is_canonical(name) {
        Ok(())
    } else {
        Err(StoreError::BadName(NameError::Invalid(name.to_string())))
    }
}

/// Creates `teams/<team>/config.json` (and `inboxes/`) for `file.name`, which must be a
/// canonical name (`^[a-z0-9][a-z0-9-]{0,63}$`). Fails with `AlreadyExists` when the team
/// file exists.
pub fn create_team(home: &Home, file: &TeamFile) -> Result<()> {
    let team = file.name.as_str();
    require_canonical(team)?;
    let path = home.config_path(team)?;
    home.check_inside(&path)?;
    home.ensure_dir(&home.inboxes_dir(team)?)?;
    let _lock = lock::acquire(&path, DEFAULT_LOCK_TIMEOUT)?;
    if check_regular_file(&path)? {
        return Err(StoreError::AlreadyExists {
            what: format!("team `{team}`"),
        });
    }
    write_atomic(&path, file.to_text().as_bytes())?;
    super::team_guard::wrote(&path, file);
    Ok(())
}

/// Reads a team file (no lock; torn reads retried).
pub fn read_team(home: &Home, team: &str) -> Result<TeamFile> {
    let path = home.config_path(team)?;
    home.check_inside(&path)?;
    read_team_at(team, &path)
}

/// Read-modify-write of the team file under `config.json.lock/`: `f` edits the file, which is
/// written atomically, only if it changed (with the edits of other threads of this process
/// that came at the same time: `team_batch`); it returns once that write is on disk. Unknown keys and non-member entries survive.
/// A team file that does not parse is an error and is never rewritten — unless this process
/// leads the team and guards it (`team_guard`): then it is repaired from the last good copy.
pub fn edit_team<R>(
    home: &Home,
    team: &str,
    f: impl FnOnce(&mut TeamFile) -> Result<R>,
) -> Result<R> {
    let path = home.config_path(team)?;
    home.check_inside(&path)?;
    // Edits of this process that come at once share one read and one write (`team_batch`).
    let read = || {
        // A team file the lead guards is repaired first (an unlocked writer emptied it or
        // wrote a stale copy back); see `team_guard`.
        let (before, repair) = super::team_guard::repaired(&path, read_team_at(team, &path))?;
        if let Some(repair) = &repair {
            tracing::warn!(path = %path.display(), "team file repaired: {repair}");
        }
        Ok((before, repair.is_some()))
    };
    super::team_batch::edit(&path, read, f)
}

fn member_missing(team: &str, name: &str) -> StoreError {
    StoreError::not_found(format!("member `{name}` of team `{team}`"))
}

/// Adds a member (its name must be canonical); `AlreadyExists` when the name is taken.
pub fn add_member(home: &Home, team: &str, member: Member) -> Result<()> {
    require_canonical(&member.name)?;
    edit_team(home, team, |file| {
        if file.member(&member.name).is_some() {
            return Err(StoreError::AlreadyExists {
                what: format!("member `{}` of team `{team}`", member.name),
            });
        }
        file.members.push(member);
        Ok(())
    })
}

/// Removes a member and returns it; `NotFound` when there is none.
pub fn remove_member(home: &Home, team: &str, name: &str) -> Result<Member> {
    edit_team(home, team, |file| {
        let index = file
            .members
            .iter()
            .position(|m| m.name == name)
            .ok_or_else(|| member_missing(team, name))?;
        Ok(file.members.remove(index))
    })
}

/// Sets several members' modes in one write. Every name must exist (else nothing is written).
pub fn set_modes(home: &Home, team: &str, modes: &[(&str, PermissionMode)]) -> Result<()> {
    edit_team(home, team, |file| {
        for (name, mode) in modes {
            let member = file
                .member_mut(name)
                .ok_or_else(|| member_missing(team, name))?;
            member.mode = Some(mode.as_str().to_string());
        }
        Ok(())
    })
}

/// Sets a member's `isActive`.
pub fn set_active(home: &Home, team: &str, name: &str, active: bool) -> Result<()> {
    edit_team(home, team, |file| {
        let member = file
            .member_mut(name)
            .ok_or_else(|| member_missing(team, name))?;
        member.is_active = Some(active);
        Ok(())
    })
}

/// Sets a member's `isActive: true` when the file says `false` (its client went idle), and says
/// whether it wrote: what the lead does before it delivers an entry to an idle `claude`
/// teammate, so the client finds `true` at its next turn's start and skips its own in-place
/// write there, whose torn file loses its frames (docs/PROTOCOL.md §4). A member that is
/// active, or has no `isActive` yet, is left as it is.
pub fn mark_active_before_turn(home: &Home, team: &str, name: &str) -> Result<bool> {
    edit_team(home, team, |file| {
        let member = file
            .member_mut(name)
            .ok_or_else(|| member_missing(team, name))?;
        if member.is_active != Some(false) {
            return Ok(false);
        }
        member.is_active = Some(true);
        Ok(true)
    })
}

/// Records a member's pane (`tmuxPaneId`) and `backendType`.
pub fn set_pane(
    home: &Home,
    team: &str,
    name: &str,
    pane_id: &str,
    backend: Option<&str>,
) -> Result<()> {
    edit_team(home, team, |file| {
        let member = file
            .member_mut(name)
            .ok_or_else(|| member_missing(team, name))?;
        member.tmux_pane_id = pane_id.to_string();
        if let Some(b) = backend {
            member.backend_type = Some(b.to_string());
        }
        Ok(())
    })
}

/// Deletes a team: renames `teams/<team>` to `teams/<team>.deleted-<token>`, removes it, and
/// removes `tasks/<team>`. A symbolic link at `teams/<team>` or above either place is
/// refused before anything is removed; a link at `tasks/<team>` itself is removed as a link
/// (what it points to is never touched).
pub fn delete_team(home: &Home, team: &str) -> Result<()> {
    delete_team_with(home, team, |_| {})
}

/// [`delete_team`], calling `before` with the team file first (if it can be read) — the place
/// to remove git worktrees recorded in `worktreePath`.
pub fn delete_team_with(home: &Home, team: &str, before: impl FnOnce(&TeamFile)) -> Result<()> {
    let dir = home.team_dir(team)?;
    let tasks = home.tasks_dir(team)?;
    home.check_inside(&dir)?;
    home.check_inside(&home.tasks_root())?;
    match FileKind::at(&dir)? {
        Some(FileKind::Directory) => {
            if let Ok(file) = read_team(home, team) {
                before(&file);
            }
            let token = format!("{:08x}", rand::random::<u32>());
            let doomed = home
                .teams_dir()
                .join(format!("{team}{DELETED_MARKER}{token}"));
            std::fs::rename(&dir, &doomed).map_err(io_at(&dir))?;
            std::fs::remove_dir_all(&doomed).map_err(io_at(&doomed))?;
        }
        Some(found) => return Err(StoreError::NotADirectory { path: dir, found }),
        None => {
            if FileKind::at(&tasks)?.is_none() {
                return Err(StoreError::not_found(format!("team `{team}`")));
            }
        }
    }
    match FileKind::at(&tasks)? {
        Some(FileKind::Directory) => std::fs::remove_dir_all(&tasks).map_err(io_at(&tasks)),
        Some(FileKind::Symlink) => std::fs::remove_file(&tasks).map_err(io_at(&tasks)),
        Some(found) => Err(StoreError::NotADirectory { path: tasks, found }),
        None => Ok(()),
    }
}

/// Is the team gone (its `config.json` no longer there)? Writers replace the file by rename,
/// so it is never missing while the team exists; an error other than "not found" proves
/// nothing.
pub fn team_gone(home: &Home, team: &str) -> bool {
    home.config_path(team).is_ok_and(|p| {
        std::fs::symlink_metadata(p).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
    })
}
