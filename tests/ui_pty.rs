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
        Session::start_env(home, cwd, args, &[])
    }

    fn start_env(home: &Path, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Session {
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
        for (key, value) in env {
            cmd.env(key, value);
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

/// The demo end to end: tasks are claimed, a Bash request is approved by key and its task shows
/// as completed on screen and in its task file; every later request and the plan are approved
/// until all six tasks are done; `/quit` then removes the team, its tasks and the demo's
/// working directory, and leaves no process behind.
#[test]
fn demo_runs_to_the_end_with_approvals_and_quits_clean() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let tmp = tempfile::tempdir().expect("tmp for the demo's working directory");
    let mut session = Session::start_env(
        home.path(),
        project.path(),
        &["demo"],
        &[("TMPDIR", tmp.path())],
    );
    session.wait_for("the first Bash request", |s| {
        let c = s.contents();
        c.contains("needs permission") && c.contains("Bash") && c.contains("Lay out the workspace")
    });
    let team = std::fs::read_dir(home.path().join("tasks"))
        .expect("tasks dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .next()
        .expect("the demo team's task list");
    let task_file = home.path().join("tasks").join(&team).join("1.json");
    let status = |path: &Path| -> String {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["status"].as_str().map(str::to_string))
            .unwrap_or_default()
    };
    assert_eq!(status(&task_file), "in_progress");
    session.send(b"y");
    // The footer counts it (the transcript line may sit under the reviewer's plan dialog).
    session.wait_for("task #1 completed on screen", |s| {
        s.contents().contains("tasks 1/6")
    });
    assert_eq!(status(&task_file), "completed");

    // Approve whatever is asked (Bash requests, the reviewer's plan) until every task is done.
    let start = Instant::now();
    loop {
        let screen = session.contents();
        if screen.contains("tasks 6/6") && !screen.contains("needs permission") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the demo did not finish:\n{screen}"
        );
        if screen.contains("needs permission") || screen.contains("wants to proceed") {
            session.send(b"y");
        }
        std::thread::sleep(Duration::from_millis(150));
    }
    for id in 1..=6 {
        let path = home
            .path()
            .join("tasks")
            .join(&team)
            .join(format!("{id}.json"));
        assert_eq!(status(&path), "completed", "task {id}");
    }
    let workdir: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .flatten()
        .collect();
    assert_eq!(
        workdir.len(),
        1,
        "the demo works in one directory under TMPDIR"
    );
    let report = workdir[0].path().join("out/REPORT.md");
    assert!(report.exists(), "the last task wrote its report");

    session.send(b"/quit\r");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join(&team).exists(),
        "team directory removed"
    );
    assert!(
        !home.path().join("tasks").join(&team).exists(),
        "task list removed"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).expect("tmp").count(),
        0,
        "demo directory removed"
    );
    // No process is left that still works in the demo's directory or on its home.
    let needle = home.path().to_string_lossy().into_owned();
    let left = std::process::Command::new("pgrep")
        .args(["-f", &needle])
        .output()
        .expect("pgrep");
    assert!(
        left.stdout.is_empty(),
        "leftover processes: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}
