//! Bad input never panics, never loses bytes and never writes outside the home: truncated
//! JSON, wrong types, a directory where a file should be, symbolic links, hostile names.

use crate::store_common;

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;
use teamlead_protocol::store::{StoreError, edit_team, inbox, read_team};
use teamlead_protocol::{InboxEntry, Member, TeamFile};

use store_common::TempHome;

const TEAM: &str = "alpha";

fn team_home() -> TempHome {
    let t = TempHome::new();
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead_protocol::store::create_team(&t.home, &TeamFile::new(TEAM, None, &cwd)).unwrap();
    t
}

fn write(path: &Path, bytes: &[u8]) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

fn quarantined_files(t: &TempHome) -> Vec<std::path::PathBuf> {
    let dir = t.home.quarantine_dir().join(TEAM);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

#[test]
fn a_truncated_inbox_is_an_error_to_read_and_refused_by_append() {
    let t = team_home();
    let path = t.home.inbox_path(TEAM, "worker").unwrap();
    let torn = br#"[{"from":"a","text":"kept","timestamp":"2026-01-01T00:00:00.000Z"},{"fro"#;
    write(&path, torn);

    let err = inbox::read(&t.home, TEAM, "worker").unwrap_err();
    assert!(matches!(err, StoreError::Parse { .. }));
    let message = err.to_string();
    assert!(
        message.contains("worker.json") && !message.contains('\n'),
        "{message}"
    );

    // A writer never rewrites what it cannot parse: the append fails naming the file, and
    // the bytes stay as they were (nothing is quarantined either).
    let err = inbox::append(&t.home, TEAM, "worker", &InboxEntry::new("b", "new")).unwrap_err();
    assert!(matches!(err, StoreError::Parse { .. }), "{err}");
    let message = err.to_string();
    assert!(
        message.contains("worker.json")
            && message.contains("not a JSON array")
            && !message.contains('\n'),
        "{message}"
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        torn,
        "the inbox is untouched"
    );
    assert!(quarantined_files(&t).is_empty());
    assert!(t.outside_entries().is_empty());
}

#[test]
fn wrong_types_are_reported_and_quarantined_not_dropped() {
    let t = team_home();
    // The whole inbox of the wrong type.
    let path = t.home.inbox_path(TEAM, "worker").unwrap();
    write(&path, br#"{"not": "an array"}"#);
    let err = inbox::read(&t.home, TEAM, "worker").unwrap_err();
    assert!(err.to_string().contains("not a JSON array"), "{err}");

    // Entries of the wrong type inside a valid array.
    let lead = t.home.inbox_path(TEAM, "team-lead").unwrap();
    let entries = json!([
        {"from": "a", "text": "good", "timestamp": "2026-01-01T00:00:00.000Z"},
        {"from": 7, "text": "bad from", "timestamp": "2026-01-01T00:00:00.000Z"},
        "a bare string",
        {"from": "b", "text": "also good", "timestamp": "2026-01-01T00:00:01.000Z", "read": false}
    ]);
    write(
        &lead,
        serde_json::to_string_pretty(&entries).unwrap().as_bytes(),
    );
    let read = inbox::read(&t.home, TEAM, "team-lead").unwrap();
    assert_eq!(read.entries.len(), 2);
    assert_eq!(read.bad, vec![entries[1].clone(), entries[2].clone()]);

    let log_path = t.home.delivery_log_path(TEAM, "team-lead").unwrap();
    let mut log = teamlead_protocol::store::DeliveryLog::open(&log_path).unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, "team-lead", &mut log).unwrap();
    assert_eq!(drained.delivered.len(), 2);
    assert_eq!(drained.quarantined.len(), 1);
    let kept: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&drained.quarantined[0]).unwrap()).unwrap();
    assert_eq!(kept, json!([entries[1], entries[2]]));
    assert_eq!(
        inbox::read(&t.home, TEAM, "team-lead")
            .unwrap()
            .entries
            .len(),
        0
    );

    // A team file whose members are not an array is a parse error; the file stays as it is.
    let config = t.home.config_path(TEAM).unwrap();
    let bad_team = br#"{"name": "alpha", "members": "nobody"}"#;
    write(&config, bad_team);
    assert!(matches!(
        read_team(&t.home, TEAM),
        Err(StoreError::Parse { .. })
    ));
    assert!(edit_team(&t.home, TEAM, |_| Ok(())).is_err());
    assert_eq!(std::fs::read(&config).unwrap(), bad_team);

    // A member entry of the wrong shape is kept aside and written back.
    let mut team = TeamFile::new(TEAM, None, "/");
    team.members.push(Member::new("worker", TEAM, "/"));
    let mut v: serde_json::Value = serde_json::from_str(&team.to_text()).unwrap();
    v["members"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": 5, "agentId": null}));
    write(
        &config,
        serde_json::to_string_pretty(&v).unwrap().as_bytes(),
    );
    let read = read_team(&t.home, TEAM).unwrap();
    assert_eq!(read.members.len(), 2);
    assert_eq!(
        read.invalid_members,
        vec![json!({"name": 5, "agentId": null})]
    );
    teamlead_protocol::store::set_active(&t.home, TEAM, "worker", true).unwrap();
    let after: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&config).unwrap()).unwrap();
    assert_eq!(after["members"][2], json!({"name": 5, "agentId": null}));
    assert!(t.outside_entries().is_empty());
}

