//! A local HTTP/1.1 server for the llm tests that answers from a script: each request is
//! recorded (method, path, headers, JSON body) and answered with the next scripted reply: an
//! SSE stream sent in chunked transfer encoding with events split across chunks, an error
//! status with headers and a JSON body, a stream that stalls until the client hangs up, or a
//! connection closed without an answer. Each request's arrival time is kept (rate-limit tests
//! check when requests came). Also builders of the real Anthropic and OpenAI event
//! streams. The server task is aborted when the server is dropped.
#![allow(dead_code)]

pub(crate) mod streams;

#[allow(unused_imports)]
pub use streams::{anthropic, openai};

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

/// One request the server got.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// When its head arrived.
    pub at: Instant,
    pub method: String,
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
    pub raw: String,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The names of the tools in the body (Anthropic or OpenAI shape).
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| {
                        t.get("name")
                            .or_else(|| t["function"].get("name"))
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string()
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The system prompt's text (a string, or Anthropic's array of text blocks).
    pub fn system_text(&self) -> String {
        match &self.body["system"] {
            Value::String(s) => s.clone(),
            Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        }
    }

    /// The last message of the body.
    pub fn last_message(&self) -> Value {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.last().cloned())
            .unwrap_or(Value::Null)
    }
}

/// What to answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// 200 with this SSE body.
    Sse(String),
    /// An error status.
    Status {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// 200, this much of an SSE body, then only pings until the client hangs up.
    Stall(String),
    /// Close the connection without answering.
    Close,
    /// Wait until the gate is opened, then answer with the inner reply (a turn that is
    /// "mid-stream" for as long as the test wants).
    Held(Gate, Box<Reply>),
}

/// Opened once by the test to release a [`Reply::Held`] (opening before the request arrives
/// works too).
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<Notify>);

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    pub fn open(&self) {
        self.0.notify_one();
    }
}

impl Reply {
    pub fn status(status: u16, body: &str) -> Reply {
        Reply::Status {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
}

#[derive(Default)]
struct State {
    replies: Mutex<VecDeque<Reply>>,
    requests: Mutex<Vec<Recorded>>,
    arrived: Notify,
    /// Stalled streams whose client hung up.
    hung_up: AtomicUsize,
}

/// The scripted server.
pub struct ScriptServer {
    pub port: u16,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptServer {
    pub async fn start(replies: Vec<Reply>) -> ScriptServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let state = Arc::new(State::default());
        state.replies.lock().unwrap().extend(replies);
        let s = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    let _ = serve(socket, s).await;
                });
            }
        });
        ScriptServer { port, state, task }
    }

    /// `http://127.0.0.1:<port>`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn push(&self, reply: Reply) {
        self.state.replies.lock().unwrap().push_back(reply);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.state.requests.lock().unwrap().clone()
    }

    pub fn hung_up(&self) -> usize {
        self.state.hung_up.load(Ordering::SeqCst)
    }

    /// Waits until `n` requests have arrived (at most `secs` seconds).
    pub async fn wait_requests(&self, n: usize, secs: u64) -> Vec<Recorded> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let got = self.requests();
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for request {n}; got {}",
                got.len()
            );
            let _ = tokio::time::timeout(Duration::from_millis(50), self.state.arrived.notified())
                .await;
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

async fn serve(mut socket: TcpStream, state: Arc<State>) -> std::io::Result<()> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 8192];
    let mut at = None;
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut tmp).await?;
        if n == 0 {
            return Ok(());
        }
        at.get_or_insert_with(Instant::now);
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or("");
    let mut parts = request_line.split(' ');
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut tmp).await?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&tmp[..n]);
    }
    let raw = String::from_utf8_lossy(&body).to_string();
    let recorded = Recorded {
        at: at.unwrap_or_else(Instant::now),
        method,
        path,
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
        raw: format!("{head}\r\n\r\n{raw}"),
    };
    state.requests.lock().unwrap().push(recorded);
    state.arrived.notify_waiters();
    let mut reply = state
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or_else(|| {
            Reply::status(
                500,
                r#"{"error":{"message":"the test script has no more replies"}}"#,
            )
        });
    while let Reply::Held(gate, inner) = reply {
        gate.0.notified().await;
        reply = *inner;
    }
    match reply {
        Reply::Held(..) => unreachable!("resolved above"),
        Reply::Sse(text) => {
            write_sse_head(&mut socket).await?;
            for piece in pieces(&text) {
                write_chunk(&mut socket, piece.as_bytes()).await?;
            }
            socket.write_all(b"0\r\n\r\n").await?;
        }
        Reply::Stall(text) => {
            write_sse_head(&mut socket).await?;
            for piece in pieces(&text) {
                if write_chunk(&mut socket, piece.as_bytes()).await.is_err() {
                    state.hung_up.fetch_add(1, Ordering::SeqCst);
                    return Ok(());
                }
            }
            // Like a real service: keep the stream alive with pings until the client hangs up
            // (a read gives 0, or a write fails).
            let (mut reader, mut writer) = socket.split();
            let ping = b"event: ping\ndata: {\"type\": \"ping\"}\n\n";
            let hung = tokio::time::timeout(Duration::from_secs(30), async {
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                loop {
                    tokio::select! {
                        r = reader.read(&mut tmp) => match r {
                            Ok(0) | Err(_) => return,
                            Ok(_) => {}
                        },
                        _ = tick.tick() => {
                            if write_chunk(&mut writer, ping).await.is_err() {
                                return;
                            }
                        }
                    }
                }
            })
            .await;
            if hung.is_ok() {
                state.hung_up.fetch_add(1, Ordering::SeqCst);
            }
            return Ok(());
        }
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (n, v) in headers {
                head.push_str(&format!("{n}: {v}\r\n"));
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
        }
        Reply::Close => return Ok(()),
    }
    socket.flush().await?;
    socket.shutdown().await
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

async fn write_sse_head(socket: &mut TcpStream) -> std::io::Result<()> {
    socket
        .write_all(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
        )
        .await
}

async fn write_chunk(
    socket: &mut (impl tokio::io::AsyncWrite + Unpin),
    bytes: &[u8],
) -> std::io::Result<()> {
    if bytes.is_empty() {
        return Ok(());
    }
    socket
        .write_all(format!("{:x}\r\n", bytes.len()).as_bytes())
        .await?;
    socket.write_all(bytes).await?;
    socket.write_all(b"\r\n").await?;
    socket.flush().await?;
    // Let the client read this piece on its own.
    tokio::task::yield_now().await;
    Ok(())
}

/// The SSE text cut into pieces: each event, and every third event cut in two.
fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, event) in text.split_inclusive("\n\n").enumerate() {
        if i % 3 == 1 && event.len() > 8 {
            let mut mid = event.len() / 2;
            while !event.is_char_boundary(mid) {
                mid += 1;
            }
            out.push(event[..mid].to_string());
            out.push(event[mid..].to_string());
        } else {
            out.push(event.to_string());
        }
    }
    out
}
