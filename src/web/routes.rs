//! The web view's routes: the page and its two assets (embedded in the binary), the login
//! link, and the API under `/api/` (a session cookie on every call, the CSRF header too on
//! every write). Every response carries a strict Content-Security-Policy (scripts and styles
//! from this origin only, nothing inline, no frames) and keeps out of caches and referrers.

// A refusal is the HTTP response itself, built once per request and returned at once.
#![allow(clippy::result_large_err)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Allow;
use super::auth::{self, Auth, LoginRefused};
use super::state::{Resume, Shared};
use crate::server::wire::ClientMsg;

const INDEX: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

/// The policy every response carries.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    pub shared: Shared,
    pub auth: Arc<Auth>,
    pub allow: Allow,
    pub commands: mpsc::UnboundedSender<ClientMsg>,
}

pub fn router(app: App) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/app.js", get(script))
        .route("/app.css", get(style))
        .route("/login", get(login))
        .route("/api/session", get(session))
        .route("/api/state", get(state))
        .route("/api/events", get(events))
        .route("/api/answer", post(super::actions::answer))
        .route("/api/plan", post(super::actions::plan))
        .route("/api/message", post(super::actions::message))
        .route("/api/steer", post(super::actions::steer))
        .route("/api/interrupt", post(super::actions::interrupt))
        .layer(axum::middleware::map_response(secure_headers))
        .with_state(app)
}

async fn secure_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A JSON error with its status.
pub fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({"error": message.into()}))).into_response()
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX)
}

async fn script() -> Response {
    asset("text/javascript; charset=utf-8", SCRIPT)
}

async fn style() -> Response {
    asset("text/css; charset=utf-8", STYLE)
}

#[derive(serde::Deserialize)]
struct LoginQuery {
    #[serde(default)]
    token: String,
}

/// The login link: the token for a session cookie, then on to the page (a page of this origin
/// that moves on, so the cookie goes with the next request even when the link was opened
/// from another site).
async fn login(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Query(q): Query<LoginQuery>,
) -> Response {
    match app.auth.login(peer.ip(), &q.token) {
        Ok(granted) => {
            tracing::info!("web view: a session started from {}", peer.ip());
            let page = "<!doctype html><meta charset=utf-8><meta http-equiv=refresh content=\"0;url=/\"><title>teamlead</title><p><a href=\"/\">Open the team</a>";
            (
                [
                    (header::SET_COOKIE, auth::set_cookie(&granted.session)),
                    (header::CONTENT_TYPE, "text/html; charset=utf-8".to_string()),
                ],
                page,
            )
                .into_response()
        }
        Err(LoginRefused::TooMany) => {
            tracing::warn!("web view: too many logins from {}", peer.ip());
            error(
                StatusCode::TOO_MANY_REQUESTS,
                "too many login attempts: wait a minute",
            )
        }
        Err(LoginRefused::Wrong) => {
            tracing::info!(
                "web view: a login with a wrong or used link from {}",
                peer.ip()
            );
            error(
                StatusCode::FORBIDDEN,
                "this login link is wrong or was used already: teamlead prints a new one when the web view starts",
            )
        }
    }
}

/// The session behind a request: its cookie and CSRF token, or the refusal (401).
pub fn authorized(app: &App, headers: &HeaderMap) -> Result<(String, String), Response> {
    let cookie = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find_map(auth::cookie_value)
        .map(str::to_string);
    let Some(cookie) = cookie else {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "not logged in: open the login link teamlead printed",
        ));
    };
    match app.auth.session(&cookie) {
        Some(csrf) => Ok((cookie, csrf)),
        None => Err(error(
            StatusCode::UNAUTHORIZED,
            "this session ended: open a new login link",
        )),
    }
}

/// A write: a session (401 without), and the session's CSRF header and no other origin (403).
pub fn writable(app: &App, headers: &HeaderMap) -> Result<(), Response> {
    let (cookie, _) = authorized(app, headers)?;
    let header = headers
        .get(auth::CSRF_HEADER)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !app.auth.write_allowed(&cookie, header) {
        return Err(error(
            StatusCode::FORBIDDEN,
            "a write needs the page's session header",
        ));
    }
    if let (Some(origin), Some(host)) = (headers.get(header::ORIGIN), headers.get(header::HOST))
        && origin.as_bytes() != format!("http://{}", host.to_str().unwrap_or("")).as_bytes()
    {
        return Err(error(StatusCode::FORBIDDEN, "a write from another origin"));
    }
    Ok(())
}

/// The body of a write as JSON (400 when it is not).
pub fn json_body(body: &Bytes) -> Result<Value, Response> {
    serde_json::from_slice(body).map_err(|e| error(StatusCode::BAD_REQUEST, e.to_string()))
}

async fn session(State(app): State<App>, headers: HeaderMap) -> Response {
    let (_, csrf) = match authorized(&app, &headers) {
        Ok(s) => s,
        Err(r) => return r,
    };
    let team = app.shared.lock().team_name.clone();
    axum::Json(json!({
        "csrf": csrf,
        "team": team,
        "allow": app.allow.words(),
        "version": env!("CARGO_PKG_VERSION"),
    }))
    .into_response()
}

async fn state(State(app): State<App>, headers: HeaderMap) -> Response {
    if let Err(r) = authorized(&app, &headers) {
        return r;
    }
    let s = app.shared.lock();
    let mut snapshot = s.snapshot();
    snapshot["id"] = Value::String(format!("{}-{}", s.epoch, s.seq()));
    axum::Json(snapshot).into_response()
}

#[derive(serde::Deserialize)]
struct EventsQuery {
    /// The last event seen, for clients that cannot set `Last-Event-ID`.
    last: Option<String>,
}

/// The page's events: what it missed since `Last-Event-ID` (or a snapshot), then each one as it
/// comes. A page that falls behind is closed and comes back with its last number.
async fn events(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<EventsQuery>,
) -> Response {
    if let Err(r) = authorized(&app, &headers) {
        return r;
    }
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or(q.last);
    let (epoch, resume, live) = {
        let s = app.shared.lock();
        let (resume, live) = s.resume(last.as_deref());
        (s.epoch.clone(), resume, live)
    };
    let first = match resume {
        Resume::Missed(missed) => missed,
        Resume::Snapshot(snapshot) => vec![snapshot],
    };
    let event = move |(seq, data): (u64, Arc<str>)| -> Result<Event, Infallible> {
        Ok(Event::default().id(format!("{epoch}-{seq}")).data(&*data))
    };
    let event_live = event.clone();
    // A page that lagged behind the broadcast is closed: it comes back with its last number.
    let rest = futures::stream::unfold(live, |mut rx| async move {
        rx.recv().await.ok().map(|n| (n, rx))
    })
    .map(event_live);
    let stream = futures::stream::iter(first).map(event).chain(rest);
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}
