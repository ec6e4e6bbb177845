//! `llm` teammates in process, against a local server that streams real Anthropic and OpenAI
//! answers: a teammate claims a task, runs Bash after the lead's approval (the call waits for
//! it), messages the lead and completes the task; a plan-mode teammate changes nothing until
//! team-lead approves its plan; a 401 ends the turn `failed` without the key showing anywhere;
//! and an OpenAI-compatible teammate uses the task list.

use crate::agent_common;
use crate::llm_common;

use std::time::Duration;

use serde_json::json;

use agent_common::{Policy, RecordingAsker, Running, TestTeam, WithEngine, idles, spawn, wait_for};
use llm_common::{Reply, ScriptServer, anthropic, openai};
use teamlead::agent::EngineKind;
use teamlead::agent::TeammateEventKind;
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::protocol::frames::{Frame, IdleReason, PlanApprovalResponse, plan_digest};
use teamlead::protocol::time::now_iso;
use teamlead::protocol::{InboxEntry, LEAD_NAME, PermissionMode, TaskStatus};

const KEY: &str = "sk-ant-api03-SECRET-TEAMMATE-KEY-0042";

fn anthropic_config(server: &ScriptServer) -> LlmConfig {
    let mut c = LlmConfig::new(Provider::Anthropic, &server.base_url(), "claude-sonnet-4-5")
        .with_api_key(ApiKey::new(KEY));
    c.retry.max_attempts = 2;
    c.retry.base_delay = Duration::from_millis(10);
    c
}

fn llm_teammate(team: &TestTeam, name: &str, mode: PermissionMode, llm: LlmConfig) -> WithEngine {
    WithEngine(team.config(name, mode), EngineKind::llm(llm))
}

/// The text of every event, for looking for a key.
fn events_text(running: &mut Running) -> String {
    format!("{:?}", running.collect())
}

#[tokio::test]
async fn a_teammate_claims_a_task_runs_bash_after_approval_reports_and_completes_it() {
    let team = TestTeam::new(&["builder"]);
    std::fs::write(team.work.join("a.txt"), "a").unwrap();
    std::fs::write(team.work.join("b.txt"), "b").unwrap();
    team.tasks()
        .create(
            "List the files",
            "Run `ls` in the work directory and tell team-lead what is there.",
            Vec::new(),
            None,
        )
        .unwrap();
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(
            Some("I'll list the files."),
            &[("toolu_01Bash", "Bash", json!({"command": "ls", "description": "List files"}))],
        )),
        Reply::Sse(anthropic::tool(
            "toolu_02Send",
            "SendMessage",
            json!({"to": "team-lead", "message": "The work directory has a.txt and b.txt.", "summary": "2 files: a.txt, b.txt"}),
        )),
        Reply::Sse(anthropic::tool(
            "toolu_03Done",
            "TaskUpdate",
            json!({"taskId": "1", "status": "completed"}),
        )),
        Reply::Sse(anthropic::text("Task #1 is done: a.txt and b.txt.")),
    ])
    .await;
    let asker = RecordingAsker::new(Policy::ApproveWhenReleased);
    let config = llm_teammate(
        &team,
        "builder",
        PermissionMode::Default,
        anthropic_config(&server),
    );
    let usage = config.0.usage.clone();
    let mut running = spawn(config, asker.shared());

    // It asks for Bash with the model's own call, and waits: nothing more goes to the model.
    wait_for("the Bash permission request", 10, || {
        (asker.count() == 1).then_some(())
    })
    .await;
    let asked = &asker.requests()[0];
    assert_eq!(asked.worker, "builder");
    assert_eq!(asked.request.tool_name, "Bash");
    assert_eq!(asked.request.tool_use_id.as_deref(), Some("toolu_01Bash"));
    assert_eq!(asked.request.input["command"], "ls");
    assert_eq!(asked.request.description, "List files");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(team.task("1").status, TaskStatus::InProgress);
    assert_eq!(team.task("1").owner.as_deref(), Some("builder"));
    asker.release();

    let idle = wait_for("the idle notification", 15, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(idle.idle_reason, Some(IdleReason::Available));
    assert_eq!(idle.completed_task_id.as_deref(), Some("1"));
    assert_eq!(idle.completed_status.as_deref(), Some("resolved"));
    assert_eq!(
        idle.result.as_deref(),
        Some("Task #1 is done: a.txt and b.txt.")
    );
    assert_eq!(idle.summary.as_deref(), Some("completed task #1"));
    let task = team.task("1");
    assert_eq!(task.status, TaskStatus::Completed);
    let messages = team.lead_messages();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].from, "builder");
    assert_eq!(messages[0].text, "The work directory has a.txt and b.txt.");
    assert_eq!(
        messages[0].summary.as_deref(),
        Some("2 files: a.txt, b.txt")
    );
    assert_eq!(messages[0].color.as_deref(), Some("blue"));
    assert_eq!(team.member("builder").is_active, Some(false));

    let got = server.requests();
    assert_eq!(got.len(), 4);
    let first = &got[0];
    assert_eq!(first.body["model"], "claude-sonnet-4-5");
    assert_eq!(first.body["stream"], true);
    assert_eq!(first.body["max_tokens"], 8192);
    assert_eq!(first.tool_names().len(), 12);
    let system = &first.system_text();
    assert!(system.contains("You are builder, a member of the agent team \"t\""));
    assert!(system.contains("Your plain text output is seen by no one"));
    let prompt = first.body["messages"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        prompt.starts_with("You claimed task #1 \"List the files\""),
        "{prompt}"
    );
    assert!(prompt.contains("Run `ls` in the work directory"));
    // The tool results go back as tool_result blocks, after the model's own turn.
    assert_eq!(
        got[1].body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "text", "text": "I'll list the files."},
            {"type": "tool_use", "id": "toolu_01Bash", "name": "Bash", "input": {"command": "ls", "description": "List files"}}
        ]})
    );
    assert_eq!(
        got[1].last_message(),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01Bash", "content": "a.txt\nb.txt", "cache_control": {"type": "ephemeral"}}]})
    );
    assert_eq!(
        got[2].last_message(),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02Send", "content": "Message sent to team-lead.", "cache_control": {"type": "ephemeral"}}]})
    );
    assert_eq!(
        got[3].last_message(),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_03Done", "content": "Task #1: marked it completed.", "cache_control": {"type": "ephemeral"}}]})
    );

    let used = usage.snapshot();
    assert_eq!(used.requests, 4);
    assert_eq!((used.input_tokens, used.output_tokens), (4 * 1200, 4 * 75));
    assert_eq!(used.tool_uses, 3);
    assert_eq!(used.turns, 1);
    assert_eq!(running.handle.usage(), used);
    let events = running.collect().to_vec();
    assert!(
        events
            .iter()
            .any(|e| matches!(e, TeammateEventKind::Log { text, .. } if text == "Bash(ls)"))
    );
    assert!(events.iter().any(
        |e| matches!(e, TeammateEventKind::Log { text, .. } if text == "I'll list the files.")
    ));
    assert!(!events_text(&mut running).contains(KEY));
    // The server saw the key; nothing the teammate wrote holds it.
    assert!(got.iter().all(|r| r.header("x-api-key") == Some(KEY)));
}

