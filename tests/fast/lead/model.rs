//! The lead model (`teamlead --lead-model`) against a local server speaking the Anthropic
//! streaming format: it spawns a teammate and hands it a task through its tools (checked on
//! disk); a teammate's message that arrives while it is mid-turn reaches it when the turn ends;
//! permission requests stay in the human's queue and never reach it; its key never shows in
//! the transcript or the logs.

use crate::lead_common;
use crate::llm_common;

use std::io::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use lead_common::Session;
use llm_common::{Gate, Recorded, Reply, ScriptServer, anthropic};
use serde_json::json;
use teamlead::agent::llm::{ApiKey, LlmConfig, Provider};
use teamlead::lead::contract::{LeadCommand, LeadEvent, PermissionDecision, TranscriptItem};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::protocol::frames::{Frame, PermissionRequest};
use teamlead::protocol::{InboxEntry, LEAD_NAME};
use teamlead::store::{self, Home};

const KEY: &str = "sk-ant-api03-lead-model-SECRET-0123456789";

fn config(server: &ScriptServer) -> LlmConfig {
    let mut c = LlmConfig::new(Provider::Anthropic, &server.base_url(), "sonnet")
        .with_model("sonnet")
        .with_api_key(ApiKey::new(KEY));
    c.retry.max_attempts = 1;
    c
}

/// A lead session on a temporary home whose lead model talks to `server`.
async fn start(team: &str, server: &ScriptServer) -> Session {
    Session::start_with(team, |opts| {
        let opts = opts.with_lead_model(config(server));
        assert!(!format!("{opts:?}").contains(KEY), "options show the key");
        opts
    })
    .await
}

/// Takes the events already sent, without waiting.
fn drain_now(s: &mut Session) {
    while let Ok(event) = s.events.try_recv() {
        s.seen.push(event);
    }
}

fn position(s: &Session, pred: impl Fn(&LeadEvent) -> bool) -> Option<usize> {
    s.seen.iter().position(pred)
}

fn is_lead_text(e: &LeadEvent, needle: &str) -> bool {
    matches!(e, LeadEvent::Transcript(TranscriptItem::Lead { text }) if text.contains(needle))
}

fn is_teammate_turn(e: &LeadEvent, needle: &str) -> bool {
    matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) if text.contains(needle))
}

/// The messages of a request, as JSON text.
fn messages_of(r: &Recorded) -> String {
    r.body["messages"].to_string()
}

