//! The hostile corpus: one category per way a home can be broken or hostile, each a mutation
//! of the real `seed-2.1.45` team (so cases look like real teams), with the words `inspect`
//! must show for it and the commands that meet the problem (and must mention it).

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::TEAM;

mod categories;
pub use categories::categories;

/// The read-side commands of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmd {
    Inspect,
    InspectTeam,
    InspectJson,
    TaskList,
    Send,
    TaskAdd,
    CleanDryRun,
}

pub const CMDS: [Cmd; 7] = [
    Cmd::Inspect,
    Cmd::InspectTeam,
    Cmd::InspectJson,
    Cmd::TaskList,
    Cmd::Send,
    Cmd::TaskAdd,
    Cmd::CleanDryRun,
];

pub(crate) const INSPECTS: &[Cmd] = &[Cmd::Inspect, Cmd::InspectTeam, Cmd::InspectJson];
const INSPECT_HOME: &[Cmd] = &[Cmd::Inspect];
pub(crate) const TEAM_INSPECTS: &[Cmd] = &[Cmd::InspectTeam, Cmd::InspectJson];
pub(crate) const INSPECTS_SEND: &[Cmd] =
    &[Cmd::Inspect, Cmd::InspectTeam, Cmd::InspectJson, Cmd::Send];
pub(crate) const INSPECTS_TASKS: &[Cmd] = &[
    Cmd::Inspect,
    Cmd::InspectTeam,
    Cmd::InspectJson,
    Cmd::TaskList,
];
pub(crate) const INSPECTS_TASKS_ADD: &[Cmd] = &[
    Cmd::Inspect,
    Cmd::InspectTeam,
    Cmd::InspectJson,
    Cmd::TaskList,
    Cmd::TaskAdd,
];

impl Cmd {
    pub fn args(self) -> Vec<&'static str> {
        match self {
            Cmd::Inspect => vec!["inspect"],
            Cmd::InspectTeam => vec!["inspect", TEAM],
            Cmd::InspectJson => vec!["inspect", TEAM, "--json"],
            Cmd::TaskList => vec!["task", "list", "--team", TEAM],
            Cmd::Send => vec![
                "send",
                "--team",
                TEAM,
                "--to",
                "team-lead",
                "--from",
                "frontend-engineer",
                "hostile suite says hi",
            ],
            Cmd::TaskAdd => vec!["task", "add", "--team", TEAM, "hostile suite task"],
            Cmd::CleanDryRun => vec!["clean", "--dry-run"],
        }
    }

    /// Paths (relative to the home) a successful run may change: what it says it wrote.
    pub fn may_change(self) -> Vec<PathBuf> {
        match self {
            Cmd::Send => vec![PathBuf::from(format!(
                "teams/{TEAM}/inboxes/team-lead.json"
            ))],
            Cmd::TaskAdd => vec![PathBuf::from(format!("tasks/{TEAM}"))],
            _ => Vec::new(),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Cmd::Inspect => "inspect",
            Cmd::InspectTeam => "inspect TEAM",
            Cmd::InspectJson => "inspect TEAM --json",
            Cmd::TaskList => "task list",
            Cmd::Send => "send",
            Cmd::TaskAdd => "task add",
            Cmd::CleanDryRun => "clean --dry-run",
        }
    }
}

/// One way to break a home.
pub struct Category {
    pub name: &'static str,
    pub build: fn(&Path),
    /// Plain words (the same in text and JSON) the output of a command that meets the
    /// problem must contain.
    pub needle: Option<&'static str>,
    /// The commands that meet the problem.
    pub met: &'static [Cmd],
    /// Can it be applied to a live team (under `monitor`)?
    pub live: bool,
}

pub fn team_dir(home: &Path) -> PathBuf {
    home.join("teams").join(TEAM)
}

pub fn tasks_dir(home: &Path) -> PathBuf {
    home.join("tasks").join(TEAM)
}

pub(crate) fn lead_inbox(home: &Path) -> PathBuf {
    team_dir(home).join("inboxes/team-lead.json")
}

pub(crate) fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    f(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

pub(crate) fn add_member(home: &Path, name: &str, agent_type: &str) {
    edit_json(&team_dir(home).join("config.json"), |v| {
        v["members"].as_array_mut().unwrap().push(json!({
            "agentId": format!("{name}@{TEAM}"), "name": name, "agentType": agent_type,
            "joinedAt": 1, "tmuxPaneId": "in-process", "cwd": "/w", "subscriptions": []
        }));
    });
}

pub(crate) fn add_message(home: &Path, entry: Value) {
    edit_json(&lead_inbox(home), |v| v.as_array_mut().unwrap().push(entry));
}

pub(crate) fn message(text: &str) -> Value {
    json!({"from": "frontend-engineer", "text": text,
           "timestamp": "2026-02-18T18:40:00.000Z", "read": false, "summary": "hostile"})
}

pub(crate) fn task(id: &str, subject: &str, blocked_by: &[&str]) -> Value {
    json!({"id": id, "subject": subject, "description": "", "status": "pending",
           "blocks": [], "blockedBy": blocked_by})
}

pub(crate) fn write_task(home: &Path, id: &str, value: Value) {
    std::fs::write(
        tasks_dir(home).join(format!("{id}.json")),
        serde_json::to_string_pretty(&value).unwrap(),
    )
    .unwrap();
}

pub(crate) fn replace_with_dir(path: &Path) {
    let _ = std::fs::remove_file(path);
    std::fs::create_dir_all(path).unwrap();
}

pub(crate) fn replace_with_link(path: &Path, target: &str) {
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir()) {
        std::fs::remove_dir_all(path).unwrap();
    } else {
        let _ = std::fs::remove_file(path);
    }
    std::os::unix::fs::symlink(target, path).unwrap();
}

pub(crate) fn hostile_team_dir(home: &Path, name: &[u8]) {
    let dir = home.join("teams").join(std::ffi::OsStr::from_bytes(name));
    std::fs::create_dir_all(dir.join("inboxes")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        "{\"name\": \"x\", \"members\": []}",
    )
    .unwrap();
}
