//! The wire: one JSON object per line, at most [`MAX_LINE`] bytes, every object with `"t"` (its
//! type). [`Frame`] is every object the link sends; [`Body`] is what a `data` frame carries.
//! [`LineBuffer`] cuts a byte stream into lines (a line too long is an error, never a growing
//! buffer) and [`decode`] reads one; neither panics on any input.

use serde::{Deserialize, Serialize};
use teamlead_protocol::InboxEntry;

/// The longest line either side sends or accepts, newline excluded: 1 MiB.
pub const MAX_LINE: usize = 1 << 20;

/// One line of the link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Frame {
    /// Who this side is, what it can do and how far it got (see [`crate::hello`]).
    Hello(crate::hello::Hello),
    /// The handshake failed: why, and what a person does about it. The sender closes.
    Refused { why: String, fix: String },
    /// Reliable data: `seq` counts from 1 per direction per link, never reused.
    Data { seq: u64, body: Body },
    /// Cumulative: every `data` up to `seq` is applied durably.
    Ack { seq: u64 },
    /// Liveness: sent by the lead every [`crate::session::PING_EVERY`].
    Ping { n: u64 },
    /// The answer to a ping, echoing `n`.
    Pong { n: u64 },
}

impl Frame {
    /// The frame's type, as `"t"` says it.
    pub fn name(&self) -> &'static str {
        match self {
            Frame::Hello(_) => "hello",
            Frame::Refused { .. } => "refused",
            Frame::Data { .. } => "data",
            Frame::Ack { .. } => "ack",
            Frame::Ping { .. } => "ping",
            Frame::Pong { .. } => "pong",
        }
    }
}

/// What a `data` frame carries (`"kind"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Body {
    /// Append `entry` to `to`'s inbox of `team` on the receiving host, exactly once: `id` is
    /// the relay id, kept in the appended entry as `relayId`.
    InboxEntry {
        team: String,
        to: String,
        entry: Box<InboxEntry>,
        id: String,
    },
    /// From the lead: the members of `team` that run on the relay's host. Their inboxes there
    /// are theirs; every other inbox of the team on that host is forwarded to the lead.
    Route { team: String, hosted: Vec<String> },
    /// From the lead: the team file the relay's host needs (the lead's agent id and the
    /// members), so a teammate there finds its team on local disk. The relay creates the team
    /// or replaces its members under the team file's lock (the lead owns the team file).
    /// Capability `team`.
    Team {
        team: String,
        lead_agent_id: String,
        members: Vec<teamlead_protocol::Member>,
    },
    /// From the lead: tasks of its task list for the relay's mirror (capability `tasks`).
    /// `tasks` are written over the mirror's copies, keeping the fields the host changed and
    /// the lead has not answered yet; `removed` ids leave the mirror; `keep`, when present,
    /// is every id of the lead's list (a full snapshot: the mirror drops any other task the
    /// host has no unanswered change of). `applied` is the highest seq of the relay's data the
    /// lead had applied when it read its list: the answer to every `task_update` up to it is in.
    Tasks {
        team: String,
        tasks: Vec<teamlead_protocol::Task>,
        #[serde(default)]
        removed: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        keep: Option<Vec<String>>,
        applied: u64,
    },
    /// From a relay: a change made to the mirror on its host (a claim, a completion, a
    /// release, an edit, a task created or deleted there), as the task was the last time the
    /// relay accounted for it (`before`, `None`: created on the host) and as it is now (`after`,
    /// `None`: deleted there). The lead applies it under its own task lock with a local claim's
    /// rules and answers with the task in its next `tasks` (capability `tasks`).
    TaskUpdate {
        team: String,
        id: String,
        before: Option<Box<teamlead_protocol::Task>>,
        after: Option<Box<teamlead_protocol::Task>>,
    },
    /// From a relay: the fields a member that runs on its host owns in the team file
    /// (`isActive`, `mode`), as its host's team file has them (capability `member`).
    Member {
        team: String,
        name: String,
        fields: serde_json::Map<String, serde_json::Value>,
    },
    /// From a relay: the relay ids of entries the lead sent to hosted member `name` that are
    /// read on the relay's host (capability `read`).
    Read {
        team: String,
        name: String,
        ids: Vec<String>,
    },
    /// From a relay: what a hosted `claude` teammate's transcript on its host says
    /// (`TranscriptFacts`, as JSON), whenever that changes (capability `transcript`).
    Transcript {
        team: String,
        name: String,
        facts: serde_json::Value,
    },
    /// From the lead: start a teammate's session on the relay's host, `line` being the POSIX
    /// `sh` command line that does it (the team's `tmux new-session …`), after everything sent
    /// before it (its route and team file) is applied (capability `start`). The relay runs it
    /// and answers `started`.
    Start {
        team: String,
        name: String,
        line: String,
    },
    /// From a relay: how the `start` of `name` went (`error`: why it failed, in the words of
    /// what ran; `None`: its session runs).
    Started {
        team: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// From the lead: its config file's price rows (`PriceRow`s, as JSON), sent at each
    /// connection, for the relay to price its hosted `claude` teammates as the lead would
    /// (capability `prices`; see [`crate::prices`]).
    Prices {
        team: String,
        rows: serde_json::Value,
    },
    /// A kind this build does not know (a newer peer): acknowledged and ignored. A peer only
    /// sends kinds the other side's capabilities name.
    #[serde(other)]
    Unknown,
}

