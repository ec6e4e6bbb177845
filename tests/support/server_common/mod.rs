//! Shared helpers of the lead server tests: a workspace (temporary home, private runtime
//! directory, working directory, log directory), the real binary with that environment,
//! `teamlead serve` started the way a CI job would (own session, stdin /dev/null, no
//! terminal), `ctl` calls, polled waits with a deadline, and a guard that leaves no server,
//! socket or process behind.

#![allow(dead_code)]

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

/// How long any wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(30);

/// Polls `cond` until it holds; panics with `explain()` at the deadline.
pub fn wait_until(what: &str, cond: impl FnMut() -> bool, explain: impl Fn() -> String) {
    teamlead_test_support::wait::wait_until(what, WAIT, cond, explain);
}

/// A temporary home, runtime directory, working directory and log directory.
pub struct Ws {
    pub root: tempfile::TempDir,
    pub team: String,
}

impl Ws {
    pub fn new(team: &str) -> Ws {
        let root = tempfile::Builder::new()
            .prefix("tl-srv-")
            .tempdir()
            .expect("temp dir");
        for d in ["home", "work", "logs"] {
            std::fs::create_dir(root.path().join(d)).expect("mkdir");
        }
        Ws {
            root,
            team: team.to_string(),
        }
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }
    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }
    /// Made by the server itself (it must be private: 0700).
    pub fn run_dir(&self) -> PathBuf {
        self.root.path().join("run")
    }
    pub fn logs(&self) -> PathBuf {
        self.root.path().join("logs")
    }
    pub fn team_dir(&self) -> PathBuf {
        self.home().join("teams").join(&self.team)
    }

    /// The environment every process of the test gets.
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TEAMLEAD_RUNTIME_DIR", self.run_dir().display().to_string()),
            ("TEAMLEAD_LOG_DIR", self.logs().display().to_string()),
            (
                "TEAMLEAD_CONFIG",
                self.root.path().join("none.toml").display().to_string(),
            ),
            ("TEAMLEAD_LEAD_GRACE_MS", "3000".to_string()),
            ("NO_COLOR", "1".to_string()),
        ]
    }

    /// The binary with `--home` and the test's environment, no terminal at all.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home").arg(self.home()).args(args);
        cmd.current_dir(self.work());
        for var in [
            "CLAUDE_CONFIG_DIR",
            "TEAMLEAD_HOME",
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_NO_SERVER",
            "XDG_RUNTIME_DIR",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// `teamlead ctl TEAM args…`.
    pub fn ctl(&self, args: &[&str]) -> Output {
        let mut full = vec!["ctl", self.team.as_str()];
        full.extend_from_slice(args);
        self.cmd(&full).output().expect("run ctl")
    }

    /// `ctl` that must succeed; its stdout.
    pub fn ctl_ok(&self, args: &[&str]) -> String {
        let out = self.ctl(args);
        assert!(
            out.status.success(),
            "ctl {args:?}: {:?}\nstdout: {}\nstderr: {}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The socket files in the runtime directory.
    pub fn sockets(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.run_dir())
            .map(|d| {
                d.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "sock"))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Processes whose command line mentions this workspace (servers, teammates, commands).
    pub fn processes(&self) -> Vec<(u32, String)> {
        let needle = self.root.path().display().to_string();
        let mut out = Vec::new();
        let me = std::process::id();
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            if pid == me {
                continue;
            }
            let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            if line.contains(&needle) {
                out.push((pid, line));
            }
        }
        out
    }

    /// Starts `teamlead serve --team T` as a CI job would: its own session, stdin /dev/null,
    /// no terminal; waits for its socket.
    pub fn serve(&self, extra: &[&str]) -> Server {
        let mut args = vec![
            "serve",
            "--team",
            self.team.as_str(),
            "--backend",
            "in-process",
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.cmd(&args);
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: setsid is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
        let child = cmd.spawn().expect("start teamlead serve");
        let server = Server { child };
        wait_until(
            "the server's socket",
            || !self.sockets().is_empty(),
            || format!("runtime dir: {:?}", self.sockets()),
        );
        server
    }

    /// Ends whatever the test left running (a failed test included).
    pub fn reap(&self) {
        if !self.sockets().is_empty() {
            let _ = self
                .cmd(&["ctl", &self.team, "/quit"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
        for (pid, _) in self.processes() {
            // SAFETY: kill with a pid read from /proc.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
    }
}

impl Drop for Ws {
    fn drop(&mut self) {
        self.reap();
    }
}

/// A `teamlead serve` child.
pub struct Server {
    pub child: Child,
}

impl Server {
    /// Waits for the server to exit; its status.
    pub fn wait_exit(&mut self) -> std::process::ExitStatus {
        let mut status = None;
        wait_until(
            "the server to exit",
            || {
                status = self.child.try_wait().ok().flatten();
                status.is_some()
            },
            String::new,
        );
        status.expect("exited")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The JSON lines of `ctl events --json`.
pub fn story(ws: &Ws) -> Vec<serde_json::Value> {
    ws.ctl_ok(&["--json", "events"])
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The index of the first story event for which `pred` holds.
pub fn position(
    story: &[serde_json::Value],
    what: &str,
    pred: impl Fn(&serde_json::Value) -> bool,
) -> usize {
    story
        .iter()
        .position(pred)
        .unwrap_or_else(|| panic!("no {what} in the story:\n{story:#?}"))
}

/// Is `path` private to the user (no group or other bits)?
pub fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("stat")
        .permissions()
        .mode()
        & 0o777
}
