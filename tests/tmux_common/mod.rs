//! A private tmux server for one test: `tmux -L <unique> -f /dev/null`, with `TMUX`/`TMUX_PANE`
//! removed from its environment, killed on drop so no server or socket is left behind.

#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

pub struct TestTmux {
    pub socket: String,
}

/// The socket file of a `-L` server (tmux keeps it after `kill-server`).
pub fn socket_path(socket: &str) -> std::path::PathBuf {
    let dir = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
    let uid = unsafe { libc::getuid() };
    std::path::Path::new(&dir)
        .join(format!("tmux-{uid}"))
        .join(socket)
}

impl TestTmux {
    /// Starts a server with one detached session `main` running `cat` (a 200×50 window).
    pub fn start() -> TestTmux {
        let socket = format!("tl-test-{}", uuid::Uuid::new_v4().simple());
        let t = TestTmux { socket };
        t.run(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "200",
            "-y",
            "50",
            "--",
            "cat",
        ])
        .expect("start tmux");
        t
    }

    /// Runs a tmux command on this server.
    pub fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .output()
            .map_err(|e| e.to_string())?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// Every pane id with a format, e.g. `#{pane_id} #{pane_title}`.
    pub fn panes(&self, format: &str) -> Vec<String> {
        self.run(&["list-panes", "-a", "-F", format])
            .map(|s| s.lines().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// The pane id of the first pane of session `main`.
    pub fn main_pane(&self) -> String {
        self.run(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .expect("main pane")
    }

    /// The text on a pane's screen.
    pub fn capture(&self, pane: &str) -> String {
        self.run(&["capture-pane", "-p", "-t", pane])
            .unwrap_or_default()
    }

    /// Polls `cond` until it holds or the deadline passes.
    pub fn wait_for(&self, what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if cond() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("timed out waiting for {what}");
    }
}

impl Drop for TestTmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        let _ = std::fs::remove_file(socket_path(&self.socket));
    }
}
