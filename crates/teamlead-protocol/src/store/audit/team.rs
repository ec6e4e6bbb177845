//! The audit of one team directory: the team file and its members (names, duplicates, leads,
//! entries without ids), every inbox (kind, links, UTF-8, JSON, schema, odd names), lock
//! directories (stale) and `*.lock` entries that are not directories, and teamlead's liveness
//! file. The task list is audited by `tasks`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::look::{self, Look, json_kind, read_json_opt};
use super::{Problem, ProblemKind, TeamAudit};
use crate::inbox::{clip, parse_entries};
use crate::names::check_path_component;
use crate::store::error::Result;
use crate::store::home::Home;
use crate::store::lock::STALE_AFTER;
use crate::{InboxEntry, LEAD_NAME, TeamFile, display::is_unsafe};

/// One inbox file: the member name from the file name, and its entries when it could be read.
#[derive(Debug, Clone, Default)]
pub struct InboxAudit {
    pub name: String,
    pub path: PathBuf,
    /// Entries that follow the schema; `None` when the file could not be read as an array.
    pub entries: Option<Vec<InboxEntry>>,
}

/// Audits `team`. Fails only when `team` is not a safe name (no path is built from it then).
pub fn audit_team(home: &Home, team: &str) -> Result<TeamAudit> {
    let team_dir = home.team_dir(team)?;
    let tasks_dir = home.tasks_dir(team)?;
    let mut audit = TeamAudit::default();
    let team_look = look::look(home, &team_dir);
    let tasks_look = look::look(home, &tasks_dir);
    audit.exists = team_look != Look::Missing || tasks_look != Look::Missing;
    match team_look {
        Look::Dir => audit_team_dir(home, team, &team_dir, &mut audit)?,
        Look::Missing => {}
        Look::File => audit.problems.push(Problem::new(
            ProblemKind::WrongKind,
            &team_dir,
            "a regular file where the team directory should be",
        )),
        other => audit
            .problems
            .extend(other.problem(&team_dir, "the team directory")),
    }
    match tasks_look {
        Look::Dir => super::tasks::audit_tasks(home, &tasks_dir, &mut audit),
        Look::Missing => {}
        Look::File => audit.problems.push(Problem::new(
            ProblemKind::WrongKind,
            &tasks_dir,
            "a regular file where the task list directory should be",
        )),
        other => audit
            .problems
            .extend(other.problem(&tasks_dir, "the task list directory")),
    }
    if let Ok(config) = home.config_path(team) {
        super::controls::control_problems(&config, &tasks_dir, &mut audit);
    }
    audit.problems.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(audit)
}

fn audit_team_dir(home: &Home, team: &str, dir: &Path, audit: &mut TeamAudit) -> Result<()> {
    let config = home.config_path(team)?;
    match read_json_opt(&config) {
        Ok(None) => audit.problems.push(Problem::new(
            ProblemKind::MissingTeamFile,
            &config,
            "no team file (config.json)",
        )),
        Ok(Some(value)) => match parse_team(value) {
            Ok(file) => {
                member_problems(team, &config, &file, &mut audit.problems);
                audit.team_file = Some(file);
            }
            Err(detail) => audit
                .problems
                .push(Problem::new(ProblemKind::Schema, &config, detail)),
        },
        Err(p) => audit.problems.push(p),
    }
    lock_entries(home, dir, None, &mut audit.problems);
    let inboxes = home.inboxes_dir(team)?;
    match look::look(home, &inboxes) {
        Look::Dir => {
            lock_entries(home, &inboxes, None, &mut audit.problems);
            audit_inboxes(home, &inboxes, audit);
        }
        Look::Missing => {}
        Look::File => audit.problems.push(Problem::new(
            ProblemKind::WrongKind,
            &inboxes,
            "a regular file where the inboxes directory should be",
        )),
        other => audit
            .problems
            .extend(other.problem(&inboxes, "the inboxes directory")),
    }
    liveness(home, team, audit)
}

