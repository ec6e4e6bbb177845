//! A claude teammate at its account's usage limit (the scripted model refuses it the way the
//! service refuses a subscriber: see `model_server::limit_response`).

use std::time::Duration;

use crate::claude_code_common::{Act, Client, Rule, Scene};

/// The environment of a subscriber: an OAuth token and no API key.
pub const SUBSCRIBER: [(&str, &str); 2] = [
    ("ANTHROPIC_API_KEY", ""),
    ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-conformance-token"),
];

/// What the teammate's transcript and pane show at the limit, and which of a message before
/// and after the reset reaches the model (printed; run with --nocapture).
pub fn experiment(client: &Client) {
    let rules = vec![
        Rule::on(
            "CC-LIMIT",
            Act::Limit {
                reset_in: Duration::from_secs(25),
            },
        )
        .once(),
        Rule::on("CC-AFTER", Act::Text("CC-AFTER-DONE".into())),
    ];
    let scene = Scene::start_with_env(client, "cc-limx", rules, &SUBSCRIBER);
    scene.spawn("worker", "CC-IDLE hello");
    let pane = scene.pane_of("worker");
    scene.submit("@worker CC-LIMIT go");
    scene.wait("the limit refused", || !scene.model.refused().is_empty());
    std::thread::sleep(Duration::from_secs(4));
    eprintln!(
        "=== [{}] worker pane at the limit:\n{}",
        client.label,
        scene.tmux.capture(&pane)
    );
    for t in transcripts(&scene) {
        eprintln!("=== transcript line: {t}");
    }
    eprintln!("=== lead screen:\n{}", scene.screen());
    scene.submit("@worker CC-DURING before the reset");
    std::thread::sleep(Duration::from_secs(6));
    eprintln!(
        "=== [{}] after a message before the reset:\n{}",
        client.label,
        scene.tmux.capture(&pane)
    );
    eprintln!(
        "=== model:\n{}\nrefused {:?}",
        scene.model.summary(),
        scene.model.refused()
    );
    let until = scene.model.limited_until().unwrap_or(0);
    scene.wait("the reset", || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            > until + 1
    });
    std::thread::sleep(Duration::from_secs(8));
    eprintln!(
        "=== [{}] pane after the reset, nothing sent:\n{}",
        client.label,
        scene.tmux.capture(&pane)
    );
    eprintln!(
        "=== model:\n{}\nrefused {:?}",
        scene.model.summary(),
        scene.model.refused()
    );
    scene.submit("@worker CC-AFTER the reset");
    std::thread::sleep(Duration::from_secs(8));
    eprintln!(
        "=== [{}] after a message after the reset:\n{}",
        client.label,
        scene.tmux.capture(&pane)
    );
    eprintln!(
        "=== model:\n{}\nrefused {:?}",
        scene.model.summary(),
        scene.model.refused()
    );
    for t in transcripts(&scene) {
        eprintln!("=== transcript line: {t}");
    }
    eprintln!("=== lead screen:\n{}", scene.screen());
}

/// Every line of every session transcript under the scene's `projects/` that mentions a limit.
fn transcripts(scene: &Scene) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![scene.ws.home().join("projects")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                for line in std::fs::read_to_string(&p).unwrap_or_default().lines() {
                    if line.contains("isApiErrorMessage\":true") || line.contains("limit") {
                        out.push(line.chars().take(1500).collect());
                    }
                }
            }
        }
    }
    out
}
