//! `teamlead relay --stdio`, the real binary as the lead starts it over ssh: a lead driven in
//! the test over the child's standard input and output, two temporary homes (the lead's host
//! and the remote host), entries both ways exactly once, a relay killed with SIGKILL and started
//! again resuming without loss or repeat, an old lead refused in words, and `--help` saying
//! what it is for.

use std::process::{Child, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, inbox};
use teamlead_relay::link_dir::LinkDir;
use teamlead_relay::{DriveError, DriverOptions, Ended, Identity, Link};

use crate::cli_common::TestHome;

const TEAM: &str = "crew";
const LINK: &str = "0b5e55ed-0000-4000-8000-000000000029";

fn texts(home: &Home, member: &str) -> Vec<String> {
    inbox::read(home, TEAM, member)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.text)
        .collect()
}

fn wait(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A relay child and the lead's end driving it from a thread.
struct Session {
    child: Child,
    stop: Arc<AtomicBool>,
    lead: JoinHandle<Result<Ended, DriveError>>,
}

fn start(remote: &TestHome, lead_home: &Home, identity: Identity) -> Session {
    let mut child = remote
        .std_cmd()
        .args(["relay", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let to_relay = child.stdin.take().unwrap();
    let from_relay = child.stdout.take().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let options = DriverOptions {
        poll: Duration::from_millis(20),
        stop: Some(stop.clone()),
        ..DriverOptions::default()
    };
    let home = lead_home.clone();
    let lead = std::thread::spawn(move || {
        let mut link = Link::lead(home, TEAM, LINK, identity).unwrap();
        link.set_hosted(&["alice".to_string()]).unwrap();
        teamlead_relay::drive(&mut link, from_relay, to_relay, &options, |_| {})
    });
    Session { child, stop, lead }
}

fn lead_identity() -> Identity {
    Identity::this_build(env!("CARGO_PKG_VERSION"))
}

#[test]
fn the_relay_carries_entries_both_ways_once_and_survives_a_kill() {
    let lead = TestHome::empty();
    let remote = TestHome::empty();
    let lead_home = Home::new(lead.home());
    let remote_home = Home::new(remote.home());
    let mut session = start(&remote, &lead_home, lead_identity());
    for i in 0..5 {
        inbox::append(
            &lead_home,
            TEAM,
            "alice",
            &InboxEntry::new("team-lead", format!("task {i}")),
        )
        .unwrap();
        inbox::append(
            &remote_home,
            TEAM,
            "team-lead",
            &InboxEntry::new("alice", format!("done {i}")),
        )
        .unwrap();
    }
    wait("the first entries on both hosts", || {
        texts(&remote_home, "alice").len() == 5 && texts(&lead_home, "team-lead").len() == 5
    });
    // The relay is killed; what is written meanwhile waits, and a new relay takes it over.
    session.child.kill().unwrap();
    session.child.wait().unwrap();
    let ended = session.lead.join().unwrap();
    assert!(matches!(ended, Ok(Ended::Closed) | Err(_)), "{ended:?}");
    for i in 5..10 {
        inbox::append(
            &lead_home,
            TEAM,
            "alice",
            &InboxEntry::new("team-lead", format!("task {i}")),
        )
        .unwrap();
        inbox::append(
            &remote_home,
            TEAM,
            "team-lead",
            &InboxEntry::new("alice", format!("done {i}")),
        )
        .unwrap();
    }
    let session = start(&remote, &lead_home, lead_identity());
    wait("every entry on both hosts", || {
        texts(&remote_home, "alice").len() >= 10 && texts(&lead_home, "team-lead").len() >= 10
    });
    // Until both sides have every data acknowledged (the route, ten entries and the task list's
    // snapshot of each of the two connections one way, ten entries the other), then exactly
    // once each, in order.
    wait("both outboxes acknowledged", || {
        let lead_dir = LinkDir::open(&lead_home, TEAM, LINK).unwrap();
        let remote_dir = LinkDir::open(&remote_home, TEAM, LINK).unwrap();
        (lead_dir.acked(), lead_dir.unacked().len()) == (13, 0)
            && (remote_dir.acked(), remote_dir.unacked().len()) == (10, 0)
    });
    let tasks: Vec<String> = (0..10).map(|i| format!("task {i}")).collect();
    let dones: Vec<String> = (0..10).map(|i| format!("done {i}")).collect();
    assert_eq!(texts(&remote_home, "alice"), tasks);
    assert_eq!(texts(&lead_home, "team-lead"), dones);
    // The lead closes the link: the relay exits 0 and says nothing.
    session.stop.store(true, Ordering::Relaxed);
    assert_eq!(session.lead.join().unwrap().unwrap(), Ended::Stopped);
    let out = session.child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

#[test]
fn a_lead_of_another_protocol_is_refused_in_words() {
    let lead = TestHome::empty();
    let remote = TestHome::empty();
    let mut old = lead_identity();
    old.proto = 0;
    old.version = "0.0.1".into();
    let session = start(&remote, &Home::new(lead.home()), old);
    let ended = session.lead.join().unwrap().unwrap();
    let Ended::Link(teamlead_relay::End::RefusedByPeer(refusal)) = ended else {
        panic!("not refused: {ended:?}");
    };
    assert!(
        refusal.fix.contains("teamlead hosts install"),
        "{refusal:?}"
    );
    let out = session.child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("error: refused the lead: ") && stderr.contains("link protocol 0"),
        "{stderr}"
    );
}

#[test]
fn relay_help_says_the_lead_starts_it_over_ssh() {
    let t = TestHome::empty();
    let out = t.cmd().args(["relay", "--help"]).output().unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("--stdio"), "{help}");
    assert!(help.contains("started by the lead over ssh"), "{help}");
    assert!(help.contains("people do not run it"), "{help}");
    // Without --stdio it is a usage error, not a relay on the terminal.
    let out = t.cmd().arg("relay").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
