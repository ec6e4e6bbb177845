//! A Server-Sent Events decoder (the WHATWG "event stream" format), fed with bytes as they come
//! off the wire: lines end with CRLF, LF or CR (a CR at the end of one chunk and the LF at the
//! start of the next are one line end); `event:` sets the type, `data:` lines are joined with
//! LF, `id:` is kept, `retry:` and unknown fields are ignored, a line starting with `:` is a
//! comment, one space after the colon is dropped, a leading BOM is skipped, and a blank line
//! dispatches the event (none when no data line came). Unlike a browser, [`SseDecoder::finish`]
//! also dispatches an event cut off by the end of the stream, so a server that forgets the last
//! blank line after `data: [DONE]` is still understood.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, `message` when absent.
    pub event: String,
    /// The `data:` lines joined with LF.
    pub data: String,
    /// The last `id:` field seen, if any.
    pub id: Option<String>,
}

/// Incremental decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// The previous chunk ended in CR: an LF first in this one belongs to it.
    after_cr: bool,
    /// The BOM check has been done.
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
}

impl SseDecoder {
    pub fn new() -> SseDecoder {
        SseDecoder::default()
    }

    /// Decodes a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut bytes = chunk;
        if !self.started && !bytes.is_empty() {
            // The BOM may itself be split; only a whole one at the very start is skipped.
            if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
                bytes = &bytes[3..];
            }
            self.started = true;
        }
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' => self.end_line(&mut out),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut out);
                }
                _ => self.line.push(b),
            }
        }
        out
    }

    /// The end of the stream: the last line and an event it left open are dispatched.
    pub fn finish(&mut self) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            self.end_line(&mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = std::mem::take(&mut self.line);
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let text = String::from_utf8_lossy(&line);
        let (field, value) = match text.find(':') {
            Some(i) => {
                let value = &text[i + 1..];
                (&text[..i], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (&text[..], ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event: event
                .filter(|e| !e.is_empty())
                .unwrap_or_else(|| "message".to_string()),
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for c in chunks {
            out.extend(d.feed(c));
        }
        out.extend(d.finish());
        out
    }

    #[test]
    fn events_data_joining_comments_and_line_ends() {
        let stream = b"\xEF\xBB\xBF: a comment\r\nevent: message_start\r\ndata: {\"a\":\r\ndata:1}\r\n\r\nevent:ping\ndata: {}\n\n\ndata: plain\rdata:  two spaces\r\r";
        let events = all(&[stream]);
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].event, "message_start");
        assert_eq!(events[0].data, "{\"a\":\n1}");
        assert_eq!(events[1].event, "ping");
        assert_eq!(events[1].data, "{}");
        assert_eq!(events[2].event, "message");
        assert_eq!(events[2].data, "plain\n two spaces");
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let stream: &[u8] =
            "event: a\r\ndata: héllo\r\n\r\nid: 7\ndata: x\ndata\n\nevent: only-type\n\ndata: [DONE]"
                .as_bytes();
        let whole = all(&[stream]);
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[1].data, "x\n");
        assert_eq!(whole[1].id.as_deref(), Some("7"));
        assert_eq!(whole[2].data, "[DONE]");
        for size in 1..stream.len() {
            let chunks: Vec<&[u8]> = stream.chunks(size).collect();
            assert_eq!(all(&chunks), whole, "chunk size {size}");
        }
    }
}
