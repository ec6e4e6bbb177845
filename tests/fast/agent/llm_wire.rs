//! The llm client against a local server speaking the real wire formats: the Anthropic
//! Messages stream with a tool call built from `input_json_delta` pieces, OpenAI-compatible
//! `tool_calls` deltas, a 429 with `retry-after` then success, overload (529 and a mid-stream
//! `overloaded_error`) retried, a 401 not retried and never echoing the key, network errors
//! retried then given up, and the turn token aborting a stream that stalls.

use crate::llm_common;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use llm_common::{Reply, ScriptServer, anthropic, openai};
use teamlead::agent::llm::conversation::{Block, Message, ModelRequest, StopReason, StreamUpdate};
use teamlead::agent::llm::{ApiKey, LlmClient, LlmConfig, LlmError, Provider, tools};

const KEY: &str = "sk-ant-api03-TESTKEY-abcdef0123456789";

fn fast(mut config: LlmConfig) -> LlmConfig {
    config.retry.max_attempts = 3;
    config.retry.base_delay = Duration::from_millis(10);
    config.retry.max_delay = Duration::from_millis(40);
    config
}

fn anthropic_client(server: &ScriptServer) -> LlmClient {
    let config = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new(KEY));
    LlmClient::new(fast(config)).expect("client")
}

fn request() -> ModelRequest {
    ModelRequest {
        system: "You are builder.".into(),
        messages: vec![Message::user("Run the tests.")],
        tools: tools::specs(),
    }
}

async fn send(
    client: &LlmClient,
    cancel: &CancellationToken,
) -> (
    Result<teamlead::agent::llm::conversation::ModelResponse, LlmError>,
    Vec<StreamUpdate>,
) {
    let mut updates = Vec::new();
    let result = {
        let mut out = |u: StreamUpdate| updates.push(u);
        client.send(&request(), cancel, &mut out).await
    };
    (result, updates)
}

#[tokio::test]
async fn anthropic_stream_with_a_tool_call_and_the_exact_request() {
    let server = ScriptServer::start(vec![Reply::Sse(anthropic::message(
        Some("Let me run them."),
        &[(
            "toolu_01A09q90qw90lq917835lq9",
            "Bash",
            json!({"command": "cargo test", "description": "Run the tests"}),
        )],
    ))])
    .await;
    let client = anthropic_client(&server);
    let (result, updates) = send(&client, &CancellationToken::new()).await;
    let response = result.expect("answer");
    assert_eq!(
        response.content,
        vec![
            Block::Text("Let me run them.".into()),
            Block::ToolUse {
                id: "toolu_01A09q90qw90lq917835lq9".into(),
                name: "Bash".into(),
                input: json!({"command": "cargo test", "description": "Run the tests"}),
            }
        ]
    );
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(
        (response.usage.input_tokens, response.usage.output_tokens),
        (1200, 75)
    );
    let streamed: String = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(streamed, "Let me run them.");
    assert!(updates.contains(&StreamUpdate::ToolCall {
        name: "Bash".into()
    }));

    let got = server.requests();
    assert_eq!(got.len(), 1);
    let r = &got[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/messages")
    );
    assert_eq!(r.header("x-api-key"), Some(KEY));
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    assert_eq!(r.header("authorization"), None);
    let tools: Vec<Value> = tools::specs()
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    assert_eq!(
        r.body,
        json!({
            "model": "claude-sonnet-4-5",
            "max_tokens": 8192,
            "system": [{"type": "text", "text": "You are builder.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Run the tests.", "cache_control": {"type": "ephemeral"}}]}],
            "tools": tools,
            "stream": true
        })
    );
    assert_eq!(
        r.tool_names(),
        [
            "Bash",
            "Read",
            "Write",
            "Edit",
            "Glob",
            "Grep",
            "SendMessage",
            "TaskList",
            "TaskGet",
            "TaskCreate",
            "TaskUpdate",
            "SubmitPlan"
        ]
    );
}

