//! The tools of an `llm` teammate through the engine: several calls in one answer run in order
//! and their results go back together; Read and Grep inside the working directory pass, Edit
//! asks the lead first (default mode); TaskUpdate's claim reports the store's failure codes
//! (`already_claimed`, `blocked`); SendMessage to `*` reaches every other member; the
//! teammate's own key is scrubbed from file contents, command output and its answers (a proxy that
//! echoes it), and unset for commands.

use crate::agent_common;
use crate::llm_common;

use std::time::Duration;

use serde_json::json;

use agent_common::{Policy, RecordingAsker, TestTeam, WithEngine, idles, spawn, wait_for};
use llm_common::{Reply, ScriptServer, anthropic};
use teamlead::agent::EngineKind;
use teamlead::agent::llm::{LlmConfig, Provider};
use teamlead::protocol::{InboxEntry, LEAD_NAME, PermissionMode};

#[tokio::test]
async fn several_calls_in_one_answer_run_in_order_through_the_gate() {
    let team = TestTeam::new(&["worker", "tester"]);
    std::fs::write(team.work.join("a.txt"), "hello\n").unwrap();
    let list = team.tasks();
    list.create("Review", "", Vec::new(), None).unwrap();
    list.claim("1", "tester", false).unwrap();
    list.create("Ship", "", vec!["1".into()], None).unwrap();
    let calls = [
        ("toolu_1", "Read", json!({"file_path": "a.txt"})),
        (
            "toolu_2",
            "Edit",
            json!({"file_path": "a.txt", "old_string": "hello", "new_string": "hello world"}),
        ),
        ("toolu_3", "Grep", json!({"pattern": "wor.d"})),
        (
            "toolu_4",
            "TaskUpdate",
            json!({"taskId": "1", "status": "in_progress"}),
        ),
        (
            "toolu_5",
            "TaskUpdate",
            json!({"taskId": 2, "status": "in_progress"}),
        ),
        (
            "toolu_6",
            "SendMessage",
            json!({"to": "*", "message": "Heads up: a.txt changed."}),
        ),
        ("toolu_7", "Deploy", json!({})),
    ];
    let refs: Vec<(&str, &str, serde_json::Value)> = calls
        .iter()
        .map(|(id, name, input)| (*id, *name, input.clone()))
        .collect();
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(Some("Several things at once."), &refs)),
        Reply::Sse(anthropic::text("All done.")),
    ])
    .await;
    let mut llm = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-haiku-4-5");
    llm.retry.base_delay = Duration::from_millis(10);
    let config = team.config("worker", PermissionMode::Default);
    let asker = RecordingAsker::new(Policy::Approve);
    team.send("worker", InboxEntry::new(LEAD_NAME, "Polish a.txt."));
    let _running = spawn(WithEngine(config, EngineKind::llm(llm)), asker.shared());

    let idle = wait_for("the idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(idle.result.as_deref(), Some("All done."));
    assert_eq!(team.file("a.txt").as_deref(), Some("hello world\n"));
    let asked = asker.requests();
    assert_eq!(asked.len(), 1, "only the Edit asks");
    assert_eq!(asked[0].request.tool_name, "Edit");
    assert_eq!(asked[0].request.tool_use_id.as_deref(), Some("toolu_2"));
    assert_eq!(asked[0].request.input["new_string"], "hello world");

    let got = server.requests();
    assert_eq!(got.len(), 2);
    let results = got[1].last_message()["content"].as_array().unwrap().clone();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5", "toolu_6", "toolu_7"
        ]
    );
    let text = |i: usize| results[i]["content"].as_str().unwrap().to_string();
    let error = |i: usize| results[i]["is_error"] == true;
    assert_eq!(text(0), "     1\thello\n");
    assert!(!error(0));
    let edited = team.work.join("a.txt");
    assert_eq!(
        text(1),
        format!("Edited {}: replaced 1 occurrence(s)", edited.display())
    );
    assert_eq!(text(2), "a.txt");
    assert!(error(3));
    assert_eq!(
        text(3),
        "Cannot claim task #1: already_claimed (task is already claimed by tester)."
    );
    assert!(error(4));
    assert_eq!(
        text(4),
        "Cannot claim task #2: blocked (task is blocked by unfinished task(s) #1)."
    );
    assert_eq!(text(5), "Message sent to team-lead, tester.");
    assert!(error(6));
    assert!(text(6).starts_with("There is no tool named `Deploy`"));
    for name in [LEAD_NAME, "tester"] {
        let inbox = team.inbox(name);
        assert!(
            inbox
                .iter()
                .any(|e| e.from == "worker" && e.text == "Heads up: a.txt changed."),
            "{name} did not get the broadcast"
        );
    }
    assert!(
        team.inbox("worker")
            .iter()
            .all(|e| e.text != "Heads up: a.txt changed.")
    );
    assert_eq!(team.task("1").owner.as_deref(), Some("tester"));
    assert_eq!(team.task("2").owner, None);
}

#[tokio::test]
async fn the_teammates_own_key_is_scrubbed_from_what_tools_return_and_what_it_says() {
    const KEY: &str = "sk-ant-api03-SCRUB-ME-7781";
    let team = TestTeam::new(&["worker"]);
    std::fs::write(team.work.join(".env"), format!("ANTHROPIC_API_KEY={KEY}\n")).unwrap();
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(
            None,
            &[
                ("toolu_r", "Read", json!({"file_path": ".env"})),
                (
                    "toolu_b",
                    "Bash",
                    json!({"command": "cat .env; echo \"env=[$ANTHROPIC_API_KEY]\""}),
                ),
            ],
        )),
        // A proxy that echoes the key into the answer.
        Reply::Sse(anthropic::text(&format!(
            "Nothing to see.\nThe gateway says: bad key {KEY}"
        ))),
    ])
    .await;
    let mut llm = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-haiku-4-5")
        .with_api_key(teamlead::agent::llm::ApiKey::new(KEY));
    llm.retry.base_delay = Duration::from_millis(10);
    let config = team.config("worker", PermissionMode::BypassPermissions);
    team.send("worker", InboxEntry::new(LEAD_NAME, "What is in .env?"));
    let mut running = spawn(
        WithEngine(config, EngineKind::llm(llm)),
        RecordingAsker::new(Policy::Approve).shared(),
    );

    let idle = wait_for("the idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    // The answer is shown and reported without the key.
    assert_eq!(
        idle.result.as_deref(),
        Some("Nothing to see.\nThe gateway says: bad key <redacted>")
    );
    let got = server.requests();
    assert_eq!(got.len(), 2);
    let results = got[1].last_message()["content"].clone();
    assert_eq!(
        results[0]["content"],
        "     1\tANTHROPIC_API_KEY=<redacted>\n"
    );
    assert_eq!(
        results[1]["content"],
        "ANTHROPIC_API_KEY=<redacted>\nenv=[]"
    );
    assert!(!got[1].body.to_string().contains(KEY));
    assert!(!format!("{:?}", running.collect()).contains(KEY));
}
