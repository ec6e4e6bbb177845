//! Connections to test hosts: every call goes through one ssh master per host; a master
//! killed (its socket left stale), a socket that is a dead file, or a master that stopped
//! answering never hangs `hosts list` beyond its deadline, and the next call makes a new
//! master; a host whose link is down is said unreachable within the deadline.

use std::time::{Duration, Instant};

use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};

/// `hosts list --json` for this lead, its rows and how long it took.
fn list(lead: &TestLead) -> (Vec<serde_json::Value>, Duration) {
    let started = Instant::now();
    let out = lead
        .cmd()
        .args(["hosts", "list", "--json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let took = started.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    (rows, took)
}

fn reachable(rows: &[serde_json::Value], name: &str) -> bool {
    rows.iter()
        .find(|r| r["name"] == name)
        .unwrap_or_else(|| panic!("no row {name}: {rows:?}"))["reachable"]
        == true
}

/// A lead with one host `h` set up right.
fn lead_with_host() -> (TestLead, TestHost) {
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("h", &host);
    (lead, host)
}

/// The one master of this lead, once `hosts list` has run.
fn the_master(lead: &TestLead) -> i32 {
    let masters = lead.masters();
    assert_eq!(masters.len(), 1, "one master per host: {masters:?}");
    masters[0]
}

#[test]
fn every_call_goes_through_one_master() {
    if skip_unless_root() {
        return;
    }
    let (lead, host) = lead_with_host();
    for round in 0..3 {
        let (rows, took) = list(&lead);
        eprintln!("hosts list, call {round}: {took:?}");
        assert!(reachable(&rows, "h"), "{rows:?}");
        lead.cmd().args(["hosts", "check", "h"]).output().unwrap();
    }
    the_master(&lead);
    let logins = host.sshd_log().matches("Accepted publickey").count();
    assert_eq!(logins, 1, "six calls, one login: {}", host.sshd_log());
    // Forgetting the host ends its master.
    lead.cmd().args(["hosts", "remove", "h"]).assert().success();
    let end = Instant::now() + Duration::from_secs(5);
    while !lead.masters().is_empty() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(lead.masters().is_empty(), "{:?}", lead.masters());
    assert!(lead.sockets().is_empty(), "{:?}", lead.sockets());
}

#[test]
fn a_killed_master_is_replaced_without_a_hang() {
    if skip_unless_root() {
        return;
    }
    let (lead, _host) = lead_with_host();
    list(&lead);
    let old = the_master(&lead);
    // SAFETY: the master this test's lead started.
    unsafe { libc::kill(old, libc::SIGKILL) };
    assert_eq!(lead.sockets().len(), 1, "the socket is left behind, stale");
    let (rows, took) = list(&lead);
    assert!(reachable(&rows, "h"), "{rows:?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    let new = the_master(&lead);
    assert_ne!(new, old, "a new master");
}

#[test]
fn a_socket_that_is_a_dead_file_is_replaced() {
    if skip_unless_root() {
        return;
    }
    let (lead, _host) = lead_with_host();
    list(&lead);
    let old = the_master(&lead);
    let socket = lead.sockets().pop().unwrap();
    // SAFETY: the master this test's lead started.
    unsafe { libc::kill(old, libc::SIGKILL) };
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, "not a socket").unwrap();
    let (rows, took) = list(&lead);
    assert!(reachable(&rows, "h"), "{rows:?}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_ne!(the_master(&lead), old);
}

#[test]
fn a_master_that_stopped_answering_is_replaced_within_the_deadline() {
    if skip_unless_root() {
        return;
    }
    let (lead, _host) = lead_with_host();
    list(&lead);
    let old = the_master(&lead);
    // SAFETY: the master this test's lead started: it keeps its socket but never answers.
    unsafe { libc::kill(old, libc::SIGSTOP) };
    let (rows, took) = list(&lead);
    assert!(reachable(&rows, "h"), "{rows:?}");
    assert!(took < Duration::from_secs(15), "took {took:?}");
    let new = the_master(&lead);
    assert_ne!(new, old, "the stopped master was ended and replaced");
}

#[test]
fn a_host_whose_link_is_down_is_unreachable_within_the_deadline() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let up = TestHost::start(HostSetup::default());
    let down = TestHost::start(HostSetup::default());
    for (name, host) in [("up", &up), ("down", &down)] {
        lead.trust(host);
        lead.add_host(name, host);
    }
    let (rows, _) = list(&lead);
    assert!(
        reachable(&rows, "up") && reachable(&rows, "down"),
        "{rows:?}"
    );
    // A partition with the master up: traffic to the host goes nowhere.
    down.set_link(false);
    let (rows, took) = list(&lead);
    assert!(reachable(&rows, "up"), "{rows:?}");
    assert!(!reachable(&rows, "down"), "{rows:?}");
    let error = rows.iter().find(|r| r["name"] == "down").unwrap()["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.starts_with("host unreachable:"), "{error}");
    eprintln!("hosts list with one host partitioned took {took:?}: {error}");
    assert!(took < Duration::from_secs(20), "took {took:?}");
    // The link back: the next call reaches it again (through a new master).
    down.set_link(true);
    let (rows, _) = list(&lead);
    assert!(reachable(&rows, "down"), "{rows:?}");
}

#[test]
fn the_table_says_unreachable_for_a_host_that_is_gone() {
    if skip_unless_root() {
        return;
    }
    let (lead, host) = lead_with_host();
    host.set_link(false);
    let out = lead
        .cmd()
        .args(["hosts", "list"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("HOST"), "{stdout}");
    assert!(
        lines[1].starts_with("h ") && lines[1].contains(" unreachable "),
        "{stdout}"
    );
    assert!(lines[2].starts_with("h: host unreachable: "), "{stdout}");
}

#[test]
fn calls_at_once_from_several_processes_share_one_master() {
    if skip_unless_root() {
        return;
    }
    let (lead, host) = lead_with_host();
    let children: Vec<std::process::Child> = (0..4)
        .map(|_| {
            let mut cmd = std::process::Command::new(lead.cmd().get_program());
            let probe = lead.cmd();
            cmd.args(probe.get_args());
            for (key, value) in probe.get_envs() {
                match value {
                    Some(v) => cmd.env(key, v),
                    None => cmd.env_remove(key),
                };
            }
            cmd.args(["hosts", "check", "h"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        child.wait().unwrap();
    }
    the_master(&lead);
    let logins = host.sshd_log().matches("Accepted publickey").count();
    assert_eq!(logins, 1, "four processes, one login: {}", host.sshd_log());
}
