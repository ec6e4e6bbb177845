//! The drift check: what a client offers a teammate's model and what it writes to the lead,
//! compared with what was recorded for its version (`tests/fixtures/claude-code-drift/
//! <label>.json`). A teammate is taken through what teamlead relies on (its prompt, a
//! permission request answered yes, a plain message, a shutdown); the tools its model was
//! offered and the frame types it wrote are compared with the record, and a tool or frame that
//! disappears or appears fails the test with a readable diff, so the next change in Claude
//! Code is caught by CI, not by a user. After a deliberate move of "latest" (README), record
//! anew with `TEAMLEAD_CC_DRIFT_RECORD=1` and review the diff of the record.

use std::collections::BTreeSet;
use std::path::PathBuf;

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene};

/// The tools teamlead's work with a claude teammate depends on.
const RELIED_ON_TOOLS: [&str; 3] = ["SendMessage", "TaskUpdate", "TaskList"];

/// The frames teamlead's work with a claude teammate depends on.
const RELIED_ON_FRAMES: [&str; 3] = [
    "idle_notification",
    "permission_request",
    "shutdown_approved",
];

fn record_path(client: &Client) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code-drift")
        .join(format!("{}.json", client.label))
}

fn set(value: &serde_json::Value) -> BTreeSet<String> {
    value
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// `what gone: …; what new: …`, or nothing when equal.
fn diff(what: &str, recorded: &BTreeSet<String>, seen: &BTreeSet<String>) -> Option<String> {
    let gone: Vec<&String> = recorded.difference(seen).collect();
    let new: Vec<&String> = seen.difference(recorded).collect();
    (!gone.is_empty() || !new.is_empty())
        .then(|| format!("{what} no longer there: {gone:?}\n{what} new: {new:?}"))
}

pub fn tools_and_frames_match_the_record(client: &Client) {
    let rules = vec![
        Rule::on(
            "CC-DRIFT-BASH",
            Act::Bash {
                command: "touch drift.txt".into(),
                description: "drift check".into(),
            },
        ),
        Rule::on(
            "CC-DRIFT-SAY",
            Act::SendToLead {
                summary: "drift".into(),
                message: "CC-DRIFT-SAID".into(),
            },
        ),
        Rule::on("shutdown_request", Act::ApproveShutdown),
    ];
    let scene = Scene::start(client, "cc-drift", rules, &[]);
    scene.spawn("drift", "CC-IDLE wait");
    let before = scene.say("drift", "CC-DRIFT-BASH");
    scene.answer(PermissionAnswer::Yes);
    scene.wait("drift.txt to exist", || {
        scene.work_file("drift.txt").exists()
    });
    scene.wait_turn_end("drift", before);
    let before = scene.say("drift", "CC-DRIFT-SAY");
    scene.wait_turn_end("drift", before);
    scene.submit("/shutdown drift");
    scene.wait("the shutdown_approved", || {
        scene
            .lead_mail("drift")
            .iter()
            .any(|t| t.contains("shutdown_approved"))
    });

    let requests = scene.model.requests();
    let version = requests
        .iter()
        .find_map(|r| r.header("user-agent").map(str::to_string))
        .and_then(|ua| {
            ua.strip_prefix("claude-cli/")
                .map(|v| v.split(' ').next().unwrap_or("").to_string())
        })
        .unwrap_or_default();
    let tools: BTreeSet<String> = requests.iter().flat_map(|r| r.tool_names()).collect();
    let frames: BTreeSet<String> = scene
        .lead_mail("drift")
        .iter()
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(t).ok())
        .filter_map(|v| v["type"].as_str().map(str::to_string))
        .collect();
    let seen = serde_json::json!({
        "version": version,
        "tools": tools,
        "frames": frames,
    });
    let path = record_path(client);
    if std::env::var("TEAMLEAD_CC_DRIFT_RECORD").is_ok_and(|v| v == "1") {
        std::fs::write(&path, serde_json::to_string_pretty(&seen).unwrap() + "\n")
            .expect("write the drift record");
        return;
    }
    let recorded: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&path).unwrap_or_else(|e| panic!("no drift record {}: {e}", path.display())),
    )
    .expect("the drift record parses");
    for tool in RELIED_ON_TOOLS {
        assert!(
            tools.contains(tool),
            "[{}] Claude Code {version} no longer offers {tool} to a teammate, which teamlead relies on",
            client.label
        );
    }
    for frame in RELIED_ON_FRAMES {
        assert!(
            frames.contains(frame),
            "[{}] Claude Code {version} no longer writes {frame}, which teamlead relies on",
            client.label
        );
    }
    let mut report = Vec::new();
    if recorded["version"] != seen["version"] {
        report.push(format!(
            "version: recorded {}, installed {version}",
            recorded["version"]
        ));
    }
    report.extend(diff("tools", &set(&recorded["tools"]), &tools));
    report.extend(diff("frames", &set(&recorded["frames"]), &frames));
    assert!(
        report.is_empty(),
        "[{}] Claude Code drifted from {}:\n{}\nCheck what changed (PROTOCOL.md), then record anew: \
         TEAMLEAD_CC_DRIFT_RECORD=1 cargo test --test slow claude_code::{}::drift",
        client.label,
        path.display(),
        report.join("\n"),
        if client.label == "latest" {
            "latest"
        } else {
            "v2_1_45"
        },
    );
}
