//! The one pseudo-terminal harness of the test suite: a program (usually the real `teamlead`
//! binary) in a PTY (portable-pty), its output parsed by vt100 on a reader thread that also
//! answers the primary device attributes query as a terminal would, keeps every raw byte and
//! records every window title the program set. Send bytes, read the screen, poll a condition
//! with a deadline; the program is killed on drop if it still runs. The real lead in it is
//! [`PtyLead`] (`lead.rs`), the one type every PTY test starts and drives.

pub mod lead;

pub use lead::{PtyLead, PtyLeadBuilder};

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

/// How long [`Terminal::wait_for`] and [`Terminal::wait_exit`] wait by default.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// Records what the program asked the terminal to do with titles.
#[derive(Default)]
pub struct Seen {
    pub titles: Vec<String>,
}

impl vt100::Callbacks for Seen {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.titles
            .push(String::from_utf8_lossy(title).into_owned());
    }
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.titles.push(String::from_utf8_lossy(name).into_owned());
    }
}

/// The `teamlead` binary under test and the config file it is given (the test binary knows
/// both: `env!("CARGO_BIN_EXE_teamlead")` exists only in the package's own tests).
#[derive(Debug, Clone)]
pub struct Program {
    pub bin: PathBuf,
    /// `TEAMLEAD_CONFIG`: never the user's config file (a named file that does not exist
    /// gives the defaults).
    pub config: PathBuf,
}

