//! The model endpoint, forwarded to a host (DESIGN.md "Hosts", issue 29 item 7): teammates on
//! another host reach the model through the lead, so no API key is ever copied there.
//!
//! On the lead's host a small HTTP relay ([`ModelProxy`]) listens on a Unix socket in
//! teamlead's private runtime directory (0700: only the user reaches it). Each target (the base
//! URL the lead uses and the header that carries its key) gets a random route token; a request
//! to `/<token>/<rest>` goes to `<base><rest>` with every credential header the caller sent
//! replaced by the lead's, and the answer is streamed back as it comes (server-sent events stay
//! events). A path without a known token is 404: the token is what a process on the host needs
//! to use the endpoint, and it names no key.
//!
//! On the host, OpenSSH's own remote forwarding over the host's ControlMaster
//! (`ssh -O forward -R 127.0.0.1:PORT:<socket>`, [`forward`]) opens a loopback port that leads
//! to the socket; a teammate there is started with its base URL set to
//! `http://127.0.0.1:PORT/<token>`. The port is asked for again before each use: the same
//! master answers with the forward it has; a new master (the old one died) is asked for the same
//! port first, so teammates already running keep their address.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{Connection, HostError};

/// The largest request body relayed (a long conversation with images is a few MiB).
const MAX_BODY: usize = 64 * 1024 * 1024;

/// Headers never passed on: hop-by-hop ones, and every credential the caller sent (the
/// lead's own replace them).
const DROPPED: [&str; 9] = [
    "host",
    "connection",
    "keep-alive",
    "transfer-encoding",
    "content-length",
    "upgrade",
    "proxy-authorization",
    "authorization",
    "x-api-key",
];

/// Where forwarded requests go and the credential the lead adds.
#[derive(Clone, PartialEq, Eq)]
pub struct ModelTarget {
    /// Without a trailing slash.
    pub base_url: String,
    /// `(header, value)`: `x-api-key: …` or `authorization: Bearer …`; none when the base
    /// URL needs no key (a local server, or a key in its path).
    pub auth: Vec<(String, String)>,
}

/// The model of teamlead's own `llm` teammates as the lead resolved it, for those on a host:
/// what they are told (provider, model, the variable their base URL goes in) and where their
/// forwarded requests go. The lead layer makes it from its model config.
#[derive(Clone, Debug)]
pub struct ForwardedModel {
    /// `TEAMLEAD_PROVIDER` of the teammate (`anthropic`, `openai`).
    pub provider: String,
    /// The variable the forwarded base URL goes in (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`).
    pub base_url_var: &'static str,
    /// `TEAMLEAD_MODEL` of the teammate.
    pub model: String,
    pub target: ModelTarget,
}

impl std::fmt::Debug for ModelTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<&str> = self.auth.iter().map(|(h, _)| h.as_str()).collect();
        write!(f, "ModelTarget({} with {headers:?})", self.base_url)
    }
}

impl ModelTarget {
    /// The Anthropic endpoint of the lead's environment, as a Claude Code teammate of the
    /// lead's host would use it (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
    /// `ANTHROPIC_AUTH_TOKEN`).
    pub fn for_claude(lookup: &dyn Fn(&str) -> Option<String>) -> ModelTarget {
        let set = |k: &str| lookup(k).filter(|v| !v.trim().is_empty());
        let mut auth = Vec::new();
        if let Some(key) = set("ANTHROPIC_API_KEY") {
            auth.push(("x-api-key".to_string(), key));
        }
        if let Some(token) = set("ANTHROPIC_AUTH_TOKEN") {
            auth.push(("authorization".to_string(), format!("Bearer {token}")));
        }
        ModelTarget {
            base_url: set("ANTHROPIC_BASE_URL")
                .unwrap_or_else(|| "https://api.anthropic.com".to_string())
                .trim_end_matches('/')
                .to_string(),
            auth,
        }
    }

    /// The URL a request for `rest` (`/v1/messages`) goes to: an OpenAI-style base that ends
    /// in `/v1` takes the rest without its own `/v1`.
    fn url(&self, rest: &str, query: Option<&str>) -> String {
        let rest = match rest.strip_prefix("/v1/") {
            Some(tail) if self.base_url.ends_with("/v1") => format!("/{tail}"),
            _ => rest.to_string(),
        };
        match query {
            Some(q) => format!("{}{rest}?{q}", self.base_url),
            None => format!("{}{rest}", self.base_url),
        }
    }
}