impl Body {
    /// The team the body is about (`None` for an unknown kind).
    pub fn team(&self) -> Option<&str> {
        match self {
            Body::InboxEntry { team, .. }
            | Body::Route { team, .. }
            | Body::Team { team, .. }
            | Body::Tasks { team, .. }
            | Body::TaskUpdate { team, .. }
            | Body::Member { team, .. }
            | Body::Read { team, .. }
            | Body::Transcript { team, .. }
            | Body::Start { team, .. }
            | Body::Started { team, .. }
            | Body::Prices { team, .. } => Some(team),
            Body::Unknown => None,
        }
    }
}

/// Why a line cannot be read. Each ends the link (the lead reconnects); none is a panic.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("a line longer than {MAX_LINE} bytes")]
    TooLong,
    #[error("a line that is not UTF-8")]
    NotUtf8,
    #[error("a line that is not a frame of the link ({0})")]
    NotAFrame(String),
}

/// A frame as one line, newline included.
pub fn encode(frame: &Frame) -> String {
    // A frame is plain data (strings, numbers, maps with string keys): serializing cannot fail,
    // and a failure would still give a line the peer reads as an error, not a panic.
    let mut line = serde_json::to_string(frame).unwrap_or_else(|e| {
        format!(r#"{{"t":"refused","why":"could not write a frame: {e}","fix":""}}"#)
    });
    line.push('\n');
    line
}

/// One line (without its newline) as a frame.
pub fn decode(line: &[u8]) -> Result<Frame, WireError> {
    if line.len() > MAX_LINE {
        return Err(WireError::TooLong);
    }
    let text = std::str::from_utf8(line).map_err(|_| WireError::NotUtf8)?;
    serde_json::from_str(text).map_err(|e| WireError::NotAFrame(e.to_string()))
}

/// Cuts a byte stream into lines. Bytes after the last newline wait for the rest of their line;
/// when they exceed [`MAX_LINE`] the stream is broken ([`WireError::TooLong`]).
#[derive(Debug, Default)]
pub struct LineBuffer {
    pending: Vec<u8>,
}

impl LineBuffer {
    pub fn new() -> LineBuffer {
        LineBuffer::default()
    }

    /// Adds `bytes` and returns every line they complete (without newlines, empty lines
    /// skipped).
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, WireError> {
        let mut lines = Vec::new();
        let mut rest = bytes;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.pending.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            if self.pending.len() > MAX_LINE {
                return Err(WireError::TooLong);
            }
            let line = std::mem::take(&mut self.pending);
            let trimmed = line.strip_suffix(b"\r").unwrap_or(&line);
            if !trimmed.iter().all(u8::is_ascii_whitespace) {
                lines.push(trimmed.to_vec());
            }
        }
        self.pending.extend_from_slice(rest);
        if self.pending.len() > MAX_LINE {
            return Err(WireError::TooLong);
        }
        Ok(lines)
    }

    /// Bytes of a line not yet ended (what a dropped link cut in the middle of a frame).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}
