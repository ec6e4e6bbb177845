//! Consuming inboxes: the lead's drain records each entry durably before removing it and
//! de-duplicates after a crash; 2.1.45-style `mark_read` and 2.1.329-style `take_unread`.

use crate::store_common;

use serde_json::{Value, json};
use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{DeliveryLog, inbox};

use store_common::TempHome;

const TEAM: &str = "alpha";
const LEAD: &str = "team-lead";

fn log_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn drain_records_before_removing_and_dedups_after_a_crash() {
    let t = TempHome::new();
    let log_path = t.home.delivery_log_path(TEAM, LEAD).unwrap();
    let a = InboxEntry::new("worker", "first");
    let b = InboxEntry::new("worker", "second");
    inbox::append_many(&t.home, TEAM, LEAD, &[a.clone(), b.clone()]).unwrap();

    let mut log = DeliveryLog::open(&log_path).unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut log).unwrap();
    assert_eq!(drained.delivered, vec![a.clone(), b.clone()]);
    assert!(drained.quarantined.is_empty());
    // Durable: the log on disk holds both, the inbox holds neither.
    let lines = log_lines(&log_path);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["key"], json!(a.dedup_key()));
    assert_eq!(lines[0]["entry"]["text"], json!("first"));
    assert!(inbox::read(&t.home, TEAM, LEAD).unwrap().entries.is_empty());

    // A crash after the log write but before the inbox rewrite: the entries are back in the
    // inbox. A new session (a fresh log handle) must not deliver them again.
    inbox::append_many(&t.home, TEAM, LEAD, &[a.clone(), b.clone()]).unwrap();
    let c = InboxEntry::new("worker", "third");
    inbox::append(&t.home, TEAM, LEAD, &c).unwrap();
    let mut reopened = DeliveryLog::open(&log_path).unwrap();
    assert!(reopened.contains(&a.dedup_key()) && reopened.contains(&b.dedup_key()));
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut reopened).unwrap();
    assert_eq!(drained.delivered, vec![c.clone()]);
    assert!(inbox::read(&t.home, TEAM, LEAD).unwrap().entries.is_empty());
    assert_eq!(log_lines(&log_path).len(), 3);

    // Nothing new: nothing delivered, the inbox is not rewritten.
    let before = std::fs::metadata(t.home.inbox_path(TEAM, LEAD).unwrap())
        .unwrap()
        .modified()
        .unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut reopened).unwrap();
    assert!(drained.delivered.is_empty());
    let after = std::fs::metadata(t.home.inbox_path(TEAM, LEAD).unwrap())
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after);
}

#[test]
fn entries_without_msg_id_dedup_by_sender_time_and_text() {
    let t = TempHome::new();
    let log_path = t.home.delivery_log_path(TEAM, LEAD).unwrap();
    let mut e = InboxEntry::new("old-client", "hello");
    e.msg_id = None;
    e.msg_v = None;
    e.kind = None;
    // Two identical copies in one inbox are delivered once.
    inbox::append_many(&t.home, TEAM, LEAD, &[e.clone(), e.clone()]).unwrap();
    let mut log = DeliveryLog::open(&log_path).unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut log).unwrap();
    assert_eq!(drained.delivered.len(), 1);
    // The same text at another time is a different message.
    let mut later = e.clone();
    later.timestamp = "2099-01-01T00:00:00.000Z".into();
    inbox::append_many(&t.home, TEAM, LEAD, &[e.clone(), later.clone()]).unwrap();
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut log).unwrap();
    assert_eq!(drained.delivered, vec![later]);
}

