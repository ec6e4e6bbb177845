//! Real entries over the link: the lead inboxes of the Claude Code fixtures (written by real
//! 2.1.45 and 2.1.329 teammates), placed on the remote host, arrive on the lead's host with
//! every key as it was (a key no client knows included) plus `relayId`; and the relay id
//! survives the consumers' rewrites (2.1.45 marks entries `read: true` and keeps them), so a
//! resend after such a rewrite is still not appended again.

use serde_json::{Value, json};
use teamlead_protocol::store::inbox;
use teamlead_relay::{Body, Frame, wire};
use teamlead_test_support::store::fixtures;

use crate::support::{Pair, TEAM, run_until};

fn raw(path: &std::path::Path) -> Vec<Value> {
    serde_json::from_slice::<Value>(&std::fs::read(path).unwrap())
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn real_lead_inboxes_cross_the_link_with_every_key() {
    for version in ["claude-code-2.1.45", "claude-code-2.1.329"] {
        let fixture = fixtures()
            .join(version)
            .join("teams/session-abc12345/inboxes/team-lead.json");
        let mut entries = raw(&fixture);
        entries[0]["futureEntryKey"] = json!({"kept": [1, 2]});
        let mut pair = Pair::new();
        pair.lead.set_hosted(&["worker".to_string()]).unwrap();
        let remote_inbox = pair.relay_home().inbox_path(TEAM, "team-lead").unwrap();
        std::fs::create_dir_all(remote_inbox.parent().unwrap()).unwrap();
        std::fs::write(&remote_inbox, serde_json::to_vec_pretty(&entries).unwrap()).unwrap();
        pair.connect();
        let lead_inbox = pair.lead_home().inbox_path(TEAM, "team-lead").unwrap();
        let unread = entries.iter().filter(|e| e["read"] != json!(true)).count();
        assert!(
            run_until(&mut pair, 200, |_| lead_inbox.exists()
                && raw(&lead_inbox).len() == unread),
            "{version}"
        );
        let arrived = raw(&lead_inbox);
        for (sent, got) in entries
            .iter()
            .filter(|e| e["read"] != json!(true))
            .zip(&arrived)
        {
            let mut got = got.as_object().unwrap().clone();
            assert!(
                got.remove("relayId").is_some_and(|id| id.is_string()),
                "{version}: {got:?}"
            );
            assert_eq!(&Value::Object(got), sent, "{version}");
        }
        println!("{version}: {unread} real entries crossed with every key");
    }
}

#[test]
fn the_relay_id_survives_a_read_mark_and_still_stops_a_repeat() {
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    let fixture = fixtures().join("claude-code-2.1.45/teams/session-abc12345/inboxes/worker.json");
    let mut entry: teamlead_protocol::InboxEntry =
        serde_json::from_value(raw(&fixture)[0].clone()).unwrap();
    entry.read = None;
    let data = |seq| Frame::Data {
        seq,
        body: Body::InboxEntry {
            team: TEAM.into(),
            to: "worker".into(),
            entry: Box::new(entry.clone()),
            id: "relay-id-45".into(),
        },
    };
    let line = wire::encode(&data(1));
    pair.relay
        .on_line(line.trim_end().as_bytes(), pair.now)
        .unwrap();
    // The teammate takes it the 2.1.45 way: the entry kept, `read: true` set on it.
    let key = inbox::read(pair.relay_home(), TEAM, "worker")
        .unwrap()
        .entries[0]
        .dedup_key();
    assert_eq!(
        inbox::mark_read(pair.relay_home(), TEAM, "worker", &[key]).unwrap(),
        1
    );
    let path = pair.relay_home().inbox_path(TEAM, "worker").unwrap();
    assert_eq!(raw(&path)[0]["relayId"], json!("relay-id-45"));
    assert_eq!(raw(&path)[0]["read"], json!(true));
    // The same entry again (the relay killed before its recv was written, so seq 1 again).
    pair.restart_relay(crate::support::identity("remote-host"));
    let dir =
        teamlead_relay::link_dir::LinkDir::path(pair.relay_home(), TEAM, crate::support::LINK)
            .unwrap();
    std::fs::write(dir.join("recv"), "0").unwrap();
    pair.drop_link();
    pair.connect();
    pair.settle();
    pair.relay
        .on_line(line.trim_end().as_bytes(), pair.now)
        .unwrap();
    assert_eq!(raw(&path).len(), 1, "{:?}", raw(&path));
}