#[test]
fn a_truncated_team_file_is_a_clear_error() {
    let t = team_home();
    let config = t.home.config_path(TEAM).unwrap();
    let text = std::fs::read(&config).unwrap();
    let torn = &text[..text.len() / 2];
    std::fs::write(&config, torn).unwrap();
    let err = read_team(&t.home, TEAM).unwrap_err();
    assert!(matches!(err, StoreError::Parse { .. }));
    assert!(err.to_string().contains("config.json"), "{err}");
    assert!(teamlead_protocol::store::set_active(&t.home, TEAM, "team-lead", false).is_err());
    assert_eq!(
        std::fs::read(&config).unwrap(),
        torn,
        "a bad team file is never rewritten"
    );
}

#[test]
fn a_directory_where_a_file_should_be() {
    let t = team_home();
    let path = t.home.inbox_path(TEAM, "worker").unwrap();
    std::fs::create_dir_all(&path).unwrap();
    std::fs::write(path.join("precious"), b"x").unwrap();
    let entry = InboxEntry::new("a", "x");
    let err = inbox::append(&t.home, TEAM, "worker", &entry).unwrap_err();
    assert!(matches!(err, StoreError::NotAFile { .. }), "{err}");
    assert!(err.to_string().contains("worker.json"));
    assert!(matches!(
        inbox::read(&t.home, TEAM, "worker"),
        Err(StoreError::NotAFile { .. })
    ));
    assert!(path.join("precious").exists(), "nothing deleted");

    let config = t.home.config_path(TEAM).unwrap();
    std::fs::remove_file(&config).unwrap();
    std::fs::create_dir(&config).unwrap();
    assert!(matches!(
        read_team(&t.home, TEAM),
        Err(StoreError::NotAFile { .. })
    ));
    // A lock path occupied by a file is reported, not removed (an append to an inbox that is
    // there takes the lock; a new inbox is made without it).
    let other = t.home.inbox_path(TEAM, "other").unwrap();
    std::fs::write(&other, b"[]").unwrap();
    let lock_path = teamlead_protocol::store::lock::lock_dir_of(&other);
    std::fs::write(&lock_path, b"not a dir").unwrap();
    let err = inbox::append(&t.home, TEAM, "other", &entry).unwrap_err();
    assert!(matches!(err, StoreError::LockNotADirectory { .. }), "{err}");
    assert_eq!(std::fs::read(&lock_path).unwrap(), b"not a dir");
    assert!(t.outside_entries().is_empty());
}

