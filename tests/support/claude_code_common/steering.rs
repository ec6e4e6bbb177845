//! Steering a `claude` teammate that is busy in a long tool chain, shared by the conformance
//! scenario (`claude_code::*::steer_a_busy_teammate`) and the benchmark (`cargo bench --bench
//! steer`). The teammate's user settings allow `Bash(echo:*)` and `Bash(sleep:*)`, so its
//! chain runs without asking: two short commands, then two long ones (`echo … && sleep 30`: the
//! newest client refuses a command that starts with a long `sleep`). While the first long one
//! runs, the lead's `/steer @busy TEXT` goes in; measured is the time from Enter
//! to the first model request that carries TEXT (the teammate's next step is about it).

use std::time::{Duration, Instant};

use super::{Act, Rule, Scene, processes_with_env};
use teamlead_test_support::keys::Keyboard;

/// The teammate's name in a steering scene.
pub const STEERED: &str = "busy";

/// The scripted model of a steering scene: `CC-CHAIN` starts the long tool chain, `CC-STEERED`
/// ends a turn at once.
pub fn steering_rules() -> Vec<Rule> {
    let bash = |command: &str, description: &str| Act::Bash {
        command: command.to_string(),
        description: description.to_string(),
    };
    vec![
        Rule::seq(
            "CC-CHAIN",
            vec![
                bash("echo first step", "First step"),
                bash("echo second step", "Second step"),
                bash("echo building && sleep 30", "A long build"),
                bash("echo testing && sleep 30", "A long test run"),
                Act::Text("CC-CHAIN-DONE".into()),
            ],
        ),
        Rule::on("CC-STEERED", Act::Text("CC-STEERED-ANSWER".into())),
    ]
}

/// Lets the scene's `claude` clients run the chain's commands unasked (their user settings,
/// read when a client starts: call before spawning).
pub fn allow_the_chain(scene: &Scene) {
    let settings = serde_json::json!({
        "permissions": {"allow": ["Bash(echo:*)", "Bash(sleep:*)"]}
    });
    std::fs::write(scene.ws.home().join("settings.json"), settings.to_string())
        .expect("write the clients' settings.json");
}

/// The `sleep` processes of the scene's clients (the chain's long steps).
fn long_steps(scene: &Scene) -> Vec<u32> {
    let markers = super::client_markers(scene.ws.home(), scene.user_home.path());
    processes_with_env(&markers)
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|b| *b == 0).next() == Some(b"sleep"))
        })
        .collect()
}

/// Spawns the teammate (settings first) and waits for its first turn to end.
pub fn spawn_steered(scene: &Scene) {
    allow_the_chain(scene);
    scene.spawn(STEERED, "CC-IDLE wait");
}

/// One round: the teammate starts the chain, and once its `sleep 30` runs, `/steer` goes in.
/// Returns the time from Enter to the model request carrying the steer; waits for the steered
/// turn to end before it returns.
pub fn steer_round(scene: &Scene, round: usize) -> Duration {
    let earlier = long_steps(scene);
    let chain = format!("CC-CHAIN round {round}");
    scene.say(STEERED, &chain);
    scene.wait("the chain's long step to run", || {
        scene.model.saw(&chain) && long_steps(scene).iter().any(|p| !earlier.contains(p))
    });
    let steer = format!("CC-STEERED round {round}");
    let before = scene.idles(STEERED);
    scene.type_keys(&format!("/steer @{STEERED} {steer}"));
    let start = Instant::now();
    scene.keys(&["Enter"]);
    // The teammate's own next request (with its tools): 2.1.45 sends a side request with the
    // message first.
    scene.wait("the steer in the model's next request", || {
        scene.model.turns_on(&[&steer]) > 0
    });
    let took = start.elapsed();
    // The steered turn ends as any turn does.
    scene.wait_turn_end(STEERED, before);
    took
}

/// The median and 90th percentile of `samples` (sorted in place).
pub fn median_and_p90(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.9))
}
