//! A teammate on another host, led from the local lead server: `/spawn --host` starts teamlead's
//! own teammate in the team's tmux server on a test host (a network namespace with its own
//! sshd), its team directory made there through the link; a message goes each way exactly
//! once; the link is taken down and the teammate is shown `unreachable` within 5 s while it keeps
//! running there; a message sent meanwhile arrives once after the link returns; `/shutdown`
//! ends it, `/kill` ends a second one at once, and `/quit` leaves nothing on the host (no tmux
//! server, no relay).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::hosts_common::crew::*;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};

/// How many entries of an inbox file carry `needle` in their text.
fn count(inbox: &Path, needle: &str) -> usize {
    let Ok(bytes) = std::fs::read(inbox) else {
        return 0;
    };
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&bytes).unwrap_or_default();
    entries
        .iter()
        .filter(|e| e["text"].as_str().is_some_and(|t| t.contains(needle)))
        .count()
}

/// What the host's copy of the team holds (for a failure's message).
fn remote_files(team: &Path) -> String {
    let mut out = String::new();
    for rel in [
        "config.json",
        "inboxes/worker.json",
        "inboxes/team-lead.json",
    ] {
        out += &format!(
            "\n{rel}: {}",
            std::fs::read_to_string(team.join(rel)).unwrap_or_else(|e| e.to_string())
        );
    }
    out
}

/// The lead's processes that run a relay over ssh (`relay --stdio` on their command line).
fn local_relays(runtime_hint: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().parse::<u32>().is_err() {
            continue;
        }
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.starts_with("ssh") && line.contains(runtime_hint) && line.contains("relay") {
            found.push(line);
        }
    }
    found
}

