//! The client side: connect to a team's server, read its greeting, and either bridge the
//! connection to a screen (the UI's own channels: it cannot tell a server from an in-process
//! controller) or hold it for `ctl`'s requests.

use std::path::Path;

use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::mpsc;

use super::ServerError;
use super::wire::{self, ClientMsg, LineReader, ServerMsg};
use crate::lead::contract::{LeadCommand, LeadEvent, TranscriptItem};

/// One connection to a lead server.
pub struct Connection {
    reader: LineReader,
    writer: OwnedWriteHalf,
    /// The team its server leads.
    pub team: String,
    /// The server's process id.
    pub pid: u32,
}

/// Connects to the server at `socket` (of `team`); [`ServerError::NotRunning`] when nobody
/// listens there.
pub async fn connect(socket: &Path, team: &str) -> Result<Connection, ServerError> {
    let stream = match UnixStream::connect(socket).await {
        Ok(stream) => stream,
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
            ) =>
        {
            return Err(ServerError::NotRunning {
                team: team.to_string(),
            });
        }
        Err(e) => {
            return Err(ServerError::io(
                format!("connecting to {}", socket.display()),
                e,
            ));
        }
    };
    let (read, writer) = stream.into_split();
    let mut reader = LineReader::new(read);
    match reader.next::<ServerMsg>().await? {
        Some(ServerMsg::Hello { team, pid, .. }) => Ok(Connection {
            reader,
            writer,
            team,
            pid,
        }),
        Some(other) => Err(ServerError::Protocol(format!(
            "expected a greeting, got {other:?}"
        ))),
        None => Err(ServerError::NotRunning {
            team: team.to_string(),
        }),
    }
}

/// How a screen's connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// The screen left with `/detach`; the team runs on.
    Detached,
    /// The lead finished (`/quit`, or the team was deleted).
    Exited,
    /// The lead finished because another client asked: who (`another screen`, `` `teamlead
    /// ctl TEAM` ``) and with what command.
    EndedBy { who: String, how: String },
    /// The screen left by itself (its terminal closed).
    Left,
    /// The server closed the connection without a word (it died, or was killed): the team's
    /// lead went away under the screen.
    Lost,
    /// The connection failed while the server still runs (a line refused, an unreadable
    /// message, a read error, or the server closed this connection only): what happened.
    Broken(String),
}

/// Does the process `pid` still run (a zombie does not)?
fn runs(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: signal 0 only asks whether the process exists.
    let exists = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
        || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
    let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, after) = stat.rsplit_once(')')?;
            after
                .split_whitespace()
                .next()
                .map(|state| state == "Z" || state == "X")
        })
        .unwrap_or(false);
    exists && !zombie
}

/// How a connection that ended with `failure` (`None`: closed by the server) ended, for a screen
/// that did not say it closes: lost when its server is gone, broken (and why) when it still runs
/// a moment later (a server that dies closes its sockets just before it is gone).
async fn ended(pid: u32, failure: Option<ServerError>) -> Ending {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_millis(1000);
    let mut running = runs(pid);
    while running && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        running = runs(pid);
    }
    match (failure, running) {
        (None, false) => Ending::Lost,
        (None, true) => Ending::Broken(format!(
            "the lead server (pid {pid}) closed this screen's connection but still runs"
        )),
        (Some(e), true) => Ending::Broken(format!("{e}; the lead server (pid {pid}) still runs")),
        (Some(e), false) => Ending::Broken(format!("{e}; the lead server (pid {pid}) has ended")),
    }
}

impl Connection {
    pub async fn send(&mut self, msg: &ClientMsg) -> Result<(), ServerError> {
        wire::write(&mut self.writer, msg).await
    }

    /// The next message; `None` when the server closed the connection.
    pub async fn recv(&mut self) -> Result<Option<ServerMsg>, ServerError> {
        self.reader.next().await
    }

