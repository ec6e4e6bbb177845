//! `teamlead monitor` as a real child process: it prints one digest line per change, with the
//! time since start, for changes made by other processes (the binary itself and the store
//! API). Every wait is a deadline on the child's output; the child is killed on drop.

mod cli_common;

use cli_common::{LineChild, TestHome};
use teamlead::protocol::Member;
use teamlead::store::Home;

fn start_monitor(t: &TestHome, extra: &[&str]) -> LineChild {
    let mut cmd = t.std_cmd();
    cmd.arg("monitor").args(extra);
    let mut child = LineChild::spawn(cmd);
    child.wait_for("monitoring ");
    child
}

fn send(t: &TestHome, team: &str, from: &str, text: &str) {
    t.cmd()
        .args([
            "send",
            "--team",
            team,
            "--to",
            "team-lead",
            "--from",
            from,
            text,
        ])
        .assert()
        .success();
}

#[test]
fn monitor_digests_messages_tasks_and_config_changes() {
    let t = TestHome::fixture("seed-2.1.45");
    let mut monitor = start_monitor(&t, &["codebase-research"]);

    send(
        &t,
        "codebase-research",
        "frontend-engineer",
        "routes mapped",
    );
    let line = monitor.wait_for("inbox team-lead: +1 message from frontend-engineer");
    assert!(line.contains("\"routes mapped\""), "{line}");
    let elapsed = line.split_whitespace().next().unwrap();
    assert!(
        elapsed.starts_with('+') && elapsed.ends_with('s') && elapsed.contains('.'),
        "elapsed time first: {line}"
    );
    assert!(line.contains("codebase-research"), "{line}");

    let frame = r#"{"type":"permission_request","request_id":"perm-1-abcdefg","agent_id":"builder","tool_name":"Bash","description":"run tests","input":{"command":"cargo test"},"permission_suggestions":[]}"#;
    send(&t, "codebase-research", "builder", frame);
    let line = monitor.wait_for("inbox team-lead: +1 permission_request from builder");
    assert!(line.contains("Bash `cargo test`"), "{line}");

    t.cmd()
        .args(["task", "add", "--team", "codebase-research", "Benchmark"])
        .assert()
        .success();
    monitor.wait_for("task 6: pending (new) \"Benchmark\"");
    t.cmd()
        .args([
            "task",
            "claim",
            "6",
            "--team",
            "codebase-research",
            "--owner",
            "builder",
        ])
        .assert()
        .success();
    monitor.wait_for("task 6: in_progress owner=builder (was pending owner=none)");

    let home = Home::new(t.home());
    teamlead::store::add_member(
        &home,
        "codebase-research",
        Member::new("builder", "codebase-research", "/w"),
    )
    .unwrap();
    monitor.wait_for("config: 3 members [team-lead, frontend-engineer, builder] (+builder)");
    teamlead::store::set_active(&home, "codebase-research", "builder", false).unwrap();
    monitor.wait_for("(builder idle)");

    t.cmd()
        .args(["task", "delete", "6", "--team", "codebase-research"])
        .assert()
        .success();
    monitor.wait_for("task 6: deleted");
    assert!(
        monitor.seen.iter().all(|l| !l.contains("lock ")),
        "no lock lines unless asked: {:#?}",
        monitor.seen
    );
}

#[test]
fn monitor_of_every_team_sees_teams_appear_and_go() {
    let t = TestHome::empty();
    let mut monitor = start_monitor(&t, &[]);
    t.write_team("fresh", &["a"]);
    monitor.wait_for("fresh  team directory created");
    monitor.wait_for("fresh  config: 2 members [team-lead, a]");
    send(&t, "fresh", "a", "hello");
    monitor.wait_for("fresh  inbox team-lead: +1 message from a");
    teamlead::store::delete_team(&Home::new(t.home()), "fresh").unwrap();
    monitor.wait_for("fresh  team removed");
}

#[test]
fn monitor_shows_lock_churn_when_asked() {
    let t = TestHome::fixture("seed-2.1.45");
    let mut monitor = start_monitor(&t, &["codebase-research", "--locks"]);
    send(&t, "codebase-research", "frontend-engineer", "x");
    monitor.wait_for("lock acquired: inbox team-lead");
    monitor.wait_for("inbox team-lead: +1 message");
    monitor.wait_for("lock released: inbox team-lead");
}

#[test]
fn monitor_polls_when_asked_to() {
    let t = TestHome::fixture("seed-2.1.45");
    let mut cmd = t.std_cmd();
    cmd.env("TEAMLEAD_WATCH", "poll")
        .args(["monitor", "codebase-research"]);
    let mut monitor = LineChild::spawn(cmd);
    let header = monitor.wait_for("monitoring ");
    assert!(header.contains("(poll)"), "{header}");
    send(&t, "codebase-research", "frontend-engineer", "polled");
    monitor.wait_for("inbox team-lead: +1 message from frontend-engineer");
}
