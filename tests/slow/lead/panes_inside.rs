//! Acceptance test of pane teammates with the lead inside tmux: the real binary runs in a pane of
//! a private test tmux server (so tmux gives it `TMUX`/`TMUX_PANE`), the user types into that
//! pane, and the test checks what a user would see: the teammates' panes beside the lead with
//! their names and colors, a permission request answered from the lead's screen, a message
//! round trip, the shutdown handshake, kill, hide/show, and after a SIGKILL of the lead every
//! teammate gone within 3 s and `teamlead clean --orphans` leaving nothing behind.

use crate::panes_common;
use teamlead_test_support::keys::Keyboard;

use std::time::{Duration, Instant};

use panes_common::{
    EXIT_AFTER_LEAD_DIES, PaneInfo, Reaper, THREE, TmuxLead, WAIT, Workspace, border_format,
    pane_infos, processes_of, server_running, sigkill, spawn_three, teammate_processes,
    tmux_env_value, wait_until,
};

/// The pane of `name` as tmux lists it, once its teammate shows its header there.
fn teammate_pane(lead: &TmuxLead, ws: &Workspace, name: &str) -> PaneInfo {
    let pane = ws
        .pane_of(name)
        .unwrap_or_else(|| panic!("config.json records no pane for {name}: {}", ws.config()));
    let header = format!("● {name} @ {}", ws.team);
    wait_until(
        &format!("{name}'s header in its pane"),
        WAIT,
        || lead.tmux.capture(&pane).contains(&header),
        || format!("pane {pane}:\n{}", lead.tmux.capture(&pane)),
    );
    pane_infos(&lead.tmux)
        .into_iter()
        .find(|p| p.id == pane)
        .unwrap_or_else(|| panic!("pane {pane} of {name} is not listed"))
}

fn pane_exists(lead: &TmuxLead, pane: &str) -> bool {
    pane_infos(&lead.tmux).iter().any(|p| p.id == pane)
}

fn panes_in_window(lead: &TmuxLead, window: &str) -> Vec<String> {
    pane_infos(&lead.tmux)
        .into_iter()
        .filter(|p| p.window == window)
        .map(|p| p.id)
        .collect()
}

fn teammate_running(ws: &Workspace, name: &str) -> bool {
    let id = format!("{name}@{}", ws.team);
    teammate_processes(&ws.team)
        .iter()
        .any(|(_, line)| line.contains(&id))
}

/// Waits until the pane of `name` is gone, its process too, and config.json no longer lists it.
fn wait_member_gone(lead: &TmuxLead, ws: &Workspace, name: &str, pane: &str) {
    wait_until(
        &format!("{name}'s pane, process and member entry to go"),
        WAIT,
        || {
            !pane_exists(lead, pane)
                && !teammate_running(ws, name)
                && !ws.members().iter().any(|m| m == name)
        },
        || {
            format!(
                "panes: {:?}\nmembers: {:?}\nlead screen:\n{}",
                pane_infos(&lead.tmux),
                ws.members(),
                lead.screen()
            )
        },
    );
}

