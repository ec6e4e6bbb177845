//! The real lead with `--backend zellij` in a pseudo-terminal outside Zellij, against a real
//! `zellij` (0.44 or newer): teammates go in the lead's private background session
//! `teamlead-<lead pid>`, in a private socket directory, HOME, config and temporary directory
//! (the real ones are never touched). What a user checks: three teammates in panes named after
//! them, a permission round trip through the lead's queue, hide/show and a jump from the teams
//! dialog (the pane's focus changes, the terminal is handed to `zellij attach` and comes back on
//! detach), `/kill` and a shutdown close a pane, a lead SIGKILLed and restarted within the grace
//! period re-binds the living panes (not duplicated, the session renamed after it), `/quit`
//! closes them all and removes the session; a SIGKILLed lead leaves nothing after `clean
//! --orphans` (no session, no zellij server, no teammate). Every session and server is removed on
//! drop, even when a test fails.

use crate::panes_common;
use crate::zellij_common::PrivateZellij;
use teamlead_test_support::keys::{self, Keyboard};

use std::path::Path;
use std::time::{Duration, Instant};

use panes_common::{
    PtyLead, Reaper, WAIT, Workspace, processes_of, sigkill, spawn_three, teammate_processes,
    wait_until,
};

/// Zellij's session mode (Ctrl+O), whose hints name `d`, detach.
const SESSION_MODE: &[u8] = b"\x0f";

/// Detaches the Zellij client in the lead's terminal with Zellij's keys: Ctrl+O while Zellij
/// shows (its tab bar names the session), then `d` once the status bar shows the session
/// mode's `Detach`. A client that does not read its input yet drops a key: each key is pressed
/// again only when its effect has not shown within [`keys::SETTLE`], so a lost `d` is
/// never followed by a Ctrl+O that leaves the session mode.
fn detach(lead: &PtyLead, z: &PrivateZellij, session: &str) {
    let zellij_shown = |s: &str| s.contains(&format!("Zellij ({session})"));
    let session_mode = |s: &str| zellij_shown(s) && s.contains("Detach");
    wait_until(
        "the client to detach",
        WAIT,
        || {
            if z.clients(session) == 0 {
                return true;
            }
            let screen = lead.screen();
            let before = session_mode(&screen);
            if before {
                lead.send(b"d");
            } else if zellij_shown(&screen) {
                lead.send(SESSION_MODE);
            }
            let pressed = Instant::now();
            while pressed.elapsed() < keys::SETTLE
                && session_mode(&lead.screen()) == before
                && z.clients(session) != 0
            {
                std::thread::sleep(Duration::from_millis(50));
            }
            z.clients(session) == 0
        },
        || lead.screen(),
    );
}

/// A workspace whose lead runs with `--backend zellij` in the private zellij's environment.
fn workspace(z: &PrivateZellij, prefix: &str, grace_ms: u64) -> Workspace {
    let mut ws = Workspace::new(prefix);
    ws.lead_env = z.env();
    ws.lead_args = vec!["--backend".into(), "zellij".into()];
    ws.lead_grace_ms = grace_ms;
    ws
}

fn session_of(lead: &PtyLead) -> String {
    format!("teamlead-{}", lead.pid)
}

/// Starts the lead and spawns a, b and c; returns it with their panes.
fn lead_with_three(
    ws: &Workspace,
    z: &PrivateZellij,
    reaper: &mut Reaper,
) -> (PtyLead, Vec<String>) {
    let lead = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(lead.pid);
    let session = session_of(&lead);
    lead.wait_screen("the attach hint", |s| {
        s.contains(&format!("watch them with `zellij attach {session}`")) && !s.contains("tmux")
    });
    let panes = spawn_three(&lead, ws, "zellij", WAIT, |pane| z.screen(&session, pane));
    // Three panes, named after their teammates, and nothing else (the session's first shell
    // is closed).
    let expected: Vec<(String, String)> = panes
        .iter()
        .cloned()
        .zip(["a", "b", "c"].map(String::from))
        .collect();
    wait_until(
        "three panes named a, b, c",
        WAIT,
        || z.terminals(&session) == expected,
        || format!("{:?}", z.terminals(&session)),
    );
    let only_this = vec![session];
    wait_until(
        "the lead's private session, and no other",
        WAIT,
        || z.sessions() == only_this,
        || format!("{:?}", z.sessions()),
    );
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    (lead, panes)
}

/// How many teammates the footer's badge counts as alive (working, waiting or idle); `None`
/// without a badge or when it counts one gone, stopping or stopped.
fn alive_in_badge(screen: &str) -> Option<usize> {
    let line = screen.lines().rev().find(|l| l.contains("● "))?;
    let badge = &line[line.rfind("● ")? + "● ".len()..];
    let mut alive = 0;
    for part in badge.split(" · ") {
        let mut words = part.split_whitespace();
        let n: usize = words.next()?.parse().ok()?;
        match words.next()? {
            "working" | "waiting" | "idle" => alive += n,
            _ => return None,
        }
    }
    Some(alive)
}

