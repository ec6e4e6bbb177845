//! Requests and plans too large for a screen, kept whole for a person to read: one file each
//! in `teams/<team>/.teamlead/requests/` (`permission-<digest>.json`, the input's compact
//! JSON; `plan-<digest>.md`, the plan's text), named by the digest of what it holds so the
//! same request is written once. The screens show the head and this file's path
//! (`lead::shown`). Private (0600 in a 0700 directory), written atomically, never through a
//! link; it goes with the team.

use std::path::PathBuf;

use super::error::Result;
use super::home::Home;

/// The directory of the kept texts of `team`.
pub fn dir(home: &Home, team: &str) -> Result<PathBuf> {
    Ok(home.teamlead_dir(team)?.join("requests"))
}

/// Where a text of `kind` (`permission`, `plan`) with this digest is kept, and its extension.
pub fn path(home: &Home, team: &str, kind: &str, digest: &str, ext: &str) -> Result<PathBuf> {
    let short: String = digest
        .chars()
        .filter(char::is_ascii_hexdigit)
        .take(16)
        .collect();
    Ok(dir(home, team)?.join(format!("{kind}-{short}.{ext}")))
}

/// Writes `text` at `path` (below the team's `requests` directory, made when missing).
pub fn keep(home: &Home, team: &str, path: &std::path::Path, text: &[u8]) -> Result<()> {
    let dir = dir(home, team)?;
    home.ensure_dir(&dir)?;
    home.check_inside(path)?;
    super::atomic::write_atomic(path, text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_kept_privately_under_the_team() {
        let root = tempfile::tempdir().unwrap();
        let home = Home::new(root.path());
        home.ensure_dir(&home.team_dir("t").unwrap()).unwrap();
        let at = path(&home, "t", "plan", "ab12../xyz", "md").unwrap();
        assert!(at.ends_with(".teamlead/requests/plan-ab12.md"), "{at:?}");
        keep(&home, "t", &at, b"the plan").unwrap();
        assert_eq!(std::fs::read(&at).unwrap(), b"the plan");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&at).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
