//! Running one command for a `shell` teammate (and the `llm` engine's Bash tool): `sh -c
//! <command>` in its working directory, in a process group of its own guarded by a watchdog
//! (see [`super::guard`]: the group dies with this process, even by SIGKILL), stdout and stderr
//! captured line by line (the last lines kept for the report), killed with its whole group when
//! the turn is cancelled, and the group killed after the shell exits so nothing it started in
//! the background outlives it.

use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::guard::GroupGuard;
use crate::protocol::inbox::clip;

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecStatus {
    /// It exited with this code.
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
    /// The turn was cancelled and the command killed.
    Interrupted,
    /// It could not be started.
    SpawnFailed(String),
}

impl ExecStatus {
    pub fn success(&self) -> bool {
        *self == ExecStatus::Exited(0)
    }

    /// `exit 0`, `killed by signal 9`, `interrupted`, `could not start: …`.
    pub fn label(&self) -> String {
        match self {
            ExecStatus::Exited(code) => format!("exit {code}"),
            ExecStatus::Signaled(sig) => format!("killed by signal {sig}"),
            ExecStatus::Interrupted => "interrupted".to_string(),
            ExecStatus::SpawnFailed(e) => format!("could not start: {e}"),
        }
    }
}

/// The outcome of one command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecOutcome {
    pub status: ExecStatus,
    /// The last lines of stdout and stderr, interleaved as they came.
    pub tail: Vec<String>,
    /// How many lines were printed in all.
    pub lines: usize,
}

impl ExecOutcome {
    /// The last `max_lines` lines, at most `max_chars` characters (cut at the front).
    pub fn tail_text(&self, max_lines: usize, max_chars: usize) -> String {
        let start = self.tail.len().saturating_sub(max_lines);
        let text = self.tail[start..].join("\n");
        let count = text.chars().count();
        if count <= max_chars {
            text
        } else {
            let kept: String = text.chars().skip(count - max_chars + 1).collect();
            format!("…{kept}")
        }
    }
}

/// Lines kept for the report.
const TAIL_LINES: usize = 200;
/// A single output line is clipped to this many characters.
const LINE_CHARS: usize = 2000;

/// Runs `command` with `sh -c` in `cwd`; `on_line` sees every output line as it comes. The
/// command is killed (its whole process group) when `cancel` fires.
pub async fn run(
    command: &str,
    cwd: &Path,
    cancel: &CancellationToken,
    mut on_line: impl FnMut(&str),
) -> ExecOutcome {
    let failed = |e: String| ExecOutcome {
        status: ExecStatus::SpawnFailed(e),
        tail: Vec::new(),
        lines: 0,
    };
    let guard = match GroupGuard::start() {
        Ok(g) => g,
        Err(e) => return failed(format!("could not start the command's watchdog: {e}")),
    };
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(guard.group())
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            guard.finish().await;
            return failed(format!("sh -c in {}: {e}", cwd.display()));
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    if let Some(out) = child.stdout.take() {
        tokio::spawn(forward_lines(out, tx.clone()));
    }
    if let Some(err) = child.stderr.take() {
        tokio::spawn(forward_lines(err, tx.clone()));
    }
    drop(tx);

    let mut tail: VecDeque<String> = VecDeque::new();
    let mut lines = 0usize;
    let mut keep = |line: String, on_line: &mut dyn FnMut(&str)| {
        on_line(&line);
        lines += 1;
        if tail.len() == TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    };

    let mut interrupted = false;
    let mut exit = None;
    let mut pipes_open = true;
    while exit.is_none() {
        tokio::select! {
            _ = cancel.cancelled(), if !interrupted => {
                interrupted = true;
                guard.kill();
            }
            status = child.wait() => {
                exit = Some(status);
            }
            line = rx.recv(), if pipes_open => match line {
                Some(line) => keep(line, &mut on_line),
                None => pipes_open = false,
            },
        }
    }
    // The shell is gone: end whatever it left running in its group, then read the rest.
    guard.finish().await;
    while let Some(line) = rx.recv().await {
        keep(line, &mut on_line);
    }

    let status = if interrupted {
        ExecStatus::Interrupted
    } else {
        match exit {
            Some(Ok(s)) => match s.code() {
                Some(code) => ExecStatus::Exited(code),
                None => {
                    use std::os::unix::process::ExitStatusExt;
                    ExecStatus::Signaled(s.signal().unwrap_or(0))
                }
            },
            Some(Err(e)) => ExecStatus::SpawnFailed(e.to_string()),
            None => ExecStatus::Interrupted,
        }
    };
    ExecOutcome {
        status,
        tail: tail.into_iter().collect(),
        lines,
    }
}

async fn forward_lines(stream: impl AsyncRead + Unpin, tx: mpsc::UnboundedSender<String>) {
    let mut reader = BufReader::new(stream);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let text = String::from_utf8_lossy(&buf);
                let line = text.trim_end_matches(['\n', '\r']);
                if tx.send(clip(line, LINE_CHARS)).is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[tokio::test]
    async fn captures_output_and_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let mut seen = Vec::new();
        let out = run(
            "echo one; echo two >&2; pwd; exit 3",
            dir.path(),
            &cancel,
            |l| seen.push(l.to_string()),
        )
        .await;
        assert_eq!(out.status, ExecStatus::Exited(3));
        assert_eq!(out.lines, 3);
        assert!(seen.contains(&"one".to_string()) && seen.contains(&"two".to_string()));
        assert!(
            out.tail_text(5, 1000)
                .contains(&*dir.path().to_string_lossy())
        );
    }

    #[tokio::test]
    async fn cancel_kills_the_whole_group_quickly() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.cancel();
        });
        let start = Instant::now();
        let out = run(
            "sleep 30 & sleep 30; echo never",
            dir.path(),
            &cancel,
            |_| {},
        )
        .await;
        assert_eq!(out.status, ExecStatus::Interrupted);
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
