//! The lead session in a pseudo-terminal (portable-pty + vt100) for the hostile suite: the raw
//! bytes it wrote are kept, and every window title it set is recorded, so a test can prove
//! that no escape sequence from a file reached the terminal. Killed on drop.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

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

pub struct Lead {
    child: Box<dyn Child + Send + Sync>,
    writer: Box<dyn Write + Send>,
    pub parser: Arc<Mutex<vt100::Parser<Seen>>>,
    pub raw: Arc<Mutex<Vec<u8>>>,
}

impl Lead {
    /// `teamlead --home H <args>` in a 30×100 PTY, logs in `logs`, cwd `cwd`.
    pub fn start(home: &Path, logs: &Path, cwd: &Path, args: &[&str]) -> Lead {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
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
        let writer = pair.master.take_writer().expect("pty writer");
        let parser = Arc::new(Mutex::new(vt100::Parser::new_with_callbacks(
            30,
            100,
            0,
            Seen::default(),
        )));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (parser_in, raw_in) = (parser.clone(), raw.clone());
        std::thread::spawn(move || {
            let _master = pair.master;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        raw_in.lock().unwrap().extend_from_slice(&buf[..n]);
                        parser_in.lock().unwrap().process(&buf[..n]);
                    }
                }
            }
        });
        Lead {
            child,
            writer,
            parser,
            raw,
        }
    }

    pub fn send(&mut self, bytes: &[u8]) {
        let _ = self.writer.write_all(bytes);
        let _ = self.writer.flush();
    }

    pub fn contents(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    pub fn titles(&self) -> Vec<String> {
        self.parser.lock().unwrap().callbacks().titles.clone()
    }

    /// Polls until `check(screen text)` holds or the process exits or the deadline passes.
    pub fn wait_for(&mut self, limit: Duration, check: impl Fn(&str) -> bool) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if check(&self.contents()) {
                return true;
            }
            if Instant::now() > deadline || self.exited() {
                return check(&self.contents());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    pub fn exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Waits for the exit; `None` at the deadline.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<bool> {
        let deadline = Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status.success());
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Everything the program wrote, lossily as text.
    pub fn raw_text(&self) -> String {
        String::from_utf8_lossy(&self.raw.lock().unwrap()).into_owned()
    }
}

impl Drop for Lead {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
