//! The real lead inside a real kitty (Debian's 0.26 under Xvfb, `kitty_common`): the lead runs in
//! a pseudo-terminal with the variables kitty gives a program in its first window
//! (`KITTY_WINDOW_ID`, `KITTY_LISTEN_ON` on kitty's private socket), so it picks the kitty
//! backend by itself and every `kitty @` call goes to that kitty. What a person would check:
//! three `/spawn`ed teammates are three windows beside the lead's, titled after them and running
//! them, while the lead keeps the keyboard and kitty's own border colors; a permission round trip
//! through the lead's queue; Ctrl+N jumps to the teammate waiting (kitty's focused window
//! changes); `/kill` and `/shutdown` close a window; a SIGKILLed lead leaves nothing after `clean
//! --orphans` run in the same kitty; a SIGKILLed lead restarted within the grace period re-binds
//! the living windows (the same windows and processes, none added) and `/quit` closes them all.
//! One kitty per test, and one test at a time: `kitty @` is a Python program that takes up to
//! seconds a call on a loaded machine.

use crate::kitty_common;
use crate::panes_common;
use teamlead_test_support::keys::Keyboard;

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use kitty_common::{KITTY_ACTIVE_BORDER, RealKitty};
use panes_common::{
    PtyLead, Reaper, THREE, Workspace, processes_of, sigkill, spawn_three, teammate_processes,
};

/// Deadline of a wait on kitty (a spawn is five `kitty @` calls, a close two).
const KITTY_WAIT: Duration = Duration::from_secs(90);

/// One kitty test at a time.
static ONE_KITTY: Mutex<()> = Mutex::new(());

fn wait_for(what: &str, cond: impl FnMut() -> bool, explain: impl Fn() -> String) -> Duration {
    panes_common::wait_until(what, KITTY_WAIT, cond, explain)
}

/// The teammates' windows by name.
type Windows = HashMap<String, String>;

/// Starts the lead inside `kitty` and spawns a, b and c: three windows beside the lead's, titled
/// after them, each running its teammate, the lead's window keeping the keyboard.
fn lead_with_three(ws: &Workspace, kitty: &RealKitty, reaper: &mut Reaper) -> (PtyLead, Windows) {
    let lead_window = kitty.windows()[0].clone();
    let lead = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(lead.pid);
    let windows: Windows = THREE
        .map(|(name, _)| name.to_string())
        .into_iter()
        .zip(spawn_three(&lead, ws, "kitty", KITTY_WAIT, |w| {
            kitty.text_of(w)
        }))
        .collect();
    let listed = kitty.listed();
    assert_eq!(
        listed.len(),
        4,
        "the lead's window and three more: {listed:?}"
    );
    for (name, window) in &windows {
        let w = listed.iter().find(|w| &w.id == window).expect("listed");
        assert_eq!(&w.title, name, "titled after its teammate");
        assert_eq!(w.tab, lead_window.0, "beside the lead, in its tab");
    }
    assert_eq!(
        kitty.focused(),
        Some(lead_window.1.clone()),
        "the lead keeps the keyboard"
    );
    // kitty's border colors are global: a teammate's color on a border would be on every
    // border, the lead's included. The lead's window keeps kitty's active border.
    wait_for(
        "kitty's active border around the lead's window",
        || kitty.pixels_of(KITTY_ACTIVE_BORDER) > 0,
        || format!("{:?}", kitty.screen_colors().keys().collect::<Vec<_>>()),
    );
    assert_eq!(teammate_processes(&ws.team).len(), 3);
    (lead, windows)
}

fn listed_ids(kitty: &RealKitty) -> Vec<String> {
    let mut ids: Vec<String> = kitty.windows().into_iter().map(|(_, id, _)| id).collect();
    ids.sort();
    ids
}