fn down(lead: &PtyLead) {
    lead.send(b"\x1b[B");
}

#[test]
fn lead_outside_zellij_spawns_asks_hides_jumps_kills_resumes_and_quits() {
    let start = Instant::now();
    let z = PrivateZellij::new();
    let ws = workspace(&z, "zj", 60_000);
    let mut reaper = Reaper::new(&ws);
    let (first, panes) = lead_with_three(&ws, &z, &mut reaper);
    let (pane_a, pane_b, pane_c) = (panes[0].clone(), panes[1].clone(), panes[2].clone());
    let session = session_of(&first);
    let spawned_in = start.elapsed();

    // A task with a command: a teammate claims it and asks; the request reaches the lead's
    // screen; `y` reaches the teammate, which runs the command and completes the task.
    first.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    first.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    let proof = ws.work().join("proof.txt");
    assert!(!proof.exists(), "the command ran before approval");
    first.approve();
    wait_until(
        "the approved command ran",
        WAIT,
        || {
            std::fs::read_to_string(&proof).is_ok_and(|t| t == "proof\n")
                && ws.task("1")["status"] == "completed"
        },
        || format!("task: {}\n{}", ws.task("1"), first.screen()),
    );

    // Teams dialog: hide b's pane (it floats, with its tab's floating panes hidden), then
    // show it (embedded again).
    down(&first);
    first.wait_screen("the footer badge selected", |s| {
        s.contains("open the teams dialog")
    });
    first.send(b"\r");
    first.wait_screen("the teams dialog on a", |s| s.contains("❯ ● a"));
    first.send(b"j");
    first.wait_screen("b selected", |s| s.contains("❯ ● b"));
    first.send(b"h");
    let tab = z.pane(&session, &pane_b).unwrap().tab_id.unwrap();
    wait_until(
        "b's pane hidden",
        WAIT,
        || {
            ws.hidden_pane_ids() == vec![pane_b.clone()]
                && z.pane(&session, &pane_b).is_some_and(|p| p.is_floating)
                && z.floating_visible(&session, tab) == Some(false)
        },
        || format!("{:?}\n{}", z.panes(&session), first.screen()),
    );
    first.wait_screen("the hidden note", |s| s.contains("b's pane is hidden"));
    assert!(
        teammate_processes(&ws.team)
            .iter()
            .any(|(_, args)| args.contains("--agent-name b")),
        "a hidden teammate keeps running: {:?}",
        teammate_processes(&ws.team)
    );
    first.send(b"h");
    wait_until(
        "b's pane back in the layout",
        WAIT,
        || {
            ws.hidden_pane_ids().is_empty()
                && z.pane(&session, &pane_b).is_some_and(|p| !p.is_floating)
        },
        || format!("{:?}\n{}", z.panes(&session), first.screen()),
    );
    first.wait_screen("the shown note", |s| s.contains("b's pane is back"));

    // Jump to b: its pane takes the focus and the terminal is handed to `zellij attach`;
    // detaching gives it back to the lead.
    let focused = |pane: &str| z.pane(&session, pane).is_some_and(|p| p.is_focused);
    assert!(!focused(&pane_b), "b's pane had the focus already");
    first.send(b"\r");
    first.wait_screen("b's details", |s| s.contains("enter jump"));
    first.send(b"\r");
    // Zellij cannot show the way back itself: it is said first, and Enter goes there.
    first.wait_screen(
        "the way back, said before the terminal is handed over",
        |s| {
            s.contains("b's pane: detach with ctrl+o d to come back to the lead.")
                && s.contains("Press Enter to go there (Esc stays in the lead).")
        },
    );
    assert_eq!(z.clients(&session), 0, "nothing is attached before Enter");
    // Esc stays in the lead; the jump is there again.
    first.send(b"\x1b");
    first.wait_screen("the lead's screen back, saying it stayed", |s| {
        s.contains("enter jump") && s.contains("Stayed in the lead.")
    });
    assert_eq!(z.clients(&session), 0);
    first.send(b"\r");
    first.wait_screen("the way back said again", |s| {
        s.contains("Press Enter to go there (Esc stays in the lead).")
    });
    first.send(b"\r");
    // `zellij attach` starting on a loaded machine (the full suite runs Claude Code beside it)
    // has been seen to take longer than WAIT.
    wait_until(
        "b's pane focused and a client attached",
        WAIT * 3,
        || focused(&pane_b) && z.clients(&session) == 1,
        || {
            format!(
                "focused {:?}, clients {}\n{}",
                z.panes(&session)
                    .unwrap_or_default()
                    .iter()
                    .filter(|p| p.is_focused)
                    .map(|p| p.pane_id())
                    .collect::<Vec<_>>(),
                z.clients(&session),
                first.screen()
            )
        },
    );
    first.wait_screen("Zellij showing b's pane in the lead's terminal", |s| {
        s.contains(&format!("b @ {}", ws.team)) && !s.contains("message the lead")
    });
    detach(&first, &z, &session);
    first.wait_screen("the lead's screen back, on b's details", |s| {
        s.contains("enter jump")
    });
    first.send(b"\x1b");
    first.wait_screen("the note of the jump, naming Zellij's detach keys", |s| {
        !s.contains("h hide/show")
            && s.contains(&format!(
                "b's pane is in the team's own session (`zellij attach {session}`): detach with ctrl+o d to come back to the lead."
            ))
    });

    // `/kill c` closes its pane.
    first.submit("/kill c");
    wait_until(
        "c's pane closed",
        WAIT,
        || {
            z.panes(&session)
                .is_some_and(|ps| !ps.iter().any(|p| p.pane_id() == pane_c))
        },
        || format!("{:?}\n{}", z.terminals(&session), first.screen()),
    );
    // Then c leaves the team (its pane closes first).
    first.wait_screen("the kill note", |s| s.contains("c was killed."));

    // The lead dies; a new one within the grace period re-binds a and b in their panes.
    wait_until(
        "c's process gone with its pane",
        WAIT,
        || teammate_processes(&ws.team).len() == 2,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    // `/kill` is done once c has left the team file too (a kill before that write leaves c a
    // member the next lead reports as not running).
    wait_until(
        "c removed from the team",
        WAIT,
        || !ws.members().contains(&"c".to_string()),
        || format!("{:?}", ws.members()),
    );
    let before = teammate_processes(&ws.team);
    let mut first = first;
    sigkill(first.pid);
    assert!(!first.wait_exit());
    let second = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(second.pid);
    let session = session_of(&second);
    // Both notes are long: the transcript may wrap them anywhere between words.
    second.wait_screen("the resume note", |s| {
        let text = s.split_whitespace().collect::<Vec<_>>().join(" ");
        text.contains("Resumed the team")
            && text.contains(&format!("re-bound a ({pane_a}), b ({pane_b})"))
    });
    // Said in Zellij's words (it once said "tmux server").
    second.wait_screen("the take-over note", |s| {
        let words: Vec<&str> = s.split_whitespace().collect();
        words
            .join(" ")
            .contains("took over its panes' zellij session teamlead-")
    });
    assert_eq!(teammate_processes(&ws.team), before);
    // The session is taken over under the new lead's name, its panes reused, none added.
    let only_this = vec![session.clone()];
    wait_until(
        "the session renamed after the new lead",
        WAIT,
        || z.sessions() == only_this,
        || format!("{:?}", z.sessions()),
    );
    let expected = vec![
        (pane_a.clone(), "a".to_string()),
        (pane_b.clone(), "b".to_string()),
    ];
    wait_until(
        "a's and b's panes, reused",
        WAIT,
        || z.terminals(&session) == expected,
        || format!("{:?}", z.terminals(&session)),
    );
    second.wait_screen("a and b alive in the footer", |s| {
        alive_in_badge(s) == Some(2)
    });

    // A shutdown closes b's pane once b has left.
    second.submit("/shutdown b");
    wait_until(
        "b's pane closed after its shutdown",
        WAIT,
        || z.terminals(&session) == vec![(pane_a.clone(), "a".to_string())],
        || format!("{:?}\n{}", z.terminals(&session), second.screen()),
    );
    second.wait_screen("a alone alive in the footer", |s| {
        alive_in_badge(s) == Some(1)
    });

    // `/quit` closes every pane and removes the session and its server.
    let mut second = second;
    second.submit("/quit");
    assert!(second.wait_exit(), "the lead exits with status 0");
    wait_until(
        "no session and no zellij server",
        WAIT,
        || z.sessions().is_empty() && z.servers().is_empty(),
        || format!("{:?} {:?}", z.sessions(), z.servers()),
    );
    assert!(!ws.team_dir().exists());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    eprintln!(
        "timings: start + 3 spawns {spawned_in:?}, whole test {:?}",
        start.elapsed()
    );
}

#[test]
fn lead_outside_zellij_killed_leaves_nothing_after_clean_orphans() {
    let z = PrivateZellij::new();
    let ws = workspace(&z, "zj-kill", 0);
    let mut reaper = Reaper::new(&ws);
    let (mut lead, _) = lead_with_three(&ws, &z, &mut reaper);
    let session = session_of(&lead);
    sigkill(lead.pid);
    assert!(!lead.wait_exit());
    wait_until(
        "the teammates to exit",
        WAIT,
        || teammate_processes(&ws.team).is_empty(),
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    let out = z.clean_orphans(&ws);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("removed: team {}", ws.team)),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("removed: zellij session {session}")),
        "{stdout}"
    );
    wait_until(
        "no session and no zellij server",
        WAIT,
        || z.sessions().is_empty() && z.servers().is_empty(),
        || format!("{:?} {:?}", z.sessions(), z.servers()),
    );
    assert!(!ws.team_dir().exists());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    assert!(
        !socket_exists(&z.path("sock"), &session),
        "the session's socket is left"
    );
}

/// Is there a file named `name` anywhere under `dir`?
fn socket_exists(dir: &Path, name: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name() == name || (e.path().is_dir() && socket_exists(&e.path(), name)))
}