/// The text of the tool results of a request.
fn tool_results(r: &Recorded) -> String {
    let mut out = String::new();
    for m in r.body["messages"].as_array().into_iter().flatten() {
        for block in m["content"].as_array().into_iter().flatten() {
            if block["type"] == "tool_result" {
                out.push_str(&block["content"].to_string());
                out.push('\n');
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_model_spawns_a_teammate_and_assigns_it_a_task() {
    let server = ScriptServer::start(vec![
        Reply::Sse(anthropic::message(
            Some("I'll start a builder for the parser."),
            &[(
                "toolu_01",
                "SpawnTeammate",
                json!({"name": "builder", "prompt": "Write the parser in src/parser.rs; report to team-lead with SendMessage."}),
            )],
        )),
        Reply::Sse(anthropic::message(
            None,
            &[
                (
                    "toolu_02",
                    "TaskCreate",
                    json!({"subject": "Write the parser", "description": "A recursive-descent parser with tests."}),
                ),
                (
                    "toolu_03",
                    "TaskAssign",
                    json!({"task_id": "1", "owner": "builder"}),
                ),
            ],
        )),
        Reply::Sse(anthropic::text("builder is on task #1.")),
        // Spare answers, in case the teammate reports while the test still runs.
        Reply::Sse(anthropic::text("Noted.")),
        Reply::Sse(anthropic::text("Noted.")),
    ])
    .await;
    let mut s = start("lm-spawn", &server).await;
    s.submit("Please get a parser written.").await;
    s.wait_for("the model's last words", |e| {
        is_lead_text(e, "builder is on task #1.")
    })
    .await;
    s.seen_or_wait("the end of the turn", |e| {
        matches!(e, LeadEvent::Busy(false))
    })
    .await;

    // On disk, as a user would check: the member, the task's owner, the assignment.
    let team = store::read_team(&s.home, &s.team).expect("team file");
    let builder = team.member("builder").expect("builder in config.json");
    assert_eq!(
        builder.prompt.as_deref(),
        Some("Write the parser in src/parser.rs; report to team-lead with SendMessage.")
    );
    let task = store::tasks::TaskList::new(&s.home, &s.team)
        .expect("task list")
        .get("1")
        .expect("task #1");
    assert_eq!(task.subject, "Write the parser");
    // The assignment is what the lead did; what builder does next (a shell teammate reports a
    // task without a command failed, and the lead takes it back) may already have followed on
    // a loaded machine, so the owner is builder unless builder has answered.
    let reported = s.seen.iter().any(|e| {
        matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { from, .. }) if from == "builder")
    }) || task.owner.is_none();
    assert!(
        task.owner.as_deref() == Some("builder") || reported,
        "{task:?}"
    );
    let assignments_in = |s: &Session| -> Vec<_> {
        s.frames_in("builder")
            .into_iter()
            .filter_map(|(entry, frame)| match frame {
                Frame::TaskAssignment(a) => Some((entry, a)),
                _ => None,
            })
            .collect()
    };
    // The assignment goes to builder's inbox off the lead's loop: it may land just after the
    // turn's end on a loaded machine.
    lead_common::eventually("the task_assignment in builder's inbox", || {
        !assignments_in(&s).is_empty()
    })
    .await;
    let assignments = assignments_in(&s);
    assert_eq!(
        assignments.len(),
        1,
        "one task_assignment in builder's inbox"
    );
    assert_eq!(assignments[0].0.from, LEAD_NAME);
    assert_eq!(assignments[0].1.task_id, "1");
    assert_eq!(assignments[0].1.assigned_by, LEAD_NAME);

    // What the model was told.
    let requests = server.requests();
    assert!(requests.len() >= 3, "{} requests", requests.len());
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.body["model"], "claude-sonnet-4-5");
    assert_eq!(
        first.tool_names(),
        [
            "SpawnTeammate",
            "TaskCreate",
            "TaskAssign",
            "TaskList",
            "SendMessage",
            "ShutdownTeammate"
        ]
    );
    // SendMessage is the teammates' tool, with Claude Code's field names.
    let send = first.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "SendMessage")
        .unwrap()
        .clone();
    assert_eq!(send["input_schema"]["required"], json!(["to", "message"]));
    assert!(send["input_schema"]["properties"]["message"].is_object());
    let system = first.system_text();
    assert!(
        system.contains("lead of the agent team \"lm-spawn\""),
        "{system}"
    );
    assert!(system.contains("<teammate-message"), "{system}");
    assert!(messages_of(first).contains("Please get a parser written."));
    let after_spawn = tool_results(&requests[1]);
    assert!(after_spawn.contains("Spawned builder"), "{after_spawn}");
    let after_tasks = tool_results(&requests[2]);
    assert!(after_tasks.contains("Added task #1"), "{after_tasks}");
    assert!(after_tasks.contains("Assigned task #1"), "{after_tasks}");
    // The human saw the answer and what the model did.
    assert!(position(&s, |e| is_lead_text(e, "I'll start a builder")).is_some());
    assert!(position(&s, |e| is_lead_text(e, "SpawnTeammate builder")).is_some());
    // Its usage reached the UI: three answers of 1,200 in and 75 out.
    let usage = s
        .seen_or_wait("the lead model's usage", |e| {
            matches!(e, LeadEvent::LeadUsage(u) if u.turns == 1 && u.total_tokens() >= 3 * 1275)
        })
        .await;
    let LeadEvent::LeadUsage(usage) = usage else {
        unreachable!()
    };
    assert_eq!(usage.tool_uses, 3);
    s.quit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_arrives_mid_turn_reaches_the_model_when_the_turn_ends() {
    let gate = Gate::new();
    let server = ScriptServer::start(vec![
        Reply::Held(
            gate.clone(),
            Box::new(Reply::Sse(anthropic::text("Looking into it."))),
        ),
        Reply::Sse(anthropic::text("builder's parser compiles.")),
    ])
    .await;
    let mut s = start("lm-midturn", &server).await;
    s.add_pane_member("builder", "%3", "default").await;
    s.submit("What is builder doing?").await;
    s.wait_for("the turn to start", |e| matches!(e, LeadEvent::Busy(true)))
        .await;
    server.wait_requests(1, 20).await;

    // builder reports while the model is still answering.
    s.to_lead(
        &InboxEntry::new("builder", "The parser compiles.").with_summary(Some("parser compiles")),
    );
    let (home, team) = (s.home.clone(), s.team.clone());
    lead_common::eventually("the lead to take the message", || {
        store::inbox::read(&home, &team, LEAD_NAME)
            .map(|r| r.entries.is_empty())
            .unwrap_or(false)
    })
    .await;
    drain_now(&mut s);
    assert!(
        position(&s, |e| is_teammate_turn(e, "The parser compiles.")).is_none(),
        "the message waits while the lead model is mid-turn"
    );
    assert_eq!(server.requests().len(), 1);

    gate.open();
    let requests = server.wait_requests(2, 20).await;
    s.wait_for("the second answer", |e| {
        is_lead_text(e, "builder's parser compiles.")
    })
    .await;
    s.seen_or_wait("the end", |e| matches!(e, LeadEvent::Busy(false)))
        .await;
    assert!(!messages_of(&requests[0]).contains("The parser compiles."));
    let second = messages_of(&requests[1]);
    assert!(
        second.contains(
            "<teammate-message teammate_id=\\\"builder\\\" color=\\\"green\\\" summary=\\\"parser compiles\\\">\\nThe parser compiles.\\n</teammate-message>"
        ),
        "{second}"
    );
    assert!(
        second.contains("Looking into it."),
        "the first answer is history: {second}"
    );
    // The transcript: the first answer, then the message, then the second answer; the
    // spinner never stopped in between.
    let first_answer = position(&s, |e| is_lead_text(e, "Looking into it.")).expect("answer 1");
    let message = position(&s, |e| is_teammate_turn(e, "The parser compiles.")).expect("message");
    let second_answer =
        position(&s, |e| is_lead_text(e, "builder's parser compiles.")).expect("answer 2");
    assert!(first_answer < message && message < second_answer);
    let idle = s
        .seen
        .iter()
        .filter(|e| matches!(e, LeadEvent::Busy(false)))
        .count();
    assert_eq!(idle, 1, "one Busy(false), after the second turn");
    s.quit().await;
}

fn permission(id: &str, worker: &str) -> PermissionRequest {
    PermissionRequest {
        request_id: id.to_string(),
        agent_id: worker.to_string(),
        tool_name: "Bash".to_string(),
        tool_use_id: Some(format!("toolu_{id}")),
        description: "run the secret target".to_string(),
        input: json!({"command": "make secret-target", "description": "run the secret target"}),
        permission_suggestions: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_requests_stay_with_the_human_and_never_reach_the_model() {
    let gate = Gate::new();
    let server = ScriptServer::start(vec![
        Reply::Held(
            gate.clone(),
            Box::new(Reply::Sse(anthropic::text("On it."))),
        ),
        Reply::Sse(anthropic::text("worker is waiting for you.")),
        Reply::Sse(anthropic::text("Still waiting.")),
    ])
    .await;
    let mut s = start("lm-perms", &server).await;
    s.add_pane_member("worker", "%4", "default").await;
    s.submit("Check on worker.").await;
    server.wait_requests(1, 20).await;

    // Mid-turn: a permission request and a plain message from the same teammate.
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::PermissionRequest(permission("perm-1-aaaaaaa", "worker")),
    ));
    s.to_lead(&InboxEntry::new("worker", "I asked to run a command."));
    let queue = s
        .wait_permissions("the request in the human's queue", |p| p.len() == 1)
        .await;
    assert_eq!(queue[0].request_id, "perm-1-aaaaaaa");
    gate.open();
    s.wait_for("the second answer", |e| {
        is_lead_text(e, "worker is waiting for you.")
    })
    .await;
    s.seen_or_wait("the end", |e| matches!(e, LeadEvent::Busy(false)))
        .await;

    // Idle: another request, then a message; only the message becomes a turn.
    s.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::PermissionRequest(permission("perm-2-bbbbbbb", "worker")),
    ));
    s.wait_permissions("two requests queued", |p| p.len() == 2)
        .await;
    s.to_lead(&InboxEntry::new("worker", "Second ask sent."));
    let requests = server.wait_requests(3, 20).await;
    s.wait_for("the third answer", |e| is_lead_text(e, "Still waiting."))
        .await;
    assert!(messages_of(&requests[1]).contains("I asked to run a command."));
    assert!(messages_of(&requests[2]).contains("Second ask sent."));
    for r in &requests {
        for needle in [
            "perm-1-aaaaaaa",
            "perm-2-bbbbbbb",
            "permission_request",
            "make secret-target",
        ] {
            assert!(!r.raw.contains(needle), "the model saw {needle}: {}", r.raw);
        }
        assert!(
            r.tool_names()
                .iter()
                .all(|t| !t.contains("Permission") && !t.contains("Plan")),
            "{:?}",
            r.tool_names()
        );
    }
    // Both requests are still the human's to answer, and the answer goes to the teammate.
    let queue = s
        .seen
        .iter()
        .rev()
        .find_map(|e| match e {
            LeadEvent::Permissions(p) => Some(p.clone()),
            _ => None,
        })
        .expect("a queue snapshot");
    assert_eq!(queue.len(), 2);
    s.send(LeadCommand::AnswerPermission {
        key: queue[0].key,
        decision: PermissionDecision::Deny { feedback: None },
    })
    .await;
    s.wait_permissions("one left", |p| p.len() == 1).await;
    // The answer is written off the lead's loop, just after the queue shows it answered.
    let answers = || {
        s.frames_in("worker")
            .into_iter()
            .filter(|(_, f)| {
                matches!(f, Frame::PermissionResponse(r) if r.request_id == "perm-1-aaaaaaa")
            })
            .count()
    };
    lead_common::eventually("the answer in worker's inbox", || answers() > 0).await;
    assert_eq!(answers(), 1);
    s.quit().await;
}

