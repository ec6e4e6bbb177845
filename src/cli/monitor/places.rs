//! What a path under the home is, in the layout of PROTOCOL.md 1 (team file, inbox, task, …)
//! plus teamlead's own `.teamlead/` files (the lead's delivery logs), and the labels `monitor`
//! prints for each.

use std::path::{Component, Path};

/// What a path is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    TeamDir,
    Config,
    InboxesDir,
    Inbox(String),
    TasksDir,
    Task(String),
    HighWatermark,
    ListLockFile,
    /// `teams/<t>/.teamlead/delivered-<member>.jsonl`: what a teamlead lead delivered.
    DeliveryLog(String),
    /// Another file of `teams/<t>/.teamlead/` (the liveness lock, …).
    Teamlead(String),
    Other(String),
}

/// The team and place of `path` under `root` (`None` outside `teams/<t>` and `tasks/<t>`).
pub fn locate(root: &Path, path: &Path) -> Option<(String, Place)> {
    let rel = path.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    let team = parts.get(1)?.clone();
    let rest = &parts[2..];
    let place = match (parts[0].as_str(), rest) {
        ("teams", []) => Place::TeamDir,
        ("teams", [f]) if f == "config.json" => Place::Config,
        ("teams", [d]) if d == "inboxes" => Place::InboxesDir,
        ("teams", [d, f]) if d == "inboxes" && f.ends_with(".json") => {
            Place::Inbox(f.trim_end_matches(".json").to_string())
        }
        ("teams", [d, f]) if d == ".teamlead" => {
            match f
                .strip_prefix("delivered-")
                .and_then(|m| m.strip_suffix(".jsonl"))
            {
                Some(member) => Place::DeliveryLog(member.to_string()),
                None => Place::Teamlead(f.clone()),
            }
        }
        ("tasks", []) => Place::TasksDir,
        ("tasks", [f]) if f == ".highwatermark" => Place::HighWatermark,
        ("tasks", [f]) if f == ".lock" => Place::ListLockFile,
        ("tasks", [f]) if f.ends_with(".json") => {
            Place::Task(f.trim_end_matches(".json").to_string())
        }
        _ => Place::Other(rest.join("/")),
    };
    Some((team, place))
}

/// How a place is named in a line.
pub fn label(place: &Place) -> String {
    match place {
        Place::Config => "config".to_string(),
        Place::Inbox(n) => format!("inbox {n}"),
        Place::Task(id) => format!("task {id}"),
        Place::TeamDir => "team".to_string(),
        Place::TasksDir => "task list".to_string(),
        Place::InboxesDir => "inboxes".to_string(),
        Place::HighWatermark => "highwatermark".to_string(),
        Place::ListLockFile => "task list lock file".to_string(),
        Place::DeliveryLog(m) => format!("delivery log of {m}"),
        Place::Teamlead(f) => format!(".teamlead/{f}"),
        Place::Other(rel) => rel.clone(),
    }
}

/// The line for a place that disappeared.
pub fn removed_text(place: &Place) -> String {
    match place {
        Place::TeamDir => "team removed".to_string(),
        Place::TasksDir => "task list removed".to_string(),
        Place::Task(id) => format!("task {id}: deleted"),
        other => format!("{}: removed", label(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        let root = Path::new("/h");
        let at = |p: &str| locate(root, Path::new(p));
        assert_eq!(at("/h/teams/t"), Some(("t".into(), Place::TeamDir)));
        assert_eq!(
            at("/h/teams/t/inboxes/a.json"),
            Some(("t".into(), Place::Inbox("a".into())))
        );
        assert_eq!(
            at("/h/teams/t/.teamlead/delivered-team-lead.jsonl"),
            Some(("t".into(), Place::DeliveryLog("team-lead".into())))
        );
        assert_eq!(
            at("/h/teams/t/.teamlead/lead.lock"),
            Some(("t".into(), Place::Teamlead("lead.lock".into())))
        );
        assert_eq!(
            at("/h/tasks/t/3.json"),
            Some(("t".into(), Place::Task("3".into())))
        );
        assert_eq!(at("/h/teams"), None);
        assert_eq!(at("/elsewhere/teams/t"), None);
    }
}
