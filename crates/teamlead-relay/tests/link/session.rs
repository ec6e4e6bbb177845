//! The reliable session: what was in flight when the link dropped is sent again after the
//! reconnect and applied once; a repeat is acknowledged and not applied; an entry applied just
//! before a crash (before `recv` was persisted) is not appended again; a side rebuilt from
//! disk resumes; liveness is judged by traffic on the test's clock.

use std::time::Duration;

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::inbox;
use teamlead_relay::link_dir::LinkDir;
use teamlead_relay::session::{PING_EVERY, SILENCE_LIMIT};
use teamlead_relay::{Body, End, Event, Frame, wire};

use crate::support::{LINK, Pair, TEAM, identity, run_until, texts};

fn hosted(pair: &mut Pair) {
    let step = pair
        .lead
        .set_hosted(&["alice".to_string(), "bob".to_string()])
        .unwrap();
    assert!(step.lines.is_empty(), "queued, not sent, while down");
}

#[test]
fn what_was_in_flight_is_sent_again_after_a_reconnect_and_applied_once() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    for i in 0..3 {
        inbox::append(
            pair.lead_home(),
            TEAM,
            "alice",
            &InboxEntry::new("team-lead", format!("to-alice-{i}")),
        )
        .unwrap();
    }
    pair.connect();
    pair.settle();
    // Picked up, sent, and the link cut before the relay read a byte of it.
    pair.tick();
    assert!(!pair.to_relay.is_empty());
    pair.drop_link();
    assert_eq!(texts(pair.relay_home(), "alice"), Vec::<String>::new());
    assert_eq!(
        pair.lead.unacked(),
        4,
        "the three entries and the task list's snapshot (the route went through)"
    );
    pair.connect();
    pair.settle();
    assert_eq!(
        texts(pair.relay_home(), "alice"),
        vec!["to-alice-0", "to-alice-1", "to-alice-2"]
    );
    assert_eq!(pair.lead.unacked(), 0);
    // Again with the acks lost on the way back: the relay applied, the lead resends, the
    // relay's recv says it has them, nothing is appended twice.
    inbox::append(
        pair.lead_home(),
        TEAM,
        "bob",
        &InboxEntry::new("team-lead", "to-bob"),
    )
    .unwrap();
    pair.tick();
    pair.deliver("relay", usize::MAX);
    assert_eq!(texts(pair.relay_home(), "bob"), vec!["to-bob"]);
    pair.drop_link();
    assert_eq!(
        pair.lead.unacked(),
        2,
        "the entry and the task list's snapshot of that connection"
    );
    pair.connect();
    pair.settle();
    assert_eq!(pair.lead.unacked(), 0);
    assert_eq!(texts(pair.relay_home(), "bob"), vec!["to-bob"]);
    // The relay's entries carry the relay id they came with.
    let got = inbox::read(pair.relay_home(), TEAM, "bob").unwrap();
    assert!(got.entries[0].relay_id.is_some());
}

#[test]
fn the_remote_hosts_writers_reach_the_lead_once_and_the_route_says_which_inboxes() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    pair.connect();
    pair.settle();
    // A claude teammate on the remote host writes to its lead, to a teammate on another host
    // (carol) and to one on its own host (bob).
    for (to, text) in [
        ("team-lead", "hello lead"),
        ("carol", "hello carol"),
        ("bob", "hello bob"),
    ] {
        inbox::append(pair.relay_home(), TEAM, to, &InboxEntry::new("alice", text)).unwrap();
    }
    assert!(run_until(&mut pair, 200, |p| {
        texts(p.lead_home(), "team-lead") == ["hello lead"]
            && texts(p.lead_home(), "carol") == ["hello carol"]
    }));
    for _ in 0..20 {
        pair.tick();
        pair.settle();
    }
    assert_eq!(texts(pair.lead_home(), "bob"), Vec::<String>::new());
    assert_eq!(texts(pair.lead_home(), "team-lead"), vec!["hello lead"]);
    // Nothing came back as an echo.
    assert_eq!(texts(pair.relay_home(), "carol"), vec!["hello carol"]);
}