#[test]
fn lead_inside_tmux_runs_teammates_in_panes_and_leaves_nothing_after_a_crash() {
    let test_start = Instant::now();
    let mut phases = Vec::new();
    let ws = Workspace::new("panes-in");
    let lead = TmuxLead::start(&ws, 240, 60);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    let window = lead.window();

    // Three teammates, each in its own pane of the lead's window, named and colored in palette
    // order.
    let panes = spawn_three(&lead, &ws, "tmux", WAIT, |pane| lead.tmux.capture(pane));
    let spawned_in = test_start.elapsed();
    for ((name, color), id) in THREE.into_iter().zip(&panes) {
        let pane = teammate_pane(&lead, &ws, name);
        assert_eq!(&pane.id, id, "{pane:?}");
        assert_eq!(pane.title, name, "{pane:?}");
        assert_eq!(pane.border_format, border_format(color), "{pane:?}");
        assert_eq!(pane.window, window, "{name} beside the lead: {pane:?}");
    }
    let mut in_window = panes_in_window(&lead, &window);
    in_window.sort();
    let mut expected = vec![lead.pane.clone()];
    expected.extend(panes.iter().cloned());
    expected.sort();
    assert_eq!(
        in_window, expected,
        "the lead's window holds the lead and 3 teammates"
    );
    assert_eq!(
        lead.tmux
            .run(&[
                "show-options",
                "-w",
                "-v",
                "-t",
                &window,
                "pane-border-status"
            ])
            .unwrap_or_default(),
        "top",
        "pane titles are shown on the borders"
    );
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    let (pane_a, pane_b, pane_c) = (panes[0].clone(), panes[1].clone(), panes[2].clone());

    // Teams dialog: hide b's pane (it leaves the window, hiddenPaneIds lists it), then show it.
    phases.push(("spawned", test_start.elapsed()));
    lead.keys(&["Down"]);
    lead.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    lead.keys(&["Enter"]);
    lead.wait_screen("the teams dialog on a", |s| s.contains("❯ ● a"));
    lead.keys(&["j"]);
    lead.wait_screen("b selected", |s| s.contains("❯ ● b"));
    lead.keys(&["h"]);
    wait_until(
        "b's pane hidden",
        WAIT,
        || {
            ws.hidden_pane_ids() == vec![pane_b.clone()]
                && !panes_in_window(&lead, &window).contains(&pane_b)
        },
        || format!("{:?}\n{}", pane_infos(&lead.tmux), lead.screen()),
    );
    lead.wait_screen("the hidden note", |s| s.contains("b's pane is hidden"));
    assert!(pane_exists(&lead, &pane_b), "a hidden pane is kept");
    assert!(
        teammate_running(&ws, "b"),
        "a hidden teammate keeps running"
    );
    lead.keys(&["h"]);
    wait_until(
        "b's pane back in the lead's window",
        WAIT,
        || {
            ws.hidden_pane_ids().is_empty()
                && panes_in_window(&lead, &window).contains(&pane_b)
                && lead
                    .tmux
                    .run(&["has-session", "-t", "teamlead-hidden"])
                    .is_err()
        },
        || format!("{:?}\n{}", pane_infos(&lead.tmux), lead.screen()),
    );
    lead.wait_screen("the shown note", |s| s.contains("b's pane is back"));

    // A jump to b moves tmux's focus to its pane; the lead's pane, still on screen, says at
    // once how to come back, and that way (tmux's last-pane, `ctrl+b ;`) brings it back.
    let active = || {
        lead.tmux
            .run(&["display-message", "-p", "-t", &window, "#{pane_id}"])
            .unwrap_or_default()
    };
    assert_eq!(active(), lead.pane);
    lead.keys(&["Enter"]);
    lead.wait_screen("b's details", |s| s.contains("enter jump"));
    lead.keys(&["Enter"]);
    wait_until(
        "b's pane active",
        WAIT,
        || active() == pane_b,
        || {
            format!(
                "active {}
{}",
                active(),
                lead.screen()
            )
        },
    );
    lead.wait_screen("the way back beside the jump's note", |s| {
        s.contains("Jumped to b's pane: ctrl+b ; (tmux's last pane) comes back to the lead.")
    });
    lead.tmux
        .run(&["last-pane", "-t", &window])
        .expect("last-pane");
    assert_eq!(active(), lead.pane);
    lead.keys(&["Escape"]);
    lead.wait_screen("the dialog closed", |s| !s.contains("h hide/show"));

    // A task with a command: a teammate claims it and asks; the request reaches the lead's
    // screen; `y` reaches the teammate, which runs the command and completes the task.
    phases.push(("hide/show", test_start.elapsed()));
    let ask_start = Instant::now();
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    let asked_in = ask_start.elapsed();
    let screen = lead.screen();
    let asker = ["a", "b", "c"]
        .into_iter()
        .find(|n| screen.contains(&format!("@{n}  needs permission")))
        .unwrap_or_else(|| panic!("who asks?\n{screen}"));
    assert_eq!(ws.task("1")["owner"], asker, "the asker owns the task");
    assert_eq!(ws.task("1")["status"], "in_progress");
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

    // A message round trip: the lead sends `a` a fenced command (Alt+Enter for new lines), `a`
    // asks to run it, the lead approves, and `a` replies with the output, which only the run
    // can produce (6*7).
    phases.push(("permission", test_start.elapsed()));
    lead.type_text("@a run this:");
    lead.keys(&["M-Enter"]);
    lead.type_text("```");
    lead.keys(&["M-Enter"]);
    lead.type_text("echo pong-$((6*7))");
    lead.keys(&["M-Enter"]);
    lead.type_text("```");
    lead.wait_screen("the message in the composer", |s| {
        s.contains("echo pong-$((6*7))")
    });
    lead.keys(&["Enter"]);
    lead.wait_screen("a's request to run the lead's command", |s| {
        s.contains("@a  needs permission") && s.contains("A command team-lead sent")
    });
    lead.approve();
    lead.wait_screen("a's reply with the output", |s| s.contains("pong-42"));
    assert!(
        ws.lead_mail_from("a").iter().any(|t| t.contains("pong-42")),
        "the reply came through the lead's inbox: {:?}",
        ws.lead_mail_from("a")
    );

    // Shutdown handshake: b approves, its pane closes and it leaves config.json.
    phases.push(("round trip", test_start.elapsed()));
    let shutdown_at = Instant::now();
    lead.submit("/shutdown b");
    wait_member_gone(&lead, &ws, "b", &pane_b);
    let shutdown_in = shutdown_at.elapsed();
    // Not the lead's 3 s fallback kill: the pane goes when the process exits, even when tmux
    // keeps it dead for want of an exit status (`remain-on-exit failed`).
    assert!(
        shutdown_in < Duration::from_millis(2500),
        "b's pane closed {shutdown_in:?} after /shutdown"
    );
    lead.wait_screen("the shutdown note", |s| s.contains("b has shut down."));

    // Kill: c's pane is killed at once and it leaves config.json.
    phases.push(("shutdown", test_start.elapsed()));
    lead.submit("/kill c");
    wait_member_gone(&lead, &ws, "c", &pane_c);
    lead.wait_screen("the kill note", |s| s.contains("c was killed."));

    // A fourth teammate: colors go round-robin per lead session (PROTOCOL.md 7), and the new
    // pane splits a live one beside the lead (b's pane closed by itself).
    phases.push(("kill", test_start.elapsed()));
    lead.submit("/spawn d say hi");
    lead.wait_screen("`Spawned d:`", |s| s.contains("Spawned d:"));
    let pane_d = teammate_pane(&lead, &ws, "d");
    assert_eq!(pane_d.border_format, border_format("yellow"), "{pane_d:?}");
    assert_eq!(pane_d.window, window, "{pane_d:?}");
    assert!(pane_exists(&lead, &pane_a));

    // The lead dies without any chance to clean up: its teammates notice within 3 s.
    assert_eq!(teammate_processes(&ws.team).len(), 2, "a and d run");
    phases.push(("spawn d", test_start.elapsed()));
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

    // `teamlead clean --orphans` (on the same tmux server) removes the dead team.
    assert!(
        server_running(&lead.tmux),
        "the user's other window keeps tmux up"
    );
    let out = ws.clean_orphans(Some(&tmux_env_value(&lead.tmux)));
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
    // The user's other window keeps the server up: nothing of the team is left on it.
    let team_panes = [&pane_a, &pane_b, &pane_c, &pane_d.id];
    let left: Vec<PaneInfo> = pane_infos(&lead.tmux)
        .into_iter()
        .filter(|p| team_panes.contains(&&p.id) || p.id == lead.pane || p.session != "main")
        .collect();
    assert!(
        left.is_empty(),
        "panes of the team left on the server: {left:?}"
    );
    assert_eq!(
        pane_infos(&lead.tmux).len(),
        1,
        "only the user's own pane is left: {:?}",
        pane_infos(&lead.tmux)
    );
    assert!(teammate_processes(&ws.team).is_empty());
    assert!(
        processes_of(&ws).is_empty(),
        "processes left: {:?}",
        processes_of(&ws)
    );
    assert!(ws.lock_dirs().is_empty(), "{:?}", ws.lock_dirs());
    assert!(!ws.team_dir().exists(), "the team directory is removed");
    assert!(!ws.tasks_dir().exists(), "the task list is removed");
    eprintln!(
        "timings: 3 spawns {spawned_in:?}, task → request on screen {asked_in:?}, \
         /shutdown → pane and member gone {shutdown_in:?}, teammates gone {exited_in:?} after the lead's SIGKILL, whole test {:?}; \
         phases ended at {phases:?}",
        test_start.elapsed()
    );
}

