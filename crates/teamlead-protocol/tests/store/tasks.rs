//! The task list: ids from the highwatermark (never reused after delete), claim's five
//! failures, deletion that cleans references, and availability — on fresh lists and on the
//! real seed-2.1.45 task list.

use crate::store_common;

use serde_json::{Map, Value, json};
use teamlead_protocol::TaskStatus;
use teamlead_protocol::store::tasks::{available, is_available, unfinished_blockers};
use teamlead_protocol::store::{ClaimError, TaskList};

use store_common::TempHome;

fn ids(tasks: &[&teamlead_protocol::Task]) -> Vec<String> {
    tasks.iter().map(|t| t.id.clone()).collect()
}

#[test]
fn ids_come_from_the_highwatermark_and_are_never_reused() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    let a = list.create("a", "first", vec![], None).unwrap();
    let b = list.create("b", "second", vec![], None).unwrap();
    assert_eq!((a.id.as_str(), b.id.as_str()), ("1", "2"));
    assert!(
        list.dir().join(".lock").is_file(),
        "the list lock file exists"
    );
    list.delete("2").unwrap();
    let c = list.create("c", "third", vec![], None).unwrap();
    assert_eq!(c.id, "3", "a deleted id is not reused");
    // A highwatermark above every file wins; a file above the highwatermark wins.
    std::fs::write(list.dir().join(".highwatermark"), "10").unwrap();
    assert_eq!(list.create("d", "", vec![], None).unwrap().id, "11");
    std::fs::write(list.dir().join(".highwatermark"), "2").unwrap();
    assert_eq!(list.create("e", "", vec![], None).unwrap().id, "12");
    let hwm = std::fs::read_to_string(list.dir().join(".highwatermark")).unwrap();
    assert_eq!(hwm.trim(), "12");
    // No lock directory is left anywhere.
    let leftovers: Vec<_> = std::fs::read_dir(list.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".lock") && n != ".lock")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn create_links_blockers_and_delete_cleans_references() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    list.create("a", "", vec![], None).unwrap();
    list.create("b", "", vec![], None).unwrap();
    let c = list
        .create("c", "", vec!["1".into(), "2".into()], None)
        .unwrap();
    assert_eq!(c.blocked_by, vec!["1", "2"]);
    assert_eq!(list.get("1").unwrap().blocks, vec!["3"]);
    assert_eq!(list.get("2").unwrap().blocks, vec!["3"]);
    assert!(list.create("d", "", vec!["99".into()], None).is_err());

    list.delete("1").unwrap();
    assert_eq!(list.get("3").unwrap().blocked_by, vec!["2"]);
    list.delete("3").unwrap();
    assert!(list.get("2").unwrap().blocks.is_empty());
    assert!(list.get("3").is_err());
    assert_eq!(
        ids(&list.list().unwrap().tasks.iter().collect::<Vec<_>>()),
        vec!["2"]
    );
}

#[test]
fn claim_fails_in_the_five_documented_ways() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    list.create("blocker", "", vec![], None).unwrap(); // 1
    list.create("blocked", "", vec!["1".into()], None).unwrap(); // 2
    list.create("free", "", vec![], None).unwrap(); // 3
    list.create("other", "", vec![], None).unwrap(); // 4

    let err = list.claim("42", "ann", false).unwrap_err();
    assert!(matches!(err, ClaimError::TaskNotFound { .. }), "{err}");
    assert_eq!(err.code(), "task_not_found");

    let err = list.claim("2", "ann", false).unwrap_err();
    assert!(matches!(&err, ClaimError::Blocked { by } if by == &vec!["1".to_string()]));
    assert_eq!(err.to_string(), "task is blocked by unfinished task(s) #1");

    let claimed = list.claim("3", "ann", false).unwrap();
    assert_eq!(claimed.owner.as_deref(), Some("ann"));
    assert_eq!(claimed.status, TaskStatus::InProgress);
    assert_eq!(list.get("3").unwrap(), claimed);
    // Claiming one's own task again is fine.
    list.claim("3", "ann", false).unwrap();

    let err = list.claim("3", "bob", false).unwrap_err();
    assert!(matches!(&err, ClaimError::AlreadyClaimed { owner } if owner == "ann"));

    let err = list.claim("4", "ann", true).unwrap_err();
    assert!(
        matches!(&err, ClaimError::AgentBusy { task } if task == "3"),
        "{err}"
    );
    // Without the busy check the same claim succeeds.
    list.claim("4", "ann", false).unwrap();

    list.complete("1").unwrap();
    let err = list.claim("1", "bob", false).unwrap_err();
    assert!(matches!(err, ClaimError::AlreadyResolved));
    // The blocker is done: 2 is claimable now.
    list.claim("2", "bob", true).unwrap();
}