#[test]
fn an_entry_appended_just_before_a_crash_is_not_appended_again() {
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    // The relay crashed after appending data 1 and before persisting recv = 1: the entry is in
    // the inbox with its relay id, recv on disk is 0.
    let mut entry = InboxEntry::new("team-lead", "once");
    entry.relay_id = Some("relay-id-1".into());
    inbox::append(pair.relay_home(), TEAM, "alice", &entry).unwrap();
    pair.restart_relay(identity("remote-host"));
    pair.drop_link();
    pair.connect();
    pair.settle();
    assert_eq!(pair.relay.recv(), 0);
    let data = Frame::Data {
        seq: 1,
        body: Body::InboxEntry {
            team: TEAM.into(),
            to: "alice".into(),
            entry: Box::new(InboxEntry::new("team-lead", "once")),
            id: "relay-id-1".into(),
        },
    };
    let line = wire::encode(&data);
    let step = pair
        .relay
        .on_line(line.trim_end().as_bytes(), pair.now)
        .unwrap();
    assert_eq!(step.lines, vec![wire::encode(&Frame::Ack { seq: 1 })]);
    assert_eq!(texts(pair.relay_home(), "alice"), vec!["once"]);
    assert_eq!(pair.relay.recv(), 1);
}

#[test]
fn a_side_rebuilt_from_disk_resumes_from_the_last_ack() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    pair.connect();
    pair.settle();
    for i in 0..5 {
        inbox::append(
            pair.lead_home(),
            TEAM,
            "alice",
            &InboxEntry::new("team-lead", format!("m{i}")),
        )
        .unwrap();
    }
    // Queued (in the outbox on disk) and the lead server killed before anything was acked.
    pair.tick();
    pair.drop_link();
    pair.restart_lead(identity("lead-host"));
    pair.restart_relay(identity("remote-host"));
    assert_eq!(
        pair.lead.unacked(),
        6,
        "five entries and the task list's snapshot"
    );
    // The restarted lead does not pick the same entries up again.
    pair.connect();
    pair.settle();
    for _ in 0..20 {
        pair.tick();
        pair.settle();
    }
    assert_eq!(
        texts(pair.relay_home(), "alice"),
        vec!["m0", "m1", "m2", "m3", "m4"]
    );
    let dir = LinkDir::open(pair.lead_home(), TEAM, LINK).unwrap();
    assert_eq!(dir.unacked().len(), 0);
    assert_eq!(
        dir.acked(),
        8,
        "the route, five entries and a task list snapshot per connection"
    );
}

#[test]
fn the_lead_pings_and_silence_ends_the_connection() {
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    // The task list's snapshot goes first, at the first tick.
    pair.tick();
    pair.settle();
    pair.advance(PING_EVERY - Duration::from_millis(1));
    pair.tick();
    assert!(pair.to_relay.is_empty(), "no ping before {PING_EVERY:?}");
    pair.advance(Duration::from_millis(1));
    pair.tick();
    let line: Vec<u8> = pair.to_relay.iter().copied().collect();
    assert_eq!(line, wire::encode(&Frame::Ping { n: 1 }).into_bytes());
    pair.settle();
    // The pong kept the lead's link alive; now the relay goes quiet.
    pair.advance(SILENCE_LIMIT - Duration::from_millis(1));
    pair.tick();
    assert!(pair.ends.is_empty(), "{:?}", pair.ends);
    pair.connected = false;
    pair.advance(Duration::from_millis(1));
    pair.tick();
    assert!(
        pair.ends.contains(&("lead", End::Silent)),
        "{:?}",
        pair.ends
    );
    assert!(!pair.lead.is_open());
}

