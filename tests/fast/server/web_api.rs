//! The web view's HTTP API without a browser: the real `teamlead::web` server on loopback,
//! attached to a stand-in for the hub (channels of the same contract: it keeps a permission
//! queue, answers barriers and records every command). No cookie → 401; a write without the
//! session's header (or from another origin) → 403; an answer whose digest does not match →
//! 409 with the current request; an answer goes to the lead once, with its audit line, and a
//! second one is refused; logins are one-time and limited; a page that comes back with its
//! last event's number gets what it missed; every hostile string is served escaped, under a
//! strict Content-Security-Policy, to a page that never parses markup.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PermissionSource, TeammateStatus, TeammateView,
    TranscriptItem,
};
use teamlead::protocol::PermissionMode;
use teamlead::server::wire::{ClientMsg, ServerMsg};
use teamlead::web::upstream::Upstream;
use teamlead::web::{self, Allow, WebOptions};
use tokio::sync::mpsc;

use crate::web_common::{Session, events, hostile_strings, request, split_url};

fn member(name: &str) -> TeammateView {
    TeammateView {
        name: name.into(),
        agent_id: format!("{name}@t"),
        color: Some("red".into()),
        status: TeammateStatus::WaitingForApproval,
        mode: PermissionMode::Default,
        backend: None,
        pane_id: String::new(),
        host: None,
        hidden: false,
        model: None,
        cwd: "/w".into(),
        worktree: None,
        prompt: None,
        plan_mode_required: false,
        current_task: Some(("1".into(), format!("task of {name}"))),
        owned_tasks: vec![],
        recent_messages: vec![],
        usage: None,
        mode_requested: None,
        rate_limited_until: None,
        parked: None,
        messages: vec![],
        unread_since: None,
        over_budget: None,
        budget_micros: None,
        costs_nothing: false,
    }
}

fn request_of(key: u64, worker: &str, command: &str) -> PendingPermission {
    PendingPermission {
        key,
        request_id: format!("req-{key}"),
        worker: worker.into(),
        color: None,
        tool_name: "Bash".into(),
        description: format!("run {command}"),
        input: json!({"command": command}),
        suggestions: vec![],
        source: PermissionSource::Inbox,
        in_part: None,
        host: None,
    }
}

/// A stand-in for the hub: it holds the queue, answers barriers, and records commands.
struct Lead {
    events: mpsc::Sender<ServerMsg>,
    commands: Arc<Mutex<Vec<LeadCommand>>>,
    rt: tokio::runtime::Runtime,
    login: String,
}

impl Lead {
    fn start(allow: Allow) -> Lead {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let (events_tx, events_rx) = mpsc::channel(1024);
        let (commands_tx, mut commands_rx) = mpsc::unbounded_channel::<ClientMsg>();
        let commands = Arc::new(Mutex::new(Vec::new()));
        let queue = Arc::new(Mutex::new(Vec::<PendingPermission>::new()));
        let (seen, back) = (commands.clone(), events_tx.clone());
        let q = queue.clone();
        rt.spawn(async move {
            while let Some(msg) = commands_rx.recv().await {
                let ClientMsg::Command(c) = msg else { continue };
                seen.lock().unwrap().push(c.clone());
                match c {
                    LeadCommand::Barrier { token } => {
                        let _ = back
                            .send(ServerMsg::Event(LeadEvent::Barrier {
                                token,
                                refused: false,
                            }))
                            .await;
                    }
                    LeadCommand::AnswerPermission { key, .. } => {
                        let now = {
                            let mut q = q.lock().unwrap();
                            q.retain(|p| p.key != key);
                            q.clone()
                        };
                        let _ = back
                            .send(ServerMsg::Event(LeadEvent::Permissions(now)))
                            .await;
                    }
                    _ => {}
                }
            }
        });
        let running = rt
            .block_on(web::start(
                Upstream {
                    events: events_rx,
                    commands: commands_tx,
                },
                WebOptions {
                    addr: "127.0.0.1:0".parse().unwrap(),
                    allow,
                },
            ))
            .unwrap();
        let lead = Lead {
            events: events_tx,
            commands,
            rt,
            login: running.login_url.clone(),
        };
        lead.send(LeadEvent::Started {
            team: "webteam".into(),
            backend: teamlead::protocol::BackendKind::InProcess,
            lead_mode: PermissionMode::Default,
        });
        lead
    }

    fn send(&self, event: LeadEvent) {
        let tx = self.events.clone();
        self.rt
            .block_on(async move { tx.send(ServerMsg::Event(event)).await })
            .unwrap();
    }

    fn host(&self) -> String {
        split_url(&self.login).0
    }

    fn commands(&self) -> Vec<LeadCommand> {
        self.commands.lock().unwrap().clone()
    }
}

