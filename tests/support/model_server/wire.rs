//! HTTP/1.1 for the scripted model server: reading one request (content-length or chunked
//! body), the recorded [`Request`] with the views the script and the tests need (the last user
//! turn as text, tool results, tool schemas), and writing an SSE stream or a JSON answer.

use std::io::{Read, Write};
use std::net::TcpStream;

use serde_json::{Value, json};

/// One request the server got.
#[derive(Debug, Clone)]
pub struct Request {
    pub path: String,
    /// Lower-case names.
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

/// The text of a content value: a string, or the text of its blocks (tool results included).
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or("").to_string(),
                Some("tool_result") => content_text(&b["content"]),
                Some("tool_use") => b["input"].to_string(),
                _ => String::new(),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn tools(&self) -> Vec<Value> {
        self.body["tools"].as_array().cloned().unwrap_or_default()
    }

    pub fn tool_names(&self) -> Vec<String> {
        self.tools()
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_string))
            .collect()
    }

    /// Does tool `name`'s input schema have a property `prop`?
    pub fn tool_has_property(&self, name: &str, prop: &str) -> bool {
        self.tools()
            .iter()
            .find(|t| t["name"] == name)
            .is_some_and(|t| !t["input_schema"]["properties"][prop].is_null())
    }

    /// 2.1.45's SendMessage: one flat object discriminated by `type`.
    pub fn send_message_is_flat(&self) -> bool {
        self.tool_has_property("SendMessage", "type")
            && !self.tool_has_property("SendMessage", "to")
    }

    fn last_user(&self) -> Value {
        self.body["messages"]
            .as_array()
            .and_then(|m| m.iter().rev().find(|m| m["role"] == "user").cloned())
            .unwrap_or(Value::Null)
    }

    /// The last user turn as text (text blocks and tool results).
    pub fn last_user_text(&self) -> String {
        content_text(&self.last_user()["content"])
    }

    /// The ids of the tool results in the last user turn.
    pub fn last_tool_result_ids(&self) -> Vec<String> {
        self.last_user()["content"]
            .as_array()
            .map(|blocks| {
                blocks
                    .iter()
                    .filter(|b| b["type"] == "tool_result")
                    .filter_map(|b| b["tool_use_id"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Every message as text.
    pub fn messages_text(&self) -> String {
        self.body["messages"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .map(|m| content_text(&m["content"]))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .unwrap_or_default()
    }

    /// The system prompt's text.
    pub fn system_text(&self) -> String {
        content_text(&self.body["system"])
    }

    /// The plan file the client names (`…/plans/<slug>.md`), from the system prompt or the
    /// messages.
    pub fn plan_file_path(&self) -> Option<String> {
        let text = format!("{}\n{}", self.system_text(), self.messages_text());
        let stop = |c: char| c.is_whitespace() || "\"'`()<>".contains(c);
        text.match_indices("/plans/").find_map(|(at, _)| {
            let start = text[..at].rfind(stop).map(|i| i + 1).unwrap_or(0);
            let end = at + text[at..].find(".md")? + 3;
            let path = &text[start..end];
            (path.starts_with('/') && !path.contains(stop)).then(|| path.to_string())
        })
    }

    /// The `requestId` of the last `shutdown_request` in the last user turn.
    pub fn shutdown_request_id(&self) -> Option<String> {
        let text = self.last_user_text();
        let at = text.rfind("shutdown_request")?;
        let rest = &text[at..];
        let key = rest.find("requestId")?;
        let after = &rest[key + "requestId".len()..];
        let open = after.find('"')? + 1;
        let after = &after[open..];
        // Skip `":"` (possibly with spaces).
        let after = after.trim_start_matches([':', ' ', '"']);
        let end = after.find('"')?;
        Some(after[..end].to_string())
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads one request; `None` when the client closed first.
pub fn read_request(socket: &mut TcpStream) -> std::io::Result<Option<Request>> {
    let mut buf = Vec::new();
    let mut tmp = [0u8; 16384];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut tmp)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let path = lines
        .next()
        .unwrap_or("")
        .split(' ')
        .nth(1)
        .unwrap_or("")
        .to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let header = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut body = buf[head_end + 4..].to_vec();
    if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        while !body.ends_with(b"0\r\n\r\n") {
            let n = socket.read(&mut tmp)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&tmp[..n]);
        }
        body = dechunk(&body);
    } else {
        let length: usize = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while body.len() < length {
            let n = socket.read(&mut tmp)?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&tmp[..n]);
        }
    }
    Ok(Some(Request {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    }))
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(eol) = find(data, b"\r\n") {
        let size = std::str::from_utf8(&data[..eol])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next()?.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 || data.len() < eol + 2 + size {
            break;
        }
        out.extend_from_slice(&data[eol + 2..eol + 2 + size]);
        data = &data[(eol + 4 + size).min(data.len())..];
    }
    out
}

pub fn write_json(socket: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    write_json_with(socket, status, &[], body)
}

/// A JSON answer with `headers` added.
pub fn write_json_with(
    socket: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let reason = match status {
        200 => "OK",
        429 => "Too Many Requests",
        _ => "Not Found",
    };
    let head = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{extra}connection: close\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes())?;
    socket.write_all(body.as_bytes())?;
    socket.flush()
}

pub fn write_sse(socket: &mut TcpStream, events: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-cache\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        events.len()
    );
    socket.write_all(head.as_bytes())?;
    socket.write_all(events.as_bytes())?;
    socket.flush()
}

/// A non-streaming answer.
pub fn json_message(text: Option<String>, call: Option<(String, Value)>, id: &str) -> Value {
    let mut content = Vec::new();
    if let Some(t) = text {
        content.push(json!({"type": "text", "text": t}));
    }
    let stop = if call.is_some() {
        "tool_use"
    } else {
        "end_turn"
    };
    if let Some((name, input)) = call {
        content.push(json!({"type": "tool_use", "id": id, "name": name, "input": input}));
    }
    json!({
        "id": format!("msg_{id}"), "type": "message", "role": "assistant", "content": content,
        "model": "claude-sonnet-4-5", "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 1200, "output_tokens": 40}
    })
}
