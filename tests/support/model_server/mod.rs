//! A scripted model server for the Claude Code conformance suite: speaks the Anthropic Messages
//! API on loopback (`POST /v1/messages`, streaming SSE or one JSON message), records every
//! request, and answers from a per-test script keyed on what the last user turn contains. An
//! action is written once and rendered in the tool schema of the client that asked (read from
//! the request's `tools`): `SendMessage` is flat and `type`-discriminated in 2.1.45 and
//! `{to, message, summary}` in newer releases; `ExitPlanMode` carries the plan only in newer
//! ones. Requests without tools (titles, summaries) and turns no rule matches get plain text.
//! Blocking I/O on plain threads, so the synchronous tests need no runtime.
//!
//! Every answer waits [`ModelServer::latency`] before its first byte (default
//! [`DEFAULT_LATENCY`], `TEAMLEAD_CC_MODEL_LATENCY_MS` overrides it): a real model's time to
//! first token is rarely under a second, and a client's work at the start of a turn runs in
//! that time. An instant answer meets states no real session reaches — Claude Code 2.1.330's
//! turn-start `isActive` write (in place: write, then truncate) still unfinished when the tool
//! call's permission request reads the team file, which fails to parse ("mailbox write
//! failed"; docs/PROTOCOL.md §4).

#![allow(dead_code)]

use crate::llm_common::streams;
mod wire;

use std::collections::HashMap;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

pub use wire::Request;

/// What the model does.
#[derive(Debug, Clone)]
pub enum Act {
    /// Plain text, end of turn.
    Text(String),
    /// SendMessage to the lead.
    SendToLead { summary: String, message: String },
    /// Bash with this command.
    Bash {
        command: String,
        description: String,
    },
    /// Write a file.
    Write { path: String, content: String },
    /// Edit a file (Claude Code wants it read first: use `Read` before it in a sequence).
    Edit {
        path: String,
        old: String,
        new: String,
    },
    /// Read a file.
    Read { path: String },
    /// ExitPlanMode with this plan (2.1.45 takes the plan from its plan file: write it first).
    ExitPlanMode { plan: String },
    /// Answers the `shutdown_request` of the last user turn with approve.
    ApproveShutdown,
    /// Any tool, input as given.
    Tool { name: String, input: Value },
    /// A lead creates the team `team` (2.1.45's `TeamCreate`); skipped, with the next step
    /// taken instead, by a client without that tool (newer leads have one implicit team).
    CreateTeam { team: String },
    /// A lead starts the teammate `name` with `prompt`: 2.1.45's `Task` with `name` and
    /// `team_name`, newer clients' `Agent` with `name`.
    SpawnTeammate {
        team: String,
        name: String,
        prompt: String,
    },
    /// The account's usage limit is reached: this request and every one after it until the
    /// reset, `reset_in_s` seconds from now (a reset in the past when negative: only this
    /// request is refused), is refused the way the service refuses a subscriber (see
    /// [`limit_response`]).
    Limit { reset_in_s: i64 },
}

/// The answer of the service to a request over a claude.ai subscriber's usage limit: HTTP 429
/// with the unified rate-limit headers the clients read (`anthropic-ratelimit-unified-status:
/// rejected`, `…-reset` in epoch seconds, `…-representative-claim`, the limit's kind) and a
/// `rate_limit_error` body. Claude Code turns it into its transcript's limit message
/// (`You've hit your session limit · resets 4:05pm (UTC)`) only when it runs on an OAuth token
/// (`CLAUDE_CODE_OAUTH_TOKEN`); on an API key it retries it as a plain 429.
pub fn limit_response(reset_epoch_s: u64) -> (Vec<(String, String)>, String) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let headers = [
        ("anthropic-ratelimit-unified-status", "rejected".to_string()),
        (
            "anthropic-ratelimit-unified-reset",
            reset_epoch_s.to_string(),
        ),
        (
            "anthropic-ratelimit-unified-representative-claim",
            "five_hour".to_string(),
        ),
        (
            "anthropic-ratelimit-unified-5h-status",
            "rejected".to_string(),
        ),
        (
            "anthropic-ratelimit-unified-5h-reset",
            reset_epoch_s.to_string(),
        ),
        (
            "anthropic-ratelimit-unified-5h-utilization",
            "1.0".to_string(),
        ),
        (
            "anthropic-ratelimit-unified-fallback",
            "unavailable".to_string(),
        ),
        (
            "anthropic-ratelimit-unified-overage-status",
            "rejected".to_string(),
        ),
        (
            "anthropic-ratelimit-unified-overage-disabled-reason",
            "org_level_disabled".to_string(),
        ),
        (
            "retry-after",
            reset_epoch_s.saturating_sub(now).max(1).to_string(),
        ),
        ("x-should-retry", "false".to_string()),
        ("request-id", "req_011CLIMITconformance".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let body = json!({"type": "error", "error": {"type": "rate_limit_error",
        "message": "This request would exceed your account's rate limit. Please try again later."},
        "request_id": "req_011CLIMITconformance"});
    (headers, body.to_string())
}

/// Seconds since the epoch.
fn epoch_s() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs()
}