#[test]
fn a_side_whose_link_state_was_removed_goes_on_without_a_gap_or_a_repeat() {
    for lost in ["relay", "lead"] {
        let mut pair = Pair::new();
        hosted(&mut pair);
        pair.connect();
        let write = |pair: &Pair, round: usize| {
            for i in 0..3 {
                inbox::append(
                    pair.lead_home(),
                    TEAM,
                    "alice",
                    &InboxEntry::new("team-lead", format!("down {round}.{i}")),
                )
                .unwrap();
                inbox::append(
                    pair.relay_home(),
                    TEAM,
                    "team-lead",
                    &InboxEntry::new("alice", format!("up {round}.{i}")),
                )
                .unwrap();
            }
        };
        let expect = |rounds: usize, dir: &str| -> Vec<String> {
            (0..rounds)
                .flat_map(|r| (0..3).map(move |i| format!("{dir} {r}.{i}")))
                .collect()
        };
        write(&pair, 0);
        assert!(run_until(&mut pair, 200, |p| {
            texts(p.relay_home(), "alice") == expect(1, "down")
                && texts(p.lead_home(), "team-lead") == expect(1, "up")
        }));
        // A person removes one side's link directory while the link is down.
        pair.drop_link();
        let home = if lost == "relay" {
            pair.relay_home().clone()
        } else {
            pair.lead_home().clone()
        };
        std::fs::remove_dir_all(LinkDir::path(&home, TEAM, LINK).unwrap()).unwrap();
        if lost == "relay" {
            pair.restart_relay(identity("remote-host"));
        } else {
            pair.restart_lead(identity("lead-host"));
            hosted(&mut pair);
        }
        pair.connect();
        write(&pair, 1);
        assert!(
            run_until(&mut pair, 300, |p| {
                texts(p.relay_home(), "alice").len() >= 6
                    && texts(p.lead_home(), "team-lead").len() >= 6
            }),
            "{lost}: {:?} / {:?}",
            texts(pair.relay_home(), "alice"),
            texts(pair.lead_home(), "team-lead")
        );
        for _ in 0..30 {
            pair.tick();
            pair.settle();
        }
        // What was forwarded before is forwarded again by the side that forgot it, with the
        // same relay ids, so the other side does not append it twice.
        assert_eq!(
            texts(pair.relay_home(), "alice"),
            expect(2, "down"),
            "{lost}"
        );
        assert_eq!(
            texts(pair.lead_home(), "team-lead"),
            expect(2, "up"),
            "{lost}"
        );
    }
}

#[test]
fn an_inbox_that_cannot_be_read_holds_back_only_its_own_entries() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    pair.connect();
    pair.settle();
    let broken = pair.lead_home().inbox_path(TEAM, "alice").unwrap();
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(&broken, b"{ not an inbox").unwrap();
    inbox::append(
        pair.lead_home(),
        TEAM,
        "bob",
        &InboxEntry::new("team-lead", "to bob"),
    )
    .unwrap();
    assert!(run_until(&mut pair, 100, |p| texts(p.relay_home(), "bob")
        == ["to bob"]));
    assert!(pair.lead.is_open() && pair.relay.is_open());
    // Repaired by a person: its entries follow.
    std::fs::remove_file(&broken).unwrap();
    inbox::append(
        pair.lead_home(),
        TEAM,
        "alice",
        &InboxEntry::new("team-lead", "to alice"),
    )
    .unwrap();
    assert!(run_until(&mut pair, 200, |p| texts(
        p.relay_home(),
        "alice"
    ) == ["to alice"]));
}

#[test]
fn a_second_relay_of_a_link_waits_for_the_first_and_gives_up() {
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    assert!(pair.relay.is_open());
    // A new connection's hello reaches a second relay while the first still runs (its ssh
    // session not ended yet): it must not share the link's files with the first.
    let hello = pair.lead.connect(std::time::Instant::now()).lines.remove(0);
    let mut second =
        teamlead_relay::Link::relay(pair.relay_home().clone(), identity("remote-host"));
    second.connect(std::time::Instant::now());
    let started = std::time::Instant::now();
    let result = second.on_line(hello.trim_end().as_bytes(), std::time::Instant::now());
    let waited = started.elapsed();
    assert!(
        matches!(
            result,
            Err(teamlead_relay::LinkError::Store(
                teamlead_protocol::store::StoreError::LockTimeout { .. }
            ))
        ),
        "{result:?}"
    );
    assert!(
        waited >= teamlead_relay::session::RELAY_LOCK_WAIT,
        "gave up after {waited:?}"
    );
    assert!(!second.is_open());
    // The first relay ends: the next one binds at once.
    pair.relay = teamlead_relay::Link::relay(pair.relay_home().clone(), identity("remote-host"));
    let mut third = teamlead_relay::Link::relay(pair.relay_home().clone(), identity("remote-host"));
    third.connect(std::time::Instant::now());
    let started = std::time::Instant::now();
    let step = third
        .on_line(hello.trim_end().as_bytes(), std::time::Instant::now())
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(third.is_open(), "{:?}", step.events);
}

