//! Helpers for the `monitor` tests: a child whose stdout is kept as raw bytes (to prove no
//! control character ever reaches the terminal) and read line by line with deadlines, and the
//! real lead in a pseudo-terminal (portable-pty + vt100), killed on drop.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

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

/// The real binary in a PTY, its screen parsed by vt100; killed on drop if still running.
pub struct PtySession {
    child: Box<dyn portable_pty::Child + Send + Sync>,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl PtySession {
    pub fn start(home: &Path, cwd: &Path, logs: &Path, args: &[&str]) -> PtySession {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 120,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_teamlead"));
        // The lead in this terminal's process (these tests are about it, not the server).
        cmd.env("TEAMLEAD_NO_SERVER", "1");
        cmd.arg("--home");
        cmd.arg(home);
        for a in args {
            cmd.arg(a);
        }
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        // Never the user's config file: a named file that does not exist gives the defaults.
        cmd.env(
            "TEAMLEAD_CONFIG",
            concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
        );
        cmd.env("TEAMLEAD_LOG_DIR", logs);
        for var in ["CLAUDE_CONFIG_DIR", "TEAMLEAD_HOME", "TMUX", "TMUX_PANE"] {
            cmd.env_remove(var);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn teamlead");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(40, 120, 0)));
        let screen_in = screen.clone();
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let bytes = &buf[..n];
                        // Answer the primary device attributes query like a terminal would.
                        if bytes.windows(3).any(|w| w == b"\x1b[c")
                            && let Ok(mut w) = writer.lock()
                        {
                            let _ = w.write_all(b"\x1b[?1;2c");
                            let _ = w.flush();
                        }
                        if let Ok(mut parser) = screen_in.lock() {
                            parser.process(bytes);
                        }
                    }
                }
            }
        });
        PtySession { child, screen }
    }

    pub fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Waits until the screen holds `text`.
    pub fn wait_for(&self, text: &str) {
        let start = Instant::now();
        while !self.contents().contains(text) {
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {text:?}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for PtySession {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Polls `cond` every 20 ms until it holds; panics after [`DEADLINE`].
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Characters that must never reach a terminal raw: ESC and every C0 control but `\n`, DEL,
/// C1 controls, bidi controls.
pub fn forbidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}
