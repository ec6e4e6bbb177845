//! Task ids and file modes under the hostile-file rules: a high-water mark that is garbage,
//! binary, negative, overflowing, empty, too large, a directory or a FIFO stops new ids and is
//! left alone; ids at `u64::MAX` are exhausted, never wrapped; ids are never reused after
//! deletes; and everything the store creates is private (0600 files, 0700 directories).

use crate::store_common;

use std::os::unix::fs::PermissionsExt;

use teamlead_protocol::store::{DeliveryLog, LeadLiveness, TaskList, inbox};

use store_common::hostile::{
    DEADLINE, TEAM, Want, expect_refused, id_ops, inbox_path, mkfifo, op, put, remove_any, run_all,
    seeded, snapshot, tasks_dir,
};
// ---------------------------------------------------------------------------------------------
// The high-water mark and task ids

#[test]
fn a_bad_highwatermark_stops_new_ids_and_is_left_alone() {
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"twelve".to_vec()),
        ("binary", vec![0xff, 0x00, 0x13]),
        ("negative", b"-3".to_vec()),
        ("overflowing", b"18446744073709551616".to_vec()),
        ("fractional", b"2.5".to_vec()),
        ("empty", b"".to_vec()),
        ("too large a file", vec![b'7'; 5000]),
    ];
    for (what, bytes) in cases {
        let t = seeded();
        put(&tasks_dir(&t).join(".highwatermark"), &bytes);
        let mut ops = id_ops();
        ops.push((
            "highwatermark",
            op(|h| TaskList::new(&h, TEAM)?.highwatermark().map(drop)),
        ));
        run_all(
            &t,
            &format!(".highwatermark {what}"),
            Want::Parse,
            ".highwatermark",
            ops,
        );
    }
    for kind in ["directory", "fifo"] {
        let t = seeded();
        let path = tasks_dir(&t).join(".highwatermark");
        remove_any(&path);
        if kind == "fifo" {
            mkfifo(&path);
        } else {
            std::fs::create_dir(&path).unwrap();
        }
        run_all(
            &t,
            &format!(".highwatermark {kind}"),
            Want::NotAFile,
            ".highwatermark",
            id_ops(),
        );
    }
}

#[test]
fn ids_at_the_top_of_u64_are_exhausted_not_wrapped() {
    let t = seeded();
    let hwm = tasks_dir(&t).join(".highwatermark");
    put(&hwm, (u64::MAX - 1).to_string().as_bytes());
    let list = TaskList::new(&t.home, TEAM).unwrap();
    let last = list.create("last", "", vec![], None).unwrap();
    assert_eq!(last.id, u64::MAX.to_string());
    expect_refused(
        &t,
        "hwm and file at u64::MAX",
        Want::Exhausted,
        "exhausted",
        |h| {
            TaskList::new(&h, TEAM)?
                .create("more", "", vec![], None)
                .map(drop)
        },
    );

    // The high-water mark alone at the top.
    let t = seeded();
    put(
        &tasks_dir(&t).join(".highwatermark"),
        u64::MAX.to_string().as_bytes(),
    );
    expect_refused(&t, "hwm at u64::MAX", Want::Exhausted, "tasks", |h| {
        TaskList::new(&h, TEAM)?
            .create("more", "", vec![], None)
            .map(drop)
    });

    // A task file name beyond u64 exhausts the ids too (it is never ignored and overtaken).
    let t = seeded();
    put(&tasks_dir(&t).join("99999999999999999999999.json"), b"{}");
    expect_refused(
        &t,
        "file name beyond u64",
        Want::Exhausted,
        "exhausted",
        |h| {
            TaskList::new(&h, TEAM)?
                .create("more", "", vec![], None)
                .map(drop)
        },
    );
}

#[test]
fn ids_are_never_reused_after_deletes() {
    let t = seeded();
    let list = TaskList::new(&t.home, TEAM).unwrap();
    let three = list.create("three", "", vec![], None).unwrap();
    assert_eq!(three.id, "3");
    list.delete("3").unwrap();
    assert_eq!(list.create("four", "", vec![], None).unwrap().id, "4");
    for id in ["1", "2", "4"] {
        list.delete(id).unwrap();
    }
    assert!(list.list().unwrap().tasks.is_empty());
    assert_eq!(list.highwatermark().unwrap(), 4);
    assert_eq!(list.create("five", "", vec![], None).unwrap().id, "5");
    // A file written by another program beyond the mark still counts.
    put(&tasks_dir(&t).join("41.json"), b"{}");
    assert_eq!(list.create("x", "", vec![], None).unwrap().id, "42");
    // And so does a mark beyond every file.
    put(&tasks_dir(&t).join(".highwatermark"), b"100\n");
    assert_eq!(list.create("y", "", vec![], None).unwrap().id, "101");
}

// ---------------------------------------------------------------------------------------------
// Modes

#[test]
fn what_the_store_creates_is_private() {
    let t = seeded();
    let list = TaskList::new(&t.home, TEAM).unwrap();
    list.delete("2").unwrap(); // writes .highwatermark
    let _lead = LeadLiveness::acquire(&t.home, TEAM).unwrap();
    // A bad entry is quarantined by a drain.
    let lead_inbox = t.home.inbox_path(TEAM, "team-lead").unwrap();
    put(&lead_inbox, br#"[{"from": 5}]"#);
    std::fs::set_permissions(&lead_inbox, std::fs::Permissions::from_mode(0o600)).unwrap();
    let logs = tempfile::tempdir().unwrap();
    let mut log = DeliveryLog::open(&logs.path().join("log.jsonl")).unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, "team-lead", &mut log).unwrap();
    assert_eq!(drained.quarantined.len(), 1);
    let plan = t.home.plan_path(TEAM, "worker", 1).unwrap();
    t.home.write_file(&plan, b"# plan").unwrap();
    // A lock directory while held.
    let held = teamlead_protocol::store::lock::acquire(&inbox_path(&t), DEADLINE).unwrap();
    let lock_mode = std::fs::metadata(held.dir()).unwrap().permissions().mode() & 0o777;
    drop(held);
    assert_eq!(lock_mode, 0o700);

    let mut checked = 0;
    for (path, node) in snapshot(&t.home.root) {
        match node {
            store_common::hostile::Node::File { mode, .. } => {
                assert_eq!(mode, 0o600, "{}", path.display());
            }
            store_common::hostile::Node::Dir { mode } => {
                assert_eq!(mode, 0o700, "{}", path.display());
            }
            other => panic!("{}: {other:?}", path.display()),
        }
        checked += 1;
    }
    // teams/alpha/{config.json,inboxes/…,.teamlead/lead.lock}, tasks/alpha/{1.json,.lock,
    // .highwatermark}, quarantine/alpha/*, plans/*.
    assert!(checked >= 16, "{checked} entries checked");
    for must in [
        "teams/alpha/.teamlead/lead.lock",
        "tasks/alpha/.highwatermark",
        "tasks/alpha/.lock",
        "plans",
        "quarantine/alpha",
    ] {
        assert!(t.home.root.join(must).exists(), "{must}");
    }
}