#[test]
fn the_leads_team_file_reaches_the_relays_host_and_its_updates_replace_the_members() {
    use teamlead_protocol::Member;
    use teamlead_protocol::store::team;
    let mut pair = Pair::new();
    let lead = Member::new("team-lead", TEAM, "/work");
    let alice = Member::new("alice", TEAM, "/remote/work");
    let step = pair
        .lead
        .set_team("team-lead@crew", &[lead.clone(), alice.clone()])
        .unwrap();
    assert!(step.lines.is_empty(), "queued, not sent, while down");
    // The same file again is not queued twice.
    assert!(
        pair.lead
            .set_team("team-lead@crew", &[lead.clone(), alice.clone()])
            .unwrap()
            .lines
            .is_empty()
    );
    pair.connect();
    assert!(run_until(&mut pair, 200, |p| {
        team::read_team(p.relay_home(), TEAM).is_ok_and(|f| f.members.len() == 2)
    }));
    let file = team::read_team(pair.relay_home(), TEAM).unwrap();
    assert_eq!(file.lead_agent_id, "team-lead@crew");
    assert_eq!(file.members[1].name, "alice");
    assert_eq!(file.members[1].cwd, "/remote/work");
    // An update (bob joins, alice leaves) replaces the members; the file's other keys stay.
    team::edit_team(pair.relay_home(), TEAM, |f| {
        f.extra.insert("kept".into(), serde_json::json!(1));
        Ok(())
    })
    .unwrap();
    let bob = Member::new("bob", TEAM, "/remote/work");
    let step = pair.lead.set_team("team-lead@crew", &[lead, bob]).unwrap();
    assert_eq!(step.lines.len(), 1, "sent at once while open");
    pair.take_lead(step);
    assert!(run_until(&mut pair, 200, |p| {
        team::read_team(p.relay_home(), TEAM).is_ok_and(|f| {
            f.members
                .iter()
                .map(|m| m.name.as_str())
                .collect::<Vec<_>>()
                == ["team-lead", "bob"]
        })
    }));
    let file = team::read_team(pair.relay_home(), TEAM).unwrap();
    assert_eq!(file.extra.get("kept"), Some(&serde_json::json!(1)));
    // The lead's own team file is not touched by its own body.
    assert!(team::read_team(pair.lead_home(), TEAM).is_err());
}

#[test]
fn a_slow_step_is_not_the_peers_silence() {
    // The relay's step for the lead's frames took longer than the silence limit (a hello
    // waiting on an old relay's hold, a long outbox sent again): silence counts from its end.
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    pair.advance(SILENCE_LIMIT + Duration::from_millis(500));
    pair.relay.heard_until(pair.now);
    pair.advance(Duration::from_millis(600));
    let step = pair.relay.tick(pair.now).unwrap();
    assert_eq!(
        step.end, None,
        "the relay gave up on a lead it could not hear"
    );
    // Without the step's end, the same clock is silence.
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    pair.advance(SILENCE_LIMIT + Duration::from_millis(1100));
    let step = pair.relay.tick(pair.now).unwrap();
    assert_eq!(step.end, Some(End::Silent));
}

