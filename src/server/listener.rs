//! The socket side of the server: accepts connections of the same user only (the peer's uid,
//! from the kernel), greets each with [`ServerMsg::Hello`], and runs one reader and one
//! writer task per connection between the socket and the [`super::hub`]. The writers run on
//! a [`TaskTracker`]: a server that ends waits for them to write what the hub queued last
//! (the lead's `Exited`, the quit summary) before its runtime goes, or a screen would see the
//! socket close without a word.

use std::path::{Path, PathBuf};

use tokio::net::{UnixListener, UnixStream};
use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;

use super::hub::{CLIENT_QUEUE, HubInput};
use super::wire::{self, ClientMsg, LineReader, ServerMsg};
use super::{ServerError, paths};
use crate::lead::contract::{LeadEvent, TranscriptItem};

/// The bound socket; the file is removed when this is dropped.
pub struct Bound {
    pub listener: UnixListener,
    pub path: PathBuf,
}

impl Drop for Bound {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Binds `path` (mode 0600). The caller holds the team's lead lock, so a socket file already
/// there was left by a server that died: it is replaced.
pub fn bind(path: &Path) -> Result<Bound, ServerError> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_dir() => {
            return Err(ServerError::RuntimeDir {
                path: path.display().to_string(),
                why: "is a directory where the socket should be".to_string(),
            });
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
    // Bound and listening under a temporary name, made private, then renamed into place: a
    // socket file at `path` always listens (a client, or a sweep of dead servers' sockets,
    // that finds the file between bind and listen would read it as refused).
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.tmp", std::process::id()));
    let temp = path.with_file_name(name);
    let _ = std::fs::remove_file(&temp);
    let listener = UnixListener::bind(&temp)
        .map_err(|e| ServerError::io(format!("listening on {}", temp.display()), e))?;
    let placed = paths::make_private(&temp).and_then(|()| {
        std::fs::rename(&temp, path)
            .map_err(|e| ServerError::io(format!("placing {}", path.display()), e))
    });
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&temp);
        return Err(e);
    }
    Ok(Bound {
        listener,
        path: path.to_path_buf(),
    })
}

/// Accepts connections until the hub goes away. Each connection's writer runs on `writers`
/// until it has written everything the hub gave it.
pub async fn accept_loop(
    listener: &UnixListener,
    hub: mpsc::Sender<HubInput>,
    hello: ServerMsg,
    writers: &TaskTracker,
) {
    // SAFETY: getuid cannot fail.
    let me = unsafe { libc::getuid() };
    let mut next_id = 0u64;
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("lead server: accept failed: {e}");
                    continue;
                }
            },
            () = hub.closed() => return,
        };
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me => {}
            Ok(cred) => {
                tracing::warn!("lead server: refused a connection of uid {}", cred.uid());
                continue;
            }
            Err(e) => {
                tracing::warn!("lead server: cannot read a peer's credentials: {e}");
                continue;
            }
        }
        next_id += 1;
        connection(next_id, stream, hub.clone(), hello.clone(), writers).await;
    }
}

/// Starts the two tasks of one connection.
async fn connection(
    id: u64,
    stream: UnixStream,
    hub: mpsc::Sender<HubInput>,
    hello: ServerMsg,
    writers: &TaskTracker,
) {
    let (read, mut write) = stream.into_split();
    let (tx, mut rx) = mpsc::channel::<ServerMsg>(CLIENT_QUEUE);
    let team = match &hello {
        ServerMsg::Hello { team, .. } => crate::protocol::display::visible_line(team).into_owned(),
        _ => String::new(),
    };
    if hub.send(HubInput::Connected { id, tx }).await.is_err() {
        return;
    }
    writers.spawn(async move {
        if wire::write(&mut write, &hello).await.is_err() {
            return;
        }
        while let Some(msg) = rx.recv().await {
            // Everything already queued goes out in one write.
            let mut batch = line_of(id, &team, &msg);
            while let Ok(more) = rx.try_recv() {
                batch.extend(line_of(id, &team, &more));
            }
            use tokio::io::AsyncWriteExt;
            if write.write_all(&batch).await.is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut reader = LineReader::new(read);
        loop {
            match reader.next::<ClientMsg>().await {
                Ok(Some(msg)) => {
                    if hub.send(HubInput::Message { id, msg }).await.is_err() {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!("lead server: client {id}: {e}");
                    break;
                }
            }
        }
        let _ = hub.send(HubInput::Gone { id }).await;
    });
}

/// The line of `msg`; one longer than a client reads (`wire::MAX_LINE`: the controller bounds
/// every event far below it, so this is a last guard) is left out and the screen told, rather
/// than making the client drop the connection.
fn line_of(id: u64, team: &str, msg: &ServerMsg) -> Vec<u8> {
    wire::fits(msg).unwrap_or_else(|| {
        let size = crate::lead::shown::json_len(msg);
        tracing::warn!("lead server: client {id}: left out a message of {size} bytes");
        let text = format!(
            "teamlead left out an update of {} that is larger than a screen reads; `teamlead ctl {team} status` shows the team.",
            crate::lead::shown::size_label(size as u64)
        );
        wire::encode(&ServerMsg::Event(LeadEvent::Transcript(
            TranscriptItem::System { text },
        )))
    })
}
