//! Hostile homes, generated in temp directories: FIFOs where files should be, symbolic links
//! leading out of the home, JSON nested 50,000 levels deep, invalid UTF-8 and lone surrogates,
//! every kind of bad `.highwatermark`, stray `.lock` files and tasks locks of the wrong kind.
//! For each, every store entry point that reaches the bad file returns promptly (each runs on
//! its own thread with a deadline), with the right typed error naming the file in one line,
//! and leaves every byte, mode and link of the tree as it was. (Bad high-water marks, ids and
//! modes are in `store_ids_modes.rs`.)

use crate::store_common;

use std::os::unix::fs::symlink;
use std::path::Path;

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{
    Home, LeadLiveness, StoreError, TaskList, inbox, liveness, read_team, scan,
};

use store_common::TempHome;
use store_common::hostile::{
    TEAM, Want, bad_json, expect_refused, id_ops, inbox_ops, inbox_path, mkfifo, op, put,
    remove_any, run_all, seeded, task_ops, tasks_dir, team_ops, within,
};

// ---------------------------------------------------------------------------------------------
// FIFOs and other wrong kinds of file

#[test]
fn a_fifo_inbox_never_blocks() {
    let t = seeded();
    let path = inbox_path(&t);
    remove_any(&path);
    mkfifo(&path);
    run_all(&t, "FIFO inbox", Want::NotAFile, "worker.json", inbox_ops());
    let p = path.clone();
    let err = within("inbox::read_path", move || inbox::read_path(&p)).unwrap_err();
    assert!(Want::NotAFile.matches(&err), "{err}");
    assert!(err.to_string().contains("FIFO"), "{err}");
    // The read-only scan lists inbox files only.
    let home = t.home.clone();
    let names = within("scan::inbox_names", move || scan::inbox_names(&home, TEAM)).unwrap();
    assert_eq!(names, vec!["team-lead"]);
}

#[test]
fn a_directory_inbox_is_refused() {
    let t = seeded();
    let path = inbox_path(&t);
    remove_any(&path);
    std::fs::create_dir(&path).unwrap();
    std::fs::write(path.join("precious"), b"x").unwrap();
    run_all(
        &t,
        "directory inbox",
        Want::NotAFile,
        "worker.json",
        inbox_ops(),
    );
}

#[test]
fn a_fifo_team_file_never_blocks() {
    let t = seeded();
    let path = t.home.config_path(TEAM).unwrap();
    remove_any(&path);
    mkfifo(&path);
    run_all(
        &t,
        "FIFO config.json",
        Want::NotAFile,
        "config.json",
        team_ops(),
    );
    let err = within("create_team", {
        let h = t.home.clone();
        move || {
            teamlead_protocol::store::create_team(
                &h,
                &teamlead_protocol::TeamFile::new(TEAM, None, "/"),
            )
        }
    })
    .unwrap_err();
    assert!(Want::NotAFile.matches(&err), "{err}");
}

#[test]
fn a_fifo_task_file_is_reported_not_read() {
    let t = seeded();
    let path = tasks_dir(&t).join("1.json");
    remove_any(&path);
    mkfifo(&path);
    run_all(&t, "FIFO task", Want::NotAFile, "1.json", task_ops());
    let home = t.home.clone();
    let listing = within("TaskList::list", move || TaskList::new(&home, TEAM)?.list()).unwrap();
    assert_eq!(listing.tasks.len(), 1, "task 2 is still listed");
    assert_eq!(listing.problems.len(), 1);
    assert!(listing.problems[0].path.ends_with("1.json"));
    assert!(listing.problems[0].message.contains("FIFO"));
}