/// `start` (capability of both): the relay runs the line after the route it came behind and
/// answers `started`, once, even when the link drops before the answer and the start is sent
/// again; a member that is not routed there is refused without running anything; a line that
/// fails says why.
#[test]
fn a_start_runs_once_on_the_relays_host_and_its_answer_comes_back() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    pair.connect();
    pair.settle();
    assert!(pair.lead.peer_can("start"));
    let dir = tempfile::tempdir().unwrap();
    let ran = dir.path().join("ran");
    let line = format!("echo once >> {}", ran.display());
    let step = pair.lead.start_session("alice", &line).unwrap();
    pair.take_lead(step);
    // Cut before the relay read it: sent again after the reconnect, run once.
    pair.drop_link();
    pair.connect();
    pair.settle();
    let started = |pair: &Pair, who: &str| {
        pair.events
            .iter()
            .filter_map(|(_, e)| match e {
                teamlead_relay::Event::Started { name, error } if name == who => {
                    Some(error.clone())
                }
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(started(&pair, "alice"), vec![None]);
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "once\n");

    let step = pair.lead.start_session("zed", &line).unwrap();
    pair.take_lead(step);
    pair.settle();
    assert_eq!(
        started(&pair, "zed"),
        vec![Some("zed is not in the route to this host".to_string())]
    );
    assert_eq!(std::fs::read_to_string(&ran).unwrap(), "once\n");

    let step = pair
        .lead
        .start_session("bob", "echo 'no tmux here' >&2; exit 1")
        .unwrap();
    pair.take_lead(step);
    pair.settle();
    assert_eq!(
        started(&pair, "bob"),
        vec![Some("no tmux here".to_string())]
    );
}

#[test]
fn an_entry_handed_to_the_link_goes_at_once_and_its_copy_in_the_file_is_not_sent_again() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    pair.connect();
    pair.settle();
    // Handed over: on the link at once, no tick (no pick-up from the file) in between.
    let handed = InboxEntry::new("team-lead", "handed over");
    let step = pair
        .lead
        .send_entries("alice", std::slice::from_ref(&handed))
        .unwrap();
    assert_eq!(step.lines.len(), 1, "one data frame, written now");
    pair.take_lead(step);
    pair.settle();
    assert_eq!(texts(pair.relay_home(), "alice"), vec!["handed over"]);
    // The lead's own copy, appended after, is not forwarded a second time (not even to be
    // skipped by its relay id on the host: nothing more is queued for alice).
    let queued_for_alice = |pair: &Pair| {
        pair.events
            .iter()
            .filter(|(from, e)| {
                *from == "lead" && matches!(e, Event::Queued { to, .. } if to == "alice")
            })
            .count()
    };
    assert_eq!(queued_for_alice(&pair), 1);
    inbox::append(pair.lead_home(), TEAM, "alice", &handed).unwrap();
    for _ in 0..5 {
        pair.tick();
        pair.settle();
    }
    assert_eq!(queued_for_alice(&pair), 1);
    assert_eq!(texts(pair.relay_home(), "alice"), vec!["handed over"]);
    // The other order: appended and picked up first, then handed: nothing more is sent.
    let picked = InboxEntry::new("team-lead", "picked up first");
    inbox::append(pair.lead_home(), TEAM, "bob", &picked).unwrap();
    pair.tick();
    pair.settle();
    let step = pair.lead.send_entries("bob", &[picked]).unwrap();
    assert!(step.lines.is_empty(), "forwarded already: {:?}", step.lines);
    assert_eq!(texts(pair.relay_home(), "bob"), vec!["picked up first"]);
    // A member whose inbox does not go to this host is left to the file.
    let step = pair
        .lead
        .send_entries("carol", &[InboxEntry::new("team-lead", "local")])
        .unwrap();
    assert!(step.lines.is_empty());
    // While the link is down a handed entry waits in the outbox and goes once it is up.
    pair.drop_link();
    let waiting = InboxEntry::new("team-lead", "while down");
    let step = pair
        .lead
        .send_entries("alice", std::slice::from_ref(&waiting))
        .unwrap();
    assert!(step.lines.is_empty(), "queued, not sent, while down");
    inbox::append(pair.lead_home(), TEAM, "alice", &waiting).unwrap();
    pair.connect();
    pair.settle();
    for _ in 0..5 {
        pair.tick();
        pair.settle();
    }
    assert_eq!(
        texts(pair.relay_home(), "alice"),
        vec!["handed over", "while down"]
    );
}

#[test]
fn the_leads_end_hands_on_each_entry_for_the_lead_once_as_it_arrives() {
    let mut pair = Pair::new();
    hosted(&mut pair);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = seen.clone();
    pair.lead
        .on_lead_entry(move |e| sink.lock().unwrap().push(e.text));
    pair.connect();
    pair.settle();
    for (to, text) in [("team-lead", "to the lead"), ("carol", "to carol")] {
        inbox::append(pair.relay_home(), TEAM, to, &InboxEntry::new("alice", text)).unwrap();
    }
    pair.tick();
    // Handed on as its frame is read (the batch's append follows), only the lead's own.
    pair.deliver("lead", usize::MAX);
    assert_eq!(*seen.lock().unwrap(), vec!["to the lead"]);
    assert_eq!(texts(pair.lead_home(), "team-lead"), vec!["to the lead"]);
    // The ack lost with the link: the relay sends it again, the lead applies nothing and
    // hands nothing on a second time.
    pair.to_relay.clear();
    pair.drop_link();
    pair.connect();
    pair.settle();
    for _ in 0..5 {
        pair.tick();
        pair.settle();
    }
    assert_eq!(*seen.lock().unwrap(), vec!["to the lead"]);
    assert_eq!(texts(pair.lead_home(), "team-lead"), vec!["to the lead"]);
}
