//! One process run to its end or to its deadline, whichever comes first: its output read on
//! threads (a full pipe never stalls it, at most [`MAX_OUTPUT`] kept), its exit polled, and
//! the process killed at the deadline. Every call to a host goes through here.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a process may print that is kept (the rest is read and dropped).
pub const MAX_OUTPUT: usize = 4 << 20;

/// A finished process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Its exit status (`None`: ended by a signal).
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

/// Why a process gave no [`Output`].
#[derive(Debug)]
pub enum RunError {
    /// It could not be started.
    Spawn(std::io::Error),
    /// It outlasted its deadline and was killed.
    Deadline,
}

/// Reads `from` to its end on a thread, keeping at most [`MAX_OUTPUT`] bytes.
fn drain(from: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let Some(mut from) = from else {
            return kept;
        };
        let mut buf = [0u8; 16 * 1024];
        loop {
            match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = MAX_OUTPUT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

/// Runs `cmd` with `stdin` (nothing when `None`) until it exits or `deadline` passes.
pub fn run(
    mut cmd: Command,
    stdin: Option<std::fs::File>,
    deadline: Duration,
) -> Result<Output, RunError> {
    cmd.stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().map_err(RunError::Spawn)?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let end = Instant::now() + deadline;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < end => std::thread::sleep(Duration::from_millis(10)),
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::Deadline);
            }
        }
    };
    // The pipes close when the process is gone, unless something it started keeps them: the
    // threads are then left to finish on their own, the output so far unknown.
    let join = |h: std::thread::JoinHandle<Vec<u8>>| {
        let end = Instant::now() + Duration::from_secs(2);
        while !h.is_finished() && Instant::now() < end {
            std::thread::sleep(Duration::from_millis(5));
        }
        if h.is_finished() {
            h.join().unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    Ok(Output {
        status: status.code(),
        stdout: join(stdout),
        stderr: String::from_utf8_lossy(&join(stderr)).into_owned(),
    })
}
