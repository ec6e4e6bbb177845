//! Is the program that will run a pane teammate there? Checked before a pane is made or a
//! member added, so a missing `claude` (or a `TEAMLEAD_CLAUDE_BIN` pointing at nothing, or a
//! moved `teamlead` binary) is one clear error from `/spawn` instead of a dead pane that
//! looks like a working teammate. A name without `/` is looked up on `PATH` the way a shell
//! would; a path must be an executable file.

use std::path::{Path, PathBuf};

use super::launch::TeammateProgram;

/// Why a teammate's program cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    #[error("{name} not found on PATH; {hint}")]
    NotOnPath { name: String, hint: String },
    #[error("{path} is not an executable file ({why}); {hint}")]
    NotExecutable {
        path: String,
        why: String,
        hint: String,
    },
    /// The check itself could not run (its blocking task failed).
    #[error("checking the program failed: {0}")]
    Unchecked(String),
}

/// What the user can do about a missing program.
fn hint(program: &TeammateProgram, from_env: bool) -> String {
    match program {
        TeammateProgram::Claude { .. } if from_env => {
            "fix TEAMLEAD_CLAUDE_BIN or unset it to use `claude` from PATH".to_string()
        }
        TeammateProgram::Claude { .. } => {
            "install Claude Code or set TEAMLEAD_CLAUDE_BIN".to_string()
        }
        TeammateProgram::Teamlead { .. } => {
            "the teamlead binary that runs builtin teammates is gone (was it moved or rebuilt?); restart teamlead".to_string()
        }
    }
}

/// Finds the program that `program` will run: the absolute path, or an error that says what
/// to do. `path_var` is the `PATH` panes get (the lead's); `from_env` says the binary came from
/// `TEAMLEAD_CLAUDE_BIN`.
pub fn resolve(
    program: &TeammateProgram,
    path_var: Option<&str>,
    from_env: bool,
) -> Result<PathBuf, ProgramError> {
    let binary = match program {
        TeammateProgram::Claude { binary } | TeammateProgram::Teamlead { binary, .. } => binary,
    };
    let hint = hint(program, from_env);
    if binary.contains('/') {
        return check_file(Path::new(binary)).map_err(|why| ProgramError::NotExecutable {
            path: binary.clone(),
            why,
            hint,
        });
    }
    path_var
        .into_iter()
        .flat_map(std::env::split_paths)
        // An empty PATH entry means the current directory to a shell; panes start elsewhere.
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(binary))
        .find(|candidate| check_file(candidate).is_ok())
        .ok_or(ProgramError::NotOnPath {
            name: binary.clone(),
            hint,
        })
}

/// Ok when `path` is a regular file (after symbolic links) with an execute bit.
fn check_file(path: &Path) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "it does not exist".to_string(),
        _ => e.to_string(),
    })?;
    if !meta.is_file() {
        return Err("it is not a file".to_string());
    }
    if meta.permissions().mode() & 0o111 == 0 {
        return Err("it is not executable".to_string());
    }
    Ok(path.to_path_buf())
}

/// The program a `/spawn` will run and whether it came from `TEAMLEAD_CLAUDE_BIN`, as the
/// pane executor will pick it: `claude` (or `$TEAMLEAD_CLAUDE_BIN`) for Claude Code teammates,
/// else the session's program.
pub fn for_spawn(
    claude: bool,
    session_program: &TeammateProgram,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (TeammateProgram, bool) {
    if claude {
        let from_env = lookup("TEAMLEAD_CLAUDE_BIN").is_some_and(|b| !b.is_empty());
        let binary = super::launch::claude_binary(lookup);
        (TeammateProgram::Claude { binary }, from_env)
    } else {
        (session_program.clone(), false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn claude(binary: &str) -> TeammateProgram {
        TeammateProgram::Claude {
            binary: binary.into(),
        }
    }

    fn file(dir: &Path, name: &str, mode: u32) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
        p
    }

    #[test]
    fn finds_an_executable_on_path_and_names_what_is_missing() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        file(a.path(), "claude", 0o644);
        let good = file(b.path(), "claude", 0o755);
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        let path = path.to_str().unwrap();
        assert_eq!(resolve(&claude("claude"), Some(path), false), Ok(good));
        let err = resolve(&claude("claude"), Some(a.path().to_str().unwrap()), false)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "claude not found on PATH; install Claude Code or set TEAMLEAD_CLAUDE_BIN"
        );
        assert!(resolve(&claude("claude"), None, false).is_err());
    }

    #[test]
    fn a_path_must_be_an_executable_file() {
        let dir = tempfile::tempdir().unwrap();
        let plain = file(dir.path(), "plain", 0o644);
        let missing = dir.path().join("nothing");
        let err = resolve(&claude(missing.to_str().unwrap()), Some("/usr/bin"), true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        assert!(err.contains("TEAMLEAD_CLAUDE_BIN"), "{err}");
        let err = resolve(&claude(plain.to_str().unwrap()), None, true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not executable"), "{err}");
        let err = resolve(&claude(dir.path().to_str().unwrap()), None, true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a file"), "{err}");
        let teamlead = TeammateProgram::Teamlead {
            binary: missing.to_string_lossy().into_owned(),
            engine: "shell".into(),
        };
        let err = resolve(&teamlead, None, false).unwrap_err().to_string();
        assert!(err.contains("restart teamlead"), "{err}");
    }

    #[test]
    fn spawn_program_follows_the_pane_executor() {
        let session = TeammateProgram::Teamlead {
            binary: "/x/teamlead".into(),
            engine: "shell".into(),
        };
        let none = |_: &str| None;
        assert_eq!(for_spawn(false, &session, &none), (session.clone(), false));
        assert_eq!(for_spawn(true, &session, &none), (claude("claude"), false));
        let set = |k: &str| (k == "TEAMLEAD_CLAUDE_BIN").then(|| "/opt/c".to_string());
        assert_eq!(for_spawn(true, &session, &set), (claude("/opt/c"), true));
    }
}
