//! Steering a busy claude teammate: `/interrupt NAME` stops its current turn (Esc typed into
//! its pane, confirmed by the pane's `Interrupted`), the lead shows it idle at once instead of
//! when its turn would have ended (the client writes no idle notification for it), and it
//! takes the next message.

use std::time::{Duration, Instant};

use super::tasks::task_state;
use crate::claude_code_common::{Act, Client, Rule, Scene, steering, timing};

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

/// `/interrupt` of a claude teammate busy on a task (claimed with Claude Code's own task tool,
/// its command running): the task is held by the lead (owner `team-lead`, pending), the note
/// says how to give it out again, and the teammate does not resume it (issue 33, item 6).
pub fn an_interrupted_task_is_held(client: &Client) {
    let update = |status: &str| Act::Tool {
        name: "TaskUpdate".into(),
        input: serde_json::json!({"taskId": "1", "status": status}),
    };
    let rules = vec![
        Rule::seq(
            "CC-HOLD",
            vec![
                update("in_progress"),
                Act::Bash {
                    command: "sleep 30".into(),
                    description: "work on it".into(),
                },
                update("completed"),
                Act::Text("done".into()),
            ],
        )
        .once(),
        Rule::on("CC-AFTER", Act::Text("CC-AFTER-ANSWER".into())),
    ];
    let scene = Scene::start(client, "cc-hold", rules, &[]);
    let label = client.label;
    // Bash runs unasked, so the turn is in its command when it is interrupted.
    std::fs::write(
        scene.ws.home().join("settings.json"),
        r#"{"permissions":{"allow":["Bash"]}}"#,
    )
    .expect("write settings.json");
    scene.spawn("busy", "--mode acceptEdits CC-IDLE wait for tasks");
    scene.submit("/task add CC-HOLD the long thing");
    scene.wait_screen("task #1 added", |s| s.contains("#1"));
    scene.submit("/task assign 1 busy");
    scene.wait("busy's command running", || {
        task_state(&scene, "1").1 == "in_progress" && scene.model.turns_on(&["Updated task #1"]) > 0
    });
    scene.submit("/interrupt busy");
    scene.wait_screen("the task held", |s| {
        s.contains("Task #1 \"CC-HOLD the long thing\" is held by the lead")
    });
    assert_eq!(
        task_state(&scene, "1"),
        ("team-lead".to_string(), "pending".to_string()),
        "[{label}]\n{}",
        scene.explain()
    );
    // Interrupted, it does not go on with the task: its next turn is about the next message.
    scene.wait_screen("busy shown idle", |s| s.contains("● 1 idle"));
    let turns = scene.model.turns_on(&["CC-HOLD"]);
    let before = scene.say("busy", "CC-AFTER what now");
    scene.wait_turn_end("busy", before);
    assert_eq!(
        scene.model.turns_on(&["CC-HOLD"]),
        turns,
        "[{label}] it took the task again"
    );
    assert_eq!(
        task_state(&scene, "1").1,
        "pending",
        "[{label}]\n{}",
        scene.explain()
    );
}

/// `/steer @NAME TEXT` on a claude teammate busy in a long tool chain (its `sleep 30`
/// running): its turn stops and its next model request carries the message. What is checked
/// is that the steer cut the long step short (each round well inside the step's 30 s, which
/// is when an unsteered message would come), not how fast: a loaded CI machine took 5.5 s
/// where a quiet one takes 1-2 s. The time is printed; `cargo bench --bench steer` measures it
/// (goal 2 s).
/// A round that took longer did not interrupt the chain's `sleep 30` step: its message
/// came when the step would have ended anyway.
const STEP_CUT_SHORT: Duration = Duration::from_secs(20);

pub fn steer_a_busy_teammate(client: &Client) {
    let scene = Scene::start(client, "cc-steer2", steering::steering_rules(), &[]);
    steering::spawn_steered(&scene);
    let mut took: Vec<Duration> = (0..3)
        .map(|round| steering::steer_round(&scene, round))
        .collect();
    let (median, _) = steering::median_and_p90(&mut took);
    timing(
        client,
        "/steer -> the message in the model's request (median of 3)",
        median,
    );
    assert!(
        took.iter().all(|t| *t < STEP_CUT_SHORT),
        "[{}] steering took {took:?}: a round did not cut the 30 s step short\n{}",
        client.label,
        scene.explain()
    );
}

/// `/interrupt` of an idle claude teammate says there is nothing to interrupt, and `/steer`
/// of it delivers the message at once: no Esc in its pane, no wait for an `Interrupted` that
/// would never come (it took 3–4 s and a puzzling note before).
pub fn steer_an_idle_teammate(client: &Client) {
    let scene = Scene::start(client, "cc-steer3", steering::steering_rules(), &[]);
    steering::spawn_steered(&scene);
    scene.wait_screen("busy shown idle", |s| s.contains("● 1 idle"));
    scene.submit("/interrupt busy");
    scene.wait_screen("the note", |s| {
        s.contains("busy has no turn running: nothing to interrupt.")
    });
    let before = scene.idles("busy");
    scene.submit("/steer @busy CC-STEERED while idle");
    scene.wait("the steer in the model's request", || {
        scene.model.turns_on(&["CC-STEERED while idle"]) > 0
    });
    scene.wait_turn_end("busy", before);
    let screen = scene.screen();
    assert!(
        !screen.contains("Pressed Esc"),
        "[{}] Esc was pressed in an idle pane\n{}",
        client.label,
        scene.explain()
    );
}