#[test]
fn read_entries_stay_and_bad_entries_are_quarantined() {
    let t = TempHome::from_fixture("claude-code-2.1.45");
    let team = "session-abc12345";
    // The 2.1.45 worker inbox keeps a delivered entry with read: true.
    let path = t.home.inbox_path(team, "worker").unwrap();
    let mut raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let read_before = raw
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["read"] == json!(true))
        .count();
    assert!(read_before > 0);
    raw.as_array_mut()
        .unwrap()
        .push(json!({"text": "no sender"}));
    raw.as_array_mut()
        .unwrap()
        .push(json!({"from": "x", "text": "new", "timestamp": "2026-01-01T00:00:00.000Z"}));
    std::fs::write(&path, serde_json::to_string_pretty(&raw).unwrap()).unwrap();

    let log_path = t.home.delivery_log_path(team, "worker").unwrap();
    let mut log = DeliveryLog::open(&log_path).unwrap();
    let drained = inbox::drain_unread(&t.home, team, "worker", &mut log).unwrap();
    assert_eq!(drained.delivered.len(), 1);
    assert_eq!(drained.delivered[0].text, "new");
    assert_eq!(drained.quarantined.len(), 1);
    let kept: Value =
        serde_json::from_slice(&std::fs::read(&drained.quarantined[0]).unwrap()).unwrap();
    assert_eq!(kept, json!([{"text": "no sender"}]));
    let left: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(left.as_array().unwrap().len(), read_before);
}

#[test]
fn a_torn_log_line_is_skipped_and_does_not_swallow_the_next_record() {
    let t = TempHome::new();
    let log_path = t.home.delivery_log_path(TEAM, LEAD).unwrap();
    std::fs::create_dir_all(log_path.parent().unwrap()).unwrap();
    std::fs::write(&log_path, "{\"key\":\"id:1\"}\n{\"key\":\"id:2\",\"entr").unwrap();
    let mut log = DeliveryLog::open(&log_path).unwrap();
    assert!(log.contains("id:1"));
    assert!(!log.contains("id:2"));
    let e = InboxEntry::new("w", "x");
    log.record(std::slice::from_ref(&e)).unwrap();
    let reopened = DeliveryLog::open(&log_path).unwrap();
    assert!(reopened.contains(&e.dedup_key()));
    assert_eq!(reopened.len(), 2);
}

#[test]
fn mark_read_and_take_unread_for_teammates() {
    let t = TempHome::new();
    let a = InboxEntry::new("team-lead", "do this");
    let b = InboxEntry::new("team-lead", "and that");
    inbox::append_many(&t.home, TEAM, "worker", &[a.clone(), b.clone()]).unwrap();

    // 2.1.45 style: mark one read, keep it.
    let marked = inbox::mark_read(&t.home, TEAM, "worker", &[a.dedup_key()]).unwrap();
    assert_eq!(marked, 1);
    let read = inbox::read(&t.home, TEAM, "worker").unwrap();
    assert_eq!(read.entries.len(), 2);
    assert_eq!(read.entries[0].read, Some(true));
    assert_eq!(read.unread().count(), 1);
    assert_eq!(
        inbox::mark_read(&t.home, TEAM, "worker", &[a.dedup_key()]).unwrap(),
        0
    );

    // 2.1.329 style: take the unread ones out.
    let taken = inbox::take_unread(&t.home, TEAM, "worker").unwrap();
    assert_eq!(taken.delivered, vec![b]);
    let read = inbox::read(&t.home, TEAM, "worker").unwrap();
    assert_eq!(read.entries.len(), 1);
    assert_eq!(read.entries[0].text, "do this");
    // Missing inboxes are empty, not errors.
    assert!(
        inbox::take_unread(&t.home, TEAM, "nobody")
            .unwrap()
            .delivered
            .is_empty()
    );
    assert_eq!(inbox::mark_read(&t.home, TEAM, "nobody", &[]).unwrap(), 0);

    // replace: the spawn order clears the inbox and writes the prompt first.
    let prompt = InboxEntry::new("team-lead", "your prompt");
    inbox::replace(&t.home, TEAM, "worker", std::slice::from_ref(&prompt)).unwrap();
    assert_eq!(
        inbox::read(&t.home, TEAM, "worker").unwrap().entries,
        vec![prompt]
    );
}