/// `/interrupt` of one of teamlead's own teammates in a pane stops its current turn and the
/// command it runs, and leaves it running: its process is told (`SIGUSR1`, which it takes as
/// "stop this turn"); before, the lead said it could not interrupt a pane teammate.
#[test]
fn interrupt_stops_a_pane_teammates_command_and_keeps_it() {
    let ws = Workspace::new("panes-int");
    let lead = TmuxLead::start(&ws, 200, 50);
    let mut reaper = Reaper::new(&ws);
    reaper.lead_pid = Some(lead.pid);
    lead.submit("/spawn runner --mode bypassPermissions wait");
    lead.wait_screen("`Spawned runner:`", |s| s.contains("Spawned runner:"));
    // Idle, it has nothing to interrupt, and the lead says so.
    lead.wait_screen("runner idle", |s| s.contains("● 1 idle"));
    lead.submit("/interrupt runner");
    lead.wait_screen("the note", |s| {
        s.contains("runner has no turn running: nothing to interrupt.")
    });
    // A long command, as the lead would send it (a shell teammate runs a message's code block).
    let long = |args: &[String]| args.len() == 2 && args[0] == "sleep" && args[1] == "31.7";
    ws.send("team-lead", "runner", "build it:\n```\nsleep 31.7\n```");
    wait_until(
        "the long command to run",
        WAIT,
        || !panes_common::processes(|a| long(a)).is_empty(),
        || lead.screen(),
    );
    lead.submit("/interrupt runner");
    lead.wait_screen("the note", |s| s.contains("Interrupted runner's turn."));
    wait_until(
        "the long command to stop",
        Duration::from_secs(10),
        || panes_common::processes(|a| long(a)).is_empty(),
        || lead.screen(),
    );
    assert!(
        teammate_processes(&ws.team)
            .iter()
            .any(|(_, line)| line.contains("runner@")),
        "runner still runs: {:?}",
        teammate_processes(&ws.team)
    );
}
