//! A private tmux server for one test: `tmux -L <unique> -f /dev/null`, with `TMUX`/`TMUX_PANE`
//! removed from its environment, killed on drop so no server or socket is left behind.

use std::process::Command;
use std::time::Duration;

pub struct TestTmux {
    pub socket: String,
    /// The socket directory (`TMUX_TMPDIR`) when not the default one.
    pub tmpdir: Option<std::path::PathBuf>,
}

/// The socket file of a `-L` server in `TMUX_TMPDIR` `dir` (the default one when `None`; tmux
/// keeps it after `kill-server`).
pub fn socket_path_in(dir: Option<&std::path::Path>, socket: &str) -> std::path::PathBuf {
    let default = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".to_string());
    let dir = dir.map_or_else(|| std::path::PathBuf::from(default), |d| d.to_path_buf());
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    dir.join(format!("tmux-{uid}")).join(socket)
}

impl TestTmux {
    /// The server `-L socket` in the default socket directory (not started here).
    pub fn named(socket: impl Into<String>) -> TestTmux {
        TestTmux {
            socket: socket.into(),
            tmpdir: None,
        }
    }

    /// The server `-L socket` in the socket directory `tmpdir` (not started here).
    pub fn in_dir(socket: impl Into<String>, tmpdir: &std::path::Path) -> TestTmux {
        TestTmux {
            socket: socket.into(),
            tmpdir: Some(tmpdir.to_path_buf()),
        }
    }

    /// Its socket file.
    pub fn socket_path(&self) -> std::path::PathBuf {
        socket_path_in(self.tmpdir.as_deref(), &self.socket)
    }

    /// Starts a server with one detached session `main` running `cat` (a 200×50 window).
    pub fn start() -> TestTmux {
        let socket = format!("tl-test-{}", uuid::Uuid::new_v4().simple());
        let t = TestTmux::named(socket);
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
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env_remove("TMUX")
            .env_remove("TMUX_PANE");
        if let Some(dir) = &self.tmpdir {
            cmd.env("TMUX_TMPDIR", dir);
        }
        let out = cmd.output().map_err(|e| e.to_string())?;
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
    pub fn wait_for(&self, what: &str, timeout: Duration, cond: impl FnMut() -> bool) {
        crate::wait::wait_until(what, timeout, cond, || {
            self.run(&["list-panes", "-a"]).unwrap_or_default()
        });
    }
}

impl Drop for TestTmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
        let _ = std::fs::remove_file(self.socket_path());
    }
}