/// Waits until the page's state satisfies `cond`.
fn state_until(
    s: &Session,
    what: &str,
    cond: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let st = s.state();
        if cond(&st) {
            return st;
        }
        assert!(std::time::Instant::now() < deadline, "{what}: {st:#}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn waiting(lead: &Lead, s: &Session, queue: Vec<PendingPermission>) -> serde_json::Value {
    let expected: Vec<_> = queue.iter().map(teamlead::web::view::permission).collect();
    lead.send(LeadEvent::Permissions(queue));
    let st = state_until(s, "the queue", |st| {
        st["requests"]["permissions"].as_array() == Some(&expected)
    });
    st["requests"]["permissions"].clone()
}

#[test]
fn web_without_a_session_is_401_and_a_write_without_its_header_is_403() {
    let lead = Lead::start(Allow::default());
    let host = lead.host();
    for path in ["/api/state", "/api/events", "/api/session"] {
        let r = request(&host, "GET", path, &[], "");
        assert_eq!(r.status, 401, "{path}: {r:?}");
    }
    let body = json!({"key": 1, "digest": "x", "choice": "once"}).to_string();
    let r = request(
        &host,
        "POST",
        "/api/answer",
        &[("Content-Type", "application/json")],
        &body,
    );
    assert_eq!(r.status, 401, "{r:?}");
    let r = request(
        &host,
        "GET",
        "/api/state",
        &[("Cookie", "teamlead_session=guessed")],
        "",
    );
    assert_eq!(r.status, 401, "a made-up session: {r:?}");

    let s = Session::login(&lead.login);
    let shown = waiting(&lead, &s, vec![request_of(1, "alpha", "cargo test")]);
    let body = json!({"key": 1, "digest": shown[0]["digest"], "choice": "once"}).to_string();
    // With the cookie (as a forged cross-site form would be, were SameSite not there) but
    // without the page's header, with a wrong one, or from another origin: refused.
    for headers in [
        vec![
            ("Cookie", s.cookie.as_str()),
            ("Content-Type", "application/json"),
        ],
        vec![
            ("Cookie", s.cookie.as_str()),
            ("x-teamlead-csrf", "0000"),
            ("Content-Type", "application/json"),
        ],
        vec![
            ("Cookie", s.cookie.as_str()),
            ("x-teamlead-csrf", s.csrf.as_str()),
            ("Origin", "http://evil.example"),
            ("Content-Type", "application/json"),
        ],
    ] {
        let r = request(&s.host, "POST", "/api/answer", &headers, &body);
        assert_eq!(r.status, 403, "{headers:?}: {r:?}");
    }
    assert!(
        !lead
            .commands()
            .iter()
            .any(|c| matches!(c, LeadCommand::AnswerPermission { .. })),
        "nothing reached the lead: {:?}",
        lead.commands()
    );
    // Steering is not allowed by default.
    lead.send(LeadEvent::Team(vec![member("alpha")]));
    state_until(&s, "the team", |st| st["members"][0]["name"] == "alpha");
    let r = s.post("/api/steer", &json!({"to": "alpha", "text": "stop"}));
    assert_eq!(r.status, 403, "{r:?}");
    assert!(r.body.contains("web-allow"), "{r:?}");
}

#[test]
fn web_an_answer_with_a_stale_digest_is_409_with_the_current_request_and_answers_once() {
    let lead = Lead::start(Allow::default());
    let s = Session::login(&lead.login);
    let before = waiting(&lead, &s, vec![request_of(7, "alpha", "ls")]);
    // The request changes under the page (same key, another command).
    let now = waiting(&lead, &s, vec![request_of(7, "alpha", "rm -rf ~")]);
    assert_ne!(before[0]["digest"], now[0]["digest"]);
    let r = s.post(
        "/api/answer",
        &json!({"key": 7, "digest": before[0]["digest"], "choice": "once"}),
    );
    assert_eq!(r.status, 409, "{r:?}");
    let current = &r.json()["current"];
    assert_eq!(current["digest"], now[0]["digest"], "{r:?}");
    assert_eq!(current["lines"][0]["text"], "rm -rf ~");
    assert!(lead.commands().is_empty(), "{:?}", lead.commands());

    // The answer that matches goes to the lead once, after its audit line.
    let r = s.post(
        "/api/answer",
        &json!({"key": 7, "digest": now[0]["digest"], "choice": "no", "feedback": "not that"}),
    );
    assert_eq!(r.status, 200, "{r:?}");
    let commands = lead.commands();
    let note = commands
        .iter()
        .find_map(|c| match c {
            LeadCommand::Note { text } => Some(text.clone()),
            _ => None,
        })
        .expect("an audit line");
    assert!(
        note.contains("request #7 denied (not that): answered from the web (127.0.0.1)"),
        "{note}"
    );
    let answers: Vec<_> = commands
        .iter()
        .filter(|c| matches!(c, LeadCommand::AnswerPermission { key: 7, .. }))
        .collect();
    assert_eq!(answers.len(), 1, "{commands:?}");
    // A second page that still shows it cannot answer it again.
    let r = s.post(
        "/api/answer",
        &json!({"key": 7, "digest": now[0]["digest"], "choice": "once"}),
    );
    assert_eq!(r.status, 409, "{r:?}");
    assert_eq!(
        lead.commands()
            .iter()
            .filter(|c| matches!(c, LeadCommand::AnswerPermission { .. }))
            .count(),
        1
    );
}

#[test]
fn web_login_links_work_once_and_attempts_are_limited() {
    let lead = Lead::start(Allow::default());
    let (host, path) = split_url(&lead.login);
    let _ = Session::login(&lead.login);
    let again = request(&host, "GET", &path, &[], "");
    assert_eq!(again.status, 403, "a used link: {again:?}");
    let mut statuses = Vec::new();
    for i in 0..12 {
        statuses.push(request(&host, "GET", &format!("/login?token={i:064}"), &[], "").status);
    }
    assert_eq!(statuses.last(), Some(&429), "{statuses:?}");
}

#[test]
fn web_a_page_that_comes_back_gets_what_it_missed_or_a_snapshot() {
    let lead = Lead::start(Allow::default());
    let s = Session::login(&lead.login);
    lead.send(LeadEvent::Transcript(TranscriptItem::System {
        text: "first".into(),
    }));
    let st = state_until(&s, "the first note", |st| {
        st["transcript"].as_array().is_some_and(|t| !t.is_empty())
    });
    let seen = st["id"].as_str().unwrap().to_string();
    lead.send(LeadEvent::Transcript(TranscriptItem::System {
        text: "missed".into(),
    }));
    state_until(&s, "the second note", |st| {
        st["transcript"].as_array().map(Vec::len) == Some(2)
    });
    let back = events(&s, Some(&seen), 1, Duration::from_secs(5));
    assert_eq!(back.len(), 1, "{back:?}");
    assert_eq!(back[0].1["type"], "transcript", "{back:?}");
    assert_eq!(back[0].1["item"]["text"], "missed");
    let (epoch, n) = seen.split_once('-').unwrap();
    assert_eq!(
        back[0].0,
        format!("{epoch}-{}", n.parse::<u64>().unwrap() + 1)
    );
    // Another server's number (a restart), or none: a snapshot.
    for last in [Some("0000000000000000-3"), None] {
        let fresh = events(&s, last, 1, Duration::from_secs(5));
        assert_eq!(fresh[0].1["type"], "snapshot", "{last:?}: {fresh:?}");
        assert_eq!(fresh[0].1["transcript"].as_array().map(Vec::len), Some(2));
    }
}

#[test]
fn web_every_hostile_string_is_served_escaped_to_a_page_that_never_parses_markup() {
    let lead = Lead::start(Allow::default());
    let s = Session::login(&lead.login);
    let hostile = hostile_strings();
    let members: Vec<_> = hostile.iter().take(20).map(|h| member(h)).collect();
    lead.send(LeadEvent::Team(members));
    let queue: Vec<_> = hostile
        .iter()
        .enumerate()
        .map(|(i, h)| request_of(i as u64 + 1, h, h))
        .collect();
    for h in &hostile {
        lead.send(LeadEvent::Transcript(TranscriptItem::Teammate {
            from: h.clone(),
            color: Some(h.clone()),
            summary: Some(h.clone()),
            text: h.clone(),
        }));
    }
    waiting(&lead, &s, queue);
    let r = s.get("/api/state");
    assert_eq!(r.status, 200);
    // No character a screen must never get raw, in any string served.
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    strings(&r.json(), &mut all);
    for text in &all {
        assert!(
            !text
                .chars()
                .any(|c| teamlead::protocol::display::is_unsafe(c) && c != '\n'),
            "a raw control character in {text:?}"
        );
    }
    let joined = all.join("\n");
    assert!(
        joined.contains("\\e]0;pwned-title\\x07"),
        "shown as escapes"
    );
    assert!(joined.contains("a\\u{202e}txt.exe"));
    assert!(
        joined.contains("<img src=x onerror=\"window.pwned=1\">"),
        "markup stays text"
    );
    let waiting_with_controls = r.json()["requests"]["permissions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| !p["warnings"].as_array().unwrap().is_empty())
        .count();
    assert!(
        waiting_with_controls >= 6,
        "the terminal's warning: {waiting_with_controls}"
    );

    // The page, its script and every API answer carry the policy; the script never parses
    // markup, so a string can only ever be text.
    for path in ["/", "/app.js", "/app.css", "/api/state", "/login?token=x"] {
        let r = s.get(path);
        assert_eq!(
            r.header("content-security-policy"),
            Some(teamlead::web::routes::CSP),
            "{path}"
        );
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{path}"
        );
    }
    assert!(teamlead::web::routes::CSP.contains("script-src 'self'"));
    assert!(!teamlead::web::routes::CSP.contains("unsafe"));
    let script = s.get("/app.js").body;
    for sink in [
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ] {
        assert!(!script.contains(sink), "app.js uses {sink}");
    }
    let page = s.get("/").body;
    assert!(!page.contains("<script>"), "no inline script");
    let handler = regex::Regex::new(r"\son[a-z]+\s*=").unwrap();
    assert!(!handler.is_match(&page), "no inline handler");
}
