//! The life of a teammate on another host, led from the local lead server (a test host is a
//! network namespace with its own sshd, user and HOME): its pane read and typed into over the
//! host's ssh master, `/interrupt` and `/steer` of a busy one, an unreachable host said at
//! once; a lead server SIGKILLed and started again re-binds it (a message round trip after),
//! and `/respawn` starts a killed one again on its host; a partition shorter than the grace
//! reaps nothing; a lead gone for longer than the grace leaves nothing running on the host,
//! and `teamlead clean --orphans` run there (over ssh, as the host's user) refuses a live team
//! and one whose lead left less than the grace ago, and removes a dead lead's leftovers.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use teamlead::backend::PaneKey;
use teamlead::backend::hosts::panes::RemotePane;
use teamlead::backend::hosts::{Connector, Deadlines};
use teamlead::config::HostConfig;

use crate::hosts_common::crew::*;
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};
use crate::programs;

/// Whether some event of the story (a note, a message) says `needle`.
fn said(lead: &TestLead, needle: &str) -> bool {
    story(lead)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .any(|e| e.to_string().contains(needle))
}

fn host_runs(host: &TestHost, needle: &str) -> bool {
    host_processes(host).iter().any(|p| p.contains(needle))
}

/// `teamlead teammate` of `name@crew` runs on the host.
fn teammate_runs(host: &TestHost, name: &str) -> bool {
    host_processes(host)
        .iter()
        .any(|p| p.contains(" teammate ") && p.contains(&format!("{name}@{TEAM}")))
}

/// `ssh` as the host's user, with the lead's ssh config (no master: a plain login, as a person
/// would run it); its output.
fn on_host(lead: &TestLead, host: &TestHost, command: &str) -> std::process::Output {
    std::process::Command::new(programs::required("ssh"))
        .arg("-F")
        .arg(lead.ssh_config())
        .args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=5"])
        .arg(host.destination())
        .arg("--")
        .arg(command)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `teamlead clean --orphans` on the host, as its user, with `grace_ms`: what it printed.
fn clean_on_host(lead: &TestLead, host: &TestHost, grace_ms: u64) -> String {
    let out = on_host(
        lead,
        host,
        &format!("env TEAMLEAD_LEAD_GRACE_MS={grace_ms} ~/.local/bin/teamlead clean --orphans"),
    );
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "clean on the host: {text}");
    text
}

/// A lead with one test host, `box`, that has this build of teamlead.
fn lead_and_host() -> (TestLead, TestHost, tempfile::TempDir) {
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("box", &host);
    host.give_teamlead();
    (lead, host, tempfile::tempdir().unwrap())
}

/// `/spawn NAME --host box` with a code block as its prompt; waits for `report` at the lead.
fn spawn_remote(lead: &TestLead, name: &str, block: &str, report: &str) {
    let out = ctl_ok(
        lead,
        &[&format!(
            "/spawn {name} --host box --mode bypassPermissions \"```sh\n{block}\n```\""
        )],
    );
    assert!(out.contains(&format!("Spawned {name}")), "{out}");
    wait_for(
        "the teammate's first report at the lead",
        Duration::from_secs(60),
        || told(lead, report) >= 1,
        || format!("{:?}", row(lead, name)),
    );
}

/// The remote teammate's pane, as the lead's executor reaches it (the same master).
fn pane_of(lead: &TestLead, host: &TestHost, name: &str, reachable: bool) -> RemotePane {
    let connector = Connector {
        control_dir: lead.control_dir(),
        ssh_config: Some(lead.ssh_config()),
        deadlines: Deadlines::default(),
    };
    let config = HostConfig {
        name: "box".to_string(),
        destination: host.destination(),
        ..Default::default()
    };
    RemotePane {
        host: "box".to_string(),
        connection: connector.connection(&config),
        team: TEAM.to_string(),
        name: name.to_string(),
        reachable,
    }
}