#[test]
fn a_fifo_or_directory_liveness_file_never_blocks() {
    for kind in ["fifo", "dir"] {
        let t = seeded();
        let path = t.home.lead_lock_path(TEAM).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        if kind == "fifo" {
            mkfifo(&path);
        } else {
            std::fs::create_dir(&path).unwrap();
        }
        expect_refused(
            &t,
            &format!("{kind} lead.lock: acquire"),
            Want::NotAFile,
            "lead.lock",
            |h| LeadLiveness::acquire(&h, TEAM).map(drop),
        );
        expect_refused(
            &t,
            &format!("{kind} lead.lock: check_lead"),
            Want::NotAFile,
            "lead.lock",
            |h| liveness::check_lead(&h, TEAM).map(drop),
        );
        expect_refused(
            &t,
            &format!("{kind} lead.lock: recorded_pid"),
            Want::NotAFile,
            "lead.lock",
            |h| liveness::recorded_pid(&h, TEAM).map(drop),
        );
        let h = t.home.clone();
        assert!(!within("is_lead_alive", move || liveness::is_lead_alive(
            &h, TEAM
        )));
    }
}

// ---------------------------------------------------------------------------------------------
// Symbolic links

#[test]
fn symlinks_out_of_the_home_are_refused_for_reads_and_writes() {
    // The team directory → a copy of it outside.
    let t = seeded();
    let team = t.home.team_dir(TEAM).unwrap();
    let copy = t.outside.join("alpha");
    store_common::copy_tree(&team, &copy);
    remove_any(&team);
    symlink(&copy, &team).unwrap();
    let mut ops = team_ops();
    ops.extend(inbox_ops());
    ops.push((
        "LeadLiveness::acquire",
        op(|h| LeadLiveness::acquire(&h, TEAM).map(drop)),
    ));
    ops.push((
        "check_lead",
        op(|h| liveness::check_lead(&h, TEAM).map(drop)),
    ));
    ops.push((
        "scan::inbox_names",
        op(|h| scan::inbox_names(&h, TEAM).map(drop)),
    ));
    ops.push((
        "delete_team",
        op(|h| teamlead_protocol::store::delete_team(&h, TEAM)),
    ));
    run_all(
        &t,
        "team dir → outside",
        Want::Link(true),
        "outside the home",
        ops,
    );

    // The inboxes directory → outside.
    let t = seeded();
    let inboxes = t.home.inboxes_dir(TEAM).unwrap();
    store_common::copy_tree(&inboxes, &t.outside.join("inboxes"));
    remove_any(&inboxes);
    symlink(t.outside.join("inboxes"), &inboxes).unwrap();
    run_all(
        &t,
        "inboxes dir → outside",
        Want::Link(true),
        "inboxes",
        inbox_ops(),
    );

    // One inbox → a file outside.
    let t = seeded();
    let path = inbox_path(&t);
    std::fs::write(t.outside.join("victim.json"), b"[]").unwrap();
    remove_any(&path);
    symlink(t.outside.join("victim.json"), &path).unwrap();
    run_all(
        &t,
        "inbox → outside",
        Want::Link(true),
        "victim.json",
        inbox_ops(),
    );

    // The tasks directory → /etc.
    let t = seeded();
    let tasks = tasks_dir(&t);
    remove_any(&tasks);
    symlink("/etc", &tasks).unwrap();
    let mut ops = task_ops();
    ops.extend(id_ops());
    ops.push((
        "TaskList::list",
        op(|h| TaskList::new(&h, TEAM)?.list().map(drop)),
    ));
    ops.push((
        "TaskList::highwatermark",
        op(|h| TaskList::new(&h, TEAM)?.highwatermark().map(drop)),
    ));
    run_all(
        &t,
        "tasks dir → /etc",
        Want::Link(true),
        "symbolic link to /etc, outside the home",
        ops,
    );

    // The tasks root → outside.
    let t = seeded();
    let root = t.home.tasks_root();
    store_common::copy_tree(&root, &t.outside.join("tasks"));
    remove_any(&root);
    symlink(t.outside.join("tasks"), &root).unwrap();
    let mut ops = task_ops();
    ops.extend(id_ops());
    run_all(&t, "tasks root → outside", Want::Link(true), "tasks", ops);

    // teamlead's own directory → outside.
    let t = seeded();
    let own = t.home.teamlead_dir(TEAM).unwrap();
    symlink(&t.outside, &own).unwrap();
    expect_refused(
        &t,
        ".teamlead → outside: acquire",
        Want::Link(true),
        ".teamlead",
        |h| LeadLiveness::acquire(&h, TEAM).map(drop),
    );
}

