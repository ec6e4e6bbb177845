//! Shared helpers for the command-line tests: a temporary root holding the home (seeded from a
//! fixture) and the log directory side by side, the real binary with a clean environment, a
//! snapshot of a tree to prove a command wrote nothing, and a child process killed on drop.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime};

pub const DEADLINE: Duration = Duration::from_secs(10);

/// `tests/fixtures` and copying a tree of it: the test support crate's.
pub use teamlead_test_support::store::{copy_tree, fixtures};

/// `<root>/home` (the teamlead home) and `<root>/logs` (TEAMLEAD_LOG_DIR).
pub struct TestHome {
    pub root: tempfile::TempDir,
}

impl TestHome {
    /// An empty home.
    pub fn empty() -> TestHome {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("home")).unwrap();
        TestHome { root }
    }

    /// A home that is a copy of `tests/fixtures/<name>`.
    pub fn fixture(name: &str) -> TestHome {
        let t = TestHome::empty();
        copy_tree(&fixtures().join(name), &t.home());
        t
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub fn logs(&self) -> PathBuf {
        self.root.path().join("logs")
    }

    /// The binary with `--home`, logs in the temp root, and no inherited home variables.
    pub fn cmd(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home").arg(self.home());
        clean_env_assert(&mut cmd, &self.logs());
        cmd.env("TEAMLEAD_CONFIG", self.config());
        cmd
    }

    /// The same as a std command (for long-running children).
    pub fn std_cmd(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home").arg(self.home());
        cmd.env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .env_remove("TEAMLEAD_WATCH")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .env("NO_COLOR", "1")
            .env("TEAMLEAD_CONFIG", self.config())
            .env("TEAMLEAD_LOG_DIR", self.logs());
        cmd
    }

    /// `<root>/config.toml`: the config file the binary reads (absent unless a test writes
    /// it), so the user's own is never read.
    pub fn config(&self) -> PathBuf {
        self.root.path().join("config.toml")
    }

    /// Writes a team file with the lead and the given teammates.
    pub fn write_team(&self, team: &str, teammates: &[&str]) {
        let dir = self.home().join("teams").join(team);
        std::fs::create_dir_all(dir.join("inboxes")).unwrap();
        let mut members = vec![serde_json::json!({
            "agentId": format!("team-lead@{team}"), "name": "team-lead", "agentType": "team-lead",
            "joinedAt": 1, "tmuxPaneId": "leader", "cwd": "/w", "subscriptions": []
        })];
        for (i, name) in teammates.iter().enumerate() {
            let color = ["red", "blue", "green"][i % 3];
            members.push(serde_json::json!({
                "agentId": format!("{name}@{team}"), "name": name, "agentType": "general-purpose",
                "color": color, "joinedAt": 1, "tmuxPaneId": "in-process",
                "cwd": "/w", "subscriptions": [], "backendType": "in-process"
            }));
        }
        let file = serde_json::json!({
            "name": team, "createdAt": 1, "leadAgentId": format!("team-lead@{team}"),
            "leadSessionId": "00000000-0000-4000-8000-000000000000", "members": members
        });
        std::fs::write(
            dir.join("config.json"),
            serde_json::to_string_pretty(&file).unwrap(),
        )
        .unwrap();
    }
}

fn clean_env_assert(cmd: &mut assert_cmd::Command, logs: &Path) {
    cmd.env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TEAMLEAD_HOME")
        .env_remove("TEAMLEAD_WATCH")
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env("NO_COLOR", "1")
        .env("TEAMLEAD_LOG_DIR", logs);
}

/// Every path under `dir` with its kind, content and mtime: equal snapshots mean nothing was
/// written, created, moved or touched.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (bool, Vec<u8>, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, (bool, Vec<u8>, Option<SystemTime>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                out.insert(path.clone(), (true, Vec::new(), meta.modified().ok()));
                walk(&path, out);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                out.insert(path, (false, bytes, meta.modified().ok()));
            }
        }
    }
    walk(dir, &mut out);
    out
}

/// Lock directories (`*.lock/`) anywhere under `dir`.
pub fn lock_dirs(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir)
        .into_iter()
        .filter(|(p, (is_dir, _, _))| {
            *is_dir
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(".lock"))
        })
        .map(|(p, _)| p)
        .collect()
}

/// A long-running child whose stdout lines arrive on a channel; killed on drop.
pub struct LineChild {
    child: Child,
    lines: Receiver<String>,
    pub seen: Vec<String>,
}

impl LineChild {
    pub fn spawn(mut cmd: Command) -> LineChild {
        cmd.stdout(Stdio::piped())
            .stderr(Stdio::null())
            .stdin(Stdio::null());
        let mut child = cmd.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        LineChild {
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a line containing `needle` (lines already seen count), failing at the
    /// deadline with everything seen.
    pub fn wait_for(&mut self, needle: &str) -> String {
        if let Some(line) = self.seen.iter().find(|l| l.contains(needle)) {
            return line.clone();
        }
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!(
                        "no line containing {needle:?} in time; saw:\n{}",
                        self.seen.join("\n")
                    )
                }
                Err(RecvTimeoutError::Disconnected) => panic!(
                    "the child ended before printing {needle:?}; saw:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }
}

impl Drop for LineChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
