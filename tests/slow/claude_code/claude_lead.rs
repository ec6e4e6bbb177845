//! A real Claude Code lead (issue 11): `claude` leads a team its scripted model creates
//! (2.1.45: `TeamCreate`, then `Task` with `name`/`team_name`; newer clients: the session's
//! implicit team, then `Agent` with `name`), with one teammate that messages it. While it runs,
//! `teamlead inspect` (text and JSON, all teams and the team) reports the team with its lead
//! alive, `teamlead monitor` reports the member and the message, and no teamlead command —
//! `inspect`, `inspect TEAM`, `inspect TEAM --json`, `clean`, `clean --dry-run`,
//! `clean --orphans`, `monitor TEAM` running meanwhile — changes a byte, a name or a mode of
//! the home, the user's `HOME` or the lead's directory.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::claude_code_common::claude_lead::{ClaudeLead, digest_diff};
use crate::claude_code_common::{Act, Client, Rule, timing};

pub fn only_read_while_it_runs(client: &Client) {
    let mut lead = ClaudeLead::new(client, "cc-lead", |team| {
        vec![
            Rule::seq(
                "CC-LEAD-GO",
                vec![
                    Act::CreateTeam { team: team.into() },
                    Act::SpawnTeammate {
                        team: team.into(),
                        name: "worker".into(),
                        prompt: "CC-LEAD-WORKER-HELLO say hello to your lead".into(),
                    },
                ],
            )
            .once(),
            Rule::on(
                "CC-LEAD-WORKER-HELLO",
                Act::SendToLead {
                    summary: "hello".into(),
                    message: "CC-LEAD-WORKER-REPLY hello lead".into(),
                },
            )
            .once(),
        ]
    });
    // A monitor of every team, from before the lead exists.
    let every = lead.start_monitor(&[]);
    lead.launch("CC-LEAD-GO: make a team with one worker");

    let mut team = String::new();
    lead.wait("a team with the member worker", || {
        match lead
            .teams()
            .into_iter()
            .find(|t| lead.members(t).iter().any(|m| m == "worker"))
        {
            Some(t) => {
                team = t;
                true
            }
            None => false,
        }
    });
    lead.wait("the worker's message to reach the lead's model", || {
        lead.model.requests().iter().any(|r| {
            let last = r.last_user_text();
            last.contains("teammate_id=\"worker\"") && last.contains("CC-LEAD-WORKER-REPLY")
        })
    });
    timing(
        client,
        "lead start -> team, teammate and its message",
        lead.started.elapsed(),
    );
    let quiet = lead.wait_quiet();
    timing(client, "message -> scene quiet", quiet);

    // Claude Code rewrites its own files on its own schedule (`.claude.json` counters, seen
    // seconds after a quiet scene on a loaded machine): its processes are paused while the
    // teamlead commands run, so a byte that changes is teamlead's. They stay alive (a stopped
    // process is a running lead to every probe), and continue when the guard drops.
    let paused = Paused::new(lead.processes());
    let before = lead.digest();
    let commands = Instant::now();
    let one = lead.start_monitor(&[&team]);
    // Every command at least once, and again until the monitor has run for a few seconds.
    let mut rounds = 0;
    while rounds == 0 || commands.elapsed() < MONITOR_FOR {
        rounds += 1;
        check_commands(&lead, &team);
    }
    let watched = lead.stop_monitor(one);
    timing(
        client,
        &format!("{rounds} round(s) of teamlead commands, monitor {team} running meanwhile"),
        commands.elapsed(),
    );
    let after = lead.digest();
    drop(paused);
    assert!(
        before == after,
        "[{}] teamlead commands changed the Claude Code lead's files:\n{}",
        client.label,
        digest_diff(&before, &after)
    );
    assert!(
        watched.contains(&format!("monitoring team {team} in")),
        "[{}] monitor {team} watched the team:\n{watched}",
        client.label
    );

    // The monitor that ran from the start saw the member join and its message to the lead.
    let seen = lead.stop_monitor(every);
    let line = |needle: &str| {
        seen.lines()
            .any(|l| l.contains(&format!(" {team} ")) && l.contains(needle))
    };
    assert!(
        line("(+worker)") && line("inbox team-lead: +1 message from worker"),
        "[{}] monitor reported the new member and its message:\n{seen}",
        client.label
    );
}