/// The default time to first byte of every answer (see the module documentation).
pub const DEFAULT_LATENCY: Duration = Duration::from_millis(800);

/// The answers' time to first byte: `TEAMLEAD_CC_MODEL_LATENCY_MS` when set, else
/// [`DEFAULT_LATENCY`].
fn configured_latency() -> Duration {
    std::env::var("TEAMLEAD_CC_MODEL_LATENCY_MS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_LATENCY)
}

/// One rule: when the last user turn contains `needle`, do `steps` (one per model turn: each
/// next step answers the tool result of the previous one), at most `times` times.
#[derive(Debug, Clone)]
pub struct Rule {
    pub needle: String,
    pub steps: Vec<Act>,
    pub times: usize,
}

impl Rule {
    pub fn on(needle: &str, act: Act) -> Rule {
        Rule {
            needle: needle.to_string(),
            steps: vec![act],
            times: usize::MAX,
        }
    }

    pub fn seq(needle: &str, steps: Vec<Act>) -> Rule {
        Rule {
            needle: needle.to_string(),
            steps,
            times: usize::MAX,
        }
    }

    pub fn once(mut self) -> Rule {
        self.times = 1;
        self
    }
}

#[derive(Default)]
struct State {
    rules: Mutex<Vec<Rule>>,
    /// Remaining steps, keyed by the id of the tool call whose result they answer.
    pending: Mutex<HashMap<String, Vec<Act>>>,
    requests: Mutex<Vec<Request>>,
    next_id: AtomicUsize,
    stop: AtomicBool,
    /// The plan of the last ExitPlanMode, for a client that asks for its plan file first.
    last_plan: Mutex<Option<String>>,
    /// Time to first byte of every answer.
    latency: Mutex<Duration>,
    /// Until when (epoch seconds) the account's limit refuses every request.
    limited_until: Mutex<Option<u64>>,
    /// The requests refused at the limit (indices into `requests`).
    refused: Mutex<Vec<usize>>,
    /// When each request came (epoch ms), in the order of `requests`.
    times: Mutex<Vec<u64>>,
}

/// The server; stops accepting when dropped.
pub struct ModelServer {
    pub port: u16,
    state: Arc<State>,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

impl ModelServer {
    pub fn start(rules: Vec<Rule>) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the model server");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(State::default());
        *state.rules.lock().unwrap() = rules;
        *state.latency.lock().unwrap() = configured_latency();
        let s = state.clone();
        std::thread::spawn(move || {
            for socket in listener.incoming() {
                if s.stop.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(socket) = socket else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(socket, &s);
                });
            }
        });
        ModelServer { port, state }
    }

    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Adds a rule (checked after the existing ones).
    pub fn add(&self, rule: Rule) {
        self.state.rules.lock().unwrap().push(rule);
    }

    /// The time every answer waits before its first byte.
    pub fn latency(&self) -> Duration {
        *self.state.latency.lock().unwrap()
    }

    /// Sets the time every later answer waits before its first byte.
    pub fn set_latency(&self, latency: Duration) {
        *self.state.latency.lock().unwrap() = latency;
    }

    pub fn requests(&self) -> Vec<Request> {
        self.state.requests.lock().unwrap().clone()
    }

    /// Until when (epoch seconds) the account's usage limit refuses every request, if it was
    /// reached.
    pub fn limited_until(&self) -> Option<u64> {
        *self.state.limited_until.lock().unwrap()
    }

    /// Reaches the account's usage limit now: every request until `reset_epoch_s` is refused.
    pub fn limit_until(&self, reset_epoch_s: u64) {
        *self.state.limited_until.lock().unwrap() = Some(reset_epoch_s);
    }

    /// When each of [`ModelServer::requests`] came (epoch ms).
    pub fn request_times(&self) -> Vec<u64> {
        self.state.times.lock().unwrap().clone()
    }

    /// The indices (into [`ModelServer::requests`]) of the requests refused at the limit.
    pub fn refused(&self) -> Vec<usize> {
        self.state.refused.lock().unwrap().clone()
    }

    /// How many model turns began with one of `needles` in the last user turn (requests with
    /// tools only, so a client's side requests do not count).
    pub fn turns_on(&self, needles: &[&str]) -> usize {
        self.requests()
            .iter()
            .filter(|r| !r.tools().is_empty())
            .filter(|r| {
                let last = r.last_user_text();
                needles.iter().any(|n| last.contains(n))
            })
            .count()
    }

    /// Did any request carry `needle` anywhere in its messages?
    pub fn saw(&self, needle: &str) -> bool {
        self.requests()
            .iter()
            .any(|r| r.messages_text().contains(needle))
    }

    /// The recorded requests in one line each, for failure messages.
    pub fn summary(&self) -> String {
        self.requests()
            .iter()
            .map(|r| {
                let mut last = r.last_user_text();
                if last.len() > 300 {
                    let mut cut = 300;
                    while !last.is_char_boundary(cut) {
                        cut += 1;
                    }
                    last.truncate(cut);
                }
                format!("[{} tools] {}", r.tools().len(), last.replace('\n', " "))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn serve(mut socket: TcpStream, state: &State) -> std::io::Result<()> {
    socket.set_read_timeout(Some(Duration::from_secs(30)))?;
    // One request per connection is enough; keep-alive clients reconnect after `close`.
    let Some(request) = wire::read_request(&mut socket)? else {
        return Ok(());
    };
    if !request.path.starts_with("/v1/messages") || request.path.contains("count_tokens") {
        let body =
            json!({"type": "error", "error": {"type": "not_found_error", "message": "not here"}});
        return wire::write_json(&mut socket, 404, &body.to_string());
    }
    let index = {
        let mut requests = state.requests.lock().unwrap();
        requests.push(request.clone());
        state.times.lock().unwrap().push(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis() as u64,
        );
        requests.len() - 1
    };
    // An account over its limit is refused until the reset.
    let limited = state
        .limited_until
        .lock()
        .unwrap()
        .filter(|t| *t > epoch_s());
    if let Some(until) = limited {
        state.refused.lock().unwrap().push(index);
        let (headers, body) = limit_response(until);
        return wire::write_json_with(&mut socket, 429, &headers, &body);
    }
    let id = format!(
        "toolu_cc{:022}",
        state.next_id.fetch_add(1, Ordering::SeqCst) + 1
    );
    let act = decide(state, &request, &id);
    if let Act::Limit { reset_in_s } = act {
        let until = (epoch_s() as i64 + reset_in_s).max(1) as u64;
        if until > epoch_s() {
            *state.limited_until.lock().unwrap() = Some(until);
        }
        state.refused.lock().unwrap().push(index);
        let (headers, body) = limit_response(until);
        return wire::write_json_with(&mut socket, 429, &headers, &body);
    }
    let (text, call) = render(&act, &request);
    // The model "thinks" before its first token (see the module documentation).
    let latency = *state.latency.lock().unwrap();
    std::thread::sleep(latency);
    if request.body["stream"].as_bool().unwrap_or(false) {
        let calls: Vec<(&str, &str, Value)> = call
            .iter()
            .map(|(name, input)| (id.as_str(), name.as_str(), input.clone()))
            .collect();
        // Every answer needs its own message id: clients merge the blocks of messages that
        // share one.
        let events = streams::anthropic::message(text.as_deref(), &calls)
            .replace("msg_01XFDUDYJgAACzvnptvVoYEL", &format!("msg_{id}"));
        wire::write_sse(&mut socket, &events)
    } else {
        let body = wire::json_message(text, call, &id);
        wire::write_json(&mut socket, 200, &body.to_string())
    }
}

/// The next act for this request: a pending step answering one of its tool results (unless the
/// user interrupted that call), else the first rule matching its last user turn, else plain
/// text.
fn decide(state: &State, request: &Request, id: &str) -> Act {
    if request.tools().is_empty() {
        return Act::Text("Conformance side request.".into());
    }
    let mut pending = state.pending.lock().unwrap();
    // A chain the user interrupted (Esc) ends there, as a model would leave it: what follows
    // answers the words of the turn (a steer), not the stopped tool call.
    let interrupted = request
        .last_user_text()
        .contains("[Request interrupted by user");
    for answered in request.last_tool_result_ids() {
        if interrupted {
            pending.remove(&answered);
            continue;
        }
        if let Some(mut steps) = pending.remove(&answered) {
            let act = steps.remove(0);
            // The rest answers this act's own tool call (sequences of three steps or more).
            if !steps.is_empty() {
                pending.insert(id.to_string(), steps);
            }
            return act;
        }
    }
    let last = request.last_user_text();
    // "No plan file found at <path>": write the plan there, then call ExitPlanMode again.
    if let Some(at) = last.find("No plan file found at ")
        && let Some(plan) = state.last_plan.lock().unwrap().clone()
    {
        let rest = &last[at + "No plan file found at ".len()..];
        if let Some(end) = rest.find(".md") {
            pending.insert(
                id.to_string(),
                vec![Act::ExitPlanMode { plan: plan.clone() }],
            );
            return Act::Write {
                path: rest[..end + 3].to_string(),
                content: plan,
            };
        }
    }
    let mut rules = state.rules.lock().unwrap();
    if let Some(rule) = rules
        .iter_mut()
        .find(|r| r.times > 0 && last.contains(&r.needle))
    {
        rule.times -= 1;
        let mut steps = rule.steps.clone();
        let mut act = steps.remove(0);
        if matches!(act, Act::CreateTeam { .. })
            && !request.tool_names().iter().any(|n| n == "TeamCreate")
            && !steps.is_empty()
        {
            act = steps.remove(0);
        }
        // Clients read the plan from the plan file their plan-mode prompt names (2.1.45's
        // ExitPlanMode takes no plan at all): write it there first.
        if let Act::ExitPlanMode { plan } = &act {
            *state.last_plan.lock().unwrap() = Some(plan.clone());
        }
        if let Act::ExitPlanMode { plan } = &act
            && let Some(path) = request.plan_file_path()
        {
            steps.insert(0, act.clone());
            act = Act::Write {
                path,
                content: plan.clone(),
            };
        }
        if !steps.is_empty() {
            pending.insert(id.to_string(), steps);
        }
        return act;
    }
    Act::Text("Done.".into())
}

/// The act as (text, tool call) in the asking client's schema.
fn render(act: &Act, request: &Request) -> (Option<String>, Option<(String, Value)>) {
    let call = |name: &str, input: Value| (None, Some((name.to_string(), input)));
    let flat_send = request.send_message_is_flat();
    match act {
        Act::Text(t) => (Some(t.clone()), None),
        Act::SendToLead { summary, message } if flat_send => call(
            "SendMessage",
            json!({"type": "message", "recipient": "team-lead", "content": message, "summary": summary}),
        ),
        Act::SendToLead { summary, message } => call(
            "SendMessage",
            json!({"to": "team-lead", "message": message, "summary": summary}),
        ),
        Act::Bash {
            command,
            description,
        } => call(
            "Bash",
            json!({"command": command, "description": description}),
        ),
        Act::Write { path, content } => {
            call("Write", json!({"file_path": path, "content": content}))
        }
        Act::Edit { path, old, new } => call(
            "Edit",
            json!({"file_path": path, "old_string": old, "new_string": new}),
        ),
        Act::Read { path } => call("Read", json!({"file_path": path})),
        Act::ExitPlanMode { plan } => {
            if request.tool_has_property("ExitPlanMode", "plan") {
                call("ExitPlanMode", json!({"plan": plan}))
            } else {
                call("ExitPlanMode", json!({}))
            }
        }
        Act::ApproveShutdown => {
            let request_id = request.shutdown_request_id().unwrap_or_default();
            if flat_send {
                call(
                    "SendMessage",
                    json!({"type": "shutdown_response", "request_id": request_id, "approve": true}),
                )
            } else {
                call(
                    "SendMessage",
                    json!({"to": "team-lead", "message": {"type": "shutdown_response", "request_id": request_id, "approve": true}}),
                )
            }
        }
        Act::Tool { name, input } => call(name, input.clone()),
        Act::Limit { .. } => (Some("Limit reached.".into()), None),
        Act::CreateTeam { team } => call(
            "TeamCreate",
            json!({"team_name": team, "description": "conformance team"}),
        ),
        Act::SpawnTeammate { team, name, prompt } => {
            let description = format!("start {name}");
            if request.tool_has_property("Task", "team_name") {
                call(
                    "Task",
                    json!({"description": description, "prompt": prompt,
                        "subagent_type": "general-purpose", "name": name, "team_name": team}),
                )
            } else {
                call(
                    "Agent",
                    json!({"description": description, "prompt": prompt, "name": name}),
                )
            }
        }
    }
}
