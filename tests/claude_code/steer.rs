//! Steering a busy claude teammate: `/interrupt NAME` stops its current turn (Esc typed into
//! its pane, confirmed by the pane's `Interrupted`), the lead shows it idle at once instead of
//! when its turn would have ended (the client writes no idle notification for it), and it
//! takes the next message.

use std::time::{Duration, Instant};

use crate::claude_code_common::{Act, Client, Rule, Scene, timing};

pub fn interrupt_a_busy_teammate(client: &Client) {
    let rules = vec![
        Rule::on("CC-SLOW", Act::Text("CC-SLOW-ANSWER".into())),
        Rule::on("CC-AFTER", Act::Text("CC-AFTER-ANSWER".into())),
    ];
    let scene = Scene::start(client, "cc-steer", rules, &[]);
    scene.spawn("busy", "CC-IDLE wait");
    let normal = scene.model.latency();
    // A turn that would take a minute: the model "thinks" for 60 s.
    scene.model.set_latency(Duration::from_secs(60));
    scene.say("busy", "CC-SLOW think about it");
    scene.wait("the slow turn to reach the model", || {
        scene.model.turns_on(&["CC-SLOW"]) > 0
    });
    let start = Instant::now();
    scene.submit("/interrupt busy");
    // Claude Code writes no idle notification for an interrupted turn: its pane says so, and
    // the lead tells it.
    scene.wait_screen("the lead's note", |s| s.contains("Interrupted busy's turn"));
    let took = start.elapsed();
    timing(client, "/interrupt -> idle", took);
    assert!(
        took < Duration::from_secs(30),
        "[{}] the turn ran on after /interrupt ({took:?})\n{}",
        client.label,
        scene.explain()
    );
    scene.wait_screen("busy shown idle", |s| s.contains("● 1 idle"));
    // It takes the next message.
    scene.model.set_latency(normal);
    let before = scene.say("busy", "CC-AFTER go on");
    scene.wait_turn_end("busy", before);
    assert!(
        scene.model.saw("CC-AFTER go on"),
        "[{}] the next message did not reach the model\n{}",
        client.label,
        scene.model.summary()
    );
}
