//! The audit of one task list: task files (kind, links, UTF-8, JSON, schema, id against file
//! name, odd names), `.highwatermark` (garbage, binary, negative, overflowing, not a file),
//! the list lock `.lock` (must be a file; its lock directory is `.lock.lock/`), stray or stale
//! lock entries, and the dependency graph (dangling ids, self-blocks, cycles).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::look::{self, Look, read_json_opt, read_problem};
use super::team::{json_stem, lock_entries};
use super::{Problem, ProblemKind, TeamAudit};
use crate::Task;
use crate::inbox::clip;
use crate::store::home::Home;
use crate::store::safe_file::{MAX_SMALL_FILE_BYTES, read_regular};

pub(super) fn audit_tasks(home: &Home, dir: &Path, audit: &mut TeamAudit) {
    lock_entries(home, dir, Some(".lock"), &mut audit.problems);
    list_lock(home, &dir.join(".lock"), &mut audit.problems);
    highwatermark(&dir.join(".highwatermark"), &mut audit.problems);
    let Some(entries) = look::dir_entries(home, dir, &mut audit.problems) else {
        return;
    };
    let mut tasks = Vec::new();
    for (name, path) in entries {
        if name.as_ref().unwrap_or_else(|lossy| lossy).starts_with('.') {
            continue;
        }
        let Some(stem) = json_stem(name, &path, "task file", "id", &mut audit.problems) else {
            continue;
        };
        match look::look(home, &path) {
            Look::File => {}
            Look::Missing => continue,
            Look::Dir => {
                audit.problems.push(Problem::new(
                    ProblemKind::WrongKind,
                    &path,
                    "a directory where a task file should be",
                ));
                continue;
            }
            other => {
                audit.problems.extend(other.problem(&path, "the task file"));
                continue;
            }
        }
        match read_json_opt(&path) {
            Ok(None) => {}
            Ok(Some(value)) => match serde_json::from_value::<Task>(value) {
                Ok(task) if task.id == stem => tasks.push(task),
                Ok(task) => audit.problems.push(Problem::new(
                    ProblemKind::TaskIdMismatch,
                    &path,
                    format!(
                        "task id `{}` does not match the file name (skipped)",
                        clip(&task.id, 40)
                    ),
                )),
                Err(e) => audit.problems.push(Problem::new(
                    ProblemKind::Schema,
                    &path,
                    format!("not a valid task: {e} (skipped)"),
                )),
            },
            Err(mut p) => {
                p.detail.push_str(" (skipped)");
                audit.problems.push(p);
            }
        }
    }
    tasks.sort_by(|a, b| a.numeric_id().cmp(&b.numeric_id()).then(a.id.cmp(&b.id)));
    graph_problems(dir, &tasks, &mut audit.problems);
    audit.tasks = tasks;
}

fn list_lock(home: &Home, path: &Path, problems: &mut Vec<Problem>) {
    let what = match look::look(home, path) {
        Look::File | Look::Missing => return,
        Look::Dir => "a directory".to_string(),
        Look::Link { target, .. } => format!("a symbolic link to {}", target.display()),
        Look::Special(kind) => kind.describe().to_string(),
        Look::Error(e) => e,
    };
    problems.push(Problem::new(
        ProblemKind::BadTasksLock,
        path,
        format!(
            "the task list's lock must be an empty file (its lock directory is .lock.lock/), this is {what}"
        ),
    ));
}

/// Why `.highwatermark` is not a usable id, if it is not.
pub fn highwatermark_problem(bytes: &[u8]) -> Option<String> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return Some("binary content, not a decimal number".to_string());
    };
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    match text.parse::<u64>() {
        Ok(u64::MAX) => Some(format!(
            "{} is the largest possible id: no new task id can follow it",
            u64::MAX
        )),
        Ok(_) => None,
        Err(_) if text.starts_with('-') => Some(format!(
            "a negative number (`{}`), not an id",
            clip(text, 40)
        )),
        Err(_) if text.bytes().all(|b| b.is_ascii_digit()) => {
            Some(format!("`{}` is too large for a task id", clip(text, 40)))
        }
        Err(_) => Some(format!("not a decimal number: `{}`", clip(text, 40))),
    }
}

fn highwatermark(path: &Path, problems: &mut Vec<Problem>) {
    problems.extend(highwatermark_at(path));
}

