//! What a page may do: answer a permission request or a plan, message a teammate, and (when
//! `web-allow` says so) steer or interrupt one. An answer names the request and the digest of
//! what the page showed ([`super::view`]); one that no longer matches (answered, changed,
//! gone) is refused with 409 and the request as it is now, so a stale page never answers
//! wrongly and nothing is answered twice. Each action is sent to the lead with an audit line
//! for its transcript (`… answered from the web (10.0.0.7)`) and a barrier, and the page is
//! told once the lead has carried it out.

// A refusal is the HTTP response itself, built once per request and returned at once.
#![allow(clippy::result_large_err)]

use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::routes::{App, error, json_body, writable};
use super::view;
use crate::lead::approval_text::always_updates;
use crate::lead::commands::{Input, SlashCommand, parse_input};
use crate::lead::contract::{LeadCommand, PermissionDecision, PlanDecision, ViewTarget};
use crate::protocol::display::visible_line;
use crate::server::wire::ClientMsg;

/// How long the page waits for the lead to carry an action out.
pub const CARRIED_OUT: Duration = Duration::from_secs(15);

/// Who acted, for the audit line: `(phone, 10.0.0.7)`.
fn who(headers: &HeaderMap, peer: &SocketAddr) -> String {
    let agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let phone = ["Mobile", "Android", "iPhone"]
        .iter()
        .any(|w| agent.contains(w));
    if phone {
        format!("(phone, {})", peer.ip())
    } else {
        format!("({})", peer.ip())
    }
}

fn str_of<'a>(body: &'a Value, key: &str) -> &'a str {
    body.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Sends the audit line and the commands, then waits for the lead to carry them out.
async fn carry_out(app: &App, note: String, commands: Vec<LeadCommand>) -> Response {
    let token = rand::random::<u64>();
    let done = app.shared.lock().barrier(token);
    let mut all = vec![LeadCommand::Note { text: note }];
    all.extend(commands);
    all.push(LeadCommand::Barrier { token });
    for command in all {
        if app.commands.send(ClientMsg::Command(command)).is_err() {
            return error(StatusCode::SERVICE_UNAVAILABLE, "the lead has finished");
        }
    }
    match tokio::time::timeout(CARRIED_OUT, done).await {
        Ok(Ok(false)) => axum::Json(json!({"ok": true})).into_response(),
        Ok(Ok(true)) => error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the lead refused it: its transcript says why",
        ),
        Ok(Err(_)) => error(StatusCode::SERVICE_UNAVAILABLE, "the lead has finished"),
        Err(_) => error(
            StatusCode::GATEWAY_TIMEOUT,
            "the lead has not carried it out yet: its transcript will say",
        ),
    }
}

fn conflict(why: &str, current: Value) -> Response {
    (
        StatusCode::CONFLICT,
        axum::Json(json!({"error": why, "current": current})),
    )
        .into_response()
}

fn not_allowed(app: &App, what: &str) -> Response {
    error(
        StatusCode::FORBIDDEN,
        format!(
            "the web view may not {what} (web-allow: {})",
            app.allow.words().join(", ")
        ),
    )
}

/// `POST /api/answer {key, digest, choice: "once" | "always:N" | "no", feedback}`.
pub async fn answer(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(r) = writable(&app, &headers) {
        return r;
    }
    if !app.allow.answer {
        return not_allowed(&app, "answer requests");
    }
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let Some(key) = body.get("key").and_then(Value::as_u64) else {
        return error(StatusCode::BAD_REQUEST, "an answer names its request's key");
    };
    let (decision, note) = {
        let mut s = app.shared.lock();
        let Some(p) = s.permissions.iter().find(|p| p.key == key).cloned() else {
            return conflict(
                "this request no longer waits: it was answered or went away",
                Value::Null,
            );
        };
        let shown = view::permission(&p);
        if s.answered.contains(&format!("p:{key}")) {
            return conflict("this request was answered already", shown);
        }
        if shown["digest"].as_str() != Some(str_of(&body, "digest")) {
            return conflict(
                "this request changed since the page showed it: read it again",
                shown,
            );
        }
        let choice = str_of(&body, "choice");
        let feedback = Some(str_of(&body, "feedback").trim().to_string()).filter(|f| !f.is_empty());
        let (decision, said) = match choice {
            "once" => (PermissionDecision::AllowOnce, "allowed once".to_string()),
            "no" => (
                PermissionDecision::Deny {
                    feedback: feedback.clone(),
                },
                match &feedback {
                    Some(f) => format!("denied ({f})"),
                    None => "denied".to_string(),
                },
            ),
            other => {
                let rule = other
                    .strip_prefix("always:")
                    .and_then(|n| n.parse::<usize>().ok())
                    .and_then(|n| always_updates(&p).into_iter().nth(n));
                let Some(rule) = rule else {
                    return error(StatusCode::BAD_REQUEST, "no such choice for this request");
                };
                let what = crate::lead::approval_text::describe(&rule, &p.worker);
                (
                    PermissionDecision::AllowAlways(vec![rule]),
                    format!("allowed, and {what}"),
                )
            }
        };
        s.answered.insert(format!("p:{key}"));
        let note = format!(
            "@{}'s {} request #{key} {said}: answered from the web {}.",
            visible_line(&p.worker),
            visible_line(&p.tool_name),
            who(&headers, &peer)
        );
        (decision, note)
    };
    carry_out(
        &app,
        note,
        vec![LeadCommand::AnswerPermission { key, decision }],
    )
    .await
}