#[tokio::test]
async fn a_plan_mode_teammate_changes_nothing_until_its_plan_is_approved() {
    let team = TestTeam::new(&["planner"]);
    team.tasks()
        .create(
            "Say hello",
            "Create hello.txt containing `hello`.",
            Vec::new(),
            None,
        )
        .unwrap();
    let plan = "1. Write hello.txt with the line `hello`.";
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::tool(
            "toolu_w1",
            "Write",
            json!({"file_path": "hello.txt", "content": "hello\n"}),
        )),
        Reply::Sse(anthropic::tool(
            "toolu_p1",
            "SubmitPlan",
            json!({"plan": plan}),
        )),
        Reply::Sse(anthropic::tool(
            "toolu_w2",
            "Write",
            json!({"file_path": "hello.txt", "content": "hello\n"}),
        )),
        Reply::Sse(anthropic::text("Wrote hello.txt.")),
    ])
    .await;
    let asker = RecordingAsker::new(Policy::Approve);
    let config = llm_teammate(
        &team,
        "planner",
        PermissionMode::Plan,
        anthropic_config(&server),
    );
    let mut running = spawn(config, asker.shared());

    let request = wait_for("the plan approval request", 10, || {
        team.lead_frames().into_iter().find_map(|f| match f {
            Frame::PlanApprovalRequest(r) => Some(r),
            _ => None,
        })
    })
    .await;
    assert_eq!(request.from, "planner");
    assert_eq!(request.plan_content, plan);
    assert!(request.request_id.starts_with("plan_approval-"));
    // The first Write was refused by plan mode, and nothing changes while the plan waits.
    let got = server.requests();
    assert_eq!(got.len(), 2);
    let refused = got[1].last_message();
    assert_eq!(refused["content"][0]["tool_use_id"], "toolu_w1");
    assert_eq!(refused["content"][0]["is_error"], true);
    assert!(
        refused["content"][0]["content"]
            .as_str()
            .unwrap()
            .contains("plan mode is read-only"),
        "{refused}"
    );
    assert!(got[0].system_text().contains("You are in plan mode"));
    running
        .wait_event("waiting for plan approval", |e| {
            matches!(e, TeammateEventKind::WaitingForApproval { what } if what.contains("plan"))
        })
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.requests().len(), 2);
    assert!(team.file("hello.txt").is_none());
    assert_eq!(asker.count(), 0);

    let answer = Frame::PlanApprovalResponse(PlanApprovalResponse {
        request_id: request.request_id.clone(),
        approved: true,
        feedback: None,
        timestamp: now_iso(),
        permission_mode: Some(PermissionMode::AcceptEdits),
        plan_digest: Some(plan_digest(&request.plan_content)),
    });
    team.send_frame(LEAD_NAME, "planner", &answer);
    running.handle.wake();

    let idle = wait_for("the idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(idle.idle_reason, Some(IdleReason::Available));
    assert_eq!(idle.result.as_deref(), Some("Wrote hello.txt."));
    assert_eq!(team.file("hello.txt").as_deref(), Some("hello\n"));
    assert_eq!(
        asker.count(),
        0,
        "acceptEdits writes in the work directory without asking"
    );
    assert_eq!(team.member("planner").mode.as_deref(), Some("acceptEdits"));
    let got = server.requests();
    assert_eq!(got.len(), 4);
    let approved = got[2].last_message();
    assert_eq!(approved["content"][0]["tool_use_id"], "toolu_p1");
    assert!(
        approved["content"][0]["content"]
            .as_str()
            .unwrap()
            .starts_with("team-lead approved your plan")
    );
    assert!(!got[2].system_text().contains("You are in plan mode"));
}

