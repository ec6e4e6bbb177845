//! Steering a busy teammate, measured by hand: `cargo bench --bench steer`.
//!
//! Two halves, each median and p90 over 10 rounds; the goals are 200 ms (own) and 2 s
//! (claude).
//! - **Own teammate**: an in-process llm teammate of the lead (teamlead's own agent, against a
//!   scripted local model server speaking Anthropic's wire format) is busy in a long command
//!   (`sleep 30`, its model's Bash call, in bypassPermissions mode); `/steer @NAME TEXT` is
//!   sent; measured: from the command to the model request that contains TEXT (the teammate's
//!   next step is about it). Each round's answer is the long command again.
//! - **claude teammate**, for every Claude Code client of the conformance matrix that is
//!   installed (`npm ci --prefix tests/interop`, as `.ci/run` does): the real `teamlead
//!   --agent claude` in a private tmux server, a real `claude` pane teammate busy in a long
//!   tool chain against the scripted model (`tests/support/claude_code_common/steering.rs`,
//!   the same rounds as the conformance scenario `steer_a_busy_teammate`); measured: from
//!   Enter on `/steer @busy TEXT` to the teammate's next model request that carries TEXT.
//!
//! `cargo bench --bench steer -- own` or `-- claude` runs one half.

#[allow(unused_imports)]
#[path = "../tests/support/claude_code_common/mod.rs"]
mod claude_code_common;
#[path = "../tests/support/llm_common/mod.rs"]
mod llm_common;
#[path = "../tests/support/model_server/mod.rs"]
mod model_server;
#[allow(unused_imports)]
#[path = "../tests/support/panes_common/mod.rs"]
mod panes_common;
#[path = "../tests/support/pty_harness/mod.rs"]
mod pty_harness;

use std::time::{Duration, Instant};

use llm_common::{Reply, ScriptServer, anthropic};
use serde_json::json;
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::lead::contract::{LeadCommand, LeadEvent, TeammateStatus, ViewTarget};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::store::Home;
use tokio::sync::mpsc;

const ROUNDS: usize = 10;

fn main() {
    // `cargo bench` passes `--bench`; a word names the half to run.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let runs = |half: &str| only.is_empty() || only.iter().any(|w| w == half);
    if runs("own") {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(steer_own_teammate());
    }
    if runs("claude") {
        steer_claude_teammates();
    }
}

/// The claude half: every installed client of the matrix, 10 rounds each.
fn steer_claude_teammates() {
    use claude_code_common::{CLIENTS, Scene, steering};
    for client in CLIENTS.iter() {
        if !client.installed() {
            println!(
                "\nclaude {}: not installed (npm ci --prefix tests/interop), skipped",
                client.label
            );
            continue;
        }
        let scene = Scene::start(client, "steer-bench", steering::steering_rules(), &[]);
        steering::spawn_steered(&scene);
        let mut samples = Vec::new();
        for round in 0..ROUNDS {
            let took = steering::steer_round(&scene, round);
            println!(
                "claude {} round {round}: /steer → the message in the next model request: {} ms",
                client.label,
                took.as_millis()
            );
            samples.push(took);
        }
        let (median, p90) = steering::median_and_p90(&mut samples);
        println!(
            "\nclaude {} teammate in a long tool chain, /steer → next request with the message: median {} ms, p90 {} ms (goal 2000 ms)\n",
            client.label,
            median.as_millis(),
            p90.as_millis()
        );
    }
}

fn long_command(i: usize) -> Reply {
    Reply::Sse(anthropic::tool(
        &format!("toolu_sleep_{i}"),
        "Bash",
        json!({"command": "sleep 30", "description": "a long build"}),
    ))
}

async fn next_event(events: &mut mpsc::Receiver<LeadEvent>) -> LeadEvent {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("an event within a minute")
        .expect("the lead runs")
}

async fn submit(commands: &mpsc::Sender<LeadCommand>, text: &str) {
    commands
        .send(LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: text.to_string(),
        })
        .await
        .expect("lead");
}

/// Waits until the team view shows `name` working.
async fn working(events: &mut mpsc::Receiver<LeadEvent>, name: &str) {
    loop {
        if let LeadEvent::Team(team) = next_event(events).await
            && team
                .iter()
                .any(|t| t.name == name && t.status == TeammateStatus::Working)
        {
            return;
        }
    }
}

async fn steer_own_teammate() {
    let server = ScriptServer::start(vec![long_command(0)]).await;
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let mut llm = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new("sk-ant-api03-steer-bench"));
    llm.retry.max_attempts = 1;
    let mut opts = LeadOptions::new(Home::new(home_dir.path()), cwd.path())
        .with_team("steer-bench")
        .with_quit_timeout(Duration::from_secs(2));
    opts.teammate_llm = Some(llm);
    let (handle, mut events) = Lead::start(opts).expect("lead");
    submit(
        &handle.commands,
        "/spawn runner --mode bypassPermissions \"build everything\"",
    )
    .await;
    let mut samples = Vec::new();
    for i in 0..ROUNDS {
        // The model's answer is the long command; the teammate runs it.
        server.wait_requests(i + 1, 60).await;
        working(&mut events, "runner").await;
        // Give the command time to be running (its process started), then steer.
        let seen = server.requests().len();
        server.push(long_command(i + 1));
        let text = format!("STEER-{i} stop and look at the failing test");
        let sent = Instant::now();
        submit(&handle.commands, &format!("/steer @runner {text}")).await;
        let arrived = loop {
            let requests = server.requests();
            if requests[seen..]
                .iter()
                .any(|r| r.body.to_string().contains(&text))
            {
                break sent.elapsed();
            }
            assert!(sent.elapsed() < Duration::from_secs(60), "no steer");
            tokio::time::sleep(Duration::from_millis(1)).await;
        };
        println!(
            "round {i}: /steer → the message in the next model request: {:.1} ms",
            arrived.as_secs_f64() * 1000.0
        );
        samples.push(arrived);
    }
    let (median, p90) = claude_code_common::steering::median_and_p90(&mut samples);
    println!(
        "\nown teammate in a long command, /steer → next request with the message: median {:.1} ms, p90 {:.1} ms (goal 200 ms)",
        median.as_secs_f64() * 1000.0,
        p90.as_secs_f64() * 1000.0
    );
    handle.commands.send(LeadCommand::Quit).await.expect("lead");
    while next_event(&mut events).await != LeadEvent::Exited {}
}
