//! The socket's protocol: one JSON document per line each way. A client says what it wants
//! ([`ClientMsg`]); the server greets it ([`ServerMsg::Hello`]) and then sends what it asked
//! for. Commands and events are the controller's own types, unchanged.

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::ServerError;
use super::story::StoryEvent;
use crate::lead::contract::{LeadCommand, LeadEvent};

/// The longest line either side accepts. What the controller sends is bounded far below it
/// (`lead::shown`: a request's head, every string of an event cut at 64 KiB); the server never
/// writes a longer line ([`fits`]), and a reader refuses one without holding it.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The line of `msg`, or `None` when it would be longer than [`MAX_LINE`].
pub fn fits<T: Serialize>(msg: &T) -> Option<Vec<u8>> {
    // Counted first: a line too long is never built.
    (crate::lead::shown::json_len(msg) < MAX_LINE).then(|| encode(msg))
}

/// What a client asks for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientMsg {
    /// The snapshot (with the transcripts when `transcripts`: screens want them, `ctl` does
    /// not), [`ServerMsg::SnapshotEnd`], then every event as it happens.
    Attach { transcripts: bool },
    /// One command for the controller.
    Command(LeadCommand),
    /// The story so far, [`ServerMsg::StoryEnd`], then (with `follow`) each new story event.
    Story { follow: bool },
}

/// What the server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerMsg {
    /// The first line on every connection.
    Hello {
        team: String,
        pid: u32,
        version: String,
    },
    Event(LeadEvent),
    /// The snapshot is complete; live events follow.
    SnapshotEnd,
    Story(StoryEvent),
    StoryEnd,
    /// This client left with `/detach`; the server and the team keep running.
    Detached,
    /// Another client ended the team (`/quit`, `/quit --keep`): who, said to
    /// every other screen before the lead's `Exited`, so it does not close without a word.
    EndedBy {
        who: String,
        how: String,
    },
}

/// One message as its line (with the newline).
pub fn encode<T: Serialize>(msg: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(msg).unwrap_or_else(|_| b"null".to_vec());
    line.push(b'\n');
    line
}

/// Writes one message.
pub async fn write<T: Serialize>(w: &mut OwnedWriteHalf, msg: &T) -> Result<(), ServerError> {
    w.write_all(&encode(msg))
        .await
        .map_err(|e| ServerError::io("writing to the lead server's socket", e))
}

/// Reads the lines of one side, never holding more than [`MAX_LINE`] bytes of one: a longer
/// line is refused ([`ServerError::LineTooLong`]) as soon as it passes the limit.
pub struct LineReader {
    reader: BufReader<OwnedReadHalf>,
    line: Vec<u8>,
}

impl LineReader {
    pub fn new(r: OwnedReadHalf) -> LineReader {
        LineReader {
            reader: BufReader::new(r),
            line: Vec::new(),
        }
    }

    /// The next message; `None` at the end of the stream.
    pub async fn next<T: for<'de> Deserialize<'de>>(&mut self) -> Result<Option<T>, ServerError> {
        if !self.next_line().await? {
            return Ok(None);
        }
        serde_json::from_slice(&self.line)
            .map(Some)
            .map_err(|e| ServerError::Protocol(e.to_string()))
    }

    /// Reads the next line into `self.line` (without its newline); false at the end.
    async fn next_line(&mut self) -> Result<bool, ServerError> {
        self.line.clear();
        loop {
            let chunk = self
                .reader
                .fill_buf()
                .await
                .map_err(|e| ServerError::io("reading the lead server's socket", e))?;
            if chunk.is_empty() {
                if self.line.is_empty() {
                    return Ok(false);
                }
                return Err(ServerError::Protocol(
                    "the connection ended in the middle of a line".to_string(),
                ));
            }
            let (take, ends) = match chunk.iter().position(|b| *b == b'\n') {
                Some(at) => (at, true),
                None => (chunk.len(), false),
            };
            if self.line.len() + take > MAX_LINE {
                let read = self.line.len() + take;
                self.line = Vec::new();
                return Err(ServerError::LineTooLong {
                    read,
                    limit: MAX_LINE,
                });
            }
            self.line.extend_from_slice(&chunk[..take]);
            self.reader.consume(take + usize::from(ends));
            if ends {
                return Ok(true);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::{PermissionDecision, TranscriptItem};

    #[test]
    fn messages_round_trip_as_one_line() {
        let msgs = vec![
            ClientMsg::Attach { transcripts: true },
            ClientMsg::Command(LeadCommand::AnswerPermission {
                key: 3,
                decision: PermissionDecision::Deny {
                    feedback: Some("not\nthat".into()),
                },
            }),
        ];
        for msg in msgs {
            let line = encode(&msg);
            assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
            let back: ClientMsg = serde_json::from_slice(&line).unwrap();
            assert_eq!(back, msg);
        }
        let event = ServerMsg::Event(LeadEvent::Transcript(TranscriptItem::System {
            text: "hi".into(),
        }));
        let back: ServerMsg = serde_json::from_slice(&encode(&event)).unwrap();
        assert_eq!(back, event);
    }
}