/// The problem of the `.highwatermark` at `path`, if it has one.
pub(super) fn highwatermark_at(path: &Path) -> Option<Problem> {
    match read_regular(path, MAX_SMALL_FILE_BYTES) {
        Ok(None) => None,
        Ok(Some(bytes)) => highwatermark_problem(&bytes)
            .map(|why| Problem::new(ProblemKind::BadHighwatermark, path, why)),
        Err(e) => {
            let mut p = read_problem(path, e);
            p.kind = ProblemKind::BadHighwatermark;
            Some(p)
        }
    }
}

fn graph_problems(dir: &Path, tasks: &[Task], problems: &mut Vec<Problem>) {
    let index: HashMap<&str, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.as_str(), i))
        .collect();
    for task in tasks {
        let path = dir.join(format!("{}.json", task.id));
        for (field, ids) in [("blocked by", &task.blocked_by), ("blocks", &task.blocks)] {
            for id in ids {
                if id == &task.id {
                    problems.push(Problem::new(
                        ProblemKind::SelfBlock,
                        &path,
                        format!("task #{} {field} itself", clip(&task.id, 20)),
                    ));
                } else if !index.contains_key(id.as_str()) {
                    let verb = if field == "blocks" {
                        "blocks"
                    } else {
                        "is blocked by"
                    };
                    problems.push(Problem::new(
                        ProblemKind::DanglingDependency,
                        &path,
                        format!(
                            "task #{} {verb} #{}, which does not exist",
                            clip(&task.id, 20),
                            clip(id, 20)
                        ),
                    ));
                }
            }
        }
    }
    for cycle in cycles(tasks, &index) {
        let ids: Vec<String> = cycle
            .iter()
            .chain(cycle.first())
            .map(|i| format!("#{}", clip(&tasks[*i].id, 20)))
            .collect();
        let path = dir.join(format!("{}.json", tasks[cycle[0]].id));
        problems.push(Problem::new(
            ProblemKind::DependencyCycle,
            path,
            format!(
                "tasks block each other in a cycle ({}): none of them can ever start",
                ids.join(" → ")
            ),
        ));
    }
}

/// Cycles of `blockedBy` edges (self-edges excluded), each once, found iteratively.
fn cycles(tasks: &[Task], index: &HashMap<&str, usize>) -> Vec<Vec<usize>> {
    let edges: Vec<Vec<usize>> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            t.blocked_by
                .iter()
                .filter_map(|id| index.get(id.as_str()).copied())
                .filter(|j| *j != i)
                .collect()
        })
        .collect();
    // 0 = new, 1 = on the stack, 2 = done.
    let mut state = vec![0u8; tasks.len()];
    let mut seen: BTreeSet<Vec<usize>> = BTreeSet::new();
    let mut found = Vec::new();
    for start in 0..tasks.len() {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some((node, next)) = stack.last_mut() {
            let node = *node;
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match state[to] {
                    0 => {
                        state[to] = 1;
                        stack.push((to, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|(n, _)| *n == to).unwrap_or(0);
                        let cycle: Vec<usize> = stack[from..].iter().map(|(n, _)| *n).collect();
                        let mut key = cycle.clone();
                        key.sort_unstable();
                        if seen.insert(key) {
                            found.push(cycle);
                        }
                    }
                    _ => {}
                }
            } else {
                state[node] = 2;
                stack.pop();
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highwatermarks() {
        assert_eq!(highwatermark_problem(b"7\n"), None);
        assert_eq!(highwatermark_problem(b""), None);
        assert!(highwatermark_problem(b"18446744073709551615").is_some());
        assert!(highwatermark_problem(b"99999999999999999999999").is_some());
        assert!(highwatermark_problem(b"-3").is_some());
        assert!(highwatermark_problem(b"seven").is_some());
        assert!(highwatermark_problem(&[0xff, 0x00, 0x12]).is_some());
    }

    #[test]
    fn cycles_are_found_once() {
        let mut a = Task::new("1", "a", "");
        let mut b = Task::new("2", "b", "");
        let mut c = Task::new("3", "c", "");
        a.blocked_by = vec!["2".into()];
        b.blocked_by = vec!["3".into()];
        c.blocked_by = vec!["1".into()];
        let tasks = vec![a, b, c];
        let index = tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.as_str(), i))
            .collect();
        assert_eq!(cycles(&tasks, &index).len(), 1);
    }
}