#[tokio::test]
async fn a_401_fails_the_turn_and_the_key_shows_nowhere() {
    let team = TestTeam::new(&["builder"]);
    let server = ScriptServer::start(vec![Reply::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
    )])
    .await;
    let asker = RecordingAsker::new(Policy::Approve);
    let config = llm_teammate(
        &team,
        "builder",
        PermissionMode::Default,
        anthropic_config(&server),
    );
    let usage = config.0.usage.clone();
    team.send(
        "builder",
        InboxEntry::new(LEAD_NAME, "Please check the build."),
    );
    let mut running = spawn(config, asker.shared());

    let idle = wait_for("the failed idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(idle.idle_reason, Some(IdleReason::Failed));
    let failure = idle.failure_reason.clone().expect("failureReason");
    assert!(
        failure.contains("401") && failure.contains("refused the credentials"),
        "{failure}"
    );
    assert!(idle.result.is_none());
    let told = team.lead_messages();
    assert_eq!(told.len(), 1);
    assert!(
        told[0].text.starts_with("My turn failed:"),
        "{}",
        told[0].text
    );
    assert!(told[0].text.contains("ANTHROPIC_API_KEY"));
    assert_eq!(told[0].summary.as_deref(), Some("my turn failed"));
    assert_eq!(server.requests().len(), 1, "a 401 is not retried");
    assert_eq!(server.requests()[0].header("x-api-key"), Some(KEY));
    assert_eq!(usage.snapshot().failed_turns, 1);
    assert!(
        running.handle.is_running(),
        "a failed turn does not stop the teammate"
    );

    // The key is in no file of the home or the work directory, and in no event.
    let root = team.home.root.parent().unwrap().to_path_buf();
    let mut stack = vec![root];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        // Lock holders and temporary files may come and go while the walk runs.
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let Ok(bytes) = std::fs::read(&path) else {
                    continue;
                };
                files += 1;
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(KEY),
                    "the key is in {}",
                    path.display()
                );
            }
        }
    }
    assert!(files >= 3);
    assert!(!events_text(&mut running).contains(KEY));
}

#[tokio::test]
async fn an_openai_compatible_teammate_reads_the_task_list() {
    let team = TestTeam::new(&["reader", "tester"]);
    let list = team.tasks();
    list.create("Review the parser", "", Vec::new(), None)
        .unwrap();
    list.claim("1", "tester", false).unwrap();
    let server = ScriptServer::start(vec![
        Reply::Sse(openai::tool("call_list1", "TaskList", json!({}))),
        Reply::Sse(openai::text("One task: #1, which tester is reviewing.")),
    ])
    .await;
    let mut llm = LlmConfig::new(
        Provider::OpenAi,
        &format!("{}/v1", server.base_url()),
        "qwen2.5-coder:7b",
    );
    llm.retry.base_delay = Duration::from_millis(10);
    let config = llm_teammate(&team, "reader", PermissionMode::Default, llm);
    team.send(
        "reader",
        InboxEntry::new(LEAD_NAME, "What is on the task list?").with_summary(Some("tasks?")),
    );
    let _running = spawn(config, RecordingAsker::new(Policy::Approve).shared());

    let idle = wait_for("the idle notification", 10, || {
        idles(&team).first().cloned()
    })
    .await;
    assert_eq!(
        idle.result.as_deref(),
        Some("One task: #1, which tester is reviewing.")
    );
    let got = server.requests();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].path, "/v1/chat/completions");
    assert_eq!(
        got[0].header("authorization"),
        None,
        "no key configured, none sent"
    );
    let messages = got[0].body["messages"].as_array().unwrap();
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "<teammate-message teammate_id=\"team-lead\" summary=\"tasks?\">\nWhat is on the task list?\n</teammate-message>"})
    );
    let second = got[1].body["messages"].as_array().unwrap();
    assert_eq!(
        second[2],
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_list1", "type": "function", "function": {"name": "TaskList", "arguments": "{}"}}]})
    );
    assert_eq!(
        second[3],
        json!({"role": "tool", "tool_call_id": "call_list1", "content": "#1 [in_progress] Review the parser (owner: tester)"})
    );
}