fn parse_team(value: Value) -> std::result::Result<TeamFile, String> {
    if !value.is_object() {
        return Err(format!(
            "not a team file (a JSON object), found {}",
            json_kind(&value)
        ));
    }
    let text = value.to_string();
    TeamFile::parse(&text).map_err(|e| format!("not a valid team file: {e}"))
}

/// The stem of a `*.json` entry an audit reads (`None`: a temp file or another kind of file,
/// passed by); a name that is not UTF-8 (its lossy form) or not safe is a problem
/// (`"{what} name is not a safe {safe}"`), and the entry is still audited.
pub(super) fn json_stem(
    name: std::result::Result<String, String>,
    path: &Path,
    what: &str,
    safe: &str,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    let (name, utf8) = match name {
        Ok(n) => (n, true),
        Err(lossy) => (lossy, false),
    };
    if look::is_temp(&name) {
        return None;
    }
    let stem = name.strip_suffix(".json")?.to_string();
    if !utf8 {
        problems.push(Problem::new(
            ProblemKind::UnsafeName,
            path,
            format!("{what} name is not UTF-8"),
        ));
    } else if let Some(why) = unsafe_name(&stem) {
        problems.push(Problem::new(
            ProblemKind::UnsafeName,
            path,
            format!("{what} name is not a safe {safe} ({why})"),
        ));
    }
    Some(stem)
}

/// Why a member or inbox name is not safe, if it is not.
pub(crate) fn unsafe_name(name: &str) -> Option<String> {
    if name.chars().any(is_unsafe) {
        return Some("contains control, escape or invisible characters".to_string());
    }
    check_path_component(name).err().map(|e| e.to_string())
}

fn member_problems(team: &str, config: &Path, file: &TeamFile, problems: &mut Vec<Problem>) {
    for entry in &file.invalid_members {
        let text = serde_json::to_string(entry).unwrap_or_default();
        problems.push(Problem::new(
            ProblemKind::MemberWithoutId,
            config,
            format!(
                "member entry without a string agentId and name (ignored): {}",
                clip(&text, 80)
            ),
        ));
    }
    if file.name != team {
        problems.push(Problem::new(
            ProblemKind::TeamNameMismatch,
            config,
            format!("the team file names the team `{}`", clip(&file.name, 80)),
        ));
    }
    let mut by_folded: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for m in &file.members {
        if let Some(why) = unsafe_name(&m.name) {
            problems.push(Problem::new(
                ProblemKind::UnsafeName,
                config,
                format!(
                    "member name `{}` is not safe ({why}); no inbox path is built from it",
                    clip(&m.name, 80)
                ),
            ));
        }
        by_folded
            .entry(m.name.to_lowercase())
            .or_default()
            .push(&m.name);
    }
    for names in by_folded.values().filter(|n| n.len() > 1) {
        let shown: Vec<String> = names.iter().map(|n| format!("`{}`", clip(n, 40))).collect();
        let detail = if names.iter().all(|n| *n == names[0]) {
            format!("member {} appears {} times", shown[0], names.len())
        } else {
            format!(
                "members {} differ only in case (one inbox on a case-insensitive file system)",
                shown.join(", ")
            )
        };
        problems.push(Problem::new(ProblemKind::DuplicateMember, config, detail));
    }
    let leads: Vec<String> = file
        .members
        .iter()
        .filter(|m| m.name == LEAD_NAME || m.agent_type == "team-lead")
        .map(|m| format!("`{}`", clip(&m.name, 40)))
        .collect();
    if leads.len() > 1 {
        problems.push(Problem::new(
            ProblemKind::TwoLeads,
            config,
            format!("{} members are leads: {}", leads.len(), leads.join(", ")),
        ));
    }
}

