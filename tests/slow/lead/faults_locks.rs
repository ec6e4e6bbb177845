//! A lock held by a dead writer on one of the team's files holds only the commands that need
//! that file, never the lead's loop, with the real binary in a pseudo-terminal. A plain `mkdir`
//! writer (as Claude Code's proper-lockfile: no teamlead marker, so only the 10 s staleness
//! rule frees its lock) is SIGKILLed holding the lock of
//! - `config.json`, while the person changes a teammate's mode (a `config.json` write), then
//!   adds a task, messages the teammate and answers its permission request: those three are
//!   acknowledged at once, long before the lock goes stale, and the mode change completes
//!   once it has;
//! - a task file, while the person assigns that task, then messages the teammate and changes
//!   its mode: both acknowledged at once, the assignment completes once the lock is stale.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::pty_harness::{DEADLINE, PtyLead};
use serde_json::json;
use teamlead::protocol::InboxEntry;
use teamlead::protocol::frames::{Frame, PermissionRequest};
use teamlead_test_support::keys::Keyboard;

/// How soon a command that needs no locked file must be acknowledged.
const AT_ONCE: Duration = Duration::from_secs(2);

fn inbox(home: &Path, team: &str, member: &str) -> Vec<InboxEntry> {
    let path = home
        .join("teams")
        .join(team)
        .join("inboxes")
        .join(format!("{member}.json"));
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

fn lock_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A writer that is not teamlead takes the mkdir lock `lock` (waiting, up to 5 s, while
/// someone else holds it, as the lead or a teammate may for a moment) and is SIGKILLed
/// holding it.
fn dead_writer(lock: &Path) {
    let script = "i=0\nuntil mkdir \"$1\" 2>/dev/null; do\n  i=$((i+1)); [ $i -gt 500 ] && exit 1\n  sleep 0.01\ndone\nkill -9 $$\n";
    let status = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(lock)
        .status()
        .expect("run the writer");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(9), "the writer was SIGKILLed");
    assert!(lock.is_dir(), "its lock is left behind");
}

/// Polls `check` until `deadline`; returns how long it took.
fn within(what: &str, deadline: Duration, session: &PtyLead, check: impl Fn() -> bool) -> Duration {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < deadline,
            "not within {deadline:?}: {what}; screen:\n{}",
            session.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    start.elapsed()
}

/// A lead with an in-process teammate `alpha`.
fn lead_with_alpha(home: &Path, project: &Path, team: &str) -> PtyLead {
    let session = crate::pty_harness::lead(project)
        .home(home)
        .args(["--team", team, "--backend", "in-process"])
        .start();
    session.submit("/spawn alpha \"wait for messages\"");
    session.wait_for("alpha in the team badge", |s| s.contents().contains("● 1 "));
    session
}

/// `@alpha <text>`: in alpha's inbox (and echoed) at once.
fn message_alpha_at_once(session: &PtyLead, home: &Path, team: &str, text: &str) -> Duration {
    session.send(format!("@alpha {text}\r").as_bytes());
    within("the message in alpha's inbox", AT_ONCE, session, || {
        inbox(home, team, "alpha")
            .iter()
            .any(|e| e.from == "team-lead" && e.text == text)
    })
}

/// A `permission_request` from alpha (written by another process), answered `y` in the
/// dialog: the answer reaches alpha's inbox at once.
fn answer_a_permission_at_once(session: &PtyLead, home: &Path, team: &str) -> Duration {
    let request = PermissionRequest {
        request_id: "perm-1767225600000-lockedx".to_string(),
        agent_id: "alpha".to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: Some("toolu_locked".to_string()),
        description: "list".to_string(),
        input: json!({"command": "ls"}),
        permission_suggestions: Vec::new(),
    };
    crate::panes_common::teamlead_send(
        home,
        team,
        Some("alpha"),
        "team-lead",
        &Frame::PermissionRequest(request).to_text(),
    );
    session.wait_for("the approvals banner", |s| {
        s.contents().contains("1 approval waiting")
    });
    session.type_keys("x");
    session.send(b"\x10\r");
    session.wait_for("the dialog", |s| s.contents().contains("needs permission"));
    // The dialog ignores keys for its grace period: waiting it out is the precondition.
    session.wait_out_grace();
    session.send(b"y");
    within("the permission_response", AT_ONCE, session, || {
        inbox(home, team, "alpha")
            .iter()
            .any(|e| matches!(e.parse_frame(), Some(Frame::PermissionResponse(_))))
    })
}

fn alpha_mode_in_config(home: &Path, team: &str) -> Option<String> {
    let text = std::fs::read_to_string(home.join("teams").join(team).join("config.json")).ok()?;
    let file: serde_json::Value = serde_json::from_str(&text).ok()?;
    file["members"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == "alpha")?["mode"]
        .as_str()
        .map(str::to_string)
}

#[test]
fn a_dead_writers_lock_on_the_team_file_holds_only_the_command_that_writes_it() {
    const TEAM: &str = "locked-config";
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let h = home.path();
    let session = lead_with_alpha(h, project.path(), TEAM);

    let lock = lock_of(&h.join("teams").join(TEAM).join("config.json"));
    dead_writer(&lock);
    let locked_at = Instant::now();

    // Needs config.json: waits for the lock, in the background.
    session.send(b"/mode alpha acceptEdits\r");
    session.wait_for("the command echoed", |s| {
        s.contents().contains("/mode alpha acceptEdits")
    });

    session.send(b"/task add \"check the parser\"\r");
    let task = within("the task's acknowledgement", AT_ONCE, &session, || {
        session.contents().contains("Added task #1")
    });
    let message = message_alpha_at_once(&session, h, TEAM, "hello past the locked team file");
    let answer = answer_a_permission_at_once(&session, h, TEAM);
    eprintln!(
        "config.json locked: task acknowledged in {task:?}, message in {message:?}, permission answer in {answer:?}; {:?} since the lock was left",
        locked_at.elapsed()
    );
    assert!(lock.is_dir(), "the dead writer's lock is still there");
    assert!(
        locked_at.elapsed() < Duration::from_secs(9),
        "all of it before the lock could go stale"
    );
    assert_ne!(
        alpha_mode_in_config(h, TEAM).as_deref(),
        Some("acceptEdits"),
        "the mode change waits for the lock"
    );
    assert!(
        !session
            .contents()
            .contains("alpha is now in acceptEdits mode")
    );

    // Once the lock is stale, the mode change completes and is acknowledged.
    session.wait_for("the mode change", |s| {
        s.contents().contains("alpha is now in acceptEdits mode")
    });
    let completed = locked_at.elapsed();
    eprintln!("the mode change completed {completed:?} after the lock was left");
    assert!(completed >= Duration::from_secs(9), "{completed:?}");
    assert_eq!(
        alpha_mode_in_config(h, TEAM).as_deref(),
        Some("acceptEdits")
    );
    within("the lock to go", DEADLINE, &session, || !lock.exists());
}

#[test]
fn a_dead_writers_lock_on_a_task_file_holds_only_the_command_that_writes_it() {
    const TEAM: &str = "locked-task";
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let h = home.path();
    let session = lead_with_alpha(h, project.path(), TEAM);
    session.send(b"/task add \"check the parser\"\r");
    session.wait_for("the task", |s| s.contents().contains("Added task #1"));

    let lock = lock_of(&h.join("tasks").join(TEAM).join("1.json"));
    dead_writer(&lock);
    let locked_at = Instant::now();

    // Needs task #1's file: waits for the lock, in the background.
    session.send(b"/task assign 1 alpha\r");
    session.wait_for("the command echoed", |s| {
        s.contents().contains("/task assign 1 alpha")
    });

    let message = message_alpha_at_once(&session, h, TEAM, "hello past the locked task");
    session.send(b"/mode alpha plan\r");
    let mode = within("the mode change", AT_ONCE, &session, || {
        session.contents().contains("alpha is now in plan mode")
    });
    eprintln!(
        "task #1 locked: message delivered in {message:?}, mode changed in {mode:?}; {:?} since the lock was left",
        locked_at.elapsed()
    );
    assert!(lock.is_dir(), "the dead writer's lock is still there");
    assert!(locked_at.elapsed() < Duration::from_secs(9));
    assert!(!session.contents().contains("Assigned task #1"));

    // The note, or alpha's plan for the task (alpha is in plan mode now: once it has the
    // assignment its plan dialog can cover the transcript before the note was seen).
    session.wait_for("the assignment", |s| {
        s.contents().contains("Assigned task #1")
            || s.contents().contains("Task #1: check the parser")
    });
    let completed = locked_at.elapsed();
    eprintln!("the assignment completed {completed:?} after the lock was left");
    assert!(completed >= Duration::from_secs(9), "{completed:?}");
    within("the lock to go", DEADLINE, &session, || !lock.exists());
}
