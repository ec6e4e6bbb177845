//! Turns of an `llm` teammate over time, against a local server: interrupting drops the stream
//! at once and the model hears of it next turn; a conversation over its budget is compacted
//! through a dedicated summary request, and the next turn starts from the summary.

use crate::agent_common;
use crate::llm_common;

use std::time::Duration;

use agent_common::{Policy, RecordingAsker, TestTeam, idles, spawn, wait_for};
use llm_common::{Reply, ScriptServer, anthropic};
use teamlead::agent::TeammateEventKind;
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::agent::runtime::EngineKind;
use teamlead::protocol::frames::IdleReason;
use teamlead::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

fn anthropic_config(server: &ScriptServer) -> LlmConfig {
    let mut c = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new("sk-ant-api03-turns-test"));
    c.retry.max_attempts = 2;
    c.retry.base_delay = Duration::from_millis(10);
    c
}

fn llm_teammate(team: &TestTeam, name: &str, llm: LlmConfig) -> teamlead::agent::TeammateConfig {
    let mut config = team.config(name, PermissionMode::Default);
    config.engine = EngineKind::llm(llm);
    config
}

#[tokio::test]
async fn interrupting_aborts_the_stream_and_the_model_hears_of_it() {
    let team = TestTeam::new(&["builder"]);
    let server = ScriptServer::start(vec![
        Reply::Stall(anthropic::started(
            "Let me think about this\nfor a long time",
        )),
        Reply::Sse(anthropic::text("Understood.")),
    ])
    .await;
    let config = llm_teammate(&team, "builder", anthropic_config(&server));
    team.send("builder", InboxEntry::new(LEAD_NAME, "Think hard."));
    let mut running = spawn(config, RecordingAsker::new(Policy::Approve).shared());
    running
        .wait_event(
            "streamed text",
            |e| matches!(e, TeammateEventKind::Log { text, .. } if text.contains("Let me think")),
        )
        .await;
    assert!(running.handle.interrupt_turn());
    let idle = wait_for("the interrupted idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(idle.idle_reason, Some(IdleReason::Interrupted));
    wait_for("the dropped connection", 10, || {
        (server.hung_up() == 1).then_some(())
    })
    .await;

    team.send("builder", InboxEntry::new(LEAD_NAME, "Never mind."));
    running.handle.wake();
    wait_for("the second idle notification", 10, || {
        (idles(&team).len() == 2).then_some(())
    })
    .await;
    let got = server.requests();
    assert_eq!(got.len(), 2);
    let text = got[1].body["messages"][0]["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("|");
    assert!(
        text.contains("Think hard.")
            && text.contains("[The user interrupted this turn.]")
            && text.contains("Never mind."),
        "{text}"
    );
}

#[tokio::test]
async fn a_long_conversation_is_compacted_through_a_summary_request() {
    let team = TestTeam::new(&["builder"]);
    let long = "The parser needs a rewrite. ".repeat(200);
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::text(&long)),
        Reply::Sse(anthropic::text("SUMMARY-7f3: builder analysed the parser.")),
        Reply::Sse(anthropic::text("Continuing.")),
    ])
    .await;
    let mut llm = anthropic_config(&server);
    llm.context.max_tokens = 1_000;
    llm.context.keep_exchanges = 1;
    let config = llm_teammate(&team, "builder", llm);
    let usage = config.usage.clone();
    team.send("builder", InboxEntry::new(LEAD_NAME, "Look at the parser."));
    let running = spawn(config, RecordingAsker::new(Policy::Approve).shared());
    wait_for("the first idle", 10, || {
        (idles(&team).len() == 1).then_some(())
    })
    .await;
    team.send("builder", InboxEntry::new(LEAD_NAME, "Now the lexer."));
    running.handle.wake();
    wait_for("the second idle", 10, || {
        (idles(&team).len() == 2).then_some(())
    })
    .await;

    let got = server.requests();
    assert_eq!(got.len(), 3);
    let summary_request = &got[1];
    assert!(summary_request.body.get("tools").is_none());
    assert!(summary_request.system_text().contains("summarize"));
    let asked = summary_request.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(asked.contains("Look at the parser.") && asked.contains("The parser needs a rewrite."));
    assert!(!asked.contains("Now the lexer."));
    let after = got[2].body["messages"].as_array().unwrap();
    assert_eq!(
        after.len(),
        1,
        "the summary and the new prompt make one user turn"
    );
    let blocks = after[0]["content"].as_array().unwrap();
    assert!(
        blocks[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("<conversation-summary>\nSUMMARY-7f3")
    );
    assert!(
        blocks[1]["text"]
            .as_str()
            .unwrap()
            .contains("Now the lexer.")
    );
    assert_eq!(usage.snapshot().compactions, 1);
    assert_eq!(idles(&team)[1].result.as_deref(), Some("Continuing."));
}