#[test]
fn a_teammate_on_a_host_is_led_across_a_dropped_link() {
    if skip_unless_root() {
        return;
    }
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("box", &host);
    host.give_teamlead();
    let work = tempfile::tempdir().unwrap();
    let mut serve = Serve::start(&lead, work.path(), None);
    let remote_team: PathBuf = host.home().join(".claude/teams/crew");

    // Spawned on the host: its first message (the prompt) runs a command there, and the
    // report comes back to the lead once.
    let out = ctl_ok(
        &lead,
        &[
            "/spawn worker --host box --mode bypassPermissions \"```sh\necho first-$((20+1)) on $(id -un)\n```\"",
        ],
    );
    assert!(out.contains("Spawned worker"), "{out}");
    wait_for(
        "the teammate's first report at the lead",
        Duration::from_secs(60),
        || told(&lead, "first-21") >= 1,
        || format!("{:?} {}", row(&lead, "worker"), remote_files(&remote_team)),
    );
    assert!(
        remote_team.join("config.json").is_file(),
        "the host has the team"
    );
    let status = row(&lead, "worker").unwrap();
    assert_eq!(status["host"], "box", "{status}");
    let config: serde_json::Value = serde_json::from_slice(
        &std::fs::read(lead.home.home().join("teams/crew/config.json")).unwrap(),
    )
    .unwrap();
    let member = config["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["name"] == "worker")
        .unwrap();
    assert_eq!(member["agentId"], "worker@crew");
    assert_eq!(member["teamleadHost"], "box");
    // `hosts list` names the team's teammates on the host.
    let listed = lead.cmd().args(["hosts", "list"]).output().unwrap();
    let table = String::from_utf8_lossy(&listed.stdout);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("box ") && l.ends_with("worker@crew")),
        "{table}"
    );
    assert_eq!(
        told(&lead, &format!("first-21 on {}", host.user)),
        1,
        "ran as the host's user"
    );
    let remote_inbox = remote_team.join("inboxes/worker.json");
    assert_eq!(
        count(&remote_inbox, "first-$((20+1))"),
        1,
        "the prompt arrived once"
    );

    // The link goes down: the teammate is unreachable within 5 s, and keeps running.
    host.set_link(false);
    let down = Instant::now();
    wait_for(
        "worker shown unreachable",
        Duration::from_secs(5),
        || row(&lead, "worker").is_some_and(|r| r["status"] == "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    eprintln!("unreachable after {:?}", down.elapsed());
    ctl_ok(
        &lead,
        &["/msg worker \"```sh\necho second-$((40+2))\n```\""],
    );
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        host_processes(&host)
            .iter()
            .any(|p| p.contains("teammate") && p.contains("worker@crew")),
        "the teammate keeps running: {:?}",
        host_processes(&host)
    );
    let during = row(&lead, "worker").unwrap();
    assert_eq!(during["status"], "unreachable", "{during}");

    // The link returns: the message waiting at the lead is delivered once, and its answer
    // comes back once.
    host.set_link(true);
    wait_for(
        "the message sent while down answered",
        Duration::from_secs(60),
        || told(&lead, "second-42") >= 1,
        || format!("{:?} {}", row(&lead, "worker"), remote_files(&remote_team)),
    );
    wait_for(
        "worker reachable again",
        Duration::from_secs(10),
        || row(&lead, "worker").is_some_and(|r| r["status"] != "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    // A little while for a duplicate to show up, if one were coming.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        count(&remote_inbox, "second-$((40+2))"),
        1,
        "delivered once"
    );
    // Read on the host: the lead's receipts go past delivered (the relay's read marks).
    let receipts = || -> Vec<String> {
        story(&lead)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["kind"] == "receipt" && e["to"] == "worker")
            .map(|e| e["state"].as_str().unwrap_or("").to_string())
            .collect()
    };
    wait_for(
        "a receipt of worker's messages past delivered",
        Duration::from_secs(10),
        || {
            receipts()
                .iter()
                .any(|s| s == "read" || s == "turn started")
        },
        || format!("{:?}", receipts()),
    );
    assert_eq!(told(&lead, "second-42"), 1, "answered once");
    assert_eq!(told(&lead, "first-21"), 1, "the first report once");

    // /shutdown goes over the link as a message; the teammate leaves.
    ctl_ok(&lead, &["/shutdown worker"]);
    wait_for(
        "worker gone after its shutdown",
        Duration::from_secs(30),
        || row(&lead, "worker").is_none_or(|r| r["status"] == "gone"),
        || format!("{:?}", row(&lead, "worker")),
    );
    wait_for(
        "nothing of the teammate left on the host",
        Duration::from_secs(20),
        || {
            !host_processes(&host)
                .iter()
                .any(|p| p.contains("teammate") || p.contains("tmux"))
        },
        || format!("{:?}", host_processes(&host)),
    );

    // /kill runs tmux over the master: a second teammate there is gone at once.
    let out = ctl_ok(
        &lead,
        &["/spawn other --host box --mode bypassPermissions \"```sh\necho third-$((1+2))\n```\""],
    );
    assert!(out.contains("Spawned other"), "{out}");
    wait_for(
        "the second teammate's report",
        Duration::from_secs(60),
        || told(&lead, "third-3") >= 1,
        || format!("{:?} {}", row(&lead, "other"), remote_files(&remote_team)),
    );
    ctl_ok(&lead, &["/kill other"]);
    wait_for(
        "the killed teammate gone, here and there",
        Duration::from_secs(20),
        || {
            row(&lead, "other").is_none()
                && !host_processes(&host)
                    .iter()
                    .any(|p| p.contains("teammate") || p.contains("tmux"))
        },
        || format!("{:?} {:?}", row(&lead, "other"), host_processes(&host)),
    );
    ctl_ok(&lead, &["/quit"]);
    wait_for(
        "the lead server exits",
        Duration::from_secs(30),
        || serve.0.try_wait().ok().flatten().is_some(),
        String::new,
    );
    let hint = lead.control_dir().display().to_string();
    wait_for(
        "no relay left, here or there",
        Duration::from_secs(10),
        || {
            local_relays(&hint).is_empty()
                && !host_processes(&host).iter().any(|p| p.contains("relay"))
        },
        || format!("{:?} {:?}", local_relays(&hint), host_processes(&host)),
    );
}
