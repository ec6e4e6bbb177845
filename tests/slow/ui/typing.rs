//! Typed commands are never lost: the real binary in its default server mode, in a pane of a
//! private tmux server, typed into with `tmux send-keys` as fast as a script types, while a
//! scripted teammate keeps permission requests and plans coming (two at a time, so answering
//! one shows the next). Each command is typed one of three ways: plainly; right after `y`
//! answers the dialog on screen (the next request then shows, in its grace period, as the
//! command's first keys arrive); and right after Esc in the same write (the terminal then
//! reads `ESC /` as one key, Alt+/). Every command must be carried out (`/task add` makes a
//! task: the task list on disk says so) exactly once.

use crate::panes_common::sh_quote;
use crate::server_common::{Ws, wait_until};
use teamlead_test_support::tmux::TestTmux;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::json;
use teamlead::protocol::frames::{Frame, PermissionRequest, PlanApprovalRequest};
use teamlead::ui::modal::guard::GRACE_MS;

const TEAM: &str = "typing";
/// How many commands are typed.
const COMMANDS: usize = 24;

/// The lead in a pane of a private tmux server.
struct Lead {
    tmux: TestTmux,
    pane: String,
}

impl Lead {
    fn start(ws: &Ws) -> Lead {
        let tmux = TestTmux::named(format!("tl-test-{}", uuid::Uuid::new_v4().simple()));
        let env: Vec<String> = ws
            .env()
            .into_iter()
            .map(|(k, v)| format!("{k}={}", sh_quote(&v)))
            .collect();
        let command = format!(
            "exec env -u CLAUDE_CONFIG_DIR -u TEAMLEAD_HOME -u TEAMLEAD_NO_SERVER -u XDG_RUNTIME_DIR {} {} --home {} --team {TEAM} --backend in-process",
            env.join(" "),
            sh_quote(env!("CARGO_BIN_EXE_teamlead")),
            sh_quote(&ws.home().to_string_lossy()),
        );
        let work = ws.work().to_string_lossy().into_owned();
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            "160",
            "-y",
            "45",
            "-c",
            &work,
            &command,
        ])
        .expect("start the tmux server with the lead");
        let pane = tmux.main_pane();
        let lead = Lead { tmux, pane };
        lead.wait_screen("the lead's screen", |s| s.contains("shift+tab to cycle"));
        lead
    }

    fn screen(&self) -> String {
        self.tmux.capture(&self.pane)
    }

    fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) {
        wait_until(what, || check(&self.screen()), || self.screen());
    }

    /// One `send-keys` (one write to the lead's terminal): key names and literal text.
    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.pane.as_str()];
        args.extend_from_slice(keys);
        self.tmux.run(&args).expect("send-keys");
    }
}

/// Sets the flag when dropped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// An approval dialog has the keyboard.
fn dialog_open(screen: &str) -> bool {
    screen.contains("needs permission") || screen.contains("wants to proceed")
}

/// The subjects of the team's tasks, as the task list on disk has them.
fn task_subjects(ws: &Ws) -> Vec<String> {
    let dir = ws.home().join("tasks").join(TEAM);
    let mut subjects = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let task: serde_json::Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        if let Some(subject) = task["subject"].as_str() {
            subjects.push(subject.to_string());
        }
    }
    subjects.sort();
    subjects
}

/// alpha's requests, written into the lead's inbox by another process (`teamlead send`), two
/// at a time, until `stop`.
fn scripted_teammate(ws: &Ws, stop: &AtomicBool) {
    let mut n = 0u64;
    while !stop.load(Ordering::SeqCst) {
        for _ in 0..2 {
            n += 1;
            let frame = if n.is_multiple_of(5) {
                Frame::PlanApprovalRequest(PlanApprovalRequest {
                    from: "alpha".to_string(),
                    timestamp: "2026-01-01T00:00:00.000Z".to_string(),
                    plan_file_path: String::new(),
                    plan_content: format!("{n}. change nothing"),
                    request_id: format!("plan_approval-{n}@alpha@{TEAM}"),
                })
            } else {
                Frame::PermissionRequest(PermissionRequest {
                    request_id: format!("perm-1767225600000-req{n}"),
                    agent_id: "alpha".to_string(),
                    tool_name: "Bash".to_string(),
                    tool_use_id: Some(format!("toolu_{n}")),
                    description: format!("step {n}"),
                    input: json!({"command": format!("echo {n}")}),
                    permission_suggestions: Vec::new(),
                })
            };
            let out = ws
                .cmd(&[
                    "send",
                    "--team",
                    TEAM,
                    "--to",
                    "team-lead",
                    "--from",
                    "alpha",
                    &frame.to_text(),
                ])
                .output()
                .expect("teamlead send");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}

#[test]
fn every_command_typed_while_requests_keep_coming_is_carried_out_once() {
    let ws = Ws::new(TEAM);
    let lead = Lead::start(&ws);
    lead.keys(&["/spawn alpha \"wait for messages\"", "Enter"]);
    lead.wait_screen("alpha in the team badge", |s| s.contains("● 1 "));

    let stop = AtomicBool::new(false);
    let mut typed = Vec::new();
    let mut after_answer = 0;
    std::thread::scope(|scope| {
        let teammate = scope.spawn(|| scripted_teammate(&ws, &stop));
        // However this ends (a wait that fails too), the scripted teammate stops.
        let stopper = StopOnDrop(&stop);
        lead.wait_screen("alpha's first request", |s| {
            s.contains("approval") || dialog_open(s)
        });
        for i in 1..=COMMANDS {
            let command = format!("/task add s-{i:02}");
            match i % 3 {
                // Right after `y` answered the request on screen: the next one shows (its
                // grace period starts) as the command's first keys arrive.
                0 => {
                    let wanted: Vec<String> = typed.clone();
                    wait_until(
                        "the commands typed so far carried out",
                        || task_subjects(&ws) == wanted,
                        || format!("{:?}\n{}", task_subjects(&ws), lead.screen()),
                    );
                    // A dialog on screen, past its grace period (answering it is on purpose).
                    wait_until(
                        "a dialog on screen",
                        || dialog_open(&lead.screen()),
                        || lead.screen(),
                    );
                    std::thread::sleep(Duration::from_millis(GRACE_MS + 200));
                    lead.keys(&["y", &command, "Enter"]);
                    after_answer += 1;
                }
                // Esc and the command in one write.
                1 => lead.keys(&["Escape", &command, "Enter"]),
                // Plainly.
                _ => lead.keys(&[&command, "Enter"]),
            }
            typed.push(format!("s-{i:02}"));
            typed.sort();
        }
        wait_until(
            "every command carried out",
            || task_subjects(&ws) == typed,
            || {
                format!(
                    "tasks {:?}\nwanted {typed:?}\n{}",
                    task_subjects(&ws),
                    lead.screen()
                )
            },
        );
        drop(stopper);
        teammate.join().expect("the scripted teammate");
    });
    assert_eq!(after_answer, COMMANDS / 3);

    // The lead ends cleanly.
    ws.ctl_ok(&["/quit"]);
    wait_until(
        "the team gone",
        || !ws.team_dir().exists(),
        || format!("{:?}", ws.processes()),
    );
}