#[test]
fn a_remote_teammates_pane_keys_and_turns_are_reached_over_ssh() {
    if skip_unless_root() {
        return;
    }
    let (lead, host, work) = lead_and_host();
    let serve = Serve::start(&lead, work.path(), Some(30_000));
    spawn_remote(&lead, "worker", "echo pane-mark-$((6*7))", "pane-mark-42");

    // Its pane, read over the master: the output of its command is there.
    let pane = pane_of(&lead, &host, "worker", true);
    wait_for(
        "the command's output in the remote pane",
        Duration::from_secs(10),
        || pane.tail(30).iter().any(|l| l.contains("pane-mark-42")),
        || format!("{:?}", pane.tail(30)),
    );
    assert!(
        pane.tail(30).iter().any(|l| l.contains("worker")),
        "{:?}",
        pane.tail(30)
    );
    pane.send_key(PaneKey::Escape).expect("a key typed there");
    // The jump: `ssh -t` through the lead's master into the session, the way back shown there.
    let (argv, hint) = pane.attach().expect("the jump's command line");
    assert_eq!(argv[0], "ssh");
    assert!(argv.contains(&"-t".to_string()), "{argv:?}");
    assert!(
        argv.iter()
            .any(|a| a.contains(&lead.control_dir().display().to_string())),
        "through the lead's master: {argv:?}"
    );
    let remote = argv.last().unwrap();
    assert!(
        remote.contains("tmux -L teamlead-crew -f /dev/null attach -t =worker")
            && remote.contains("back to the lead"),
        "{remote}"
    );
    assert_eq!(
        hint,
        format!(
            "ssh -t {} tmux -L teamlead-crew attach -t =worker",
            host.destination()
        )
    );
    let lost = pane_of(&lead, &host, "nobody", true);
    assert!(lost.tail(5).is_empty(), "no such session: nothing read");
    assert!(lost.send_key(PaneKey::Escape).is_err());

    // /interrupt of a busy remote teammate: its command stops, it keeps running.
    ctl_ok(&lead, &["/msg worker \"```sh\nsleep 31.7\n```\""]);
    wait_for(
        "the long command to run there",
        Duration::from_secs(30),
        || host_runs(&host, "sleep 31.7"),
        || format!("{:?}", host_processes(&host)),
    );
    let asked = Instant::now();
    ctl_ok(&lead, &["/interrupt worker"]);
    wait_for(
        "the long command stopped",
        Duration::from_secs(10),
        || !host_runs(&host, "sleep 31.7"),
        || format!("{:?}", host_processes(&host)),
    );
    eprintln!("interrupted over ssh in {:?}", asked.elapsed());
    wait_for(
        "the note",
        Duration::from_secs(10),
        || said(&lead, "Interrupted worker's turn."),
        || story(&lead),
    );
    assert!(teammate_runs(&host, "worker"), "it keeps running");

    // /steer: the busy turn stops and the message is its next turn.
    ctl_ok(&lead, &["/msg worker \"```sh\nsleep 32.7\n```\""]);
    wait_for(
        "the second long command to run there",
        Duration::from_secs(30),
        || host_runs(&host, "sleep 32.7"),
        || format!("{:?}", host_processes(&host)),
    );
    ctl_ok(
        &lead,
        &["/steer @worker \"```sh\necho steered-$((1+1))\n```\""],
    );
    wait_for(
        "the steer's answer",
        Duration::from_secs(30),
        || told(&lead, "steered-2") >= 1,
        || story(&lead),
    );
    assert!(!host_runs(&host, "sleep 32.7"), "the steered turn stopped");

    // A host whose link is down: said at once, never a hang.
    ctl_ok(&lead, &["/msg worker \"```sh\nsleep 33.7\n```\""]);
    wait_for(
        "the third long command to run there",
        Duration::from_secs(30),
        || host_runs(&host, "sleep 33.7"),
        || format!("{:?}", host_processes(&host)),
    );
    host.set_link(false);
    wait_for(
        "worker shown unreachable",
        Duration::from_secs(10),
        || row(&lead, "worker").is_some_and(|r| r["status"] == "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    let asked = Instant::now();
    let out = ctl(&lead, &["/interrupt worker"]);
    let answer = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "refused: {answer}");
    assert!(
        answer.contains("Could not interrupt worker: box is unreachable"),
        "{answer}"
    );
    let took = asked.elapsed();
    eprintln!("unreachable said in {took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert!(host_runs(&host, "sleep 33.7"), "nothing was done there");
    host.set_link(true);
    wait_for(
        "worker reachable again",
        Duration::from_secs(15),
        || row(&lead, "worker").is_some_and(|r| r["status"] != "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    serve.quit(&lead);
    wait_for(
        "nothing left on the host",
        Duration::from_secs(20),
        || {
            !host_processes(&host)
                .iter()
                .any(|p| p.contains("teammate") || p.contains("tmux") || p.contains("relay"))
        },
        || format!("{:?}", host_processes(&host)),
    );
}

#[test]
fn a_restarted_lead_rebinds_its_remote_teammate_and_respawns_a_killed_one() {
    if skip_unless_root() {
        return;
    }
    let (lead, host, work) = lead_and_host();
    let mut serve = Serve::start(&lead, work.path(), Some(60_000));
    spawn_remote(&lead, "worker", "echo first-$((20+1))", "first-21");

    // The lead server is killed; a new one on the team re-binds the teammate on the host.
    serve.kill();
    let killed = Instant::now();
    let serve = Serve::start(&lead, work.path(), Some(60_000));
    wait_for(
        "the resume note",
        Duration::from_secs(30),
        || said(&lead, "re-bound worker"),
        || story(&lead),
    );
    eprintln!("re-bound {:?} after the kill", killed.elapsed());
    let status = row(&lead, "worker").unwrap();
    assert_eq!(status["host"], "box", "{status}");
    assert!(
        status["status"] != "stopped" && status["status"] != "unreachable",
        "{status}"
    );
    assert!(teammate_runs(&host, "worker"));
    ctl_ok(
        &lead,
        &["/msg worker \"```sh\necho after-restart-$((2+3))\n```\""],
    );
    wait_for(
        "a round trip after the restart",
        Duration::from_secs(60),
        || told(&lead, "after-restart-5") >= 1,
        || format!("{:?} {}", row(&lead, "worker"), story(&lead)),
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(told(&lead, "after-restart-5"), 1, "once");

    // Its session on the host is killed there: gone for the lead; /respawn starts it again on
    // its host.
    let out = on_host(
        &lead,
        &host,
        "tmux -L teamlead-crew -f /dev/null kill-session -t =worker",
    );
    assert!(out.status.success(), "{out:?}");
    wait_for(
        "worker shown stopped (its session closed)",
        Duration::from_secs(30),
        || row(&lead, "worker").is_some_and(|r| r["status"] == "stopped"),
        || format!("{:?}", row(&lead, "worker")),
    );
    let out = ctl_ok(&lead, &["/respawn worker"]);
    assert!(out.contains("worker"), "{out}");
    wait_for(
        "worker running on its host again",
        Duration::from_secs(30),
        || teammate_runs(&host, "worker"),
        || format!("{out} {:?}", host_processes(&host)),
    );
    ctl_ok(
        &lead,
        &["/msg worker \"```sh\necho respawned-$((3+4))\n```\""],
    );
    wait_for(
        "a round trip after the respawn",
        Duration::from_secs(60),
        || told(&lead, "respawned-7") >= 1,
        || format!("{:?} {}", row(&lead, "worker"), story(&lead)),
    );
    assert_eq!(row(&lead, "worker").unwrap()["host"], "box");
    serve.quit(&lead);
}

#[test]
fn a_host_reaps_after_the_grace_not_before_and_clean_there_waits_for_it() {
    if skip_unless_root() {
        return;
    }
    const GRACE_MS: u64 = 15_000;
    let (lead, host, work) = lead_and_host();
    let mut serve = Serve::start(&lead, work.path(), Some(GRACE_MS));
    spawn_remote(&lead, "worker", "echo ready-$((5*5))", "ready-25");
    let team_there: PathBuf = host.home().join(".claude/teams").join(TEAM);
    assert!(team_there.join("config.json").is_file());

    // A live team is left alone by clean on the host.
    let out = clean_on_host(&lead, &host, GRACE_MS);
    assert!(out.contains("left alone: team crew"), "{out}");
    assert!(team_there.join("config.json").is_file(), "{out}");

    // A partition shorter than the grace: the relay there ends (the lead is away), and
    // nothing is reaped; the link comes back and messages flow.
    let cut = Instant::now();
    host.set_link(false);
    wait_for(
        "the relay there ends with its silent link",
        Duration::from_secs(15),
        || !host_runs(&host, "relay"),
        || format!("{:?}", host_processes(&host)),
    );
    eprintln!("the host saw its lead away after {:?}", cut.elapsed());
    // The partition lasts 8 s in all; the teammate runs all along.
    while cut.elapsed() < Duration::from_secs(8) {
        assert!(
            teammate_runs(&host, "worker"),
            "{:?}",
            host_processes(&host)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    host.set_link(true);
    wait_for(
        "a relay there again",
        Duration::from_secs(15),
        || host_runs(&host, "relay"),
        || format!("{:?}", host_processes(&host)),
    );
    eprintln!(
        "the lead was away from the host for about {:?}",
        cut.elapsed()
    );
    ctl_ok(
        &lead,
        &["/msg worker \"```sh\necho after-cut-$((6+6))\n```\""],
    );
    wait_for(
        "a round trip after the partition",
        Duration::from_secs(60),
        || told(&lead, "after-cut-12") >= 1,
        || story(&lead),
    );
    // Until past the grace counted from the cut (it would have been reaped by then), the
    // teammate runs all along.
    while cut.elapsed() < Duration::from_millis(GRACE_MS + 3_000) {
        assert!(
            teammate_runs(&host, "worker"),
            "a partition shorter than the grace reaps nothing: {:?}",
            host_processes(&host)
        );
        std::thread::sleep(Duration::from_millis(100));
    }

    // The lead is killed: the relay ends, clean there waits for the grace, then the teammate
    // leaves by itself and its tmux server with it.
    serve.kill();
    let killed = Instant::now();
    wait_for(
        "the relay there ends",
        Duration::from_secs(10),
        || !host_runs(&host, "relay"),
        || format!("{:?}", host_processes(&host)),
    );
    let out = clean_on_host(&lead, &host, GRACE_MS);
    assert!(
        out.contains("left alone: team crew") && out.contains("grace"),
        "{out}"
    );
    assert!(teammate_runs(&host, "worker"), "{out}");
    assert!(team_there.join("config.json").is_file(), "{out}");
    wait_for(
        "the teammate there reaped",
        Duration::from_millis(GRACE_MS + 15_000),
        || !teammate_runs(&host, "worker") && !host_runs(&host, "tmux"),
        || format!("{:?}", host_processes(&host)),
    );
    let reaped = killed.elapsed();
    eprintln!("reaped {reaped:?} after the lead was killed (grace {GRACE_MS} ms)");
    assert!(
        reaped >= Duration::from_millis(GRACE_MS - 1_000),
        "not before the grace: {reaped:?}"
    );

    // What the dead lead left there: the team's copy with the link's state, and a session
    // in the team's tmux server. clean --orphans removes both.
    let out = on_host(
        &lead,
        &host,
        "tmux -L teamlead-crew -f /dev/null new-session -d -s leftover 'sleep 600'",
    );
    assert!(out.status.success(), "{out:?}");
    assert!(team_there.join(".teamlead/link").is_dir());
    let out = clean_on_host(&lead, &host, GRACE_MS);
    assert!(out.contains("removed: team crew"), "{out}");
    assert!(!team_there.exists(), "{out}");
    wait_for(
        "the team's tmux server there ended",
        Duration::from_secs(10),
        || !host_runs(&host, "tmux") && !host_runs(&host, "sleep 600"),
        || format!("{:?}", host_processes(&host)),
    );
}

/// Issue 29's 60 s partition with the defaults (no grace set anywhere): the host's teammate is
/// shown `unreachable` within 5 s, runs the whole minute there (a host's teammates wait longer
/// than a partition for their lead: `on_host::HOST_GRACE`), is shown as before within 5 s of
/// the link's return, and keeps the task it owns; nothing is cleaned.
#[test]
fn a_60_s_partition_keeps_a_hosts_teammate_and_its_task() {
    if skip_unless_root() {
        return;
    }
    let (lead, host, work) = lead_and_host();
    let serve = Serve::start(&lead, work.path(), None);
    spawn_remote(&lead, "worker", "echo ready-$((5*5))", "ready-25");
    let task = |args: &[&str]| {
        let out = lead
            .cmd()
            .arg("task")
            .args(args)
            .args(["--team", TEAM])
            .output()
            .unwrap();
        assert!(out.status.success(), "task {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // Its task runs for longer than the test: it is busy with it through the partition.
    task(&[
        "add",
        "keep working on the parser",
        "--command",
        "sleep 600",
    ]);
    task(&["claim", "1", "--owner", "worker"]);
    let owner = || {
        let list: serde_json::Value = serde_json::from_str(&task(&["list", "--json"])).unwrap();
        list["tasks"]
            .as_array()
            .and_then(|a| a.iter().find(|t| t["id"] == "1"))
            .map(|t| t["owner"].clone())
    };
    assert_eq!(owner(), Some(serde_json::Value::from("worker")));
    wait_for(
        "the task's command running on the host",
        Duration::from_secs(30),
        || host_runs(&host, "sleep 600"),
        || {
            let dir = host.home().join(".claude/tasks/crew");
            let files: Vec<String> = std::fs::read_dir(&dir)
                .map(|d| {
                    d.flatten()
                        .map(|e| {
                            format!(
                                "{}: {}",
                                e.file_name().to_string_lossy(),
                                std::fs::read_to_string(e.path()).unwrap_or_default()
                            )
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("the host's tasks: {files:?}\n{:?}", host_processes(&host))
        },
    );

    host.set_link(false);
    let cut = Instant::now();
    wait_for(
        "worker shown unreachable",
        Duration::from_secs(5),
        || row(&lead, "worker").is_some_and(|r| r["status"] == "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    eprintln!("unreachable after {:?}", cut.elapsed());
    while cut.elapsed() < Duration::from_secs(60) {
        assert!(
            teammate_runs(&host, "worker") && host_runs(&host, "sleep 600"),
            "the teammate or its task stopped {:?} into the partition: {:?}",
            cut.elapsed(),
            host_processes(&host)
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    host.set_link(true);
    let back = Instant::now();
    wait_for(
        "worker shown as before",
        Duration::from_secs(5),
        || row(&lead, "worker").is_some_and(|r| r["status"] != "unreachable"),
        || format!("{:?}", row(&lead, "worker")),
    );
    eprintln!("re-bound {:?} after the link's return", back.elapsed());
    assert_eq!(
        owner(),
        Some(serde_json::Value::from("worker")),
        "no task unassigned"
    );
    assert!(teammate_runs(&host, "worker"));
    assert!(
        host.home()
            .join(".claude/teams")
            .join(TEAM)
            .join("config.json")
            .is_file(),
        "nothing cleaned on the host"
    );
    serve.quit(&lead);
}
