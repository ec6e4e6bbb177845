//! Prompt delivery and messages: the spawn prompt reaches the model as a `teammate-message`
//! from `team-lead`, the teammate's SendMessage shows in the lead's transcript, and a message
//! typed to the teammate reaches its model and is answered.

use std::time::Instant;

use crate::claude_code_common::{Act, Client, Rule, Scene, timing};

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
