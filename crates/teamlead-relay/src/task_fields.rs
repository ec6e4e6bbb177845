//! A task as the map of its JSON fields: which fields differ between two versions of a task,
//! and a version made of one task with some fields taken from another. The mirror's merge
//! ([`crate::tasks_mirror`]) and the lead's apply of a host's change ([`crate::tasks_lead`])
//! work field by field, so a key no build knows (Claude Code's, a newer teamlead's) travels
//! and merges like any other.

use std::collections::BTreeSet;

use serde_json::{Map, Value};
use teamlead_protocol::Task;

/// The fields no merge removes: a task without them is not a task.
const REQUIRED: &[&str] = &["id", "subject", "status"];

/// A task's JSON fields (none for `None`).
pub fn fields(task: Option<&Task>) -> Map<String, Value> {
    match task.map(serde_json::to_value) {
        Some(Ok(Value::Object(map))) => map,
        _ => Map::new(),
    }
}

/// The names of the fields whose values differ between `a` and `b` (a field present in one
/// only differs).
pub fn changed(a: Option<&Task>, b: Option<&Task>) -> BTreeSet<String> {
    let (a, b) = (fields(a), fields(b));
    a.keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

/// `base` with the fields named in `keys` as `from` has them (a field `from` lacks is removed,
/// unless the task needs it). The id stays `base`'s.
pub fn with_fields(base: &Task, from: Option<&Task>, keys: &BTreeSet<String>) -> Task {
    if keys.is_empty() {
        return base.clone();
    }
    let mut out = fields(Some(base));
    let from = fields(from);
    for key in keys {
        if key == "id" {
            continue;
        }
        match from.get(key) {
            Some(v) => {
                out.insert(key.clone(), v.clone());
            }
            None if REQUIRED.contains(&key.as_str()) => {}
            None => {
                out.remove(key);
            }
        }
    }
    serde_json::from_value(Value::Object(out)).unwrap_or_else(|_| base.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use teamlead_protocol::TaskStatus;

    #[test]
    fn changed_fields_and_a_merge_that_keeps_the_named_ones() {
        let lead = Task::new("1", "build", "new words");
        let mut host = Task::new("1", "build", "old words");
        host.owner = Some("alice".into());
        host.status = TaskStatus::InProgress;
        host.extra.insert("futureKey".into(), Value::from(7));
        let base = Task::new("1", "build", "old words");
        let mine = changed(Some(&base), Some(&host));
        assert_eq!(
            mine.iter().map(String::as_str).collect::<Vec<_>>(),
            ["futureKey", "owner", "status"]
        );
        let merged = with_fields(&lead, Some(&host), &mine);
        assert_eq!(merged.description, "new words", "the lead's field");
        assert_eq!(merged.owner.as_deref(), Some("alice"), "the host's");
        assert_eq!(merged.status, TaskStatus::InProgress);
        assert_eq!(merged.extra.get("futureKey"), Some(&Value::from(7)));
        // A field the other lacks is removed, one the task needs is kept.
        let back = with_fields(&merged, Some(&base), &mine);
        assert_eq!(back.owner, None);
        assert!(!back.extra.contains_key("futureKey"));
        let none = with_fields(&merged, None, &["subject".to_string()].into());
        assert_eq!(none.subject, "build");
    }
}
