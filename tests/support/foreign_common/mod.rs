//! Helpers for the tests of teams led by someone else: a hash of a whole tree (names, kinds,
//! modes, contents, mtimes) to prove a command changed nothing, stand-in processes whose
//! command line carries what a Claude Code lead's or teammate's would (they block in the
//! shell's `read` builtin, so they have no children and die when killed), and a Claude Code
//! style team file.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::SystemTime;

/// One path of a tree: kind, mode, contents (or link target), mtime.
pub type TreeEntry = (String, u32, Vec<u8>, Option<SystemTime>);

/// Every path under `dir` (itself included) with its kind, mode, contents and mtime.
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, TreeEntry> {
    fn walk(path: &Path, out: &mut BTreeMap<PathBuf, TreeEntry>) {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let mode = meta.permissions().mode();
        let mtime = meta.modified().ok();
        let t = meta.file_type();
        if t.is_symlink() {
            let target = std::fs::read_link(path).unwrap_or_default();
            out.insert(
                path.to_path_buf(),
                (
                    "symlink".into(),
                    mode,
                    target.into_os_string().into_encoded_bytes(),
                    mtime,
                ),
            );
        } else if t.is_dir() {
            out.insert(path.to_path_buf(), ("dir".into(), mode, Vec::new(), mtime));
            for entry in std::fs::read_dir(path).unwrap().flatten() {
                walk(&entry.path(), out);
            }
        } else if t.is_file() {
            let bytes = std::fs::read(path).unwrap();
            out.insert(path.to_path_buf(), ("file".into(), mode, bytes, mtime));
        } else {
            out.insert(
                path.to_path_buf(),
                ("other".into(), mode, Vec::new(), mtime),
            );
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, &mut out);
    out
}

/// A process that does nothing until killed, with `args` after `sh -c 'read -r _' sh` on its
/// command line, in directory `cwd`. Killed (and reaped) on drop.
pub struct Holder {
    child: Child,
}

impl Holder {
    pub fn start(cwd: &Path, args: &[&str]) -> Holder {
        let child = Command::new("sh")
            .args(["-c", "read -r _", "sh"])
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a holder process");
        Holder { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills and reaps it.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Claude Code style team file: the lead (pane `lead_pane`, in `cwd`), a tmux teammate
/// `worker` in pane `worker_pane`, and `leadProcess` when given.
pub fn claude_team(
    team: &str,
    session: &str,
    cwd: &Path,
    lead_pane: &str,
    worker_pane: &str,
    lead_process: Option<serde_json::Value>,
) -> serde_json::Value {
    let cwd = cwd.to_string_lossy();
    let mut file = serde_json::json!({
        "name": team,
        "createdAt": 1795236866135u64,
        "leadAgentId": format!("team-lead@{team}"),
        "leadSessionId": session,
        "members": [
            {"agentId": format!("team-lead@{team}"), "name": "team-lead", "agentType": "team-lead",
             "joinedAt": 1795236866135u64, "tmuxPaneId": lead_pane, "cwd": cwd, "subscriptions": []},
            {"agentId": format!("worker@{team}"), "name": "worker", "color": "blue",
             "joinedAt": 1795236866135u64, "tmuxPaneId": worker_pane, "subscriptions": [],
             "agentType": "general-purpose", "prompt": "say hi", "planModeRequired": false,
             "cwd": cwd, "backendType": "tmux", "isActive": true}
        ]
    });
    if let Some(lp) = lead_process {
        file["leadProcess"] = lp;
    }
    file
}

/// Writes a team directory: `config.json`, the lead's inbox (from the 2.1.329 fixture), a task,
/// and a lock directory left stale (mtime a minute ago).
pub fn write_team_dir(home: &Path, team: &str, config: &serde_json::Value) {
    let dir = home.join("teams").join(team);
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string_pretty(config).unwrap(),
    )
    .unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code-2.1.329/teams/session-abc12345/inboxes/team-lead.json");
    std::fs::copy(fixture, dir.join("inboxes/team-lead.json")).unwrap();
    let tasks = home.join("tasks").join(team);
    std::fs::create_dir_all(&tasks).unwrap();
    std::fs::write(
        tasks.join("1.json"),
        r#"{"id":"1","subject":"Say hi","description":"","status":"in_progress","owner":"worker","blocks":[],"blockedBy":[]}"#,
    )
    .unwrap();
    let stale = dir.join("inboxes/worker.json.lock");
    std::fs::create_dir(&stale).unwrap();
    let minute_ago = SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(&stale)
        .unwrap()
        .set_times(std::fs::FileTimes::new().set_modified(minute_ago))
        .unwrap();
}

/// Epoch milliseconds now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}