#[test]
fn a_symlink_inside_the_home_is_refused_too_and_says_so() {
    let t = seeded();
    let path = inbox_path(&t);
    remove_any(&path);
    symlink("team-lead.json", &path).unwrap();
    run_all(
        &t,
        "inbox → sibling inbox",
        Want::Link(false),
        "team-lead.json",
        inbox_ops(),
    );
}

#[test]
fn check_inside_is_the_one_rule() {
    let t = seeded();
    let h = &t.home;
    h.check_inside(&inbox_path(&t)).unwrap();
    h.check_inside(&h.root.join("teams/alpha/not/yet/there.json"))
        .unwrap();
    let err = h.check_inside(Path::new("/etc/passwd")).unwrap_err();
    assert!(matches!(err, StoreError::NotInHome { .. }), "{err}");
    let err = h.check_inside(&h.root.join("teams/../../x")).unwrap_err();
    assert!(matches!(err, StoreError::NotInHome { .. }), "{err}");
    // A file where a directory should be.
    let err = h
        .check_inside(&h.config_path(TEAM).unwrap().join("x"))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotADirectory { .. }), "{err}");
    // A link to /etc says where it points.
    symlink("/etc", h.root.join("teams/alpha/inboxes/evil")).unwrap();
    let err = h
        .check_inside(&h.root.join("teams/alpha/inboxes/evil/passwd"))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{} is a symbolic link to /etc, outside the home; refusing to follow it",
            h.root.join("teams/alpha/inboxes/evil").display()
        )
    );
}

#[test]
fn the_home_root_itself_may_be_a_symlink() {
    let t = TempHome::new();
    let real = t.dir.path().join("real-home");
    std::fs::create_dir(&real).unwrap();
    let link = t.dir.path().join("linked-home");
    symlink(&real, &link).unwrap();
    let home = Home::new(&link);
    let cwd = real.to_string_lossy().into_owned();
    teamlead_protocol::store::create_team(
        &home,
        &teamlead_protocol::TeamFile::new(TEAM, None, &cwd),
    )
    .unwrap();
    inbox::append(&home, TEAM, "worker", &InboxEntry::new("a", "x")).unwrap();
    assert_eq!(inbox::read(&home, TEAM, "worker").unwrap().entries.len(), 1);
    TaskList::new(&home, TEAM)
        .unwrap()
        .create("s", "", vec![], None)
        .unwrap();
    let _lead = LeadLiveness::acquire(&home, TEAM).unwrap();
    assert!(real.join("teams/alpha/inboxes/worker.json").is_file());
}

// ---------------------------------------------------------------------------------------------
// Content that cannot be parsed

