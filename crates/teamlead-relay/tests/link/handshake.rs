//! The wire and the handshake: hellos exchanged and checked, a peer refused for another
//! protocol or a missing capability with why and what to do, and lines that are too long or
//! not frames ending the connection as errors, never panics.

use teamlead_relay::wire::{self, LineBuffer, MAX_LINE};
use teamlead_relay::{End, Event, Frame, Identity, LinkError, Role, WireError};

use crate::support::{LINK, Pair, TEAM, identity};

#[test]
fn hellos_pass_and_name_the_link_the_team_and_what_each_applied() {
    let mut pair = Pair::new();
    pair.connect();
    // The lead speaks first; the relay answers for the link and team the lead named.
    let first: Vec<u8> = pair.to_relay.iter().copied().collect();
    let Frame::Hello(hello) = wire::decode(first.strip_suffix(b"\n").unwrap()).unwrap() else {
        panic!("the lead's first line is not a hello");
    };
    assert_eq!(
        (hello.role, hello.link.as_str(), hello.team.as_str()),
        (Role::Lead, LINK, TEAM)
    );
    assert_eq!((hello.proto, hello.recv), (1, 0));
    assert!(hello.caps.iter().any(|c| c == "inbox"));
    pair.settle();
    assert!(pair.lead.is_open() && pair.relay.is_open());
    let up: Vec<_> = pair
        .events
        .iter()
        .filter_map(|(side, e)| match e {
            Event::Up(peer) => Some((*side, peer.role, peer.host.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        up,
        vec![
            ("relay", Role::Lead, "lead-host".to_string()),
            ("lead", Role::Relay, "remote-host".to_string())
        ]
    );
    assert!(pair.ends.is_empty(), "{:?}", pair.ends);
    // The link's state is on the remote host's disk, in the team's directory, private.
    let dir = pair
        .relay_home()
        .teamlead_dir(TEAM)
        .unwrap()
        .join("link")
        .join(LINK);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "{}", dir.display());
}

#[test]
fn a_relay_of_another_protocol_is_refused_with_why_and_fix() {
    let mut old = identity("old-host");
    old.proto = 2;
    old.version = "0.0.9".into();
    let mut pair = Pair::with(identity("lead-host"), old);
    pair.connect();
    pair.settle();
    assert!(!pair.lead.is_open() && !pair.relay.is_open());
    // The relay saw the lead's protocol and refused; the lead got why and what to do.
    let Some((_, End::RefusedByPeer(refusal))) = pair.ends.iter().find(|(s, _)| *s == "lead")
    else {
        panic!("the lead was not refused: {:?}", pair.ends);
    };
    println!("why: {}\nfix: {}", refusal.why, refusal.fix);
    assert!(
        refusal.why.contains("protocol 1") && refusal.why.contains("speaks 2"),
        "{}",
        refusal.why
    );
    assert!(
        refusal.fix.contains("teamlead hosts install old-host"),
        "{}",
        refusal.fix
    );
    assert!(matches!(
        pair.ends.iter().find(|(s, _)| *s == "relay"),
        Some((_, End::Refused(_)))
    ));
}

#[test]
fn a_relay_without_a_needed_capability_is_refused() {
    let mut lacking = identity("bare-host");
    lacking.caps = vec!["heartbeat".into()];
    let mut pair = Pair::with(identity("lead-host"), lacking);
    pair.connect();
    pair.settle();
    let Some((_, End::Refused(refusal))) = pair.ends.iter().find(|(s, _)| *s == "lead") else {
        panic!("the lead did not refuse: {:?}", pair.ends);
    };
    println!("why: {}\nfix: {}", refusal.why, refusal.fix);
    assert!(
        refusal.why.contains("bare-host") && refusal.why.ends_with(": inbox"),
        "{}",
        refusal.why
    );
    assert!(refusal.fix.contains("teamlead hosts install bare-host"));
    // The relay was told, with the same words.
    assert!(matches!(
        pair.ends.iter().find(|(s, _)| *s == "relay"),
        Some((_, End::RefusedByPeer(r))) if r == refusal
    ));
}

#[test]
fn two_leads_refuse_each_other() {
    let mut pair = Pair::new();
    pair.connect();
    let mut lead_hello = identity("other").hello(Role::Lead, LINK, TEAM, 0, 0);
    lead_hello.version = "0.1.0".into();
    let line = wire::encode(&Frame::Hello(lead_hello));
    let step = pair
        .lead
        .on_line(line.trim_end().as_bytes(), pair.now)
        .unwrap();
    assert!(matches!(step.end, Some(End::Refused(_))), "{step:?}");
    assert!(step.lines[0].contains(r#""t":"refused""#));
}

#[test]
fn lines_too_long_or_not_frames_are_errors_not_panics() {
    // The line buffer refuses a line past 1 MiB even before its newline comes.
    let mut buffer = LineBuffer::new();
    assert_eq!(
        buffer.feed(&vec![b'x'; MAX_LINE + 1]),
        Err(WireError::TooLong)
    );
    // Exactly 1 MiB is a line.
    let mut buffer = LineBuffer::new();
    let mut exact = vec![b' '; MAX_LINE];
    exact[0] = b'{';
    exact[MAX_LINE - 1] = b'}';
    exact.push(b'\n');
    assert_eq!(buffer.feed(&exact).unwrap().len(), 1);
    let mut pair = Pair::new();
    pair.connect();
    pair.settle();
    for bad in [
        &b"not json"[..],
        b"{\"t\":\"nonsense\"}",
        b"{\"t\":\"data\",\"seq\":\"one\"}",
        b"[1,2,3]",
        b"\xff\xfe",
        b"{\"t\":\"ack\"}",
    ] {
        let result = pair.relay.on_line(bad, pair.now);
        assert!(
            matches!(result, Err(LinkError::Wire(_))),
            "{}: {result:?}",
            String::from_utf8_lossy(bad)
        );
    }
    assert!(matches!(
        pair.relay.on_line(&vec![b'x'; MAX_LINE + 1], pair.now),
        Err(LinkError::Wire(WireError::TooLong))
    ));
}

#[test]
fn data_before_the_hello_breaks_the_link() {
    let mut pair = Pair::new();
    pair.connect();
    let line = wire::encode(&Frame::Ack { seq: 3 });
    let result = pair.relay.on_line(line.trim_end().as_bytes(), pair.now);
    assert!(matches!(result, Err(LinkError::Protocol(_))), "{result:?}");
}

#[test]
fn an_older_relay_without_the_task_mirror_is_refused_by_the_lead_with_what_to_do() {
    // A relay of the build before the task list crossed the link: inboxes and the team file.
    let mut older = identity("old-host");
    older.caps = vec!["inbox".into(), "team".into()];
    older.version = "0.0.9".into();
    let mut lead = Identity::lead_build("0.1.0");
    lead.host = "lead-host".into();
    let mut pair = Pair::with(lead, older);
    pair.connect();
    pair.settle();
    let Some((_, End::Refused(refusal))) = pair.ends.iter().find(|(s, _)| *s == "lead") else {
        panic!("the lead did not refuse: {:?}", pair.ends);
    };
    println!("why: {}\nfix: {}", refusal.why, refusal.fix);
    assert!(
        refusal.why.contains("teamlead 0.0.9 on old-host")
            && refusal
                .why
                .ends_with("capabilities this link needs: tasks, member"),
        "{}",
        refusal.why
    );
    assert!(refusal.fix.contains("install teamlead 0.1.0 on old-host"));
    assert!(refusal.fix.contains("teamlead hosts install old-host"));
    // This build's relay has what the lead needs.
    let mut pair = Pair::with(Identity::lead_build("0.1.0"), identity("new-host"));
    pair.connect();
    pair.settle();
    assert!(pair.ends.is_empty(), "{:?}", pair.ends);
    assert!(pair.lead.is_open());
}