/// What the relay's handler shares.
struct Shared {
    routes: Mutex<HashMap<String, ModelTarget>>,
    /// For targets on this machine (never through a proxy).
    direct: reqwest::Client,
    /// For the others (the environment's proxy, if any).
    proxied: reqwest::Client,
}

/// rustls' process-wide provider, before the first client is built (once; a provider
/// installed first by another part is as good).
fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The lead's end of the forwarded endpoint: an HTTP relay on a Unix socket, on a thread of
/// its own (never the controller's loop). Stopped, and its socket removed, on drop.
pub struct ModelProxy {
    pub socket: PathBuf,
    shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ModelProxy {
    /// Listens on `socket` (replacing a stale file there).
    pub fn start(socket: &Path) -> std::io::Result<ModelProxy> {
        install_crypto_provider();
        let build = |direct: bool| {
            let builder = reqwest::Client::builder();
            let builder = if direct { builder.no_proxy() } else { builder };
            builder.build().map_err(std::io::Error::other)
        };
        let shared = Arc::new(Shared {
            routes: Mutex::new(HashMap::new()),
            direct: build(true)?,
            proxied: build(false)?,
        });
        let _ = std::fs::remove_file(socket);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let listener = {
            let _entered = runtime.enter();
            tokio::net::UnixListener::bind(socket)?
        };
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = axum::Router::new()
            .fallback(relay)
            .with_state(shared.clone());
        let thread = std::thread::Builder::new()
            .name("model-forward".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let served = axum::serve(listener, app).with_graceful_shutdown(async {
                        let _ = stopped.await;
                    });
                    if let Err(e) = served.await {
                        tracing::warn!("the forwarded model endpoint stopped: {e}");
                    }
                });
            })?;
        Ok(ModelProxy {
            socket: socket.to_path_buf(),
            shared,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The route token of `target` (the same target keeps its token).
    pub fn route(&self, target: &ModelTarget) -> String {
        let Ok(mut routes) = self.shared.routes.lock() else {
            return String::new();
        };
        if let Some((token, _)) = routes.iter().find(|(_, t)| *t == target) {
            return token.clone();
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        routes.insert(token.clone(), target.clone());
        token
    }
}

impl Drop for ModelProxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}

fn refuse(status: StatusCode, why: &str) -> Response {
    (status, why.to_string()).into_response()
}

/// One request: `/<token>/<rest>` to the token's target, with the lead's credential.
async fn relay(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let path = request.uri().path().to_string();
    let query = request.uri().query().map(str::to_string);
    let trimmed = path.trim_start_matches('/');
    let (token, rest) = trimmed.split_once('/').unwrap_or((trimmed, ""));
    let target = shared
        .routes
        .lock()
        .ok()
        .and_then(|r| r.get(token).cloned());
    let Some(target) = target else {
        return refuse(StatusCode::NOT_FOUND, "no such model route");
    };
    let url = target.url(&format!("/{rest}"), query.as_deref());
    let client = if is_loopback(&target.base_url) {
        &shared.direct
    } else {
        &shared.proxied
    };
    let (parts, body) = request.into_parts();
    let body = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(b) => b,
        Err(_) => return refuse(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
    };
    let mut outgoing = client.request(parts.method, &url).body(body);
    for (name, value) in &parts.headers {
        if !DROPPED.contains(&name.as_str()) {
            outgoing = outgoing.header(name, value);
        }
    }
    for (name, value) in &target.auth {
        let (Ok(name), Ok(mut value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) else {
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the lead's key cannot be sent as a header",
            );
        };
        value.set_sensitive(true);
        outgoing = outgoing.header(name, value);
    }
    let answer = match outgoing.send().await {
        Ok(a) => a,
        Err(e) => {
            tracing::warn!("forwarded model request to {}: {e}", target.base_url);
            return refuse(
                StatusCode::BAD_GATEWAY,
                "the lead could not reach the model endpoint",
            );
        }
    };
    let mut response = Response::builder().status(answer.status());
    for (name, value) in answer.headers() {
        if !DROPPED.contains(&name.as_str()) {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap_or_else(|_| {
            refuse(
                StatusCode::BAD_GATEWAY,
                "bad answer from the model endpoint",
            )
        })
}

use crate::config::is_loopback_url as is_loopback;

/// Asks the host's master to forward a loopback port on the host to `socket`: `want` first
/// (the port teammates there already use), else any free port. Returns the port.
pub fn forward(
    connection: &Connection,
    socket: &Path,
    want: Option<u16>,
) -> Result<u16, HostError> {
    let mut last = None;
    for port in want.into_iter().chain([0]) {
        let spec = format!("127.0.0.1:{port}:{}", socket.display());
        match connection.control_forward(&spec) {
            Ok(out) if out.status == Some(0) => {
                if port != 0 {
                    return Ok(port);
                }
                let said = String::from_utf8_lossy(&out.stdout).into_owned();
                if let Some(p) = said.split_whitespace().find_map(|w| w.parse::<u16>().ok()) {
                    return Ok(p);
                }
                last = Some(HostError::Other {
                    destination: connection.host.destination.clone(),
                    detail: format!("ssh gave no port for the model forward: {}", said.trim()),
                });
            }
            Ok(out) => {
                last = Some(HostError::Other {
                    destination: connection.host.destination.clone(),
                    detail: format!(
                        "the model forward was refused: {}",
                        out.stderr.lines().last().unwrap_or("no message")
                    ),
                });
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(HostError::Other {
        destination: connection.host.destination.clone(),
        detail: "no model forward".to_string(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_keeps_its_path_and_an_openai_base_its_v1() {
        let t = ModelTarget {
            base_url: "http://127.0.0.1:9".into(),
            auth: vec![],
        };
        assert_eq!(
            t.url("/v1/messages", Some("beta=true")),
            "http://127.0.0.1:9/v1/messages?beta=true"
        );
        let o = ModelTarget {
            base_url: "https://api.openai.com/v1".into(),
            auth: vec![],
        };
        assert_eq!(
            o.url("/v1/chat/completions", None),
            "https://api.openai.com/v1/chat/completions"
        );
    }

    /// A request through the socket reaches the target with the lead's key in place of the
    /// caller's, and the answer comes back whole.
    #[test]
    fn a_request_goes_through_with_the_leads_key() {
        use std::io::{BufRead, BufReader, Read, Write};
        let upstream = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = upstream.local_addr().unwrap().port();
        let seen = std::thread::spawn(move || {
            let (mut socket, _) = upstream.accept().unwrap();
            let mut reader = BufReader::new(socket.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let events = "event: message_stop\ndata: {}\n\n";
            write!(
                socket,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{events}",
                events.len()
            )
            .unwrap();
            (head, String::from_utf8(body).unwrap())
        });
        let dir = tempfile::tempdir().unwrap();
        let proxy = ModelProxy::start(&dir.path().join("m.sock")).unwrap();
        let token = proxy.route(&ModelTarget {
            base_url: format!("http://127.0.0.1:{port}"),
            auth: vec![("x-api-key".into(), "sk-lead".into())],
        });
        let mut client = std::os::unix::net::UnixStream::connect(&proxy.socket).unwrap();
        let body = r#"{"stream":true}"#;
        write!(
            client,
            "POST /{token}/v1/messages?beta=true HTTP/1.1\r\nhost: x\r\nx-api-key: placeholder\r\nauthorization: Bearer placeholder\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        client.read_to_string(&mut answer).unwrap();
        let (head, got) = seen.join().unwrap();
        assert!(head.starts_with("POST /v1/messages?beta=true "), "{head}");
        assert!(head.contains("x-api-key: sk-lead"), "{head}");
        assert!(!head.contains("placeholder"), "{head}");
        assert_eq!(got, body);
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.contains("event: message_stop"), "{answer}");
        let mut stray = std::os::unix::net::UnixStream::connect(&proxy.socket).unwrap();
        write!(
            stray,
            "GET /nope/v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
        )
        .unwrap();
        let mut refused = String::new();
        stray.read_to_string(&mut refused).unwrap();
        assert!(refused.starts_with("HTTP/1.1 404"), "{refused}");
    }

    #[test]
    fn the_claude_target_comes_from_the_leads_environment_and_debug_hides_the_key() {
        let env = |k: &str| match k {
            "ANTHROPIC_API_KEY" => Some("sk-ant-secret".to_string()),
            "ANTHROPIC_BASE_URL" => Some("http://127.0.0.1:7/".to_string()),
            _ => None,
        };
        let t = ModelTarget::for_claude(&env);
        assert_eq!(t.base_url, "http://127.0.0.1:7");
        assert_eq!(
            t.auth,
            vec![("x-api-key".to_string(), "sk-ant-secret".to_string())]
        );
        assert!(!format!("{t:?}").contains("secret"));
    }
}