fn audit_inboxes(home: &Home, dir: &Path, audit: &mut TeamAudit) {
    let Some(entries) = look::dir_entries(home, dir, &mut audit.problems) else {
        return;
    };
    for (name, path) in entries {
        let Some(stem) = json_stem(
            name,
            &path,
            "inbox file",
            "member name",
            &mut audit.problems,
        ) else {
            continue;
        };
        let mut inbox = InboxAudit {
            name: stem.to_string(),
            path: path.clone(),
            entries: None,
        };
        match look::look(home, &path) {
            Look::File => match read_json_opt(&path) {
                Ok(None) => continue,
                Ok(Some(Value::Array(items))) => {
                    let (good, bad) = parse_entries(items);
                    if !bad.is_empty() {
                        audit.problems.push(Problem::new(
                            ProblemKind::Schema,
                            &path,
                            format!(
                                "{} entr{} without string from/text/timestamp",
                                bad.len(),
                                if bad.len() == 1 { "y" } else { "ies" }
                            ),
                        ));
                    }
                    inbox.entries = Some(good);
                }
                Ok(Some(other)) => audit.problems.push(Problem::new(
                    ProblemKind::Schema,
                    &path,
                    format!("not a JSON array (found {})", json_kind(&other)),
                )),
                Err(p) => audit.problems.push(p),
            },
            Look::Missing => continue,
            Look::Dir => audit.problems.push(Problem::new(
                ProblemKind::WrongKind,
                &path,
                "a directory where an inbox file should be",
            )),
            other => audit.problems.extend(other.problem(&path, "the inbox")),
        }
        audit.inboxes.push(inbox);
    }
}

/// `*.lock` entries of `dir`: stale lock directories, and lock names that are not directories
/// (`except` is a name that is meant to be a file, the task list's `.lock`).
pub(crate) fn lock_entries(
    home: &Home,
    dir: &Path,
    except: Option<&str>,
    problems: &mut Vec<Problem>,
) {
    let mut quiet = Vec::new();
    let Some(entries) = look::dir_entries(home, dir, &mut quiet) else {
        return;
    };
    for (name, path) in entries {
        let name = name.unwrap_or_else(|lossy| lossy);
        if !name.ends_with(".lock") || Some(name.as_str()) == except {
            continue;
        }
        match look::look(home, &path) {
            Look::Dir => {
                let age = std::fs::symlink_metadata(&path)
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|m| SystemTime::now().duration_since(m).ok());
                if let Some(age) = age.filter(|a| *a > STALE_AFTER) {
                    problems.push(Problem::new(
                        ProblemKind::StaleLock,
                        &path,
                        format!(
                            "stale lock directory, untouched for {} s (a writer died holding it)",
                            age.as_secs()
                        ),
                    ));
                }
            }
            Look::Missing => {}
            other => {
                let kind = match &other {
                    Look::File => "a regular file".to_string(),
                    Look::Link { target, .. } => {
                        format!("a symbolic link to {}", target.display())
                    }
                    Look::Special(k) => k.describe().to_string(),
                    _ => "not a directory".to_string(),
                };
                problems.push(Problem::new(
                    ProblemKind::StrayLockFile,
                    &path,
                    format!(
                        "a lock here must be a directory, this is {kind}: writers of `{}` cannot lock it",
                        name.trim_end_matches(".lock")
                    ),
                ));
            }
        }
    }
}

/// teamlead's liveness file must be a regular file; only then is its flock asked about.
fn liveness(home: &Home, team: &str, audit: &mut TeamAudit) -> Result<()> {
    let dir = home.teamlead_dir(team)?;
    match look::look(home, &dir) {
        Look::Dir => {}
        Look::Missing => return Ok(()),
        other => {
            audit
                .problems
                .extend(other.problem(&dir, "teamlead's directory (.teamlead)"));
            return Ok(());
        }
    }
    let path = home.lead_lock_path(team)?;
    match look::look(home, &path) {
        Look::File => audit.lead_pid = crate::store::liveness::lead_pid(home, team),
        Look::Missing => {}
        Look::Dir => audit.problems.push(Problem::new(
            ProblemKind::WrongKind,
            &path,
            "a directory where the lead's liveness file should be",
        )),
        other => audit
            .problems
            .extend(other.problem(&path, "the lead's liveness file")),
    }
    Ok(())
}
