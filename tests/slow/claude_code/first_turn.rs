//! A teammate spawned right after another was shut down takes its first turn (seen to strand
//! on 2.1.332 about once in six runs: its prompt was gone from its inbox and its model never
//! asked).

use crate::claude_code_common::{Act, Client, Rule, Scene};

pub fn spawn_right_after_shutdown(client: &Client) {
    let scene = Scene::start(
        client,
        "cc-first",
        vec![Rule::on("shutdown_request", Act::ApproveShutdown)],
        &[],
    );
    for round in 0..3 {
        let first = format!("early{round}");
        let second = format!("late{round}");
        scene.spawn(&first, "CC-IDLE wait");
        scene.submit(&format!("/shutdown {first}"));
        // At once: no waiting for the first to go.
        scene.spawn(&second, "CC-IDLE start now");
        scene.submit(&format!("/kill {second}"));
        scene.wait_screen(&format!("{second} killed"), |s| {
            s.contains(&format!("{second} was killed"))
        });
    }
}

/// A teammate whose very first prompt makes it ask to run Bash takes that turn: the request
/// reaches the lead.
pub fn first_prompt_runs_bash(client: &Client) {
    let scene = Scene::start(
        client,
        "cc-firstbash",
        vec![Rule::on(
            "CC-FIRST-BASH",
            Act::Bash {
                command: "touch first.txt".into(),
                description: "first".into(),
            },
        )],
        &[],
    );
    for round in 0..3 {
        let name = format!("basher{round}");
        scene.submit(&format!("/spawn {name} CC-FIRST-BASH run it"));
        scene.wait(&format!("{name}'s permission request"), || {
            !scene.permission_requests(&name).is_empty()
        });
        scene.submit(&format!("/kill {name}"));
        scene.wait_screen(&format!("{name} killed"), |s| {
            s.contains(&format!("{name} was killed"))
        });
    }
}
