//! The real binary in a pseudo-terminal (portable-pty + vt100): the lead session draws its
//! screen on the alternate screen, `/quit` or Ctrl+C twice end it, and the terminal is given
//! back as it was (main screen, cursor shown, bracketed paste off). Temporary home, no
//! ~/.claude, no tmux.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

const DEADLINE: Duration = Duration::from_secs(30);

/// The binary in a PTY, its screen parsed by vt100; killed on drop if still running.
struct Session {
    child: Box<dyn Child + Send + Sync>,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl Session {
    fn start(home: &Path, cwd: &Path, args: &[&str]) -> Session {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 30,
                cols: 100,
                pixel_width: 0,
                pixel_height: 0,
            })
            .expect("open a pty");
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home");
        cmd.arg(home);
        for a in args {
            cmd.arg(a);
        }
        cmd.cwd(cwd);
        cmd.env("TERM", "xterm-256color");
        for var in ["CLAUDE_CONFIG_DIR", "TEAMLEAD_HOME", "TMUX", "TMUX_PANE"] {
            cmd.env_remove(var);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn teamlead");
        drop(pair.slave);
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(30, 100, 0)));
        let (screen_in, answer) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            // Keeps the master open for as long as the child may write.
            let _master = pair.master;
            let mut buf = [0u8; 4096];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        let bytes = &buf[..n];
                        // Answer the primary device attributes query like a terminal would.
                        if bytes.windows(3).any(|w| w == b"\x1b[c")
                            && let Ok(mut w) = answer.lock()
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
        Session {
            child,
            writer,
            screen,
        }
    }

    fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("writer");
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    fn contents(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    /// Waits until the screen satisfies `check`.
    fn wait_for(&self, what: &str, check: impl Fn(&vt100::Screen) -> bool) {
        let start = Instant::now();
        loop {
            if check(self.screen.lock().expect("screen").screen()) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out waiting for {what}; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the process to exit; returns whether it succeeded.
    fn wait_exit(&mut self) -> bool {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status.success();
            }
            assert!(
                start.elapsed() < DEADLINE,
                "teamlead did not exit; screen:\n{}",
                self.contents()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn terminal_given_back(screen: &vt100::Screen) {
    assert!(!screen.alternate_screen(), "left the alternate screen");
    assert!(!screen.hide_cursor(), "cursor shown again");
    assert!(!screen.bracketed_paste(), "bracketed paste off");
}

fn started(session: &Session) {
    session.wait_for("the lead session's screen", |s| {
        s.alternate_screen() && s.contents().contains("shift+tab to cycle")
    });
}

#[test]
fn quit_command_ends_the_session_and_restores_the_terminal() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = Session::start(home.path(), project.path(), &["--team", "ptyteam"]);
    started(&session);
    let screen = session.contents();
    assert!(screen.contains("> "), "{screen}");
    assert!(screen.contains("default mode"), "{screen}");
    // Typing shows in the composer; completion pops up for a slash command.
    session.send(b"/qu");
    session.wait_for("the completion popup", |s| s.contents().contains("/quit"));
    session.send(b"it\r");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join("ptyteam").exists(),
        "the team is removed at quit"
    );
}

#[test]
fn ctrl_c_twice_quits() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = Session::start(home.path(), project.path(), &["--team", "ctrlc"]);
    started(&session);
    session.send(b"\x03");
    session.wait_for("the quit hint", |s| {
        s.contents().contains("press ctrl+c again to quit")
    });
    session.send(b"\x03");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
}

#[test]
fn sigterm_quits_gracefully_and_restores_the_terminal() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = Session::start(home.path(), project.path(), &["--team", "sigterm"]);
    started(&session);
    let pid = session.child.process_id().expect("pid");
    // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
    let sent = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM sent");
    assert!(session.wait_exit(), "exit status 0 after a graceful quit");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join("sigterm").exists(),
        "the team is removed"
    );
}
