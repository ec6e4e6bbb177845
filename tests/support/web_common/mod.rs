//! Shared helpers of the web view's tests: a plain HTTP/1.1 client over a TCP socket (every
//! header as the test writes it, so a forged request is exactly what it says), reading the
//! server-sent events of `/api/events`, the login link from what teamlead printed, and the
//! hostile strings a teammate could send (the shell corpus's commands, control sequences,
//! bidi overrides and markup).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// One response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

/// `http://HOST:PORT` of a login link, and the link's path.
pub fn split_url(url: &str) -> (String, String) {
    let rest = url.strip_prefix("http://").expect("an http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    (host.to_string(), format!("/{path}"))
}

/// The login link in what teamlead printed.
pub fn login_link(printed: &str) -> Option<String> {
    printed
        .split_whitespace()
        .find(|w| w.starts_with("http://") && w.contains("/login?token="))
        .map(str::to_string)
}

/// Sends one request (`Connection: close`) and reads the whole response.
pub fn request(
    host: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Reply {
    let mut stream = TcpStream::connect(host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    if !body.is_empty() || method == "POST" {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body);
    stream.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).expect("read the response");
    parse(&String::from_utf8_lossy(&raw))
}

fn parse(raw: &str) -> Reply {
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((raw, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    Reply {
        status,
        headers,
        body: body.to_string(),
    }
}

/// A logged-in session: its cookie header and CSRF token.
pub struct Session {
    pub host: String,
    pub cookie: String,
    pub csrf: String,
}

impl Session {
    /// Logs in with the link.
    pub fn login(url: &str) -> Session {
        let (host, path) = split_url(url);
        let r = request(&host, "GET", &path, &[], "");
        assert_eq!(r.status, 200, "login: {r:?}");
        let set = r.header("set-cookie").expect("a cookie").to_string();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Strict"),
            "{set}"
        );
        let cookie = set.split(';').next().unwrap().to_string();
        let s = request(&host, "GET", "/api/session", &[("Cookie", &cookie)], "");
        assert_eq!(s.status, 200, "{s:?}");
        let csrf = s.json()["csrf"].as_str().unwrap().to_string();
        Session { host, cookie, csrf }
    }

    pub fn get(&self, path: &str) -> Reply {
        request(&self.host, "GET", path, &[("Cookie", &self.cookie)], "")
    }

    /// A write as the page makes it.
    pub fn post(&self, path: &str, body: &serde_json::Value) -> Reply {
        request(
            &self.host,
            "POST",
            path,
            &[
                ("Cookie", &self.cookie),
                ("x-teamlead-csrf", &self.csrf),
                ("Content-Type", "application/json"),
            ],
            &body.to_string(),
        )
    }

    /// The page's state (`/api/state`).
    pub fn state(&self) -> serde_json::Value {
        let r = self.get("/api/state");
        assert_eq!(r.status, 200, "{r:?}");
        r.json()
    }
}

/// Reads `/api/events` (from `last`, when given) until `n` events came or `within` passed:
/// each as (id, JSON).
pub fn events(
    s: &Session,
    last: Option<&str>,
    n: usize,
    within: Duration,
) -> Vec<(String, serde_json::Value)> {
    let mut stream = TcpStream::connect(&s.host).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut req = format!(
        "GET /api/events HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\n",
        s.host, s.cookie
    );
    if let Some(last) = last {
        req.push_str(&format!("Last-Event-ID: {last}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).unwrap();
    let deadline = Instant::now() + within;
    let mut raw = String::new();
    let mut out = Vec::new();
    let mut buf = [0u8; 65536];
    while Instant::now() < deadline && out.len() < n {
        if let Ok(k) = stream.read(&mut buf) {
            if k == 0 {
                break;
            }
            raw.push_str(&String::from_utf8_lossy(&buf[..k]));
        }
        out = sse_events(&raw);
    }
    out
}

/// The events in a raw SSE response (chunked framing tolerated: data lines are whole JSON).
fn sse_events(raw: &str) -> Vec<(String, serde_json::Value)> {
    let mut out = Vec::new();
    let mut id = String::new();
    for line in raw.lines() {
        if let Some(v) = line
            .strip_prefix("id: ")
            .or_else(|| line.strip_prefix("id:"))
        {
            id = v.trim().to_string();
        } else if let Some(v) = line
            .strip_prefix("data: ")
            .or_else(|| line.strip_prefix("data:"))
            && let Ok(json) = serde_json::from_str(v.trim())
        {
            out.push((id.clone(), json));
        }
    }
    out
}

/// Strings a teammate could send: every command of the shell corpus's hostile list, and
/// control sequences, bidi overrides, invisible characters and markup.
pub fn hostile_strings() -> Vec<String> {
    let corpus = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/shell-corpus/hostile.txt"),
    )
    .expect("the shell corpus");
    let mut out: Vec<String> = corpus
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.replace("<NL>", "\n"))
        .collect();
    out.extend(
        [
            "<script>window.pwned=1</script>",
            "<img src=x onerror=\"window.pwned=1\">",
            "\"><svg onload=alert(1)>",
            "javascript:alert(1)",
            "\u{1b}]0;pwned-title\u{7}",
            "\u{1b}[2J\u{1b}[H cleared",
            "a\u{202e}txt.exe",
            "zero\u{200b}width\u{feff}",
            "nul\0byte\u{7f}del\u{9b}csi",
            "line\u{2028}separator",
        ]
        .map(str::to_string),
    );
    out
}
