//! Acceptance tests of pane teammates with the lead outside tmux: the real binary runs in a
//! pseudo-terminal without `TMUX`/`TMUX_PANE`, finds tmux on PATH and puts its teammates on a
//! private server `tmux -L teamlead-<lead pid>` (session `teamlead-swarm`, window `teammates`),
//! says how to attach to it, answers a teammate's permission request from its screen, and at
//! `/quit` kills the panes and the server (no socket file left) and removes the team. When the
//! lead is SIGKILLed instead, its teammates exit within 3 s and `teamlead clean --orphans` kills
//! the server and leaves nothing behind.

use crate::panes_common;
use teamlead_test_support::keys::Keyboard;

use std::time::{Duration, Instant};

use panes_common::{
    EXIT_AFTER_LEAD_DIES, PtyLead, Reaper, THREE, TestTmux, WAIT, Workspace, border_format,
    pane_infos, processes_of, server_running, sigkill, spawn_three, teammate_processes, wait_until,
};

const SWARM: &str = "teamlead-swarm";

/// Starts the lead outside tmux, checks the attach hint, spawns a, b and c and checks their
/// panes on the private server. Returns the lead, the handle on its private server (killed on
/// drop whatever happens) and the clean-up guard.
fn lead_with_three_teammates(ws: &Workspace) -> (PtyLead, TestTmux, Reaper) {
    let lead = ws.pty_lead(160, 45).start();
    let mut reaper = Reaper::new(ws);
    reaper.lead_pid = Some(lead.pid);
    let private = ws.private_server(lead.pid);
    let hint = format!("tmux -L teamlead-{} attach -t {SWARM}", lead.pid);
    lead.wait_screen("the attach hint", |s| s.contains(&hint));

    let panes = spawn_three(&lead, ws, "tmux", WAIT, |pane| private.capture(pane));
    for ((name, color), pane) in THREE.into_iter().zip(panes) {
        let info = pane_infos(&private)
            .into_iter()
            .find(|p| p.id == pane)
            .unwrap_or_else(|| panic!("{name}'s pane {pane} is not on teamlead-{}", lead.pid));
        assert_eq!(info.session, SWARM, "{info:?}");
        assert_eq!(info.window_name, "teammates", "{info:?}");
        assert_eq!(info.title, name, "{info:?}");
        assert_eq!(info.border_format, border_format(color), "{info:?}");
    }
    let all = pane_infos(&private);
    assert_eq!(all.len(), 3, "only the teammates' panes: {all:?}");
    assert_eq!(
        private
            .run(&[
                "show-options",
                "-w",
                "-v",
                "-t",
                &format!("{SWARM}:teammates"),
                "pane-border-status"
            ])
            .unwrap_or_default(),
        "top"
    );
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    (lead, private, reaper)
}