    /// Turns the connection into two channels: the server's messages in, the client's out
    /// (a web view talks to the hub this way from its own process). The reader ends at the
    /// connection's end; the writer when the sender is dropped.
    pub fn into_channels(self) -> (mpsc::Receiver<ServerMsg>, mpsc::UnboundedSender<ClientMsg>) {
        let Connection {
            mut reader,
            mut writer,
            ..
        } = self;
        let (in_tx, in_rx) = mpsc::channel::<ServerMsg>(super::hub::CLIENT_QUEUE);
        let (out_tx, mut out_rx) = mpsc::unbounded_channel::<ClientMsg>();
        tokio::spawn(async move {
            while let Some(msg) = out_rx.recv().await {
                if wire::write(&mut writer, &msg).await.is_err() {
                    break;
                }
            }
        });
        tokio::spawn(async move {
            loop {
                match reader.next::<ServerMsg>().await {
                    Ok(Some(msg)) => {
                        if in_tx.send(msg).await.is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        tracing::warn!("web: the lead server's connection failed: {e}");
                        break;
                    }
                }
            }
        });
        (in_rx, out_tx)
    }

    /// Attaches as a screen and turns the connection into the UI's two channels; the task
    /// returned ends with how the connection ended. `notes` are shown as teamlead's own notes
    /// right after the server's snapshot (what this screen wants the user to know).
    pub async fn into_screen(
        mut self,
        notes: Vec<String>,
    ) -> Result<
        (
            mpsc::Receiver<LeadEvent>,
            mpsc::Sender<LeadCommand>,
            tokio::task::JoinHandle<Ending>,
        ),
        ServerError,
    > {
        self.send(&ClientMsg::Attach { transcripts: true }).await?;
        let (events_tx, events_rx) = mpsc::channel::<LeadEvent>(4096);
        let (commands_tx, mut commands_rx) = mpsc::channel::<LeadCommand>(256);
        let Connection {
            mut reader,
            mut writer,
            pid,
            ..
        } = self;
        // Whether this screen said it closes: the server then drops the connection, which is
        // no loss of the lead.
        let closing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let closing_w = closing.clone();
        let writer_task = tokio::spawn(async move {
            while let Some(command) = commands_rx.recv().await {
                if command == LeadCommand::ScreenClosed {
                    closing_w.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                if wire::write(&mut writer, &ClientMsg::Command(command))
                    .await
                    .is_err()
                {
                    break;
                }
            }
        });
        let mut notes = notes;
        let task = tokio::spawn(async move {
            let mut ending = Ending::Left;
            let mut ended_by = None;
            loop {
                match reader.next::<ServerMsg>().await {
                    Ok(Some(ServerMsg::Event(event))) => {
                        let exited = event == LeadEvent::Exited;
                        if events_tx.send(event).await.is_err() {
                            break;
                        }
                        if exited {
                            ending = match ended_by.take() {
                                Some((who, how)) => Ending::EndedBy { who, how },
                                None => Ending::Exited,
                            };
                        }
                    }
                    Ok(Some(ServerMsg::SnapshotEnd)) => {
                        for text in notes.drain(..) {
                            let note = LeadEvent::Transcript(TranscriptItem::System { text });
                            if events_tx.send(note).await.is_err() {
                                break;
                            }
                        }
                    }
                    Ok(Some(ServerMsg::EndedBy { who, how })) => ended_by = Some((who, how)),
                    Ok(Some(ServerMsg::Detached)) => {
                        ending = Ending::Detached;
                        break;
                    }
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_)
                        if ending != Ending::Left
                            || closing.load(std::sync::atomic::Ordering::SeqCst) =>
                    {
                        break;
                    }
                    Ok(None) => {
                        ending = ended(pid, None).await;
                        break;
                    }
                    Err(e) => {
                        tracing::warn!("screen: the lead server's connection failed: {e}");
                        ending = ended(pid, Some(e)).await;
                        break;
                    }
                }
            }
            writer_task.abort();
            ending
        });
        Ok((events_rx, commands_tx, task))
    }
}
