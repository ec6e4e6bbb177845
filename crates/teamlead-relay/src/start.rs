//! A teammate's session started by the relay on its host (capability `start`; DESIGN.md
//! "Hosts", spawn): the lead sends the command line that starts it (the team's `tmux
//! new-session …`) right after the route and team file that the teammate needs, over the
//! connection that is open, so a remote spawn costs one trip of the link instead of an ack
//! and then a new ssh session for the tmux call. The relay runs the line with `sh -c` under a
//! deadline and answers `started` with the outcome. A session of that name that is already
//! there (the same `start` run again after the relay died before recording it) counts as
//! started.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the command line may run.
pub const START_DEADLINE: Duration = Duration::from_secs(10);

/// Runs `line` with `sh -c`; `None` when it succeeded (or its session was there already),
/// else why not, in one line.
pub fn run(line: &str) -> Option<String> {
    let child = Command::new("sh")
        .arg("-c")
        .arg(line)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return Some(format!("could not run sh: {e}")),
    };
    // Read in a thread of its own: a process the line leaves behind may hold the pipe open.
    let (tx, rx) = std::sync::mpsc::channel();
    if let Some(mut pipe) = child.stderr.take() {
        std::thread::spawn(move || {
            let mut said = String::new();
            let _ = pipe.read_to_string(&mut said);
            let _ = tx.send(said);
        });
    }
    let until = Instant::now() + START_DEADLINE;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(2)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(format!(
                    "it did not finish within {} s",
                    START_DEADLINE.as_secs()
                ));
            }
            Err(e) => return Some(format!("could not wait for it: {e}")),
        }
    };
    let stderr = rx.recv_timeout(Duration::from_secs(1)).unwrap_or_default();
    if status.success() || stderr.contains("duplicate session") {
        return None;
    }
    let said = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    Some(if said.is_empty() {
        format!("it failed ({status})")
    } else {
        said
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_works_is_started_and_one_that_fails_says_why() {
        assert_eq!(run("true"), None);
        assert_eq!(
            run("echo 'no server on this socket' >&2; exit 1").as_deref(),
            Some("no server on this socket")
        );
        assert_eq!(run("echo 'duplicate session: mate' >&2; exit 1"), None);
        assert!(run("exit 3").is_some_and(|e| e.contains("exit status: 3")));
    }
}