#[test]
fn lead_in_kitty_spawns_asks_jumps_kills_shuts_down_and_leaves_nothing_after_clean() {
    let _one = ONE_KITTY.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let kitty = RealKitty::start();
    let lead_window = kitty.windows()[0].1.clone();
    let mut ws = Workspace::new("kitty");
    ws.lead_env = kitty.lead_env();
    // Teammates outlive the SIGKILLed lead: `clean --orphans` must close their windows.
    ws.lead_grace_ms = 120_000;
    let mut reaper = Reaper::new(&ws);
    let (mut lead, windows) = lead_with_three(&ws, &kitty, &mut reaper);
    let spawned_in = start.elapsed();

    // A permission round trip through the lead's queue.
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.wait_text_within("the permission request", KITTY_WAIT, |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    lead.approve();
    let proof = ws.work().join("proof.txt");
    wait_for(
        "the approved command to run",
        || proof.exists() && ws.task("1")["status"] == "completed",
        || format!("task: {}\n{}", ws.task("1"), lead.screen()),
    );

    // The teammate that ran it reported back (its report on the lead's screen), so it waits
    // on the person: Ctrl+N jumps to its window.
    let owner = ws.task("1")["owner"].as_str().unwrap().to_string();
    let target = windows[&owner].clone();
    assert_eq!(kitty.focused(), Some(lead_window.clone()));
    lead.wait_text_within(&format!("{owner}'s report"), KITTY_WAIT, |s| {
        s.contains("\"make proof\" done")
    });
    lead.send(b"\x0e");
    wait_for(
        &format!("Ctrl+N to focus {owner}'s window"),
        || kitty.focused().as_ref() == Some(&target),
        || format!("focused {:?}\n{}", kitty.listed(), lead.screen()),
    );

    // `/kill c` closes its window, `/shutdown b` too (b leaves by itself).
    let before: Vec<u32> = teammate_processes(&ws.team).iter().map(|p| p.0).collect();
    lead.submit("/kill c");
    wait_for(
        "c's window to close",
        || !listed_ids(&kitty).contains(&windows["c"]),
        || format!("{:?}\n{}", kitty.listed(), lead.screen()),
    );
    lead.submit("/shutdown b");
    wait_for(
        "b's window to close",
        || !listed_ids(&kitty).contains(&windows["b"]),
        || format!("{:?}\n{}", kitty.listed(), lead.screen()),
    );
    wait_for(
        "b's and c's processes to end",
        || teammate_processes(&ws.team).len() == 1,
        || format!("{:?} (were {before:?})", teammate_processes(&ws.team)),
    );
    assert_eq!(listed_ids(&kitty), {
        let mut ids = vec![lead_window.clone(), windows["a"].clone()];
        ids.sort();
        ids
    });

    // The lead dies; a is still there, waiting for it. `clean --orphans`, run in the same kitty,
    // removes the team and closes a's window: nothing is left.
    sigkill(lead.pid);
    assert!(!lead.wait_exit());
    assert_eq!(teammate_processes(&ws.team).len(), 1, "a waits for a lead");
    let out = ws.clean_orphans_with(None, &kitty.lead_env());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(
        stdout.contains(&format!("removed: team {}", ws.team)),
        "{stdout}"
    );
    wait_for(
        "a's window to close and its process to end",
        || listed_ids(&kitty) == vec![lead_window.clone()] && processes_of(&ws).is_empty(),
        || format!("{:?} {:?}", kitty.listed(), processes_of(&ws)),
    );
    assert!(!ws.team_dir().exists());
    eprintln!(
        "timings: start + 3 spawns {spawned_in:?}, whole test {:?}",
        start.elapsed()
    );
}

#[test]
fn lead_in_kitty_killed_and_restarted_rebinds_its_windows_and_quit_closes_them_all() {
    let _one = ONE_KITTY.lock().unwrap_or_else(|e| e.into_inner());
    let start = Instant::now();
    let kitty = RealKitty::start();
    let lead_window = kitty.windows()[0].1.clone();
    let mut ws = Workspace::new("kitty-resume");
    ws.lead_env = kitty.lead_env();
    ws.lead_grace_ms = 120_000;
    let mut reaper = Reaper::new(&ws);
    let (mut first, windows) = lead_with_three(&ws, &kitty, &mut reaper);
    let ids = listed_ids(&kitty);
    let processes = teammate_processes(&ws.team);

    // The lead dies; a new one within the grace period re-binds a, b and c in their windows.
    sigkill(first.pid);
    assert!(!first.wait_exit());
    let second = ws.pty_lead(160, 45).start();
    reaper.lead_pid = Some(second.pid);
    let rebound = format!(
        "re-bound a ({}), b ({}), c ({})",
        windows["a"], windows["b"], windows["c"]
    );
    second.wait_text_within("the resume note", KITTY_WAIT, |s| {
        s.contains("Resumed the team") && s.contains(&rebound)
    });
    assert_eq!(
        teammate_processes(&ws.team),
        processes,
        "the same teammates"
    );
    assert_eq!(listed_ids(&kitty), ids, "the same windows, none added");

    // A new teammate gets one new window beside the others.
    second.submit("/spawn d say hi");
    second.wait_text_within("`Spawned d:`", KITTY_WAIT, |s| s.contains("Spawned d:"));
    let d = ws.pane_of("d").expect("d's window");
    assert!(!ids.contains(&d));
    wait_for(
        "d's window beside the lead's, titled d",
        || {
            kitty.listed().iter().any(|w| {
                w.id == d && w.title == "d" && Some(&w.tab) == kitty.tab_of(&lead_window).as_ref()
            })
        },
        || format!("{:?}", kitty.listed()),
    );
    assert_eq!(listed_ids(&kitty).len(), 5);

    // `/quit` closes every window and removes the team.
    let mut second = second;
    second.submit("/quit");
    let mut status = None;
    wait_for(
        "the lead to quit",
        || {
            status = second.exit_status();
            status.is_some()
        },
        || "the lead is still running".to_string(),
    );
    assert_eq!(status, Some(true), "the lead exits with status 0");
    wait_for(
        "only the lead's window to be left",
        || listed_ids(&kitty) == vec![lead_window.clone()],
        || format!("{:?}", kitty.listed()),
    );
    assert!(!ws.team_dir().exists());
    wait_for(
        "no process of the team",
        || processes_of(&ws).is_empty(),
        || format!("{:?}", processes_of(&ws)),
    );
    eprintln!("timings: whole test {:?}", start.elapsed());
}
