//! `teamlead monitor` as a real child process: it prints one digest line per change, with the
//! time since start, for changes made by other processes (the binary itself and the store
//! API); it reports every message a real lead (in a PTY) drains at once, each exactly once;
//! it survives hostile changes and never prints a raw control character. Every wait is a
//! deadline on the child's output; every child is killed on drop.

use crate::cli_common;
use crate::monitor_common;

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

fn raw_monitor(t: &TestHome, team: &str) -> monitor_common::RawChild {
    let mut cmd = t.std_cmd();
    cmd.args(["monitor", team]);
    let mut child = monitor_common::RawChild::spawn(cmd);
    child.wait_for("monitoring ");
    child
}

/// A lead takes each entry from its inbox as it comes (recorded in its delivery log) and
/// removes what it took once the inbox is quiet; monitor reports every message and every idle
/// notification sent to it exactly once (seen in the inbox and in the log), and the removal.
#[test]
fn monitor_reports_each_message_a_running_lead_drains_exactly_once() {
    let t = TestHome::empty();
    let work = tempfile::tempdir().unwrap();
    let home = Home::new(t.home());
    let team = "drained";
    let lead = crate::pty_harness::lead(work.path())
        .home(t.home())
        .logs(t.logs())
        .args(["--team", team, "--backend", "in-process"])
        .size(120, 40)
        .start();
    monitor_common::wait_until("the lead to hold its team", || {
        teamlead::store::is_lead_alive(&home, team)
    });
    let mut monitor = raw_monitor(&t, team);

    let run = uuid::Uuid::new_v4().simple().to_string();
    let messages: Vec<String> = (1..=6).map(|i| format!("msg-{i}-{run}")).collect();
    let idle_tasks: Vec<String> = (1..=3).map(|i| format!("{}{i}", &run[..6])).collect();
    for (i, text) in messages.iter().enumerate() {
        send(&t, team, "alpha", text);
        if let Some(task) = idle_tasks.get(i) {
            let frame = serde_json::json!({
                "type": "idle_notification", "from": "alpha",
                "timestamp": "2026-01-01T00:00:00.000Z", "idleReason": "available",
                "completedTaskId": task, "completedStatus": "resolved"
            });
            send(&t, team, "alpha", &frame.to_string());
        }
    }
    let log = home.delivery_log_path(team, "team-lead").unwrap();
    let delivered = || {
        std::fs::read_to_string(&log)
            .map(|t| t.lines().count())
            .unwrap_or(0)
    };
    monitor_common::wait_until("the lead to deliver all nine entries", || delivered() >= 9);
    let last = messages.last().unwrap();
    lead.wait_screen("the last message", |s| s.contains(last.as_str()));
    // One more message: once it is reported, every event before it has been digested.
    let sync = format!("sync-{run}");
    send(&t, team, "alpha", &sync);
    monitor.wait_for(&sync);

    for text in &messages {
        let line = monitor.wait_for(text);
        assert!(line.contains("message from alpha"), "{line}");
        assert_eq!(
            monitor.count(text),
            1,
            "{text} once:\n{}",
            monitor.lines().join("\n")
        );
    }
    for task in &idle_tasks {
        let needle = format!("task #{task} done");
        let line = monitor.wait_for(&needle);
        assert!(line.contains("idle_notification from alpha"), "{line}");
        assert!(line.contains("alpha is idle (available"), "{line}");
        assert_eq!(
            monitor.count(&needle),
            1,
            "{needle} once:\n{}",
            monitor.lines().join("\n")
        );
    }
    // The removal comes a second after the inbox went quiet.
    let removal = monitor.wait_for(" delivered (");
    assert!(removal.contains("inbox team-lead: -"), "{removal}");
    assert!(monitor.running());
}

