//! Honest liveness with the real binary outside tmux: a teammate whose program cannot start
//! (a `claude` launcher whose real binary is missing: its pane dies with status 127; a
//! launcher that does not exist at all is refused before any pane is made), one whose
//! process is killed while it owns a task, and one whose pane the user closes are each shown as
//! what happened (`exited (127: claude not found)`, `crashed (killed by signal 9)`, `closed`)
//! within a second, in the transcript (once, with the pane's last lines) and in the teams
//! dialog; the killed one's task goes back to pending with no owner; `/respawn` starts one again.

use crate::panes_common;

use std::time::{Duration, Instant};

use panes_common::{
    PtyLead, Reaper, WAIT, Workspace, processes_of, sigkill, teammate_processes, wait_until,
};

/// The liveness poll runs every 500 ms: what happened is on screen within a second on a quiet
/// machine (the timings are printed). The test holds the bound a loaded 2-core machine keeps
/// (a spawn's own tmux work counts in the first): well under the 30 s first-turn report and the
/// lead's other slow paths, which are what it rules out.
const SHOWN_WITHIN: Duration = Duration::from_secs(5);

/// Writes `script` as the `claude` the lead runs (`TEAMLEAD_CLAUDE_BIN`).
fn claude_launcher(ws: &mut Workspace, script: &str) {
    let launcher = ws.work().join("claude");
    std::fs::write(&launcher, script).expect("write the launcher");
    std::fs::set_permissions(
        &launcher,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("make the launcher executable");
    ws.lead_env.push((
        "TEAMLEAD_CLAUDE_BIN".to_string(),
        launcher.to_string_lossy().into_owned(),
    ));
}

/// Waits for `what` on the lead's screen and returns how long it took from `since`.
fn shown(lead: &PtyLead, what: &str, since: Instant) -> Duration {
    lead.wait_screen(&format!("`{what}`"), |s| s.contains(what));
    since.elapsed()
}

#[test]
fn exited_crashed_and_closed_teammates_are_shown_as_such_and_free_their_tasks() {
    let mut ws = Workspace::new("liveness");
    // A launcher (as npm and version managers install) whose real program is gone.
    claude_launcher(
        &mut ws,
        "#!/bin/sh\necho \"claude: exec: claude-real: not found\" >&2\nexit 127\n",
    );
    let mut reaper = Reaper::new(&ws);
    let mut lead = ws.pty_lead(200, 60).start();
    reaper.lead_pid = Some(lead.pid);
    let private = ws.private_server(lead.pid);

    // A Claude Code teammate whose binary is missing: it never starts.
    let spawned = Instant::now();
    lead.submit("/spawn ghost --agent claude stand by");
    let ghost_in = shown(&lead, "ghost exited (127: claude not found)", spawned);
    lead.wait_screen("the pane's last line", |s| s.contains("not found"));

    // A teammate killed while it owns a task (waiting for the lead's approval).
    lead.submit("/spawn worker stand by");
    lead.wait_screen("worker spawned", |s| s.contains("Spawned worker:"));
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.wait_screen("worker's request", |s| {
        s.contains("@worker  needs permission")
    });
    assert_eq!(ws.task("1")["owner"], "worker");
    let (pid, _) = teammate_processes(&ws.team)
        .into_iter()
        .find(|(_, line)| line.contains("--agent-name worker"))
        .expect("worker's process");
    let killed = Instant::now();
    sigkill(pid);
    let worker_in = shown(&lead, "worker crashed (killed by signal 9)", killed);
    let screen = lead.screen();
    assert!(
        screen.contains(r#"1 task(s) were unassigned: #1 "make proof""#),
        "{screen}"
    );
    assert!(
        screen.contains("/respawn worker starts it again"),
        "{screen}"
    );
    lead.wait_screen("its request left the queue", |s| {
        !s.contains("needs permission")
    });
    assert_eq!(ws.task("1")["status"], "pending", "{}", ws.task("1"));
    assert!(ws.task("1")["owner"].is_null(), "{}", ws.task("1"));

    // A teammate whose pane the user closes.
    lead.submit("/spawn closer stand by");
    lead.wait_screen("closer spawned", |s| s.contains("Spawned closer:"));
    let pane = ws.pane_of("closer").expect("closer's pane");
    let closed_at = Instant::now();
    private
        .run(&["kill-pane", "-t", &pane])
        .expect("close closer's pane");
    let closer_in = shown(&lead, "closer closed.", closed_at);

    // Each is told once, and the teams dialog says what happened to each.
    let screen = lead.screen();
    assert_eq!(screen.matches("worker crashed").count(), 1, "{screen}");
    lead.wait_screen("the footer", |s| s.contains("● 3 stopped"));
    lead.send(b"\x1b[B");
    lead.wait_screen("the badge selected", |s| {
        s.contains("open the teams dialog")
    });
    lead.send(b"\r");
    lead.wait_screen("the teams dialog", |s| {
        s.contains("exited (127: claude not found)")
            && s.contains("crashed (killed by signal 9)")
            && s.contains("closed")
    });
    lead.send(b"\x1b");
    lead.wait_screen("the dialog closed", |s| !s.contains("h hide/show"));
    // Esc again: from the badge back to the composer.
    lead.send(b"\x1b");
    lead.wait_screen("back in the composer", |s| {
        s.contains("message the lead") && !s.contains("open the teams dialog")
    });

    // The crashed one starts again under its name and takes the task back.
    lead.submit("/respawn worker");
    lead.wait_screen("the respawn", |s| s.contains("Respawned worker:"));
    wait_until(
        "the respawned worker's request",
        WAIT,
        || ws.task("1")["owner"] == "worker",
        || lead.screen(),
    );

    lead.submit("/quit");
    assert!(lead.wait_exit(), "the lead exits 0");
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    eprintln!(
        "timings: missing binary shown {ghost_in:?} after /spawn, kill shown {worker_in:?}, closed pane shown {closer_in:?}"
    );
    for (what, took) in [
        ("the missing binary", ghost_in),
        ("the killed process", worker_in),
        ("the closed pane", closer_in),
    ] {
        assert!(took < SHOWN_WITHIN, "{what} was shown after {took:?}");
    }
}

/// A `claude` teammate that starts but never takes its first turn (its prompt never reaches a
/// model) is reported, once, with its pane's last lines, instead of showing as running for as
/// long as one waits (`TEAMLEAD_FIRST_TURN_MS` shortens the 30 s for the test).
#[test]
fn a_claude_teammate_that_never_starts_its_first_turn_is_reported() {
    let mut ws = Workspace::new("firstturn");
    claude_launcher(
        &mut ws,
        "#!/bin/sh\necho \"CC-STUCK starting up\"\nexec sleep 600\n",
    );
    ws.lead_env
        .push(("TEAMLEAD_FIRST_TURN_MS".to_string(), "2000".to_string()));
    let mut reaper = Reaper::new(&ws);
    let mut lead = ws.pty_lead(200, 60).start();
    reaper.lead_pid = Some(lead.pid);
    let _private = ws.private_server(lead.pid);
    lead.submit("/spawn mute --agent claude stand by");
    lead.wait_screen("mute spawned", |s| s.contains("Spawned mute:"));
    lead.wait_screen("the report with the pane's last lines", |s| {
        s.contains("mute has not started its first turn") && s.contains("CC-STUCK starting up")
    });
    lead.submit("/kill mute");
    lead.wait_screen("mute killed", |s| s.contains("mute was killed"));
    lead.submit("/quit");
    assert!(lead.wait_exit(), "the lead exits 0");
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
}

/// A message or a mode for a teammate that has exited is refused with a note that says so
/// and names `/respawn`, not accepted in silence (`ghost is now in default mode`).
#[test]
fn a_message_or_a_mode_for_an_exited_teammate_is_refused() {
    let mut ws = Workspace::new("exited-mate");
    let launcher = ws.work().join("claude");
    std::fs::write(&launcher, "#!/bin/sh\nexit 127\n").expect("write the launcher");
    std::fs::set_permissions(
        &launcher,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("make the launcher executable");
    ws.lead_env.push((
        "TEAMLEAD_CLAUDE_BIN".to_string(),
        launcher.to_string_lossy().into_owned(),
    ));
    let mut reaper = Reaper::new(&ws);
    let mut lead = ws.pty_lead(200, 60).start();
    reaper.lead_pid = Some(lead.pid);
    lead.submit("/spawn ghost --agent claude stand by");
    lead.wait_screen("ghost exited", |s| s.contains("ghost exited (127"));
    lead.submit("/mode ghost plan");
    lead.wait_screen("the mode refused", |s| {
        s.contains("its mode was not changed. /respawn ghost")
    });
    assert!(!lead.screen().contains("ghost is now in plan mode"));
    lead.submit("@ghost are you there?");
    lead.wait_screen("the message refused", |s| {
        s.contains("nothing was sent. /respawn ghost")
    });
    lead.submit("/quit");
    assert!(lead.wait_exit(), "the lead exits 0");
}