/// The lead's recovery of an unreadable inbox moves the file as it is into
/// `quarantine/<team>/` and starts a fresh `[]`: a writer appending all the while (opening the
/// path for each write, without the lock, as a careless script would) loses nothing; every one
/// of its writes is found once, in a quarantined file or in the inbox.
#[test]
fn recovering_an_unreadable_inbox_loses_no_byte_of_a_writer_appending_meanwhile() {
    use std::io::Write;
    let t = TempHome::new();
    inbox::append(&t.home, TEAM, LEAD, &InboxEntry::new("worker", "x")).unwrap();
    let path = t.home.inbox_path(TEAM, LEAD).unwrap();
    std::fs::write(&path, b"garbage that is not JSON\n").unwrap();
    let writes = 400;
    let writer = {
        let path = path.clone();
        std::thread::spawn(move || {
            for i in 0..writes {
                let mut f = std::fs::OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(&path)
                    .unwrap();
                f.write_all(format!("w{i:04}\n").as_bytes()).unwrap();
                // Spread over ~0.5 s, so several recoveries (each ~0.1 s) meet it.
                std::thread::sleep(std::time::Duration::from_micros(1200));
            }
        })
    };
    let mut recovered = Vec::new();
    while !writer.is_finished() {
        if let Some(r) = inbox::recover_unreadable(&t.home, TEAM, LEAD).unwrap() {
            recovered.push(r);
        }
    }
    writer.join().unwrap();
    if let Some(r) = inbox::recover_unreadable(&t.home, TEAM, LEAD).unwrap() {
        recovered.push(r);
    }
    assert!(!recovered.is_empty());
    // The inbox is readable again: a fresh array (the last recovery left `[]`).
    assert!(inbox::read(&t.home, TEAM, LEAD).unwrap().entries.is_empty());
    let mut all = String::new();
    for r in &recovered {
        assert!(r.kept.starts_with(t.home.quarantine_dir().join(TEAM)));
        all.push_str(&String::from_utf8_lossy(&std::fs::read(&r.kept).unwrap()));
    }
    all.push_str(&std::fs::read_to_string(&path).unwrap());
    for i in 0..writes {
        let line = format!("w{i:04}\n");
        assert_eq!(all.matches(&line).count(), 1, "{line:?} in {all:?}");
    }
    assert_eq!(all.matches("garbage that is not JSON").count(), 1);
}

#[test]
fn take_records_new_entries_and_leaves_the_inbox_as_it_is() {
    let t = TempHome::new();
    let log_path = t.home.delivery_log_path(TEAM, LEAD).unwrap();
    let a = InboxEntry::new("worker", "first");
    inbox::append_many(&t.home, TEAM, LEAD, std::slice::from_ref(&a)).unwrap();
    let path = t.home.inbox_path(TEAM, LEAD).unwrap();
    let bytes = std::fs::read(&path).unwrap();

    let mut log = DeliveryLog::open(&log_path).unwrap();
    let mut memo = inbox::InboxMemo::default();
    let mut taken = Vec::new();
    let left =
        inbox::take_unread_into(&t.home, TEAM, LEAD, &mut log, &mut memo, &mut taken).unwrap();
    assert_eq!(
        (left, taken.clone()),
        (inbox::Taken::Pending, vec![a.clone()])
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        bytes,
        "the inbox was written"
    );
    assert_eq!(log_lines(&log_path).len(), 1);

    // Taken again: nothing new. A later entry is new; the drain then removes both.
    let b = InboxEntry::new("worker", "second");
    inbox::append(&t.home, TEAM, LEAD, &b).unwrap();
    let mut again = Vec::new();
    inbox::take_unread_into(&t.home, TEAM, LEAD, &mut log, &mut memo, &mut again).unwrap();
    assert_eq!(again, vec![b]);
    let drained = inbox::drain_unread(&t.home, TEAM, LEAD, &mut log).unwrap();
    assert!(drained.delivered.is_empty());
    assert!(inbox::read(&t.home, TEAM, LEAD).unwrap().entries.is_empty());
    let mut none = Vec::new();
    let left =
        inbox::take_unread_into(&t.home, TEAM, LEAD, &mut log, &mut memo, &mut none).unwrap();
    assert_eq!((left, none.len()), (inbox::Taken::Empty, 0));
}