/// A shared buffer every log line of this test binary goes to.
fn captured_logs() -> Arc<Mutex<Vec<u8>>> {
    static LOGS: OnceLock<Arc<Mutex<Vec<u8>>>> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = Arc::new(Mutex::new(Vec::new()));
        let sink = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::TRACE)
            .with_ansi(false)
            .with_writer(move || LogWriter(sink.clone()))
            .finish();
        tracing::subscriber::set_global_default(subscriber).expect("one subscriber");
        buffer
    })
    .clone()
}

struct LogWriter(Arc<Mutex<Vec<u8>>>);

impl Write for LogWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("log buffer").extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_never_shows_in_the_transcript_or_the_logs() {
    let logs = captured_logs();
    let server = ScriptServer::start(vec![
        Reply::status(
            401,
            &format!(
                r#"{{"type":"error","error":{{"type":"authentication_error","message":"invalid x-api-key {KEY}"}}}}"#
            ),
        ),
        Reply::Sse(anthropic::text(&format!("The key you gave me is {KEY}, keep it safe."))),
    ])
    .await;
    let mut s = start("lm-secret", &server).await;
    s.submit("hello").await;
    let failed = s.wait_note("The lead model's turn failed").await;
    assert!(
        failed.contains("401") && failed.contains("<redacted>"),
        "{failed}"
    );
    s.submit("try again").await;
    s.wait_for("the answer", |e| is_lead_text(e, "keep it safe"))
        .await;
    s.seen_or_wait("the end", |e| matches!(e, LeadEvent::Busy(false)))
        .await;
    // The key was sent, as a header.
    let requests = server.requests();
    assert_eq!(requests[0].header("x-api-key"), Some(KEY));
    assert!(!requests[0].body.to_string().contains(KEY));
    s.quit().await;
    for event in &s.seen {
        let shown = format!("{event:?}");
        assert!(!shown.contains(KEY), "the key shows in {shown}");
    }
    assert!(
        s.seen
            .iter()
            .any(|e| is_lead_text(e, "The key you gave me is <redacted>")),
        "the model's echo is shown without the key"
    );
    let logs = String::from_utf8_lossy(&logs.lock().expect("logs")).to_string();
    assert!(logs.contains("lead quitting"), "the logs were captured");
    assert!(!logs.contains(KEY), "the key shows in the logs");
}

