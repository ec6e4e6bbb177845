//! The lead's own `isActive: true` is not a turn (issue 27): before it delivers a message to
//! an idle `claude` teammate the lead sets the teammate's `isActive: true` itself, so the client
//! makes no torn turn-start write of its own (docs/PROTOCOL.md §4). The lead must not read that
//! `true` back as the teammate's turn: with the teammate's client stopped (SIGSTOP) it never
//! takes the message, and the lead shows it idle, the message `delivered` (never `turn
//! started`), and says after its deadline that it has not started a turn on it; once the client
//! runs again, its turn on the message is marked `turn started`.

use std::time::Duration;

use crate::claude_code::claude_lead::Paused;
use crate::claude_code_common::{Act, Client, Rule, Scene};

/// The lead's deadline for a turn (`TEAMLEAD_FIRST_TURN_MS`) in this scene.
const TURN_MS: u64 = 6_000;

/// `roots` and every process under them (a teammate's pane runs its client under a shell).
fn with_descendants(roots: Vec<u32>) -> Vec<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|pid| {
                    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
                    // The field after the command (which may hold spaces) in parentheses.
                    let rest = &stat[stat.rfind(')')? + 2..];
                    let ppid = rest.split(' ').nth(1)?.parse().ok()?;
                    Some((pid, ppid))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut all = roots;
    let mut i = 0;
    while i < all.len() {
        let parent = all[i];
        for (pid, ppid) in &parents {
            if *ppid == parent && !all.contains(pid) {
                all.push(*pid);
            }
        }
        i += 1;
    }
    all
}

/// What `ctl events --json` told, as JSON values.
fn events(scene: &Scene) -> Vec<serde_json::Value> {
    let out = scene.ctl(&["events", "--json"]);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The last status `ctl events` told for `name`.
fn status(scene: &Scene, name: &str) -> Option<String> {
    events(scene)
        .into_iter()
        .filter(|e| e["kind"] == "teammate" && e["name"] == name)
        .filter_map(|e| e["status"].as_str().map(str::to_string))
        .next_back()
}

/// The receipts told for the newest message to `name`, in order.
fn newest_receipts(scene: &Scene, name: &str) -> Vec<String> {
    let all: Vec<(u64, String)> = events(scene)
        .into_iter()
        .filter(|e| e["kind"] == "receipt" && e["to"] == name)
        .filter_map(|e| Some((e["id"].as_u64()?, e["state"].as_str()?.to_string())))
        .collect();
    let newest = all.iter().map(|(id, _)| *id).max();
    all.into_iter()
        .filter(|(id, _)| Some(*id) == newest)
        .map(|(_, s)| s)
        .collect()
}

pub fn leads_own_mark_is_not_a_turn(client: &Client) {
    let label = client.label;
    let rules = vec![
        Rule::on(
            "CC-MARK",
            Act::SendToLead {
                summary: "ack".into(),
                message: "CC-MARK-ACK here".into(),
            },
        )
        .once(),
    ];
    let turn_ms = TURN_MS.to_string();
    let scene = Scene::start_with_env(
        client,
        "cc-marks",
        rules,
        &[("TEAMLEAD_FIRST_TURN_MS", &turn_ms)],
    );
    let name = "worker";
    scene.spawn(name, "CC-IDLE wait for messages");
    scene.wait("the client's own isActive: false", || {
        scene.member(name)["isActive"] == false
    });
    scene.wait("the lead to show it idle", || {
        status(&scene, name).as_deref() == Some("idle")
    });
    // The client, not the pane's own process (teamlead's guard): tmux continues the process
    // group of a pane process that stops.
    let pids: Vec<u32> = with_descendants(scene.teammate_pids(name))
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim() != "teamlead")
        })
        .collect();
    assert!(!pids.is_empty(), "[{label}] the client's processes");
    let paused = Paused::new(pids);
    scene.submit(&format!("@{name} CC-MARK say something"));
    scene.wait("the lead's own isActive: true before the delivery", || {
        scene.member(name)["isActive"] == true
    });
    // The client is stopped: it takes nothing, starts nothing. The lead's own true is no turn.
    let honest = |scene: &Scene| {
        status(scene, name).as_deref() == Some("idle")
            && !newest_receipts(scene, name)
                .iter()
                .any(|s| s == "turn_started")
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(4);
    while std::time::Instant::now() < deadline {
        assert!(
            honest(&scene),
            "[{label}] the lead took its own isActive: true for a turn: status {:?}, receipts {:?}\n{}",
            status(&scene, name),
            newest_receipts(&scene, name),
            scene.explain()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        newest_receipts(&scene, name).first().map(String::as_str),
        Some("delivered"),
        "[{label}] the message waits for an idle teammate"
    );
    // A teammate that never starts is still reported.
    scene.wait_screen("the report that it has not started a turn", |s| {
        s.contains(&format!("{name} has not started a turn on"))
    });
    assert!(honest(&scene), "[{label}] still idle after the report");
    drop(paused);
    scene.wait_screen("its answer", |s| s.contains("CC-MARK-ACK"));
    scene.wait("the message's turn started", || {
        newest_receipts(&scene, name)
            .iter()
            .any(|s| s == "turn_started")
    });
    scene.wait("its turn to end (the client's own false)", || {
        scene.member(name)["isActive"] == false
    });
}