#[test]
fn unparsable_inboxes_are_refused_by_every_reader_and_writer() {
    let mut cases = bad_json();
    cases.push(("an object", br#"{"from":"a"}"#.to_vec()));
    for (what, bytes) in cases {
        let t = seeded();
        let path = inbox_path(&t);
        put(&path, &bytes);
        run_all(
            &t,
            &format!("inbox {what}"),
            Want::Parse,
            "worker.json",
            inbox_ops(),
        );
    }
    // An array with a non-object element is not an inbox an append may splice into.
    let t = seeded();
    put(
        &inbox_path(&t),
        br#"[{"from":"a","text":"x","timestamp":"t"}, "bare"]"#,
    );
    expect_refused(
        &t,
        "array with a string: append",
        Want::Parse,
        "worker.json",
        |h| inbox::append(&h, TEAM, "worker", &InboxEntry::new("a", "x")).map(drop),
    );
}

#[test]
fn unparsable_team_files_are_refused_and_never_rewritten() {
    for (what, bytes) in bad_json() {
        let t = seeded();
        put(&t.home.config_path(TEAM).unwrap(), &bytes);
        run_all(
            &t,
            &format!("config.json {what}"),
            Want::Parse,
            "config.json",
            team_ops(),
        );
    }
}

#[test]
fn unparsable_task_files_are_problems_and_refused_by_writers() {
    for (what, bytes) in bad_json() {
        let t = seeded();
        let path = tasks_dir(&t).join("1.json");
        put(&path, &bytes);
        run_all(
            &t,
            &format!("task {what}"),
            Want::Parse,
            "1.json",
            task_ops(),
        );
        let home = t.home.clone();
        let listing = within("list", move || TaskList::new(&home, TEAM)?.list()).unwrap();
        assert_eq!(listing.problems.len(), 1, "{what}");
        assert!(listing.problems[0].path.ends_with("1.json"));
    }
}

#[test]
fn an_unknown_key_survives_every_team_edit() {
    let t = seeded();
    let path = t.home.config_path(TEAM).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    v["futureKey"] = serde_json::json!({"nested": [1, 2]});
    v["members"][1]["memberFuture"] = serde_json::json!("kept");
    put(&path, serde_json::to_string_pretty(&v).unwrap().as_bytes());
    for (name, f) in team_ops() {
        if name != "remove_member" {
            within(name, {
                let h = t.home.clone();
                move || f(h)
            })
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
    let after: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(after["futureKey"], serde_json::json!({"nested": [1, 2]}));
    assert_eq!(after["members"][1]["memberFuture"], "kept");
}

#[test]
fn files_past_the_size_bound_are_refused_unread() {
    use teamlead_protocol::store::safe_file::MAX_FILE_BYTES;
    let t = seeded();
    let path = inbox_path(&t);
    // Sparse: costs no disk and no time; a reader that read it all would take seconds.
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(MAX_FILE_BYTES + 1).unwrap();
    drop(f);
    for (name, f) in inbox_ops() {
        let h = t.home.clone();
        let err = within(name, move || f(h)).unwrap_err();
        assert!(Want::Parse.matches(&err), "{name}: {err}");
        assert!(err.to_string().contains("bytes"), "{name}: {err}");
    }
    assert_eq!(std::fs::metadata(&path).unwrap().len(), MAX_FILE_BYTES + 1);
    let config = t.home.config_path(TEAM).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&config)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let h = t.home.clone();
    let err = within("read_team", move || read_team(&h, TEAM)).unwrap_err();
    assert!(
        Want::Parse.matches(&err) && err.to_string().contains("config.json"),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Lock paths of the wrong kind

#[test]
fn a_stray_lock_file_fails_at_once_and_stays() {
    // Beside an inbox: a file, a FIFO, a symlink to a directory.
    for kind in ["file", "fifo", "link"] {
        let t = seeded();
        let lock = teamlead_protocol::store::lock::lock_dir_of(&inbox_path(&t));
        match kind {
            "file" => std::fs::write(&lock, b"").unwrap(),
            "fifo" => mkfifo(&lock),
            _ => symlink(&t.outside, &lock).unwrap(),
        }
        let ops: Vec<_> = inbox_ops()
            .into_iter()
            .filter(|(n, _)| *n != "inbox::read")
            .collect();
        run_all(
            &t,
            &format!("inbox lock {kind}"),
            Want::LockKind,
            "worker.json.lock",
            ops,
        );
    }
    // Beside the team file.
    let t = seeded();
    std::fs::write(
        teamlead_protocol::store::lock::lock_dir_of(&t.home.config_path(TEAM).unwrap()),
        b"x",
    )
    .unwrap();
    let ops: Vec<_> = team_ops()
        .into_iter()
        .filter(|(n, _)| *n != "read_team")
        .collect();
    run_all(
        &t,
        "config lock file",
        Want::LockKind,
        "config.json.lock",
        ops,
    );
    // Beside a task file.
    let t = seeded();
    std::fs::write(tasks_dir(&t).join("1.json.lock"), b"x").unwrap();
    let ops: Vec<_> = task_ops()
        .into_iter()
        .filter(|(n, _)| *n != "TaskList::get")
        .collect();
    run_all(&t, "task lock file", Want::LockKind, "1.json.lock", ops);
}

#[test]
fn tasks_list_locks_of_the_wrong_kind_fail_at_once() {
    // `.lock` must be a regular file.
    for kind in ["dir", "fifo", "link"] {
        let t = seeded();
        let path = tasks_dir(&t).join(".lock");
        remove_any(&path);
        let want = match kind {
            "dir" => {
                std::fs::create_dir(&path).unwrap();
                Want::NotAFile
            }
            "fifo" => {
                mkfifo(&path);
                Want::NotAFile
            }
            _ => {
                symlink(t.outside.join("x"), &path).unwrap();
                Want::Link(true)
            }
        };
        run_all(&t, &format!("tasks .lock {kind}"), want, ".lock", id_ops());
    }
    // `.lock.lock` must be a directory.
    for kind in ["file", "fifo", "link"] {
        let t = seeded();
        let path = tasks_dir(&t).join(".lock.lock");
        match kind {
            "file" => std::fs::write(&path, b"").unwrap(),
            "fifo" => mkfifo(&path),
            _ => symlink(&t.outside, &path).unwrap(),
        }
        run_all(
            &t,
            &format!("tasks .lock.lock {kind}"),
            Want::LockKind,
            ".lock.lock",
            id_ops(),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Relay ids in a hand-edited inbox

#[test]
fn an_entry_applied_before_is_not_applied_again_beside_entries_of_any_shape() {
    let t = seeded();
    let path = inbox_path(&t);
    // A person's edit: a relay id that is a number, one that is null, and one real id among
    // them (the entry forwarded before).
    std::fs::write(
        &path,
        br#"[{"from":"team-lead","text":"a","timestamp":"2026-01-01T00:00:00Z","read":false,"relayId":5},
            {"from":"team-lead","text":"b","timestamp":"2026-01-01T00:00:01Z","read":false,"relayId":null},
            {"from":"team-lead","text":"c","timestamp":"2026-01-01T00:00:02Z","read":true,"relayId":"rid-1","extra":{"deep":[1,2,3]}}]"#,
    )
    .unwrap();
    let with_id = |text: &str, id: &str| {
        let mut e = InboxEntry::new("team-lead", text);
        e.relay_id = Some(id.to_string());
        e
    };
    let appended = inbox::append_new(
        &t.home,
        TEAM,
        "worker",
        &[
            with_id("c again", "rid-1"),
            with_id("d", "rid-2"),
            with_id("d twice", "rid-2"),
        ],
    )
    .unwrap();
    assert_eq!(
        appended, 1,
        "only the entry with a new relay id is appended, once"
    );
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let texts: Vec<&str> = on_disk
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["a", "b", "c", "d"],
        "the person's entries are kept as they were"
    );
    // Entries that are not objects: the check falls back to what parses, and still knows rid-1.
    std::fs::write(
        &path,
        br#"[{"from":"team-lead","text":"c","timestamp":"2026-01-01T00:00:02Z","read":true,"relayId":"rid-1"}, 7]"#,
    )
    .unwrap();
    let again = inbox::append_new(&t.home, TEAM, "worker", &[with_id("c again", "rid-1")]);
    assert!(matches!(again, Ok(0) | Err(_)), "{again:?}");
}
