//! Faults inside tmux leave nothing behind, with the real lead in a pane of a private test
//! tmux server:
//! - `/quit` with 1–8 pane teammates, 20 times (two private servers at a time): no pane of a
//!   teammate is left, dead or alive (tmux 3.3a keeps the pane of a program that exited,
//!   dead, under `remain-on-exit failed`), and no teammate process;
//! - a teammate whose team directory is removed under it exits, also when its lead is then
//!   SIGKILLed; a teammate pane still there (dead) is found and closed by `clean --orphans`.

#[path = "panes_common/mod.rs"]
mod panes_common;

use std::process::Command;
use std::time::Duration;

use panes_common::{
    Reaper, TmuxLead, WAIT, Workspace, alive, sigkill, teammate_processes, tmux_env_value,
    wait_until,
};

/// Every pane of the lead's server that runs or ran a teammate: id, dead flag, start command.
fn teammate_panes(lead: &TmuxLead) -> Vec<String> {
    lead.tmux
        .panes("#{pane_id} dead=#{pane_dead} #{pane_start_command}")
        .into_iter()
        .filter(|l| l.contains(" teammate "))
        .collect()
}

/// Types `line`, presses Enter, and waits until `done` holds. With several leads and their
/// teammates starting on two cores, the lead's screen sometimes lagged for many seconds (a
/// line typed then showed up, and was acted on, late; under investigation): the waits here are
/// long, and the line is typed once (typing it again made a second teammate).
fn submit_until(lead: &TmuxLead, run: usize, line: &str, done: impl Fn() -> bool) {
    lead.type_text(line);
    let typed = wait_for(SLOW, || lead.screen().contains(line));
    assert!(
        typed,
        "run {run}: `{line}` never showed in the composer\nlead screen:\n{}",
        lead.screen()
    );
    lead.keys(&["Enter"]);
    assert!(
        wait_for(SLOW, &done),
        "run {run}: `{line}` never took\nlead screen:\n{}",
        lead.screen()
    );
}

/// How long a lagging screen is waited for.
const SLOW: Duration = Duration::from_secs(60);

/// Polls `cond` until it holds (true) or `timeout` passes (false).
fn wait_for(timeout: Duration, cond: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < timeout {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    cond()
}

fn quit_run(run: usize, teammates: usize) {
    let ws = Workspace::new("quit-panes");
    let lead = TmuxLead::start(&ws, 240, 80);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    for i in 0..teammates {
        let name = format!("t{i}");
        submit_until(&lead, run, &format!("/spawn {name} stand by"), || {
            lead.screen().contains(&format!("Spawned {name}:"))
        });
    }
    wait_until(
        &format!("run {run}: {teammates} teammate processes"),
        WAIT,
        || teammate_processes(&ws.team).len() == teammates,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    submit_until(&lead, run, "/quit", || !alive(lead.pid));
    // Whatever quit left is there as soon as the lead is gone; a short poll only lets tmux
    // finish closing the panes quit killed.
    wait_until(
        &format!("run {run} ({teammates} teammates): no teammate pane left"),
        Duration::from_secs(2),
        || teammate_panes(&lead).is_empty(),
        || format!("panes left: {:#?}", teammate_panes(&lead)),
    );
    wait_until(
        &format!("run {run}: no teammate process left"),
        Duration::from_secs(3),
        || teammate_processes(&ws.team).is_empty(),
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    assert!(!ws.team_dir().exists(), "run {run}: the team was removed");
}

#[test]
fn quit_inside_tmux_twenty_times_leaves_no_teammate_pane() {
    const RUNS: usize = 20;
    const AT_ONCE: usize = 2;
    let workers: Vec<_> = (0..AT_ONCE)
        .map(|w| {
            std::thread::spawn(move || {
                for run in (w..RUNS).step_by(AT_ONCE) {
                    quit_run(run, run % 8 + 1);
                }
            })
        })
        .collect();
    let failures: Vec<_> = workers.into_iter().filter_map(|w| w.join().err()).collect();
    assert!(failures.is_empty(), "{} worker(s) failed", failures.len());
}

fn pid_of(ws: &Workspace, name: &str) -> u32 {
    teammate_processes(&ws.team)
        .into_iter()
        .find(|(_, line)| line.contains(&format!("--agent-name {name} ")))
        .map(|(pid, _)| pid)
        .unwrap_or_else(|| panic!("no process of {name}"))
}

#[test]
fn a_teammate_whose_team_is_removed_exits_and_clean_finds_its_pane() {
    let mut ws = Workspace::new("team-gone");
    // Long enough that only the missing team can make them leave.
    ws.lead_grace_ms = 120_000;
    let lead = TmuxLead::start(&ws, 240, 60);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    for name in ["a", "b"] {
        lead.submit(&format!("/spawn {name} stand by"));
        lead.wait_screen(&format!("`Spawned {name}:`"), |s| {
            s.contains(&format!("Spawned {name}:"))
        });
    }
    wait_until(
        "two teammate processes",
        WAIT,
        || teammate_processes(&ws.team).len() == 2,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    let (a, b) = (pid_of(&ws, "a"), pid_of(&ws, "b"));
    // b's pane stays after b exits (dead), as tmux 3.3a keeps some under `remain-on-exit
    // failed`: `clean --orphans` must find it with nothing on disk naming it.
    let b_pane = ws.pane_of("b").expect("b's pane in config.json");
    lead.tmux
        .run(&["set-option", "-p", "-t", &b_pane, "remain-on-exit", "on"])
        .expect("keep b's pane");

    // Removed under the running team (the lead may be writing in it meanwhile: again until
    // it is gone), then the lead is SIGKILLed.
    wait_until(
        "the team directory removed",
        WAIT,
        || {
            let _ = std::fs::remove_dir_all(ws.team_dir());
            !ws.team_dir().exists()
        },
        || format!("{:?}", std::fs::read_dir(ws.team_dir()).map(|d| d.count())),
    );
    sigkill(lead.pid);
    wait_until(
        "both teammates to exit without their team",
        Duration::from_secs(5),
        || !alive(a) && !alive(b),
        || format!("still running: {:?}", teammate_processes(&ws.team)),
    );
    wait_until(
        "b's pane to be there, dead (tmux notices the exit)",
        Duration::from_secs(2),
        || {
            teammate_panes(&lead)
                .iter()
                .any(|l| l.starts_with(&format!("{b_pane} dead=1")))
        },
        || format!("{:?}", teammate_panes(&lead)),
    );

    // `clean --orphans` inside tmux (TMUX names the test server; a private socket directory,
    // so no other private server is looked at).
    let sockets = tempfile::tempdir().expect("socket dir");
    let out = Command::new(env!("CARGO_BIN_EXE_teamlead"))
        .arg("--home")
        .arg(ws.home())
        .args(["clean", "--orphans"])
        .current_dir(ws.work())
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TEAMLEAD_HOME")
        .env_remove("TMUX_PANE")
        .env("TMUX", tmux_env_value(&lead.tmux))
        .env("TMUX_TMPDIR", sockets.path())
        .output()
        .expect("run clean --orphans");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clean failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("of teammate b") && stdout.contains("its team"),
        "clean names b's pane: {stdout}"
    );
    assert!(
        teammate_panes(&lead).is_empty(),
        "no teammate pane left: {:?}",
        teammate_panes(&lead)
    );
}