/// `POST /api/plan {request_id, digest, choice: "approve" | "reject", mode, feedback}`.
pub async fn plan(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(r) = writable(&app, &headers) {
        return r;
    }
    if !app.allow.answer {
        return not_allowed(&app, "answer requests");
    }
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let id = str_of(&body, "request_id").to_string();
    let (request_id, decision, note) = {
        let mut s = app.shared.lock();
        let Some(p) = s
            .plans
            .iter()
            .find(|p| view::plan(p)["request_id"].as_str() == Some(id.as_str()))
            .cloned()
        else {
            return conflict(
                "this plan no longer waits: it was answered or went away",
                Value::Null,
            );
        };
        let shown = view::plan(&p);
        if s.answered.contains(&format!("plan:{}", p.request_id)) {
            return conflict("this plan was answered already", shown);
        }
        if shown["digest"].as_str() != Some(str_of(&body, "digest")) {
            return conflict(
                "this plan changed since the page showed it: read it again",
                shown,
            );
        }
        let (decision, said) = match str_of(&body, "choice") {
            "approve" => {
                let mode = view::APPROVE_MODES
                    .iter()
                    .find(|m| m.to_string() == str_of(&body, "mode"))
                    .copied();
                let Some(mode) = mode else {
                    return error(
                        StatusCode::BAD_REQUEST,
                        "approve names one of the modes offered",
                    );
                };
                (PlanDecision::Approve { mode }, format!("approved ({mode})"))
            }
            "reject" => {
                let feedback = str_of(&body, "feedback").trim().to_string();
                if feedback.is_empty() {
                    return error(StatusCode::BAD_REQUEST, "a rejected plan needs a reason");
                }
                let said = format!("rejected ({feedback})");
                (PlanDecision::Reject { feedback }, said)
            }
            _ => return error(StatusCode::BAD_REQUEST, "choice is approve or reject"),
        };
        s.answered.insert(format!("plan:{}", p.request_id));
        let note = format!(
            "@{}'s plan {said}: answered from the web {}.",
            visible_line(&p.from),
            who(&headers, &peer)
        );
        (p.request_id, decision, note)
    };
    carry_out(
        &app,
        note,
        vec![LeadCommand::AnswerPlan {
            request_id,
            decision,
        }],
    )
    .await
}

/// The teammate a write names, if it is one (by its name as the page shows it).
fn teammate(app: &App, body: &Value) -> Result<String, Response> {
    let to = str_of(body, "to").trim_start_matches('@');
    let s = app.shared.lock();
    s.members
        .iter()
        .find(|m| visible_line(&m.name) == to)
        .map(|m| m.name.clone())
        .ok_or_else(|| error(StatusCode::BAD_REQUEST, "no such teammate"))
}

/// A composer line for `command @to text` that reads back as exactly that.
fn composer_line(command: &str, to: &str, text: &str) -> Result<String, Response> {
    let text = text.trim();
    if text.is_empty() {
        return Err(error(StatusCode::BAD_REQUEST, "the text is empty"));
    }
    let line = format!("/{command} @{to} {text}");
    let reads = match parse_input(&line) {
        Ok(Input::Slash(SlashCommand::Msg { to: t, text: x }))
        | Ok(Input::Slash(SlashCommand::Steer { to: t, text: x })) => t == to && x == text,
        _ => false,
    };
    if reads {
        Ok(line)
    } else {
        Err(error(
            StatusCode::BAD_REQUEST,
            "this text cannot be sent as written (it reads as something else)",
        ))
    }
}

async fn composer_action(
    app: App,
    peer: SocketAddr,
    headers: HeaderMap,
    body: Bytes,
    command: &'static str,
) -> Response {
    if let Err(r) = writable(&app, &headers) {
        return r;
    }
    let allowed = match command {
        "msg" => app.allow.message,
        _ => app.allow.steer,
    };
    if !allowed {
        return not_allowed(&app, if command == "msg" { "message" } else { "steer" });
    }
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let to = match teammate(&app, &body) {
        Ok(to) => to,
        Err(r) => return r,
    };
    let line = match composer_line(command, &to, str_of(&body, "text")) {
        Ok(line) => line,
        Err(r) => return r,
    };
    let what = if command == "msg" {
        "message to"
    } else {
        "steer of"
    };
    let note = format!(
        "{what} @{} sent from the web {}.",
        visible_line(&to),
        who(&headers, &peer)
    );
    carry_out(
        &app,
        note,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: line,
        }],
    )
    .await
}

/// `POST /api/message {to, text}`.
pub async fn message(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    composer_action(app, peer, headers, body, "msg").await
}

/// `POST /api/steer {to, text}` (with `web-allow` steer).
pub async fn steer(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    composer_action(app, peer, headers, body, "steer").await
}

/// `POST /api/interrupt {to}` (with `web-allow` interrupt).
pub async fn interrupt(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(r) = writable(&app, &headers) {
        return r;
    }
    if !app.allow.interrupt {
        return not_allowed(&app, "interrupt");
    }
    let body = match json_body(&body) {
        Ok(b) => b,
        Err(r) => return r,
    };
    let to = match teammate(&app, &body) {
        Ok(to) => to,
        Err(r) => return r,
    };
    let note = format!(
        "@{} interrupted from the web {}.",
        visible_line(&to),
        who(&headers, &peer)
    );
    carry_out(
        &app,
        note,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: format!("/interrupt {to}"),
        }],
    )
    .await
}
