//! The real binary in a pseudo-terminal (portable-pty + vt100): the lead session draws its
//! screen on the alternate screen, `/quit` or Ctrl+C twice end it, and the terminal is given
//! back as it was (main screen, cursor shown, bracketed paste off). Temporary home, no
//! ~/.claude, no tmux.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::pty_harness::PtyLead;
use teamlead_test_support::keys::Keyboard;

fn terminal_given_back(screen: &vt100::Screen) {
    assert!(!screen.alternate_screen(), "left the alternate screen");
    assert!(!screen.hide_cursor(), "cursor shown again");
    assert!(!screen.bracketed_paste(), "bracketed paste off");
}

fn started(session: &PtyLead) {
    session.wait_for("the lead session's screen", |s| {
        s.alternate_screen() && s.contents().contains("shift+tab to cycle")
    });
}

#[test]
fn quit_command_ends_the_session_and_restores_the_terminal() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args(["--team", "ptyteam"])
        .spawn();
    started(&session);
    let screen = session.contents();
    assert!(screen.contains("> "), "{screen}");
    assert!(screen.contains("default mode"), "{screen}");
    // Typing shows in the composer; completion pops up for a slash command.
    session.send(b"/qu");
    session.wait_for("the completion popup", |s| s.contents().contains("/quit"));
    session.send(b"it\r");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join("ptyteam").exists(),
        "the team is removed at quit"
    );
}

#[test]
fn ctrl_c_twice_quits() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args(["--team", "ctrlc"])
        .spawn();
    started(&session);
    session.send(b"\x03");
    session.wait_for("the quit hint", |s| {
        s.contents().contains("press ctrl+c again to quit")
    });
    session.send(b"\x03");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
}

#[test]
fn sigterm_quits_gracefully_and_restores_the_terminal() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let mut session = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args(["--team", "sigterm"])
        .spawn();
    started(&session);
    let pid = session.child.process_id().expect("pid");
    // SAFETY: kill(2) on the pid of our own child, which has not been reaped yet.
    let sent = unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0, "SIGTERM sent");
    assert!(session.wait_exit(), "exit status 0 after a graceful quit");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join("sigterm").exists(),
        "the team is removed"
    );
}

/// The demo end to end: tasks are claimed, a Bash request is approved by key (Ctrl+P, then y
/// once the dialog's grace period is over) and its task shows
/// as completed on screen and in its task file; every later request and the plan are approved
/// until all six tasks are done; `/quit` then removes the team, its tasks and the demo's
/// working directory, and leaves no process behind.
#[test]
fn demo_runs_to_the_end_with_approvals_and_quits_clean() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let tmp = tempfile::tempdir().expect("tmp for the demo's working directory");
    let mut session = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args(["demo"])
        .env("TMPDIR", tmp.path())
        .spawn();
    session.wait_for("the first Bash request", |s| {
        let c = s.contents();
        c.contains("needs permission") && c.contains("Bash") && c.contains("Lay out the workspace")
    });
    let team = std::fs::read_dir(home.path().join("tasks"))
        .expect("tasks dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .next()
        .expect("the demo team's task list");
    let task_file = home.path().join("tasks").join(&team).join("1.json");
    let status = |path: &Path| -> String {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v["status"].as_str().map(str::to_string))
            .unwrap_or_default()
    };
    assert_eq!(status(&task_file), "in_progress");
    // Answer on purpose: Ctrl+P, the dialog's grace period waited out, then y.
    session.approve();
    session.wait_for("task #1 completed", |s| s.contents().contains("tasks 1/6"));
    assert_eq!(status(&task_file), "completed");

    // Approve whatever is asked (Bash requests, the reviewer's plan) until every task is done.
    let start = Instant::now();
    loop {
        let screen = session.contents();
        if screen.contains("tasks 6/6") && !screen.contains("needs permission") {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(90),
            "the demo did not finish:\n{screen}"
        );
        if screen.contains("needs permission")
            || screen.contains("wants to proceed")
            || screen.contains("approval waiting")
        {
            session.approve();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for id in 1..=6 {
        let path = home
            .path()
            .join("tasks")
            .join(&team)
            .join(format!("{id}.json"));
        assert_eq!(status(&path), "completed", "task {id}");
    }
    let workdir: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .flatten()
        .collect();
    assert_eq!(
        workdir.len(),
        1,
        "the demo works in one directory under TMPDIR"
    );
    let report = workdir[0].path().join("out/REPORT.md");
    assert!(report.exists(), "the last task wrote its report");

    session.submit("/quit");
    assert!(session.wait_exit(), "exit status 0");
    terminal_given_back(session.screen.lock().expect("screen").screen());
    assert!(
        !home.path().join("teams").join(&team).exists(),
        "team directory removed"
    );
    assert!(
        !home.path().join("tasks").join(&team).exists(),
        "task list removed"
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).expect("tmp").count(),
        0,
        "demo directory removed"
    );
    let left: Vec<_> = walk(home.path());
    assert!(
        left.is_empty(),
        "the demo leaves nothing in the home it was given (the plan file included): {left:?}"
    );
    // No process is left that still works in the demo's directory or on its home.
    let needle = home.path().to_string_lossy().into_owned();
    let left = std::process::Command::new("pgrep")
        .args(["-f", &needle])
        .output()
        .expect("pgrep");
    assert!(
        left.stdout.is_empty(),
        "leftover processes: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

/// Every file under `dir` (directories left empty included), relative.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let below = walk(&path);
        if below.is_empty() {
            out.push(path.display().to_string());
        }
        out.extend(below);
    }
    out
}

/// `teamlead demo` as the README says to run it (no `--home`, no `TEAMLEAD_HOME`, no
/// `CLAUDE_CONFIG_DIR`) works in a temporary home and leaves nothing in `~/.claude`, nor
/// anything under `TMPDIR` once it has quit.
#[test]
fn demo_without_a_home_stays_out_of_dot_claude() {
    let user_home = tempfile::tempdir().expect("user home");
    let project = tempfile::tempdir().expect("project");
    let tmp = tempfile::tempdir().expect("tmp");
    let state = user_home.path().join(".local/state");
    let config = user_home.path().join(".config");
    let mut session = crate::pty_harness::lead(project.path())
        .args(["demo"])
        .envs([
            ("HOME", user_home.path()),
            ("TMPDIR", tmp.path()),
            ("XDG_STATE_HOME", &state),
            ("XDG_CONFIG_HOME", &config),
        ])
        .spawn();
    session.wait_for("the demo's first request", |s| {
        s.contents().contains("Lay out the workspace")
    });
    assert!(
        !user_home.path().join(".claude").exists(),
        "the demo runs elsewhere than ~/.claude"
    );
    let homes: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("tmp")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("teamlead-demo-home-")
        })
        .collect();
    assert_eq!(homes.len(), 1, "one temporary home under TMPDIR");
    session.send(b"\x03");
    session.wait_for("the quit hint", |s| {
        s.contents().contains("press ctrl+c again to quit")
    });
    session.send(b"\x03");
    assert!(session.wait_exit(), "exit status 0");
    assert!(!user_home.path().join(".claude").exists(), "no ~/.claude");
    assert_eq!(
        walk(tmp.path()),
        Vec::<String>::new(),
        "the temporary home and the working directory are removed"
    );
}