#[test]
fn unassign_owner_puts_unfinished_tasks_back() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    list.create("a", "", vec![], None).unwrap();
    list.create("b", "", vec![], None).unwrap();
    list.create("c", "", vec![], None).unwrap();
    list.claim("1", "ann", false).unwrap();
    list.claim("2", "ann", false).unwrap();
    list.claim("3", "bob", false).unwrap();
    list.complete("2").unwrap();
    let back = list.unassign_owner("ann").unwrap();
    assert_eq!(back.len(), 1);
    assert_eq!(back[0].id, "1");
    let one = list.get("1").unwrap();
    assert_eq!((one.owner.clone(), one.status), (None, TaskStatus::Pending));
    let raw: Value =
        serde_json::from_slice(&std::fs::read(list.task_path("1").unwrap()).unwrap()).unwrap();
    assert!(raw.get("owner").is_none(), "owner is absent, not null");
    assert_eq!(list.get("2").unwrap().owner.as_deref(), Some("ann"));
    assert_eq!(list.get("3").unwrap().owner.as_deref(), Some("bob"));
}

#[test]
fn seed_task_list_availability() {
    let t = TempHome::from_fixture("seed-2.1.45");
    let list = TaskList::new(&t.home, "codebase-research").unwrap();
    let listing = list.list().unwrap();
    assert!(listing.problems.is_empty(), "{:?}", listing.problems);
    let all = &listing.tasks;
    assert_eq!(
        all.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["1", "2", "3", "4", "5"]
    );
    let task3 = &all[2];
    assert_eq!(
        unfinished_blockers(task3, all),
        vec!["2"],
        "1 is completed, 2 is not"
    );
    assert!(!is_available(task3, all));
    assert!(is_available(&all[3], all));
    assert!(all[4].is_internal());
    assert_eq!(ids(&available(all)), vec!["4"]);
    // The next id follows the highwatermark (5).
    let next = list.create("new", "", vec![], None).unwrap();
    assert_eq!(next.id, "6");
    // Finishing 2 frees 3.
    list.complete("2").unwrap();
    let all = list.list().unwrap().tasks;
    assert_eq!(ids(&available(&all)), vec!["3", "4", "6"]);
}

#[test]
fn bad_task_files_are_reported_and_never_deleted() {
    let t = TempHome::from_fixture("seed-2.1.45");
    let list = TaskList::new(&t.home, "codebase-research").unwrap();
    let dir = list.dir().to_path_buf();
    std::fs::write(dir.join("7.json"), "{\"id\": \"7\", \"subj").unwrap();
    std::fs::write(
        dir.join("8.json"),
        json!({"id": "8", "status": 3}).to_string(),
    )
    .unwrap();
    std::fs::write(
        dir.join("9.json"),
        json!({"id": "10", "subject": "s", "status": "pending"}).to_string(),
    )
    .unwrap();
    std::fs::write(dir.join("6.json.tmp.0a0b0c0d"), "garbage").unwrap();
    std::fs::create_dir(dir.join("11.json")).unwrap();
    let listing = list.list().unwrap();
    assert_eq!(listing.tasks.len(), 5);
    let messages: Vec<String> = listing.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(messages.len(), 4, "{messages:#?}");
    assert!(messages[0].contains("11.json") && messages[0].contains("directory"));
    assert!(messages[1].contains("7.json"));
    assert!(messages[2].contains("8.json"));
    assert!(messages[3].contains("does not match"));
    assert!(messages.iter().all(|m| !m.contains('\n')));
    for name in ["7.json", "8.json", "9.json", "6.json.tmp.0a0b0c0d"] {
        assert!(dir.join(name).exists(), "{name} was deleted");
    }
    // A new id still skips past the broken files' numbers.
    assert_eq!(list.create("x", "", vec![], None).unwrap().id, "12");
}

#[test]
fn metadata_is_written_and_internal_tasks_are_never_available() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    let mut meta = Map::new();
    meta.insert("_internal".into(), Value::Bool(true));
    let internal = list.create("worker", "", vec![], Some(meta)).unwrap();
    assert!(internal.is_internal());
    let all = list.list().unwrap().tasks;
    assert!(available(&all).is_empty());
}

#[test]
fn task_ids_that_are_not_path_components_are_refused() {
    let t = TempHome::new();
    let list = TaskList::new(&t.home, "alpha").unwrap();
    assert!(list.get("../../etc/passwd").is_err());
    assert!(matches!(
        list.claim("../x", "a", false),
        Err(ClaimError::Store(_))
    ));
    assert!(TaskList::new(&t.home, "../../etc").is_err());
    assert!(t.outside_entries().is_empty());
}