#[test]
fn lead_model_without_any_configuration_is_one_line_and_no_session() {
    let home = tempfile::tempdir().expect("temp home");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_teamlead"))
        .arg("--home")
        .arg(home.path())
        .arg("--lead-model")
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path())
        .output()
        .expect("run teamlead");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--lead-model: no model configured: set ANTHROPIC_API_KEY"),
        "{stderr}"
    );
    assert!(!home.path().join("teams").exists(), "no team was made");
}

/// `teamlead --engine llm`: the lead's in-process teammates are llm coding agents. One answers
/// its prompt through the local server, and its usage shows in the team snapshot the teams
/// dialog and the footer render.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_teammates_of_the_lead_report_their_usage() {
    let server = ScriptServer::start(vec![Reply::Sse(anthropic::text("Hello lead, ready."))]).await;
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());
    let mut opts = LeadOptions::new(home.clone(), cwd.path())
        .with_team("thinkers")
        .with_quit_timeout(Duration::from_secs(2));
    opts.teammate_llm = Some(config(&server));
    let (handle, events) = Lead::start(opts).expect("lead starts");
    let team = handle.team.clone();
    let mut s = Session {
        home_dir,
        cwd,
        home,
        team,
        handle,
        events,
        seen: Vec::new(),
    };
    s.submit("/spawn thinker \"say hello\"").await;
    let team = s
        .wait_team("the teammate's usage", |t| {
            t.iter()
                .any(|m| m.name == "thinker" && m.usage.as_ref().is_some_and(|u| u.turns >= 1))
        })
        .await;
    let usage = team[0].usage.clone().expect("usage");
    assert!(usage.total_tokens() > 0, "{usage:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "one model turn for the prompt");
    assert!(messages_of(&requests[0]).contains("say hello"));
    s.send(LeadCommand::Quit).await;
    s.wait_for("Exited", |e| *e == LeadEvent::Exited).await;
}
