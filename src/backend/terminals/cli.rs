//! The one runner of every terminal's command-line tool (`tmux`, `it2`, `zellij`, `kitty @`,
//! `wezterm cli`): one call with optional standard input, its stdout on success and one typed
//! error otherwise; a call that does not end within its time limit (10 s unless the caller
//! asks for less) is killed and is an error, so a terminal that hangs can never hold a spawn,
//! the liveness poll or `clean` for ever. Also the placeholder a new pane runs until the
//! teammate's command line is typed into it (for terminals that cannot respawn a pane's
//! program).

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::backend::BackendError;

/// What a new pane runs until [`command_input`] is sent to it: it reads one line with echo off
/// and runs it with `sh -c` in its place, so the pane closes (or shows its exit) with the
/// teammate.
pub const PLACEHOLDER: [&str; 3] = [
    "sh",
    "-c",
    "stty -echo 2>/dev/null; IFS= read -r line; stty echo 2>/dev/null; exec sh -c \"$line\"",
];

/// The text typed into a placeholder pane to start `command`.
pub fn command_input(command: &str) -> String {
    format!("{command}\n")
}

/// How long one call may take before it is given up (and killed): a CLI that hangs (a
/// session that does not answer) must not hold a spawn, or the liveness poll, for ever.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `program args…` (with `input` on its standard input) and returns its stdout.
pub fn run(program: &str, args: &[&str], input: Option<&str>) -> Result<String, BackendError> {
    run_within(program, args, input, CALL_TIMEOUT)
}

/// Spawns `cmd`, trying again for up to a second while its program is busy (`ETXTBSY`: a
/// script just written, whose write handle a process forked meanwhile still holds).
fn spawn_when_not_busy(cmd: &mut Command) -> std::io::Result<std::process::Child> {
    let deadline = std::time::Instant::now() + Duration::from_secs(1);
    loop {
        match cmd.spawn() {
            Err(e)
                if e.kind() == std::io::ErrorKind::ExecutableFileBusy
                    && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            spawned => return spawned,
        }
    }
}

/// [`run`] with its own time limit.
pub fn run_within(
    program: &str,
    args: &[&str],
    input: Option<&str>,
    limit: Duration,
) -> Result<String, BackendError> {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = spawn_when_not_busy(&mut cmd).map_err(|e| BackendError::Spawn {
        program: program.to_string(),
        detail: e.to_string(),
    })?;
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(text.as_bytes());
    }
    let command = || format!("{program} {}", args.join(" "));
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(limit) {
        Ok(out) => out.map_err(|e| BackendError::Spawn {
            program: program.to_string(),
            detail: e.to_string(),
        })?,
        Err(_) => {
            // SAFETY: kill(2) on the child this call started. It is reaped only once its output
            // is read to the end and it has exited, which has not happened within the limit
            // (a pid reused in the instant between is the one risk, as with any kill by pid).
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
            return Err(BackendError::NoAnswer {
                command: command(),
                limit,
            });
        }
    };
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).to_string())
    } else {
        // What went wrong is on stderr, or on stdout for a tool that says it there (screen).
        let said = |bytes: &[u8]| String::from_utf8_lossy(bytes).trim().to_string();
        let detail = match said(&out.stderr) {
            e if e.is_empty() => said(&out.stdout),
            e => e,
        };
        Err(BackendError::Command {
            command: command(),
            detail,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_hangs_is_given_up_and_killed() {
        let start = std::time::Instant::now();
        let err = run_within("sleep", &["30"], None, Duration::from_millis(200)).unwrap_err();
        assert!(err.to_string().contains("no answer"), "{err}");
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(run("echo", &["hi"], None).unwrap(), "hi\n");
        assert_eq!(run("cat", &[], Some("typed")).unwrap(), "typed");
    }
}
