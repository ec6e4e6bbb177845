//! The real Claude Code files in tests/fixtures parse, and going through the store (read,
//! edit, write, read) loses nothing: every key, known or not, at every level survives.

use crate::store_common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use teamlead_protocol::store::{TaskList, edit_team, inbox, read_team};
use teamlead_protocol::{InboxEntry, Task, TeamFile};

use store_common::{TempHome, fixtures};

fn raw(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

const HOMES: [&str; 3] = ["claude-code-2.1.329", "claude-code-2.1.45", "seed-2.1.45"];

#[test]
fn every_fixture_file_parses() {
    let mut files = Vec::new();
    files_under(&fixtures(), &mut files);
    let mut checked = 0;
    for path in files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let parent = path
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        if name == "config.json" {
            let text = std::fs::read_to_string(&path).unwrap();
            let team = TeamFile::parse(&text).unwrap();
            assert!(!team.members.is_empty(), "{}", path.display());
            assert!(team.invalid_members.is_empty(), "{}", path.display());
            checked += 1;
        } else if parent == "inboxes" || name.starts_with("team-lead") {
            let read = inbox::read_path(&path).unwrap();
            assert!(read.bad.is_empty(), "{}: {:?}", path.display(), read.bad);
            assert!(!read.entries.is_empty(), "{}", path.display());
            checked += 1;
        } else if parent == "codebase-research" && name.ends_with(".json") {
            let task: Task = serde_json::from_value(raw(&path)).unwrap();
            assert_eq!(format!("{}.json", task.id), name);
            checked += 1;
        }
    }
    assert_eq!(checked, 13, "every team file, inbox and task was checked");
}

#[test]
fn team_files_survive_a_store_edit() {
    for fixture in HOMES {
        let t = TempHome::from_fixture(fixture);
        for team in t.home.list_teams().unwrap() {
            let path = t.home.config_path(&team).unwrap();
            let before = raw(&path);
            let read = read_team(&t.home, &team).unwrap();
            assert_eq!(read.name, before["name"].as_str().unwrap());
            edit_team(&t.home, &team, |f| {
                f.extra.insert("probe".into(), json!(1));
                Ok(())
            })
            .unwrap();
            let mut after = raw(&path);
            assert_eq!(after["probe"], json!(1));
            after.as_object_mut().unwrap().remove("probe");
            assert_eq!(after, before, "{fixture}/{team} changed by a rewrite");
        }
    }
}

#[test]
fn inbox_entries_survive_serde_and_a_store_append() {
    let mut inboxes = Vec::new();
    for fixture in HOMES {
        let mut files = Vec::new();
        files_under(&fixtures().join(fixture), &mut files);
        inboxes.extend(
            files
                .into_iter()
                .filter(|p| p.parent().unwrap().ends_with("inboxes")),
        );
    }
    inboxes.push(fixtures().join("claude-code-2.1.329/team-lead-with-pane-shutdown.json"));
    assert_eq!(inboxes.len(), 5);
    for path in inboxes {
        let before = raw(&path);
        for v in before.as_array().unwrap() {
            let entry: InboxEntry = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(
                &serde_json::to_value(&entry).unwrap(),
                v,
                "{}",
                path.display()
            );
        }
        // Through the store: append to a copy, and every old entry is still there unchanged.
        let t = TempHome::new();
        let copy = t.home.inbox_path("t", "x").unwrap();
        std::fs::create_dir_all(copy.parent().unwrap()).unwrap();
        std::fs::copy(&path, &copy).unwrap();
        inbox::append(&t.home, "t", "x", &InboxEntry::new("probe", "hello")).unwrap();
        let after = raw(&copy);
        let after = after.as_array().unwrap();
        assert_eq!(after.len(), before.as_array().unwrap().len() + 1);
        assert_eq!(
            &after[..after.len() - 1],
            before.as_array().unwrap().as_slice()
        );
    }
}

#[test]
fn task_files_survive_a_store_update() {
    let t = TempHome::from_fixture("seed-2.1.45");
    let list = TaskList::new(&t.home, "codebase-research").unwrap();
    for id in ["1", "2", "3", "4", "5"] {
        let path = list.task_path(id).unwrap();
        let before = raw(&path);
        list.update(id, |task| {
            task.extra.insert("probe".into(), json!(true));
            Ok(())
        })
        .unwrap();
        let mut after = raw(&path);
        after.as_object_mut().unwrap().remove("probe");
        assert_eq!(after, before, "task {id} changed by a rewrite");
    }
}

#[test]
fn invented_unknown_keys_survive_at_every_level() {
    let t = TempHome::from_fixture("seed-2.1.45");
    let team = "codebase-research";
    // Team file: top level and member level.
    let config = t.home.config_path(team).unwrap();
    let mut v = raw(&config);
    v["futureTopLevel"] = json!({"nested": [1, 2, {"deep": true}]});
    v["members"][0]["futureMemberKey"] = json!("kept");
    v["members"][1]["anotherOne"] = json!(42);
    std::fs::write(&config, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    teamlead_protocol::store::set_active(
        &t.home,
        team,
        v["members"][1]["name"].as_str().unwrap(),
        false,
    )
    .unwrap();
    let after = raw(&config);
    assert_eq!(after["futureTopLevel"], v["futureTopLevel"]);
    assert_eq!(after["members"][0]["futureMemberKey"], json!("kept"));
    assert_eq!(after["members"][1]["anotherOne"], json!(42));
    assert_eq!(after["members"][1]["isActive"], json!(false));

    // Inbox entries: a known-good entry with extra keys, and one that fails the schema.
    let lead_inbox = t.home.inbox_path(team, "team-lead").unwrap();
    let mut entries = raw(&lead_inbox);
    entries[0]["futureEntryKey"] = json!({"x": 1});
    entries
        .as_array_mut()
        .unwrap()
        .push(json!({"notAnEntry": true}));
    std::fs::write(&lead_inbox, serde_json::to_string(&entries).unwrap()).unwrap();
    inbox::append(&t.home, team, "team-lead", &InboxEntry::new("w", "hi")).unwrap();
    let after = raw(&lead_inbox);
    assert_eq!(after[0]["futureEntryKey"], json!({"x": 1}));
    assert!(
        after
            .as_array()
            .unwrap()
            .contains(&json!({"notAnEntry": true}))
    );
    let read = inbox::read(&t.home, team, "team-lead").unwrap();
    assert_eq!(read.entries[0].extra["futureEntryKey"], json!({"x": 1}));
    assert_eq!(read.bad, vec![json!({"notAnEntry": true})]);

    // Task level, including inside metadata.
    let list = TaskList::new(&t.home, team).unwrap();
    let task_path = list.task_path("4").unwrap();
    let mut task = raw(&task_path);
    task["futureTaskKey"] = json!([true]);
    task["metadata"] = json!({"custom": {"a": 1}});
    std::fs::write(&task_path, serde_json::to_string(&task).unwrap()).unwrap();
    list.claim("4", "someone", false).unwrap();
    let after = raw(&task_path);
    assert_eq!(after["futureTaskKey"], json!([true]));
    assert_eq!(after["metadata"], json!({"custom": {"a": 1}}));
    assert_eq!(after["owner"], json!("someone"));
    assert_eq!(after["status"], json!("in_progress"));
}