#[test]
fn symlinks_are_refused_and_nothing_is_written_through_them() {
    let t = team_home();
    // A symlinked inbox pointing at a file outside the home.
    let target = t.outside.join("victim.json");
    std::fs::write(&target, b"[]").unwrap();
    let path = t.home.inbox_path(TEAM, "worker").unwrap();
    symlink(&target, &path).unwrap();
    let entry = InboxEntry::new("a", "x");
    let err = inbox::append(&t.home, TEAM, "worker", &entry).unwrap_err();
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    assert!(err.to_string().contains("symbolic link"));
    assert!(matches!(
        inbox::read(&t.home, TEAM, "worker"),
        Err(StoreError::Symlink { .. })
    ));
    assert_eq!(std::fs::read(&target).unwrap(), b"[]");
    std::fs::remove_file(&target).unwrap();

    // A symlinked directory inside the home (tasks/<team> → outside).
    let tasks = t.home.tasks_dir(TEAM).unwrap();
    std::fs::create_dir_all(tasks.parent().unwrap()).unwrap();
    symlink(&t.outside, &tasks).unwrap();
    let list = teamlead_protocol::store::TaskList::new(&t.home, TEAM).unwrap();
    let err = list.create("s", "d", vec![], None).unwrap_err();
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");

    // A symlinked inboxes directory of another team.
    let beta = t.home.team_dir("beta").unwrap();
    std::fs::create_dir_all(&beta).unwrap();
    symlink(&t.outside, beta.join("inboxes")).unwrap();
    let err = inbox::append(&t.home, "beta", "worker", &entry).unwrap_err();
    assert!(matches!(err, StoreError::Symlink { .. }), "{err}");
    assert!(t.outside_entries().is_empty(), "{:?}", t.outside_entries());
}

#[test]
fn hostile_names_are_refused_with_a_clear_error() {
    let t = team_home();
    let entry = InboxEntry::new("a", "x");
    for name in ["../../etc", "..", "a/b", "my team", "", ".hidden", "a\0b"] {
        let err = inbox::append(&t.home, TEAM, name, &entry).unwrap_err();
        assert!(matches!(err, StoreError::BadName(_)), "{name:?}: {err}");
        let err = inbox::append(&t.home, name, "worker", &entry).unwrap_err();
        assert!(matches!(err, StoreError::BadName(_)), "{name:?}: {err}");
        assert!(read_team(&t.home, name).is_err());
        assert!(teamlead_protocol::store::TaskList::new(&t.home, name).is_err());
        assert!(teamlead_protocol::store::LeadLiveness::acquire(&t.home, name).is_err());
    }
    let err = inbox::append(&t.home, TEAM, "../../etc", &entry).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`../../etc` is not a valid name: use lower-case letters, digits and `-` (at most 64, not starting with `-`)"
    );
    // teamlead creates only canonical names; capitals and spaces are refused at creation…
    for name in ["MyTeam", "my team", "Team_1"] {
        let err = teamlead_protocol::store::create_team(&t.home, &TeamFile::new(name, None, "/"))
            .unwrap_err();
        assert!(matches!(err, StoreError::BadName(_)), "{name}: {err}");
        let err = teamlead_protocol::store::add_member(&t.home, TEAM, Member::new(name, TEAM, "/"))
            .unwrap_err();
        assert!(matches!(err, StoreError::BadName(_)), "{name}: {err}");
    }
    // …but an inbox Claude Code made with capitals (it keeps case) can still be written.
    inbox::append(&t.home, TEAM, "Worker_2", &entry).unwrap();
    assert_eq!(
        inbox::read(&t.home, TEAM, "Worker_2")
            .unwrap()
            .entries
            .len(),
        1
    );
    assert!(t.outside_entries().is_empty());
    assert!(
        !t.dir.path().join("etc").exists() && !t.home.root.join("etc").exists(),
        "nothing was written next to the home"
    );
    // No quarantine was needed for any of this.
    assert!(quarantined_files(&t).is_empty());
}
