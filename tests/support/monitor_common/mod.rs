//! Helpers for the `monitor` tests: a child whose stdout is kept as raw bytes (to prove no
//! control character ever reaches the terminal) and read line by line with deadlines.

#![allow(dead_code)]

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

pub const DEADLINE: Duration = Duration::from_secs(20);

/// A long-running child whose stdout is collected raw; killed on drop.
pub struct RawChild {
    child: Child,
    chunks: Receiver<Vec<u8>>,
    /// Every byte read so far.
    pub bytes: Vec<u8>,
}

impl RawChild {
    pub fn spawn(mut cmd: Command) -> RawChild {
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        let mut child = cmd.spawn().expect("spawn");
        let mut stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        if tx.send(buf[..n].to_vec()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        RawChild {
            child,
            chunks: rx,
            bytes: Vec::new(),
        }
    }

    /// The complete lines so far, decoded lossily.
    pub fn lines(&self) -> Vec<String> {
        let end = self
            .bytes
            .iter()
            .rposition(|b| *b == b'\n')
            .map_or(0, |i| i + 1);
        String::from_utf8_lossy(&self.bytes[..end])
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// Lines containing `needle`.
    pub fn count(&self, needle: &str) -> usize {
        self.lines().iter().filter(|l| l.contains(needle)).count()
    }

    /// Waits for a complete line containing `needle` (lines seen before count).
    pub fn wait_for(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(line) = self.lines().into_iter().find(|l| l.contains(needle)) {
                return line;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.bytes.extend(chunk),
                Err(RecvTimeoutError::Timeout) => panic!(
                    "no line containing {needle:?} in time; saw:\n{}",
                    self.lines().join("\n")
                ),
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "the child ended before printing {needle:?}; saw:\n{}",
                    self.lines().join("\n")
                ),
            }
        }
    }

    /// Waits for a line containing `needle` that was printed after the first `after` lines.
    pub fn wait_for_after(&mut self, after: usize, needle: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            if let Some(line) = self
                .lines()
                .into_iter()
                .skip(after)
                .find(|l| l.contains(needle))
            {
                return line;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok(chunk) => self.bytes.extend(chunk),
                Err(_) => panic!(
                    "no new line containing {needle:?} in time; saw:\n{}",
                    self.lines().join("\n")
                ),
            }
        }
    }

    /// Still running?
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for RawChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `cond` every 20 ms until it holds; panics after [`DEADLINE`].
pub fn wait_until(what: &str, cond: impl FnMut() -> bool) {
    teamlead_test_support::wait::wait_until(what, DEADLINE, cond, String::new);
}

/// Characters that must never reach a terminal raw: ESC and every C0 control but `\n`, DEL,
/// C1 controls, bidi controls.
pub fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}