/// `teamlead [--home H] args…` in `cwd` as the PTY tests run it: the lead in the terminal's
/// own process (`TEAMLEAD_NO_SERVER=1`), `TERM=xterm-256color`, the program's config file,
/// and none of the caller's `TMUX`, `TMUX_PANE`, `TEAMLEAD_HOME`, `CLAUDE_CONFIG_DIR`,
/// `TEAMLEAD_CLAUDE_BIN`.
pub fn teamlead<S: AsRef<OsStr>>(
    program: &Program,
    home: Option<&Path>,
    cwd: &Path,
    args: impl IntoIterator<Item = S>,
) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(&program.bin);
    if let Some(home) = home {
        cmd.arg("--home");
        cmd.arg(home);
    }
    for a in args {
        cmd.arg(a.as_ref());
    }
    cmd.cwd(cwd);
    cmd.env("TEAMLEAD_NO_SERVER", "1");
    cmd.env("TERM", "xterm-256color");
    cmd.env("TEAMLEAD_CONFIG", &program.config);
    for var in [
        "CLAUDE_CONFIG_DIR",
        "TEAMLEAD_HOME",
        "TMUX",
        "TMUX_PANE",
        "TEAMLEAD_CLAUDE_BIN",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// A program in a PTY, its screen parsed by vt100; killed on drop if still running.
pub struct Terminal {
    pub child: Box<dyn Child + Send + Sync>,
    pub pid: u32,
    pub writer: Arc<Mutex<Box<dyn Write + Send>>>,
    pub screen: Arc<Mutex<vt100::Parser<Seen>>>,
    /// Every byte the program wrote, as written.
    pub raw: Arc<Mutex<Vec<u8>>>,
    /// Set once the reader has seen the end of the output (the program and every process
    /// holding the terminal have gone).
    pub output_ended: Arc<std::sync::atomic::AtomicBool>,
    /// Whether [`Terminal::exit_status`] has already waited out the output after the exit.
    exit_drained: bool,
}

impl Terminal {
    /// Runs `cmd` in a `cols`×`rows` PTY.
    pub fn spawn(cmd: CommandBuilder, cols: u16, rows: u16) -> Terminal {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let child = pair.slave.spawn_command(cmd).expect("spawn the program");
        drop(pair.slave);
        let pid = child.process_id().expect("the program's pid");
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            rows,
            cols,
            0,
            Seen::default(),
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (screen_in, answer, raw_in) = (screen.clone(), writer.clone(), raw.clone());
        let output_ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = output_ended.clone();
        std::thread::spawn(move || {
            // Keeps the master open for as long as the child may write.
            let _master = pair.master;
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => {
                        ended.store(true, std::sync::atomic::Ordering::SeqCst);
                        break;
                    }
                    Ok(n) => {
                        let bytes = &buf[..n];
                        // Answer the primary device attributes query like a terminal would.
                        if bytes.windows(3).any(|w| w == b"\x1b[c")
                            && let Ok(mut w) = answer.lock()
                        {
                            let _ = w.write_all(b"\x1b[?1;2c");
                            let _ = w.flush();
                        }
                        if let Ok(mut all) = raw_in.lock() {
                            all.extend_from_slice(bytes);
                        }
                        if let Ok(mut parser) = screen_in.lock() {
                            parser.process(bytes);
                        }
                    }
                }
            }
        });
        Terminal {
            child,
            pid,
            writer,
            screen,
            raw,
            output_ended,
            exit_drained: false,
        }
    }

    /// Types `bytes`.
    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("pty writer");
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    /// Types `bytes`, ignoring a program that has gone (its PTY closed).
    pub fn send_lossy(&self, bytes: &[u8]) {
        if let Ok(mut w) = self.writer.lock() {
            let _ = w.write_all(bytes);
            let _ = w.flush();
        }
    }

    /// The screen's text.
    pub fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Every window title the program set, in order.
    pub fn titles(&self) -> Vec<String> {
        self.screen
            .lock()
            .expect("screen")
            .callbacks()
            .titles
            .clone()
    }

    /// Everything the program wrote, lossily as text.
    pub fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().expect("raw output")).into_owned()
    }

    /// Polls until the screen satisfies `check`; panics after `limit` with `what` and the
    /// screen. Returns how long it took.
    pub fn wait_screen_within(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&vt100::Screen) -> bool,
    ) -> Duration {
        let start = Instant::now();
        loop {
            if check(self.screen.lock().expect("screen").screen()) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < limit,
                "timed out after {limit:?} waiting for {what}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Polls until the screen's text satisfies `check`; panics after `limit` with `what` and
    /// the screen. Returns how long it took. (`check` may send keys: no lock is held.)
    pub fn wait_text_within(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&str) -> bool,
    ) -> Duration {
        let start = Instant::now();
        loop {
            let text = self.contents();
            if check(&text) {
                return start.elapsed();
            }
            assert!(
                start.elapsed() < limit,
                "timed out after {limit:?} waiting for {what}; screen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Polls until the screen's text satisfies `check`, the program exits or `limit` passes;
    /// whether it holds then (never panics).
    pub fn poll_text(&mut self, limit: Duration, check: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if check(&self.contents()) {
                return true;
            }
            if Instant::now() > deadline {
                return check(&self.contents());
            }
            if self.exit_status().is_some() {
                // `exit_status` has waited for the output written before the exit.
                return check(&self.contents());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits (up to `limit`) until the reader has seen the end of the output.
    pub fn wait_output_end(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.output_ended.load(std::sync::atomic::Ordering::SeqCst)
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// `Some(success)` once the program has exited. What it wrote before exiting may still be
    /// on its way to the screen: the first time the exit is seen, this waits (up to 2 s) for
    /// the reader to reach the end of the output, so a screen read after it is complete.
    pub fn exit_status(&mut self) -> Option<bool> {
        let status = self
            .child
            .try_wait()
            .ok()
            .flatten()
            .map(|status| status.success());
        if status.is_some() && !self.exit_drained {
            self.exit_drained = true;
            self.wait_output_end(Duration::from_secs(2));
        }
        status
    }

    /// Waits up to `limit` for the exit: `Some(success)`, or `None` at the deadline.
    pub fn exit_within(&mut self, limit: Duration) -> Option<bool> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(success) = self.exit_status() {
                return Some(success);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the exit (panics after `limit` with the screen); whether it succeeded.
    pub fn wait_exit_within(&mut self, limit: Duration) -> bool {
        match self.exit_within(limit) {
            Some(success) => success,
            None => panic!(
                "the program did not exit within {limit:?}; screen:\n{}",
                self.contents()
            ),
        }
    }

    /// SIGKILL to the program, then reaps it.
    pub fn sigkill(&mut self) {
        // SAFETY: kill(2) on our own child, not reaped yet.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
