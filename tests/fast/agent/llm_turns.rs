//! Turns of an `llm` teammate over time, against a local server: interrupting drops the stream
//! at once and the model hears of it next turn; a conversation over its budget is compacted
//! through a dedicated summary request, and the next turn starts from the summary; two
//! teammates on one key wait out a 429 together. And the one agent loop itself, driven by an
//! loop host of the test's own: what it shows and what the model is sent next hold no key, and a
//! call after the one that ended the turn is answered "Not run".

use crate::agent_common;
use crate::llm_common;

use std::time::Duration;

use agent_common::{Policy, RecordingAsker, TestTeam, WithEngine, idles, spawn, wait_for};
use llm_common::{Reply, ScriptServer, anthropic};
use serde_json::json;
use teamlead::agent::EngineKind;
use teamlead::agent::llm::agent_loop::{
    Call, Control, Cut, LoopHost, NOT_RUN, Notice, ToolOutput, TurnEnd, run_turn,
};
use teamlead::agent::llm::conversation::ToolSpec;
use teamlead::agent::llm::session::Session;
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::agent::{TeammateEventKind, UsageMeter};
use teamlead::protocol::frames::IdleReason;
use teamlead::protocol::{InboxEntry, LEAD_NAME, PermissionMode};
use tokio_util::sync::CancellationToken;

fn anthropic_config(server: &ScriptServer) -> LlmConfig {
    let mut c = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new("sk-ant-api03-turns-test"));
    c.retry.max_attempts = 2;
    c.retry.base_delay = Duration::from_millis(10);
    c
}

fn llm_teammate(team: &TestTeam, name: &str, llm: LlmConfig) -> WithEngine {
    WithEngine(
        team.config(name, PermissionMode::Default),
        EngineKind::llm(llm),
    )
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
    let usage = config.0.usage.clone();
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

const LOOP_KEY: &str = "sk-ant-api03-one-loop-SECRET-77";

/// A loop host of the test's own: it records what the loop shows, and its one tool answers with
/// the key in its text and ends the turn as an interruption would.
struct Recorder {
    usage: UsageMeter,
    shown: Vec<String>,
    notices: Vec<String>,
    ran: Vec<String>,
}

impl LoopHost for Recorder {
    fn speaker(&self) -> &str {
        "tester"
    }

    fn cut(&self) -> Cut {
        Cut::Paragraphs
    }

    fn system_prompt(&mut self) -> String {
        "You test the loop.".to_string()
    }

    fn tools(&self) -> Vec<ToolSpec> {
        vec![ToolSpec::new(
            "Lookup",
            "Looks something up.",
            json!({"type": "object", "properties": {}}),
        )]
    }

    fn usage(&self) -> &UsageMeter {
        &self.usage
    }

    fn show_text(&mut self, text: String) {
        self.shown.push(text);
    }

    fn show_notice(&mut self, notice: Notice) {
        self.notices.push(notice.line());
    }

    async fn run_tool<'a>(&'a mut self, call: &'a Call, _: &'a CancellationToken) -> ToolOutput {
        self.ran.push(call.id.clone());
        ToolOutput {
            content: format!("found {LOOP_KEY} in .env"),
            is_error: false,
            control: Some(Control::Interrupted),
        }
    }
}

#[tokio::test]
async fn the_one_loop_scrubs_what_leaves_it_and_answers_calls_after_the_end_not_run() {
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(
            Some(&format!(
                "The proxy echoed {LOOP_KEY} back.\n\nLooking it up twice."
            )),
            &[
                ("toolu_1", "Lookup", json!({})),
                ("toolu_2", "Lookup", json!({})),
            ],
        )),
        Reply::Sse(anthropic::text("Fine.")),
    ])
    .await;
    let config = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new(LOOP_KEY));
    let mut session = Session::new(&config).expect("session");
    let mut host = Recorder {
        usage: UsageMeter::new(),
        shown: Vec::new(),
        notices: Vec::new(),
        ran: Vec::new(),
    };
    let cancel = CancellationToken::new();
    let first = run_turn(&mut host, &mut session, "Look it up.".into(), &cancel).await;
    assert_eq!(first.end, TurnEnd::Interrupted);
    assert!(!first.last_text.contains(LOOP_KEY), "{}", first.last_text);
    assert_eq!(host.ran, ["toolu_1"], "the second call is not run");
    assert_eq!(
        host.shown,
        ["The proxy echoed <redacted> back.", "Looking it up twice."],
        "shown a paragraph at a time, without the key"
    );
    let second = run_turn(&mut host, &mut session, "Again.".into(), &cancel).await;
    assert_eq!(second.end, TurnEnd::Done);
    assert_eq!(second.last_text, "Fine.");

    // What the model is sent back of its tools holds no key (its own words go back as it
    // wrote them, to the service that sent them).
    let sent = server.requests()[1].body["messages"].to_string();
    let results: String = server.requests()[1].body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b.to_string())
        .collect();
    assert!(!results.contains(LOOP_KEY), "{results}");
    assert!(results.contains("found <redacted> in .env"), "{results}");
    assert_eq!(NOT_RUN, "Not run: the turn ended first.");
    assert!(sent.contains(NOT_RUN), "{sent}");
    assert!(sent.contains("[The user interrupted this turn.]"), "{sent}");
    let used = host.usage.snapshot();
    assert_eq!((used.requests, used.tool_uses), (2, 1));
    assert!(host.notices.is_empty(), "{:?}", host.notices);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_teammates_on_one_key_wait_out_a_429_together_then_both_resume() {
    let team = TestTeam::new(&["alpha", "beta"]);
    let server = ScriptServer::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("retry-after".to_string(), "2".to_string())],
            body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your rate limit"}}"#.to_string(),
        },
        Reply::Sse(anthropic::text("Done.")),
        Reply::Sse(anthropic::text("Done.")),
    ])
    .await;
    let asker = RecordingAsker::new(Policy::Approve);
    team.send("alpha", InboxEntry::new(LEAD_NAME, "Go."));
    let mut alpha = spawn(
        llm_teammate(&team, "alpha", anthropic_config(&server)),
        asker.shared(),
    );
    let mut beta = spawn(
        llm_teammate(&team, "beta", anthropic_config(&server)),
        asker.shared(),
    );
    alpha
        .wait_event("alpha's retry after the 429", |e| {
            matches!(e, TeammateEventKind::Log { text, .. } if text.contains("trying again in 2.0 s"))
        })
        .await;
    let limited = server.requests()[0].at;
    // beta gets work during the pause: it waits with alpha instead of asking at once.
    team.send("beta", InboxEntry::new(LEAD_NAME, "Go too."));
    beta.handle.wake();
    beta.wait_event("beta waiting with the team", |e| {
        matches!(e, TeammateEventKind::Log { text, .. } if text.contains("rate-limited by the model service: waiting"))
    })
    .await;
    let both = wait_for("both idle notifications", 15, || {
        let idles = idles(&team);
        (idles.len() == 2).then_some(idles)
    })
    .await;
    for idle in &both {
        assert_eq!(idle.idle_reason, Some(IdleReason::Available), "{idle:?}");
        assert_eq!(idle.result.as_deref(), Some("Done."), "{idle:?}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one 429, then one request each");
    for (i, r) in requests.iter().enumerate().skip(1) {
        let after = r.at.duration_since(limited);
        assert!(
            after >= Duration::from_secs(2),
            "request {i} came {after:?} after the 429, before its retry-after of 2 s"
        );
    }
}