/// Processes stopped with SIGSTOP until dropped (SIGCONT), also when an assertion fails.
pub(crate) struct Paused(Vec<u32>);

impl Paused {
    pub(crate) fn new(pids: Vec<u32>) -> Paused {
        for pid in &pids {
            // SAFETY: kill(2) with a pid of this test's own scene and a valid signal.
            unsafe { libc::kill(*pid as i32, libc::SIGSTOP) };
        }
        Paused(pids)
    }
}

impl Drop for Paused {
    fn drop(&mut self) {
        for pid in &self.0 {
            // SAFETY: as above.
            unsafe { libc::kill(*pid as i32, libc::SIGCONT) };
        }
    }
}

/// How long `monitor TEAM` runs while the other commands do, at least.
const MONITOR_FOR: Duration = Duration::from_secs(3);

/// One round of `inspect` and `clean`: the team is listed with its lead alive, its members are
/// the ones of its file, and every `clean` leaves it alone because its lead runs.
fn check_commands(lead: &ClaudeLead, team: &str) {
    let label = lead.client.label;
    let run = |args: &[&str]| String::from_utf8_lossy(&lead.run_teamlead(args).stdout).into_owned();
    let json = |args: &[&str]| -> Value {
        let out = run(args);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("[{label}] teamlead {args:?} printed no JSON ({e}):\n{out}"))
    };
    let config = lead.config(team);
    let worker = config["members"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == "worker").cloned())
        .unwrap_or(Value::Null);

    let listing = run(&["inspect"]);
    let row = listing
        .lines()
        .find(|l| l.split_whitespace().next() == Some(team))
        .unwrap_or_else(|| panic!("[{label}] inspect lists {team}:\n{listing}"));
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert!(
        cells.get(1) == Some(&"2") && (cells[2] == "running" || cells[2] == "pid"),
        "[{label}] inspect shows 2 members and a running lead for {team}:\n{listing}"
    );

    let all = json(&["inspect", "--json"]);
    let entry = all["teams"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == team).cloned())
        .unwrap_or_else(|| panic!("[{label}] inspect --json lists {team}:\n{all:#}"));
    assert!(
        entry["lead_alive"] == true && entry["lead_status"] == "alive" && entry["members"] == 2,
        "[{label}] inspect --json: the lead of {team} is alive, 2 members:\n{entry:#}"
    );

    let text = run(&["inspect", team]);
    assert!(
        text.contains(&format!("lead team-lead@{team}: running"))
            && text.lines().any(|l| l.trim_start().starts_with("worker ")),
        "[{label}] inspect {team} shows the lead running and the worker:\n{text}"
    );

    let one = json(&["inspect", team, "--json"]);
    let names: Vec<&str> = one["members"]
        .as_array()
        .map(|ms| ms.iter().filter_map(|m| m["name"].as_str()).collect())
        .unwrap_or_default();
    let listed = one["members"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == "worker").cloned())
        .unwrap_or(Value::Null);
    assert!(
        one["lead_alive"] == true
            && one["lead_status"] == "alive"
            && names == ["team-lead", "worker"]
            && listed["agent_id"] == format!("worker@{team}")
            && listed["backend"] == worker["backendType"]
            && listed["pane"] == worker["tmuxPaneId"],
        "[{label}] inspect {team} --json: lead alive, members as in its file ({worker}):\n{one:#}"
    );

    for args in [
        &["clean", "--dry-run"][..],
        &["clean"],
        &["clean", "--orphans"],
    ] {
        let out = run(args);
        assert!(
            out.contains(&format!("left alone: team {team}:"))
                && out.contains("its lead is running")
                && out
                    .lines()
                    .all(|l| l.starts_with("left alone: ") || l == "nothing to clean"),
            "[{label}] teamlead {args:?} leaves {team} alone, its lead running:\n{out}"
        );
    }
}