#[tokio::test]
async fn openai_tool_call_deltas_bearer_and_stream_options() {
    let server = ScriptServer::start(vec![Reply::Sse(openai::message(
        Some("On it."),
        &[
            ("call_Fq3x1", "Bash", json!({"command": "ls -la"})),
            ("call_Zk9y2", "TaskList", json!({})),
        ],
    ))])
    .await;
    let config = LlmConfig::new(
        Provider::OpenAi,
        &format!("{}/v1", server.base_url()),
        "qwen2.5-coder:7b",
    )
    .with_api_key(ApiKey::new("sk-openai-TESTKEY"));
    let client = LlmClient::new(fast(config)).unwrap();
    let (result, _) = send(&client, &CancellationToken::new()).await;
    let response = result.expect("answer");
    assert_eq!(
        response.content,
        vec![
            Block::Text("On it.".into()),
            Block::ToolUse {
                id: "call_Fq3x1".into(),
                name: "Bash".into(),
                input: json!({"command": "ls -la"})
            },
            Block::ToolUse {
                id: "call_Zk9y2".into(),
                name: "TaskList".into(),
                input: json!({})
            },
        ]
    );
    assert_eq!(response.stop, StopReason::ToolUse);
    assert_eq!(response.usage.input_tokens, 900);

    let r = &server.requests()[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-openai-TESTKEY"));
    assert_eq!(r.header("x-api-key"), None);
    assert_eq!(r.body["model"], "qwen2.5-coder:7b");
    assert_eq!(r.body["stream"], true);
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert!(r.body.get("max_tokens").is_none());
    assert_eq!(
        r.body["messages"],
        json!([
            {"role": "system", "content": "You are builder."},
            {"role": "user", "content": "Run the tests."}
        ])
    );
    assert_eq!(r.body["tools"][0]["type"], "function");
    assert_eq!(r.body["tools"][0]["function"]["name"], "Bash");
    assert_eq!(
        r.body["tools"][0]["function"]["parameters"]["required"],
        json!(["command"])
    );
}

#[tokio::test]
async fn a_429_waits_for_retry_after_then_succeeds() {
    let server = ScriptServer::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("retry-after".into(), "1".into())],
            body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into(),
        },
        Reply::Sse(anthropic::text("Done.")),
    ])
    .await;
    let client = anthropic_client(&server);
    let start = Instant::now();
    let (result, updates) = send(&client, &CancellationToken::new()).await;
    assert_eq!(
        result.expect("answer").content,
        vec![Block::Text("Done.".into())]
    );
    assert!(
        start.elapsed() >= Duration::from_millis(950),
        "retry-after was not honored: {:?}",
        start.elapsed()
    );
    let retries: Vec<&StreamUpdate> = updates
        .iter()
        .filter(|u| matches!(u, StreamUpdate::Retrying { .. }))
        .collect();
    assert_eq!(retries.len(), 1);
    let StreamUpdate::Retrying {
        attempt,
        delay,
        error,
    } = retries[0]
    else {
        unreachable!()
    };
    assert_eq!((*attempt, *delay), (2, Duration::from_secs(1)));
    assert!(
        error.contains("429") && error.contains("rate limit"),
        "{error}"
    );
    let got = server.requests();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].body, got[1].body);
}

#[tokio::test]
async fn overload_is_retried_with_backoff() {
    let server = ScriptServer::start(vec![
        Reply::status(
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        ),
        Reply::Sse(anthropic::overloaded()),
        Reply::Sse(anthropic::text("Third time lucky.")),
    ])
    .await;
    let client = anthropic_client(&server);
    let (result, updates) = send(&client, &CancellationToken::new()).await;
    assert_eq!(
        result.expect("answer").content,
        vec![Block::Text("Third time lucky.".into())]
    );
    assert_eq!(server.requests().len(), 3);
    let attempts: Vec<u32> = updates
        .iter()
        .filter_map(|u| match u {
            StreamUpdate::Retrying { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect();
    assert_eq!(attempts, [2, 3]);
}

#[tokio::test]
async fn a_401_is_not_retried_and_never_shows_the_key() {
    let server = ScriptServer::start(vec![Reply::status(
        401,
        &format!(
            r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
        ),
    )])
    .await;
    let client = anthropic_client(&server);
    let (result, updates) = send(&client, &CancellationToken::new()).await;
    let error = result.unwrap_err();
    assert!(error.is_auth() && !error.is_retryable());
    let text = error.to_string();
    assert!(
        text.contains("401") && text.contains("authentication_error"),
        "{text}"
    );
    assert!(
        !text.contains(KEY) && !format!("{error:?}").contains(KEY),
        "{text}"
    );
    assert!(text.contains("<redacted>"));
    assert!(updates.is_empty());
    assert_eq!(server.requests().len(), 1);
    // The key was sent, but no Debug output shows it.
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
    assert!(!format!("{client:?}").contains(KEY));
}

#[tokio::test]
async fn network_errors_are_retried_then_reported() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let config = LlmConfig::new(
        Provider::Anthropic,
        &format!("http://127.0.0.1:{port}"),
        "claude-sonnet-4-5",
    );
    let client = LlmClient::new(fast(config)).unwrap();
    let (result, updates) = send(&client, &CancellationToken::new()).await;
    let error = result.unwrap_err();
    assert!(matches!(error, LlmError::Network { .. }), "{error}");
    assert_eq!(
        updates
            .iter()
            .filter(|u| matches!(u, StreamUpdate::Retrying { .. }))
            .count(),
        2
    );

    // A server that hangs up without answering is retried too.
    let server = ScriptServer::start(vec![Reply::Close, Reply::Sse(anthropic::text("ok"))]).await;
    let client = anthropic_client(&server);
    let (result, _) = send(&client, &CancellationToken::new()).await;
    assert_eq!(result.unwrap().content, vec![Block::Text("ok".into())]);
}

#[tokio::test]
async fn the_turn_token_aborts_a_stalled_stream() {
    let server = ScriptServer::start(vec![Reply::Stall(anthropic::started(
        "Thinking about it for a very long time",
    ))])
    .await;
    let client = anthropic_client(&server);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let start = Instant::now();
    let mut saw_text = false;
    let result = {
        let mut out = |u: StreamUpdate| {
            if matches!(u, StreamUpdate::Text(_)) {
                saw_text = true;
                trigger.cancel();
            }
        };
        client.send(&request(), &cancel, &mut out).await
    };
    assert!(saw_text);
    assert_eq!(result.unwrap_err(), LlmError::Cancelled);
    assert!(start.elapsed() < Duration::from_secs(3));
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.hung_up() == 0 {
        assert!(Instant::now() < deadline, "the connection was not dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
