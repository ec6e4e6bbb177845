//! kitty's remote control spoken on its socket, for the one call the lead makes all the time:
//! `ls`, which the liveness poll asks for twice a second. `kitty @ ls` starts kitty's Python
//! client each time (about 0.35 s of CPU: measured, an idle lead with three kitty teammates used
//! 42 % of a core); the same request written to the `unix:` socket of `KITTY_LISTEN_ON` costs a
//! connection. The request is kitty's escape `ESC P @kitty-cmd <JSON> ESC \`, with an old
//! client version (0.14, when the protocol began: kitty refuses clients newer than itself) and
//! no payload; the answer is the same escape around `{"ok": true, "data": "<ls's JSON>"}`.
//! Anything else (a `tcp:` address, a kitty that wants a password, a refusal, a timeout) is
//! `None`, and the caller falls back to `kitty @ ls`.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use serde::Deserialize;

/// How long a request may take on the socket before the caller falls back to the client.
const TIMEOUT: Duration = Duration::from_secs(5);
/// The escape around every request and answer.
const START: &[u8] = b"\x1bP@kitty-cmd";
const END: &[u8] = b"\x1b\\";
/// An answer larger than this is not read (ls of a few hundred windows is far less).
const MAX_ANSWER: usize = 16 * 1024 * 1024;

#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    data: Option<serde_json::Value>,
}

/// Connects to a `unix:` address (a path, or `@name` in Linux's abstract namespace).
fn connect(listen_on: &str) -> Option<UnixStream> {
    let address = listen_on.strip_prefix("unix:")?;
    if let Some(name) = address.strip_prefix('@') {
        return connect_abstract(name);
    }
    UnixStream::connect(address).ok()
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn connect_abstract(name: &str) -> Option<UnixStream> {
    #[cfg(target_os = "android")]
    use std::os::android::net::SocketAddrExt;
    #[cfg(target_os = "linux")]
    use std::os::linux::net::SocketAddrExt;
    let addr = std::os::unix::net::SocketAddr::from_abstract_name(name.as_bytes()).ok()?;
    UnixStream::connect_addr(&addr).ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn connect_abstract(_name: &str) -> Option<UnixStream> {
    None
}

/// The body of one answer once its closing escape has arrived.
fn answer_body(read: &[u8]) -> Option<&[u8]> {
    read.strip_prefix(START)?.strip_suffix(END)
}

/// What `ls` printed, read from the socket (`None`: use `kitty @ ls`).
pub fn ls(listen_on: &str) -> Option<String> {
    let mut stream = connect(listen_on)?;
    stream.set_read_timeout(Some(TIMEOUT)).ok()?;
    stream.set_write_timeout(Some(TIMEOUT)).ok()?;
    let request = br#"{"cmd":"ls","version":[0,14,2],"no_response":false}"#;
    stream
        .write_all(&[START, request.as_slice(), END].concat())
        .ok()?;
    let mut read = Vec::new();
    let mut chunk = [0u8; 64 * 1024];
    while answer_body(&read).is_none() {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 || read.len() + n > MAX_ANSWER {
            return None;
        }
        read.extend_from_slice(&chunk[..n]);
    }
    let answer: Answer = serde_json::from_slice(answer_body(&read)?).ok()?;
    match answer.data? {
        serde_json::Value::String(text) if answer.ok => Some(text),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_an_answer_only_once_it_is_whole() {
        assert_eq!(answer_body(b"\x1bP@kitty-cmd{\"ok\": true"), None);
        assert_eq!(
            answer_body(b"\x1bP@kitty-cmd{\"ok\": true}\x1b\\"),
            Some(b"{\"ok\": true}".as_slice())
        );
        assert_eq!(ls("tcp:localhost:1"), None);
        assert_eq!(ls("unix:/nonexistent/kitty.sock"), None);
    }
}
