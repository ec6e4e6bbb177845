//! Helpers of the clean-up tests: a git repository in a temporary directory, a lead session
//! (the library) working in it, the real binary in a pseudo-terminal with chosen arguments and
//! environment (killed on drop), and processes found in /proc by a marker on their command line.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, PtySize, native_pty_system};

/// How long any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// Runs git in `dir` (test identity, no global config); panics on failure; stdout trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(
        out.status.success(),
        "git {args:?} in {}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// `<dir>/repo`: a repository with one commit on `main`.
pub fn repo_in(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("repo dir");
    git(&repo, &["init", "--quiet", "--initial-branch=main"]);
    git(&repo, &["config", "user.name", "t"]);
    git(&repo, &["config", "user.email", "t@example.com"]);
    std::fs::write(repo.join("README"), "hello\n").expect("write README");
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "--quiet", "-m", "first"]);
    repo
}

/// The repository's local branches.
pub fn branches(repo: &Path) -> Vec<String> {
    git(repo, &["branch", "--format=%(refname:short)"])
        .lines()
        .map(str::to_string)
        .collect()
}

/// The paths of the repository's worktrees (the main checkout first).
pub fn worktrees(repo: &Path) -> Vec<String> {
    git(repo, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(str::to_string))
        .collect()
}

/// Where a teammate's worktree lives: `<dir>/repo-worktrees/<team>-<name>`.
pub fn worktree_dir(dir: &Path, team: &str, name: &str) -> PathBuf {
    dir.join("repo-worktrees").join(format!("{team}-{name}"))
}

/// Polls `cond` every 20 ms until it holds; panics after `timeout` with `what` and `explain()`.
pub fn wait_until(
    what: &str,
    timeout: Duration,
    mut cond: impl FnMut() -> bool,
    explain: impl Fn() -> String,
) -> Duration {
    let start = Instant::now();
    loop {
        if cond() {
            return start.elapsed();
        }
        if start.elapsed() > timeout {
            panic!(
                "timed out after {timeout:?} waiting for {what}\n{}",
                explain()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ---------------------------------------------------------------------------------------------
// Processes, from /proc.

/// Running processes (zombies excluded) with `marker` in an argument: pid and command line.
pub fn processes_with(marker: &str) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let args: Vec<String> = raw
                .split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, r)| r.trim_start().starts_with('Z'));
            (!zombie && args.iter().any(|a| a.contains(marker))).then(|| (pid, args.join(" ")))
        })
        .collect()
}

/// SIGKILL to every process with `marker` on its command line (clean-up after a failure).
pub fn kill_marked(marker: &str) {
    for (pid, _) in processes_with(marker) {
        // SAFETY: kill(2) on processes this test started (they carry its unique marker).
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGKILL);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The real binary in a pseudo-terminal.

/// `teamlead --home H <args>` in a PTY, its screen parsed by vt100; SIGKILLed on drop.
pub struct PtyLead {
    pub child: Box<dyn Child + Send + Sync>,
    pub pid: u32,
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    screen: Arc<Mutex<vt100::Parser>>,
}

impl PtyLead {
    /// Starts the lead in `cwd` with `env` set (and `TMUX`, `TMUX_PANE`, `TEAMLEAD_HOME`,
    /// `CLAUDE_CONFIG_DIR`, `TEAMLEAD_CLAUDE_BIN` removed unless `env` sets them); waits for
    /// its screen.
    pub fn start(home: &Path, cwd: &Path, args: &[&str], env: &[(&str, String)]) -> PtyLead {
        let (rows, cols) = (40, 160);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
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
        for var in [
            "CLAUDE_CONFIG_DIR",
            "TEAMLEAD_HOME",
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_CLAUDE_BIN",
        ] {
            cmd.env_remove(var);
        }
        for (key, value) in env {
            cmd.env(key, value);
        }
        let child = pair.slave.spawn_command(cmd).expect("spawn teamlead");
        drop(pair.slave);
        let pid = child.process_id().expect("the lead's pid");
        let mut reader = pair.master.try_clone_reader().expect("pty reader");
        let writer = Arc::new(Mutex::new(pair.master.take_writer().expect("pty writer")));
        let screen = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let (screen_in, answer) = (screen.clone(), writer.clone());
        std::thread::spawn(move || {
            // Keeps the master open for as long as the child may write.
            let _master = pair.master;
            let mut buf = [0u8; 8192];
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
        let lead = PtyLead {
            child,
            pid,
            writer,
            screen,
        };
        lead.wait_screen("the lead's screen", |s| s.contains("shift+tab to cycle"));
        lead
    }

    pub fn send(&self, bytes: &[u8]) {
        let mut w = self.writer.lock().expect("pty writer");
        w.write_all(bytes).expect("write to the pty");
        w.flush().expect("flush the pty");
    }

    pub fn screen(&self) -> String {
        self.screen.lock().expect("screen").screen().contents()
    }

    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        wait_until(
            what,
            WAIT,
            || check(&self.screen()),
            || format!("lead screen:\n{}", self.screen()),
        )
    }

    /// Types a one-line composer input, waits until the composer shows it, presses Enter.
    pub fn submit(&self, line: &str) {
        self.send(line.as_bytes());
        self.wait_screen(&format!("the composer to show `{line}`"), |s| {
            s.contains(line)
        });
        self.send(b"\r");
    }

    /// SIGKILL to the lead, then reaps it.
    pub fn sigkill(&mut self) {
        // SAFETY: kill(2) on our own child, not reaped yet.
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
        }
        let _ = self.child.wait();
    }

    /// Waits for the lead to exit; returns whether it exited with status 0.
    pub fn wait_exit(&mut self) -> bool {
        let mut status = None;
        let (child, screen) = (&mut self.child, &self.screen);
        wait_until(
            "the lead to exit",
            WAIT,
            || {
                status = child.try_wait().ok().flatten();
                status.is_some()
            },
            || {
                let parser = screen.lock().expect("screen");
                format!("lead screen:\n{}", parser.screen().contents())
            },
        );
        status.is_some_and(|s| s.success())
    }
}

impl Drop for PtyLead {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
