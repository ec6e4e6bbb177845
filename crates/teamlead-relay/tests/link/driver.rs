//! The blocking driver over real pipes: a relay run as `teamlead relay --stdio` runs it
//! ([`teamlead_relay::run_stdio`]) against a lead driven over the other ends, entries carried
//! both ways, and garbage on the relay's input ending it with an error.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::inbox;
use teamlead_relay::{DriveError, DriverOptions, Ended, Link, LinkError, RelayOptions};
use teamlead_test_support::store::{TempHome, wait_until};

use crate::support::{LINK, TEAM, identity, texts};

fn relay_options() -> RelayOptions {
    RelayOptions {
        version: "0.1.0".into(),
        poll: Duration::from_millis(20),
    }
}

#[test]
fn a_stdio_relay_carries_entries_both_ways_over_pipes() {
    let lead_home = TempHome::new();
    let relay_home = TempHome::new();
    let (relay_in, to_relay) = std::io::pipe().unwrap();
    let (from_relay, relay_out) = std::io::pipe().unwrap();
    let home = relay_home.home.clone();
    let relay = std::thread::spawn(move || {
        teamlead_relay::run_stdio(&home, relay_in, relay_out, &relay_options())
    });
    let stop = Arc::new(AtomicBool::new(false));
    let lead_home_path = lead_home.home.clone();
    let lead_stop = stop.clone();
    let lead = std::thread::spawn(move || {
        let mut link = Link::lead(lead_home_path, TEAM, LINK, identity("lead-host")).unwrap();
        link.set_hosted(&["alice".to_string()]).unwrap();
        let options = DriverOptions {
            poll: Duration::from_millis(20),
            stop: Some(lead_stop),
            ..DriverOptions::default()
        };
        teamlead_relay::drive(&mut link, from_relay, to_relay, &options, |_| {})
    });
    inbox::append(
        &lead_home.home,
        TEAM,
        "alice",
        &InboxEntry::new("team-lead", "over the pipe"),
    )
    .unwrap();
    inbox::append(
        &relay_home.home,
        TEAM,
        "team-lead",
        &InboxEntry::new("alice", "and back"),
    )
    .unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        texts(&relay_home.home, "alice") == ["over the pipe"]
            && texts(&lead_home.home, "team-lead") == ["and back"]
    }));
    // The lead ends its side: its output closes, the relay sees the end of its input.
    stop.store(true, Ordering::Relaxed);
    assert_eq!(lead.join().unwrap().unwrap(), Ended::Stopped);
    assert_eq!(relay.join().unwrap().unwrap(), Ended::Closed);
}

#[test]
fn garbage_on_the_relays_input_ends_it_with_an_error() {
    let relay_home = TempHome::new();
    let (relay_in, mut to_relay) = std::io::pipe().unwrap();
    let (_from_relay, relay_out) = std::io::pipe().unwrap();
    let home = relay_home.home.clone();
    let relay = std::thread::spawn(move || {
        teamlead_relay::run_stdio(&home, relay_in, relay_out, &relay_options())
    });
    to_relay.write_all(b"GET / HTTP/1.1\n").unwrap();
    let result = relay.join().unwrap();
    assert!(
        matches!(result, Err(DriveError::Link(LinkError::Wire(_)))),
        "{result:?}"
    );
    // A line without end past 1 MiB, too.
    let (relay_in, mut to_relay) = std::io::pipe().unwrap();
    let (_from_relay, relay_out) = std::io::pipe().unwrap();
    let home = relay_home.home.clone();
    let relay = std::thread::spawn(move || {
        teamlead_relay::run_stdio(&home, relay_in, relay_out, &relay_options())
    });
    let _ = to_relay.write_all(&vec![b'{'; (1 << 20) + 10]);
    let result = relay.join().unwrap();
    assert!(
        matches!(result, Err(DriveError::Link(LinkError::Wire(_)))),
        "{result:?}"
    );
}

/// A new local entry goes to the peer when its inbox file changes, not at the next poll: a lead
/// whose poll is a minute still carries each of five entries, written one after the other, long
/// before its first poll would come (each must arrive within 8 s).
#[test]
fn a_new_entry_goes_when_its_inbox_changes_not_at_the_next_poll() {
    let lead_home = TempHome::new();
    let relay_home = TempHome::new();
    let (relay_in, to_relay) = std::io::pipe().unwrap();
    let (from_relay, relay_out) = std::io::pipe().unwrap();
    let home = relay_home.home.clone();
    let relay = std::thread::spawn(move || {
        teamlead_relay::run_stdio(&home, relay_in, relay_out, &relay_options())
    });
    let say = |text: &str| {
        inbox::append(
            &lead_home.home,
            TEAM,
            "alice",
            &InboxEntry::new("team-lead", text),
        )
        .unwrap();
    };
    // Before the link starts (its inbox directory is there to watch).
    say("first");
    let stop = Arc::new(AtomicBool::new(false));
    let lead_home_path = lead_home.home.clone();
    let lead_stop = stop.clone();
    let lead = std::thread::spawn(move || {
        let mut link = Link::lead(lead_home_path, TEAM, LINK, identity("lead-host")).unwrap();
        link.set_hosted(&["alice".to_string()]).unwrap();
        let options = DriverOptions {
            poll: Duration::from_secs(60),
            stop: Some(lead_stop),
            ..DriverOptions::default()
        };
        teamlead_relay::drive(&mut link, from_relay, to_relay, &options, |_| {})
    });
    assert!(wait_until(Duration::from_secs(10), || {
        texts(&relay_home.home, "alice") == ["first"]
    }));
    for n in 0..5 {
        let text = format!("entry-{n}");
        say(&text);
        assert!(
            wait_until(Duration::from_secs(8), || {
                texts(&relay_home.home, "alice").contains(&text)
            }),
            "{text} did not reach the host before the lead's next poll: {:?}",
            texts(&relay_home.home, "alice")
        );
    }
    stop.store(true, Ordering::Relaxed);
    assert_eq!(lead.join().unwrap().unwrap(), Ended::Stopped);
    let ended = relay.join().unwrap().unwrap();
    assert!(
        matches!(
            ended,
            Ended::Closed | Ended::Link(teamlead_relay::End::Silent)
        ),
        "{ended:?}"
    );
}
