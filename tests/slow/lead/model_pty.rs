//! `teamlead --lead-model sonnet` end to end: the real binary in a pseudo-terminal (portable-pty
//! and vt100), its model a local server speaking the Anthropic streaming format found through
//! `ANTHROPIC_BASE_URL`. Plain text goes to the model, the footer spins while it answers, the
//! answer and the tokens used show on screen, the key never does, and `/quit` ends it.
//! Temporary home and config directory, no ~/.claude, no tmux.

use crate::llm_common;

use std::time::Duration;

use crate::pty_harness::PtyLead;
use llm_common::{Gate, Reply, ScriptServer, anthropic};

const DEADLINE: Duration = Duration::from_secs(30);
const KEY: &str = "sk-ant-api03-pty-SECRET-9876543210";

/// Waits for the screen; every look at it checks that the key is not on it.
fn wait_for(pty: &PtyLead, what: &str, check: impl Fn(&str) -> bool) {
    pty.wait_text_within(what, DEADLINE, |text| {
        assert!(!text.contains(KEY), "the key is on screen:\n{text}");
        check(text)
    });
}

#[test]
fn lead_model_session_answers_on_screen() {
    // The server runs on its own runtime while this thread drives the terminal.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let gate = Gate::new();
    let server = runtime.block_on(ScriptServer::start(vec![Reply::Held(
        gate.clone(),
        Box::new(Reply::Sse(anthropic::text(
            "Hello from the lead model. Nobody is on the team yet.",
        ))),
    )]));
    let home = tempfile::tempdir().expect("home");
    let config = tempfile::tempdir().expect("config dir");
    let project = tempfile::tempdir().expect("project");

    let mut pty = crate::pty_harness::lead(project.path())
        .home(home.path())
        .args([
            "--team",
            "thinking",
            "--backend",
            "in-process",
            "--lead-model",
            "sonnet",
        ])
        .env_remove([
            "TEAMLEAD_MODEL",
            "TEAMLEAD_PROVIDER",
            "TEAMLEAD_CONFIG",
            "OPENAI_BASE_URL",
            "OPENAI_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
        ])
        .env("XDG_CONFIG_HOME", config.path())
        .env("ANTHROPIC_BASE_URL", server.base_url())
        .env("ANTHROPIC_API_KEY", KEY)
        .spawn();
    wait_for(&pty, "the lead session with its model", |s| {
        s.contains("Lead model: anthropic claude-sonnet-4-5")
    });

    pty.send(b"who is on the team?\r");
    wait_for(&pty, "the spinner", |s| s.contains("thinking…"));
    let requests = runtime.block_on(server.wait_requests(1, 20));
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert!(requests[0].raw.contains("who is on the team?"));
    gate.open();
    wait_for(&pty, "the answer and the tokens", |s| {
        s.contains("Hello from the lead model.")
            && s.contains("1.3k tok")
            && !s.contains("thinking…")
    });

    pty.send(b"/quit\r");
    assert!(pty.wait_exit(), "exit status 0");
    assert!(!home.path().join("teams").join("thinking").exists());
}