/// Writes `bytes` to `path` by renaming a temp file over it (one change event).
fn replace_with(path: &std::path::Path, bytes: &[u8]) {
    let tmp = path.with_extension("json.tmp.0a1b2c3d");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Hostile changes, one by one: monitor prints a line for each, keeps running, and its output
/// never holds a raw control character.
#[test]
fn monitor_survives_hostile_changes_and_escapes_everything() {
    let t = TestHome::empty();
    t.write_team("h", &["alpha"]);
    let team_dir = t.home().join("teams/h");
    let inbox = team_dir.join("inboxes/alpha.json");
    std::fs::write(&inbox, "[]").unwrap();
    let mut monitor = raw_monitor(&t, "h");
    let step =
        |monitor: &mut monitor_common::RawChild, what: &str, expect: &str, act: &dyn Fn()| {
            let before = monitor.lines().len();
            act();
            let line = monitor.wait_for_after(before, expect);
            assert!(monitor.running(), "monitor stopped after {what}");
            line
        };

    let evil = "\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}rev\u{9b}31m\u{2066}x\u{85}\r\tend";
    let line = step(
        &mut monitor,
        "escapes in a message",
        "+1 message from alpha",
        &|| send(&t, "h", "alpha", evil),
    );
    assert!(
        line.contains("\\e]0;pwned\\x07\\e[2J\\u{202e}rev"),
        "{line}"
    );
    step(
        &mut monitor,
        "escapes in a member name",
        "config: 3 members",
        &|| {
            let config = team_dir.join("config.json");
            let mut v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
            let mut m = v["members"][1].clone();
            m["name"] = "\u{1b}[31mred\u{9b}".into();
            v["members"].as_array_mut().unwrap().push(m);
            replace_with(
                &config,
                serde_json::to_string_pretty(&v).unwrap().as_bytes(),
            );
        },
    );
    step(&mut monitor, "escapes in a task", "(new)", &|| {
        let tasks = t.home().join("tasks/h");
        std::fs::create_dir_all(&tasks).unwrap();
        replace_with(
            &tasks.join("7.json"),
            br#"{"id":"7","subject":"\u001b[2Jwipe\u202e","description":"","status":"pending","blocks":[],"blockedBy":[]}"#,
        );
    });
    step(
        &mut monitor,
        "a FIFO replacing an inbox",
        "inbox alpha: is now a FIFO",
        &|| {
            std::fs::remove_file(&inbox).unwrap();
            mkfifo(&inbox);
        },
    );
    step(
        &mut monitor,
        "a symlink replacing an inbox",
        "inbox alpha: is now a symbolic link",
        &|| {
            std::fs::remove_file(&inbox).unwrap();
            let target = t.root.path().join("outside.json");
            std::fs::write(
                &target,
                "[{\"from\":\"\u{1b}[2J\",\"text\":\"x\",\"timestamp\":\"t\"}]",
            )
            .unwrap();
            std::os::unix::fs::symlink(&target, &inbox).unwrap();
        },
    );
    std::fs::remove_file(&inbox).unwrap();
    step(&mut monitor, "a huge inbox", "more than", &|| {
        let mut big = b"[".to_vec();
        big.resize(17 * 1024 * 1024, b' ');
        big.push(b']');
        replace_with(&inbox, &big);
    });
    step(
        &mut monitor,
        "a 50,000-deep inbox",
        "recursion limit",
        &|| {
            replace_with(&inbox, "[".repeat(50_000).as_bytes());
        },
    );
    step(
        &mut monitor,
        "invalid UTF-8",
        "inbox alpha: unreadable",
        &|| {
            replace_with(
                &inbox,
                b"[{\"from\":\"\xff\xfe\",\"text\":\"x\",\"timestamp\":\"t\"}]",
            );
        },
    );
    step(
        &mut monitor,
        "an escape in a file name",
        "inbox \\e[2Jx: created",
        &|| {
            std::fs::write(team_dir.join("inboxes/\u{1b}[2Jx.json"), "[]").unwrap();
        },
    );
    step(
        &mut monitor,
        "a FIFO as the delivery log",
        "delivery log of team-lead: is now a FIFO",
        &|| {
            std::fs::create_dir_all(team_dir.join(".teamlead")).unwrap();
            mkfifo(&team_dir.join(".teamlead/delivered-team-lead.jsonl"));
        },
    );
    step(
        &mut monitor,
        "a directory replacing the team file",
        "config: is now a directory",
        &|| {
            std::fs::remove_file(team_dir.join("config.json")).unwrap();
            std::fs::create_dir(team_dir.join("config.json")).unwrap();
        },
    );
    step(
        &mut monitor,
        "a symlink to / replacing the inboxes",
        "inboxes: is now a symbolic link",
        &|| {
            std::fs::remove_dir_all(team_dir.join("inboxes")).unwrap();
            std::os::unix::fs::symlink("/", team_dir.join("inboxes")).unwrap();
        },
    );
    step(
        &mut monitor,
        "the team directory disappearing",
        "team removed",
        &|| {
            std::fs::remove_dir_all(&team_dir).unwrap();
        },
    );
    step(
        &mut monitor,
        "the team coming back",
        "config: 2 members",
        &|| {
            t.write_team("h", &["alpha"]);
        },
    );

    let text = String::from_utf8(monitor.bytes.clone()).expect("monitor prints UTF-8 only");
    let bad: Vec<(usize, char)> = text
        .char_indices()
        .filter(|(_, c)| monitor_common::forbidden(*c))
        .collect();
    assert!(bad.is_empty(), "raw control characters {bad:?} in:\n{text}");
}
