//! The web view's one line to the lead: the hub's own client contract
//! ([`crate::server::wire`]: `ClientMsg` out, `ServerMsg` in), either straight into the hub of
//! the server it lives in (`serve --web`) or over the team's socket from another process
//! (`teamlead web`). Either way it attaches with the transcripts, as a screen does.

use tokio::sync::mpsc;

use crate::server::client::Connection;
use crate::server::hub::{CLIENT_QUEUE, HubInput};
use crate::server::wire::{ClientMsg, ServerMsg};

/// The hub's client id of a web view inside the server (the listener counts up from 1).
pub const IN_PROCESS_ID: u64 = u64::MAX - 1;

/// What the web view reads from the lead and writes to it.
pub struct Upstream {
    pub events: mpsc::Receiver<ServerMsg>,
    pub commands: mpsc::UnboundedSender<ClientMsg>,
}

impl Upstream {
    /// Attached to the hub of this process.
    pub async fn from_hub(hub: mpsc::Sender<HubInput>) -> Option<Upstream> {
        let id = IN_PROCESS_ID;
        let (tx, events) = mpsc::channel(CLIENT_QUEUE);
        hub.send(HubInput::Connected { id, tx }).await.ok()?;
        let (commands, mut out) = mpsc::unbounded_channel::<ClientMsg>();
        tokio::spawn(async move {
            while let Some(msg) = out.recv().await {
                if hub.send(HubInput::Message { id, msg }).await.is_err() {
                    return;
                }
            }
            let _ = hub.send(HubInput::Gone { id }).await;
        });
        let up = Upstream { events, commands };
        up.attach();
        Some(up)
    }

    /// Attached over a connection to the team's server.
    pub fn from_connection(conn: Connection) -> Upstream {
        let (events, commands) = conn.into_channels();
        let up = Upstream { events, commands };
        up.attach();
        up
    }

    fn attach(&self) {
        let _ = self.commands.send(ClientMsg::Attach { transcripts: true });
    }
}
