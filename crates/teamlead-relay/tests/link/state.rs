//! The link's state on disk: a line cut by a crash at the end of the outbox is skipped and the
//! next append starts on a line of its own; acknowledged lines leave the outbox at a compaction
//! with their keys kept; files are private.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use teamlead_relay::Body;
use teamlead_relay::link_dir::LinkDir;
use teamlead_test_support::store::TempHome;

use crate::support::{LINK, TEAM};

fn route(n: usize) -> Body {
    Body::Route {
        team: TEAM.into(),
        hosted: vec![format!("m{n}")],
    }
}

#[test]
fn a_line_cut_by_a_crash_is_skipped_and_the_outbox_goes_on() {
    let t = TempHome::new();
    let mut dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    dir.push(route(1), None).unwrap();
    dir.push(route(2), Some("alice/id:1".into())).unwrap();
    let outbox = dir.dir().join("outbox.jsonl");
    // Killed in the middle of the third append.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&outbox)
        .unwrap()
        .write_all(br#"{"seq":3,"body":{"kind":"ro"#)
        .unwrap();
    let mut dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    let seqs: Vec<u64> = dir.unacked().iter().map(|o| o.seq).collect();
    assert_eq!(seqs, vec![1, 2]);
    assert!(dir.was_forwarded("alice/id:1"));
    assert_eq!(dir.push(route(3), None).unwrap().seq, 3);
    let dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    let seqs: Vec<u64> = dir.unacked().iter().map(|o| o.seq).collect();
    assert_eq!(seqs, vec![1, 2, 3]);
    assert_eq!(mode_of(&dir.dir().join("outbox.jsonl")), 0o600);
}

#[test]
fn acknowledged_lines_leave_the_outbox_and_their_keys_stay() {
    let t = TempHome::new();
    let mut dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    for i in 0..300 {
        dir.push(route(i), Some(format!("bob/id:{i}"))).unwrap();
    }
    dir.ack(299).unwrap();
    // Compacted: one line left, every key still known after a restart, seqs go on.
    let outbox = std::fs::read_to_string(dir.dir().join("outbox.jsonl")).unwrap();
    assert_eq!(outbox.lines().count(), 1, "{outbox}");
    assert_eq!(mode_of(&dir.dir().join("forwarded.jsonl")), 0o600);
    assert_eq!(mode_of(&dir.dir().join("outbox.jsonl")), 0o600);
    let mut dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    assert_eq!(dir.acked(), 299);
    assert!((0..300).all(|i| dir.was_forwarded(&format!("bob/id:{i}"))));
    assert_eq!(dir.push(route(300), None).unwrap().seq, 301);
    dir.ack(301).unwrap();
    let mut dir = LinkDir::open(&t.home, TEAM, LINK).unwrap();
    assert!(dir.unacked().is_empty());
    assert_eq!(dir.push(route(301), None).unwrap().seq, 302);
}

fn mode_of(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}