#[test]
fn lead_outside_tmux_uses_a_private_server_and_quit_removes_it() {
    let test_start = Instant::now();
    let ws = Workspace::new("panes-out");
    let (mut lead, private, _reaper) = lead_with_three_teammates(&ws);
    let spawned_in = test_start.elapsed();

    // A permission round trip: the request of a teammate on the private server reaches the
    // lead's screen and `y` lets it run the command.
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    let proof = ws.work().join("proof.txt");
    assert!(!proof.exists(), "the command ran before approval");
    lead.approve();
    wait_until(
        "the approved command's file and the task completed",
        WAIT,
        || {
            std::fs::read_to_string(&proof).is_ok_and(|t| t == "proof\n")
                && ws.task("1")["status"] == "completed"
        },
        || format!("task: {}\nlead screen:\n{}", ws.task("1"), lead.screen()),
    );
    lead.wait_screen("the task counted as done", |s| s.contains("tasks 1/1"));

    // A jump to b hands the terminal to `tmux attach`: tmux's status line says how to come
    // back for as long as the user is there, and detaching brings the lead's screen back.
    lead.send(b"\x1b[B");
    lead.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    lead.send(b"\r");
    lead.wait_screen("the teams dialog on a", |s| s.contains("❯ ● a"));
    lead.send(b"j");
    lead.wait_screen("b selected", |s| s.contains("❯ ● b"));
    lead.send(b"\r");
    lead.wait_screen("b's details", |s| s.contains("enter jump"));
    lead.send(b"\r");
    let clients = || private.run(&["list-clients"]).unwrap_or_default();
    wait_until(
        "a client attached to the private server",
        WAIT,
        || clients().lines().count() == 1,
        || {
            format!(
                "clients: {}
{}",
                clients(),
                lead.screen()
            )
        },
    );
    lead.wait_screen("b's pane, with the way back in tmux's status line", |s| {
        s.contains(&format!("b @ {}", ws.team)) && s.contains("ctrl+b d: back to the lead")
    });
    lead.send(b"\x02d");
    lead.wait_screen("the lead's screen back, on b's details", |s| {
        s.contains("enter jump")
    });
    assert!(clients().is_empty(), "detached: {}", clients());
    lead.send(b"\x1b");
    lead.wait_screen("the jump's note, saying the way back", |s| {
        !s.contains("enter jump") && s.contains("detach with ctrl+b d to come back to the lead")
    });

    // `/quit`: the teammates, their panes and the private server go, the team is removed.
    let quit_at = Instant::now();
    lead.submit("/quit");
    assert!(lead.wait_exit(), "the lead exits with status 0");
    let quit_in = quit_at.elapsed();
    assert!(!server_running(&private), "the private server is killed");
    assert!(
        !private.socket_path().exists(),
        "no socket file is left: {}",
        private.socket_path().display()
    );
    assert!(!ws.team_dir().exists(), "the team is removed");
    assert!(!ws.tasks_dir().exists(), "the task list is removed");
    assert!(
        teammate_processes(&ws.team).is_empty(),
        "{:?}",
        teammate_processes(&ws.team)
    );
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    assert!(ws.lock_dirs().is_empty(), "{:?}", ws.lock_dirs());
    eprintln!(
        "timings: start + 3 spawns {spawned_in:?}, /quit {quit_in:?}, whole test {:?}",
        test_start.elapsed()
    );
}

#[test]
fn lead_outside_tmux_killed_leaves_nothing_after_clean_orphans() {
    let test_start = Instant::now();
    let ws = Workspace::new("panes-out-kill");
    let (mut lead, private, _reaper) = lead_with_three_teammates(&ws);
    // The user attached and opened a pane of their own there: it keeps the server up after the
    // teammates' panes close, so only `clean` can take the server down.
    private
        .run(&[
            "split-window",
            "-d",
            "-t",
            &format!("{SWARM}:teammates"),
            "--",
            "cat",
        ])
        .expect("a pane of the user's on the private server");

    sigkill(lead.pid);
    let killed = Instant::now();
    wait_until(
        "every teammate to exit after the lead's SIGKILL",
        Duration::from_secs(10),
        || teammate_processes(&ws.team).is_empty(),
        || format!("still running: {:?}", teammate_processes(&ws.team)),
    );
    let exited_in = killed.elapsed();
    assert!(
        exited_in < EXIT_AFTER_LEAD_DIES,
        "teammates took {exited_in:?} to exit after their lead died"
    );
    assert!(!lead.wait_exit(), "the lead died of the signal");

    assert!(
        server_running(&private),
        "the user's pane keeps the server up"
    );
    let out = ws.clean_orphans(None);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clean failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("removed: team {}", ws.team)),
        "{stdout}"
    );
    assert!(!server_running(&private), "the private server is killed");
    assert!(
        !private.socket_path().exists(),
        "no socket file is left: {}",
        private.socket_path().display()
    );
    assert!(!ws.team_dir().exists(), "the team is removed");
    assert!(!ws.tasks_dir().exists(), "the task list is removed");
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    assert!(ws.lock_dirs().is_empty(), "{:?}", ws.lock_dirs());
    eprintln!(
        "timings: teammates gone {exited_in:?} after the lead's SIGKILL, whole test {:?}",
        test_start.elapsed()
    );
}
