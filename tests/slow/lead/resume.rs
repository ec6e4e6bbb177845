//! A team that outlives its lead, with the real binary outside tmux (teammates on the lead's
//! private server). The lead is SIGKILLed with two pane teammates (one waiting for the lead's
//! approval of its task's command) and three tasks; a message reaches the lead's inbox while no
//! lead runs. Started again within the teammates' grace period, the new lead takes the private
//! server over, re-binds both teammates (same processes), asks the pending request again and
//! its answer runs the command, keeps the tasks and delivers the message once. Started after
//! the grace period, it finds the teammates gone (they exited by themselves), lists them and
//! re-spawns one on request. Two leads started at once on a crashed team: one leads, the other
//! says so and exits 1.

use crate::panes_common;
use teamlead_test_support::keys::Keyboard;

use std::time::{Duration, Instant};

use panes_common::{
    PtyLead, Reaper, TestTmux, WAIT, Workspace, processes_of, server_running, sigkill,
    teammate_processes, wait_until,
};

/// The task files, by id.
fn tasks(ws: &Workspace) -> Vec<serde_json::Value> {
    (1..=3).map(|id| ws.task(&id.to_string())).collect()
}

/// How many times the delivery log holds a message with `needle`.
fn delivered_count(ws: &Workspace, needle: &str) -> usize {
    let log = ws
        .team_dir()
        .join(".teamlead")
        .join("delivered-team-lead.jsonl");
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

/// Starts a lead, spawns alpha and beta, adds three tasks (the first runs a command that needs
/// the lead's approval) and waits for the request on screen.
fn lead_with_a_waiting_teammate(ws: &Workspace) -> (PtyLead, String) {
    let lead = ws.pty_lead(180, 50).start();
    for name in ["alpha", "beta"] {
        lead.submit(&format!("/spawn {name} stand by"));
        lead.wait_screen(&format!("`Spawned {name}:`"), |s| {
            s.contains(&format!("Spawned {name}:"))
        });
    }
    lead.submit(r#"/task add "make proof" --command "echo proof > proof.txt""#);
    lead.submit(r#"/task add "write the docs""#);
    lead.submit(r#"/task add "review" --blocked-by 1"#);
    lead.wait_screen("the permission request", |s| {
        s.contains("needs permission") && s.contains("make proof (task #1)")
    });
    let asker = ws.task("1")["owner"]
        .as_str()
        .expect("task #1 is claimed")
        .to_string();
    (lead, asker)
}

#[test]
fn a_lead_restarted_within_the_grace_period_rebinds_its_teammates() {
    let mut ws = Workspace::new("resume-in");
    ws.lead_grace_ms = 60_000;
    let mut reaper = Reaper::new(&ws);
    let (mut first, asker) = lead_with_a_waiting_teammate(&ws);
    reaper.lead_pid = Some(first.pid);
    let first_server = ws.private_server(first.pid);
    let teammates_before = teammate_processes(&ws.team);
    assert_eq!(teammates_before.len(), 2, "{teammates_before:?}");
    let tasks_before = tasks(&ws);

    sigkill(first.pid);
    assert!(!first.wait_exit(), "the lead died of the signal");
    ws.send("beta", "team-lead", "written while no lead ran");

    let restart = Instant::now();
    let second = ws.pty_lead(180, 50).start();
    reaper.lead_pid = Some(second.pid);
    let _second_server = ws.private_server(second.pid);
    second.wait_screen("the resume note", |s| {
        s.contains("Resumed the team") && s.contains("re-bound alpha") && s.contains("beta (%")
    });
    let resumed_in = restart.elapsed();
    let screen = second.screen();
    assert!(screen.contains("kept 3 task(s)"), "{screen}");
    assert!(
        screen.contains("took over its panes' tmux server"),
        "{screen}"
    );
    assert!(!screen.contains("Not running"), "{screen}");
    // The same teammate processes, on the taken-over server (now named after the new lead).
    assert_eq!(teammate_processes(&ws.team), teammates_before);
    assert!(!first_server.socket_path().exists());
    assert_eq!(tasks(&ws), tasks_before, "the tasks are unchanged");
    // The message written while no lead ran is delivered, once.
    second.wait_screen("the message written meanwhile", |s| {
        s.contains("written while no lead ran")
    });
    assert_eq!(delivered_count(&ws, "written while no lead ran"), 1);

    // The request the first lead never answered is asked again; its answer runs the command.
    second.wait_screen("the request asked again", |s| {
        s.contains(&format!("@{asker}  needs permission"))
    });
    second.approve();
    let proof = ws.work().join("proof.txt");
    wait_until(
        "the approved command ran and task #1 completed",
        WAIT,
        || proof.exists() && ws.task("1")["status"] == "completed",
        || format!("task: {}\nscreen:\n{}", ws.task("1"), second.screen()),
    );
    assert_eq!(ws.task("2"), tasks_before[1]);
    assert_eq!(delivered_count(&ws, "written while no lead ran"), 1);

    // /quit keeps its meaning: everything is shut down and the team removed.
    let mut second = second;
    second.submit("/quit");
    assert!(second.wait_exit(), "the lead exits with status 0");
    assert!(!server_running(&_second_server));
    assert!(!ws.team_dir().exists() && !ws.tasks_dir().exists());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
    eprintln!("timings: new lead up and teammates re-bound {resumed_in:?} after the restart");
}

#[test]
fn after_the_grace_period_the_teammates_are_gone_and_one_is_respawned() {
    let mut ws = Workspace::new("resume-late");
    ws.lead_grace_ms = 1_000;
    let mut reaper = Reaper::new(&ws);
    let (mut first, asker) = lead_with_a_waiting_teammate(&ws);
    reaper.lead_pid = Some(first.pid);
    let _first_server = ws.private_server(first.pid);
    sigkill(first.pid);
    assert!(!first.wait_exit());
    let killed = Instant::now();
    wait_until(
        "the teammates to exit by themselves after the grace period",
        Duration::from_secs(10),
        || teammate_processes(&ws.team).is_empty(),
        || format!("still running: {:?}", teammate_processes(&ws.team)),
    );
    let exited_in = killed.elapsed();
    assert!(exited_in >= Duration::from_millis(1_000), "{exited_in:?}");

    let mut second = ws.pty_lead(180, 50).start();
    reaper.lead_pid = Some(second.pid);
    let second_server = ws.private_server(second.pid);
    second.wait_screen("the teammates listed as not running", |s| {
        s.contains("Resumed the team") && s.contains("Not running: alpha") && s.contains("beta")
    });
    assert!(second.screen().contains("/respawn NAME"));
    // The asker's task went back to pending with no owner; the others are as they were.
    assert_eq!(ws.task("1")["status"], "pending", "{}", ws.task("1"));
    assert!(ws.task("1")["owner"].is_null(), "{}", ws.task("1"));
    assert_eq!(ws.members(), vec!["team-lead", "alpha", "beta"]);

    second.submit(&format!("/respawn {asker}"));
    second.wait_screen("the respawn note", |s| {
        s.contains(&format!("Respawned {asker}:"))
    });
    wait_until(
        "the respawned teammate's process",
        WAIT,
        || teammate_processes(&ws.team).len() == 1,
        || format!("{:?}", teammate_processes(&ws.team)),
    );
    let (_, line) = &teammate_processes(&ws.team)[0];
    assert!(line.contains(&format!("--agent-name {asker}")), "{line}");
    second.submit("/quit");
    assert!(second.wait_exit());
    assert!(!server_running(&second_server));
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
}

#[test]
fn two_leads_started_at_once_on_a_crashed_team_one_leads() {
    let ws = Workspace::new("resume-race");
    let mut reaper = Reaper::new(&ws);
    let mut first = ws.pty_lead(120, 40).start();
    reaper.lead_pid = Some(first.pid);
    let _first_server = ws.private_server(first.pid);
    first.submit(r#"/task add "survive the crash""#);
    first.wait_screen("the task", |s| s.contains("Added task #1"));
    sigkill(first.pid);
    assert!(!first.wait_exit());

    let (a, b) = std::thread::scope(|scope| {
        let a = scope.spawn(|| ws.pty_lead(120, 40).spawn());
        let b = scope.spawn(|| ws.pty_lead(120, 40).spawn());
        (a.join().expect("lead a"), b.join().expect("lead b"))
    });
    let mut leads = [a, b];
    let _servers: Vec<TestTmux> = leads.iter().map(|l| ws.private_server(l.pid)).collect();
    // Exactly one exits, with status 1 and the reason; the other leads the team.
    let deadline = Instant::now() + WAIT;
    let loser = loop {
        if let Some(i) = leads.iter_mut().position(|l| l.exit_status().is_some()) {
            break i;
        }
        assert!(
            Instant::now() < deadline,
            "neither lead gave up\na:\n{}\nb:\n{}",
            leads[0].screen(),
            leads[1].screen()
        );
        std::thread::sleep(Duration::from_millis(25));
    };
    let winner = 1 - loser;
    assert_eq!(leads[loser].exit_status(), Some(false), "the loser exits 1");
    let told = leads[loser].screen();
    assert!(told.contains("already has a running lead"), "{told}");
    leads[winner].wait_screen("the winner resumed the team", |s| {
        s.contains("Resumed the team") && s.contains("kept 1 task(s)")
    });
    assert!(leads[winner].exit_status().is_none(), "the winner leads");
    leads[winner].submit("/quit");
    assert!(leads[winner].wait_exit());
    assert!(processes_of(&ws).is_empty(), "{:?}", processes_of(&ws));
}
