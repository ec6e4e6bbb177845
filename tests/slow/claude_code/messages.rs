//! Prompt delivery and messages: the spawn prompt reaches the model as a `teammate-message`
//! from `team-lead`, the teammate's SendMessage shows in the lead's transcript, and a message
//! typed to the teammate reaches its model and is answered.

use std::time::Instant;

use crate::claude_code_common::{Act, Client, PermissionAnswer, Rule, Scene, timing};

pub fn prompt_and_message_round_trip(client: &Client) {
    let rules = vec![
        Rule::on(
            "CC-HELLO",
            Act::SendToLead {
                summary: "greeting".into(),
                message: "CC-REPLY-ONE from the worker".into(),
            },
        ),
        Rule::on(
            "CC-ANSWER",
            Act::Text("CC-FINAL-ANSWER the work is done".into()),
        ),
        Rule::on(
            "CC-PING",
            Act::SendToLead {
                summary: "pong".into(),
                message: "CC-PONG-TWO from the worker".into(),
            },
        ),
    ];
    let scene = Scene::start(client, "cc-msg", rules, &[]);
    let first_idle = scene.spawn("worker", "CC-HELLO say hello to the lead");
    timing(client, "spawn -> first idle", first_idle);
    scene.wait_screen("the worker's message in the transcript", |s| {
        s.contains("CC-REPLY-ONE")
    });
    assert!(
        scene
            .model
            .saw("<teammate-message teammate_id=\"team-lead\""),
        "[{}] the prompt reached the model as a teammate-message\n{}",
        client.label,
        scene.model.summary()
    );

    // A message from the lead, answered by the teammate: time from its entry in the lead's
    // inbox to the lead's screen.
    scene.submit("@worker CC-PING are you there?");
    let mut arrived = None;
    scene.wait("the pong in the lead's files and on its screen", || {
        if arrived.is_none()
            && scene
                .ws
                .lead_mail_from("worker")
                .iter()
                .any(|t| t.contains("CC-PONG-TWO"))
        {
            arrived = Some(Instant::now());
        }
        arrived.is_some() && scene.screen().contains("CC-PONG-TWO")
    });
    timing(
        client,
        "teammate message in the inbox -> on the lead's screen",
        arrived.expect("arrived").elapsed(),
    );
    assert!(
        scene.model.saw("CC-PING are you there?"),
        "[{}] the lead's message reached the model\n{}",
        client.label,
        scene.model.summary()
    );

    // A turn that ends in plain text: newer clients put the final answer in their idle
    // notification's `result`, which the lead shows as the teammate's turn.
    let before = scene.say("worker", "CC-ANSWER finish up");
    scene.wait_turn_end("worker", before);
    if client.label != "2.1.45" {
        scene.wait_screen("the final answer in the transcript", |s| {
            s.contains("CC-FINAL-ANSWER the work is done")
        });
    }
    // What the lead knows about a claude teammate, from its session transcript: its model and
    // what it used.
    scene.open_detail("worker");
    scene.wait_screen("worker's detail with its model and usage", |s| {
        s.lines()
            .any(|l| l.contains("model") && l.contains("claude-"))
            && s.lines()
                .any(|l| l.contains("usage") && l.contains("tokens"))
    });
}

/// The message ledger with a real client: a message to an idle teammate is delivered, read
/// (the client marks its inbox entry read, or removes it) and turn started (its next turn), shown
/// beside the message on the lead's screen and told in `ctl events --json` in that order.
pub fn ledger_receipts(client: &Client) {
    let rules = vec![
        Rule::on(
            "CC-LEDGER",
            Act::SendToLead {
                summary: "ack".into(),
                message: "CC-LEDGER-ACK got it".into(),
            },
        )
        // Its tool result names the needle too.
        .once(),
        Rule::on(
            "CC-ASKS",
            Act::Bash {
                command: "touch ledger_answer.txt".into(),
                description: "Make a file".into(),
            },
        ),
    ];
    let scene = Scene::start(client, "cc-ledger", rules, &[]);
    scene.spawn("worker", "CC-IDLE wait for messages");
    scene.submit("@worker CC-LEDGER please acknowledge");
    scene.wait_screen("the message's turn started, beside it", |s| {
        s.lines()
            .any(|l| l.contains("CC-LEDGER please acknowledge") && l.contains("turn started"))
    });
    scene.wait_screen("the answer", |s| s.contains("CC-LEDGER-ACK"));
    let out = scene.ctl(&["events", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let states: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["kind"] == "receipt" && e["to"] == "worker")
        .filter_map(|e| e["state"].as_str().map(str::to_string))
        .collect();
    let at = |s: &str| states.iter().position(|x| x == s);
    assert_eq!(
        states.first().map(String::as_str),
        Some("delivered"),
        "[{}] {states:?}",
        client.label
    );
    assert!(
        at("read").is_some() && at("read") < at("turn_started"),
        "[{}] delivered → read → turn started: {states:?}",
        client.label
    );

    // A frame the lead answers is followed too: the answer to its permission request is
    // delivered, read (the client marks it read as it takes it) and turn started (the command
    // runs); the teams dialog shows it as what it is.
    let before = scene.say("worker", "CC-ASKS make the file");
    scene.answer(PermissionAnswer::Yes);
    scene.wait("the answered command to run", || {
        scene.work_file("ledger_answer.txt").exists()
    });
    scene.wait_turn_end("worker", before);
    let receipts = |scene: &Scene| -> Vec<(u64, String)> {
        let out = scene.ctl(&["events", "--json"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["kind"] == "receipt" && e["to"] == "worker")
            .filter_map(|e| Some((e["id"].as_u64()?, e["state"].as_str()?.to_string())))
            .collect()
    };
    scene.wait("the answer's receipt to reach turn started", || {
        let all = receipts(&scene);
        let answer = all.iter().map(|(id, _)| *id).max();
        let states: Vec<&str> = all
            .iter()
            .filter(|(id, _)| Some(*id) == answer)
            .map(|(_, s)| s.as_str())
            .collect();
        states.first() == Some(&"delivered")
            && states.contains(&"read")
            && states.last() == Some(&"turn_started")
    });
    scene.open_detail("worker");
    scene.wait_screen("the answer in worker's detail", |s| {
        s.lines()
            .any(|l| l.contains("answer: permission granted") && l.contains("turn started"))
    });
}
