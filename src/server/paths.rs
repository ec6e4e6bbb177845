//! Where a team's lead server listens: a socket in a runtime directory private to the user
//! (`$TEAMLEAD_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/teamlead`, else `<tmp>/teamlead-<uid>`),
//! mode 0700 and owned by the user (checked, never loosened), named after a hash of the home
//! and the team (socket paths are limited to about 100 bytes; a home path is not).

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use super::ServerError;
use crate::store::Home;

/// The runtime directory, made if missing and checked private.
pub fn runtime_dir() -> Result<PathBuf, ServerError> {
    let dir = match std::env::var_os("TEAMLEAD_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
            Some(dir) => PathBuf::from(dir).join("teamlead"),
            // SAFETY: getuid cannot fail.
            None => std::env::temp_dir().join(format!("teamlead-{}", unsafe { libc::getuid() })),
        },
    };
    ensure_private(&dir)?;
    Ok(dir)
}

/// Makes `dir` (0700) when missing; refuses a link, a non-directory, another owner, or
/// access for group or others.
pub fn ensure_private(dir: &Path) -> Result<(), ServerError> {
    let refuse = |why: String| ServerError::RuntimeDir {
        path: dir.display().to_string(),
        why,
    };
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(refuse(format!("cannot be made: {e}"))),
    }
    let meta =
        std::fs::symlink_metadata(dir).map_err(|e| refuse(format!("cannot be read: {e}")))?;
    if !meta.file_type().is_dir() {
        return Err(refuse("is not a directory".to_string()));
    }
    // SAFETY: getuid cannot fail.
    if meta.uid() != unsafe { libc::getuid() } {
        return Err(refuse(format!(
            "belongs to another user (uid {})",
            meta.uid()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(refuse(format!(
            "is open to other users (mode {:o}; expected 700)",
            meta.permissions().mode() & 0o777
        )));
    }
    Ok(())
}

/// The socket of `team`'s server in `home`, inside `dir`.
pub fn socket_in(dir: &Path, home: &Home, team: &str) -> PathBuf {
    let mut hash = Sha256::new();
    hash.update(home.root.as_os_str().as_encoded_bytes());
    hash.update([0]);
    hash.update(team.as_bytes());
    let digest = hash.finalize();
    let name: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("lead-{name}.sock"))
}

/// The socket of `team`'s server in `home` (the runtime directory checked first).
pub fn socket_path(home: &Home, team: &str) -> Result<PathBuf, ServerError> {
    Ok(socket_in(&runtime_dir()?, home, team))
}

/// Makes the socket file private (after `bind`; the directory already is).
pub fn make_private(socket: &Path) -> Result<(), ServerError> {
    std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| ServerError::io(format!("making {} private", socket.display()), e))
}

/// Does a server answer on `socket`? Only a refused connection (nobody listens) is a no; a
/// socket that cannot be judged (another error) counts as answering.
fn answers(socket: &Path) -> bool {
    match std::os::unix::net::UnixStream::connect(socket) {
        Ok(_) => true,
        Err(e) => e.kind() != std::io::ErrorKind::ConnectionRefused,
    }
}

/// Lead sockets (`lead-<hash>.sock`) in `dir` that no server answers: a server killed with
/// SIGKILL leaves its socket. Asked twice, 100 ms apart (a server binds and listens in one
/// call, so a socket is refused only between the two, if ever).
pub fn stale_sockets(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let candidates: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("lead-") && name.ends_with(".sock")
        })
        .filter(|e| {
            use std::os::unix::fs::FileTypeExt;
            e.file_type().is_ok_and(|t| t.is_socket())
        })
        .map(|e| e.path())
        .filter(|p| !answers(p))
        .collect();
    if candidates.is_empty() {
        return candidates;
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    let mut stale: Vec<PathBuf> = candidates.into_iter().filter(|p| !answers(p)).collect();
    stale.sort();
    stale
}

/// Removes the [`stale_sockets`] of the runtime directory; returns what it removed.
pub fn remove_stale_sockets() -> Vec<PathBuf> {
    let Ok(dir) = runtime_dir() else {
        return Vec::new();
    };
    stale_sockets(&dir)
        .into_iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_sockets_nobody_answers_are_stale() {
        let tmp = tempfile::tempdir().unwrap();
        let live = tmp.path().join("lead-live.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&live).unwrap();
        let dead = tmp.path().join("lead-dead.sock");
        drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
        let other = tmp.path().join("other.sock");
        drop(std::os::unix::net::UnixListener::bind(&other).unwrap());
        std::fs::write(tmp.path().join("lead-file.sock"), "").unwrap();
        assert_eq!(stale_sockets(tmp.path()), vec![dead]);
    }

    use super::*;

    #[test]
    fn sockets_differ_by_home_and_team_and_stay_short() {
        let dir = Path::new("/run/user/1000/teamlead");
        let a = socket_in(dir, &Home::new("/h1"), "t");
        let b = socket_in(dir, &Home::new("/h2"), "t");
        let c = socket_in(dir, &Home::new("/h1"), "u");
        assert!(a != b && a != c && b != c);
        let long = "x".repeat(200);
        assert!(socket_in(dir, &Home::new(&long), &long).as_os_str().len() < 100);
    }

    #[test]
    fn an_open_directory_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let open = tmp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o755)).unwrap();
        let e = ensure_private(&open).unwrap_err().to_string();
        assert!(e.contains("open to other users"), "{e}");
        let made = tmp.path().join("made");
        ensure_private(&made).unwrap();
        let mode = std::fs::metadata(&made).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }
}
