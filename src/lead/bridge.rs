//! The in-memory leader permission bridge: how in-process teammates ask the lead. `ask` hands the
//! request and a oneshot to the controller and awaits the human's answer. When the asking
//! future is dropped first (the teammate's turn was interrupted), the controller is told so the
//! request leaves the queue; when the controller is gone, the answer is `AskError::LeadGone`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::FutureExt;
use futures::future::BoxFuture;
use tokio::sync::{mpsc, oneshot};

use crate::agent::asker::{AskError, Asking, PermissionAsker};
use crate::protocol::frames::PermissionResponse;

/// What the bridge sends to the controller.
#[derive(Debug)]
pub enum BridgeMessage {
    /// A teammate asks; answer through `reply`.
    Ask {
        /// Bridge-unique id of this ask (used by `Withdrawn`).
        ask_id: u64,
        asking: Box<Asking>,
        reply: oneshot::Sender<PermissionResponse>,
    },
    /// The asking future was dropped before an answer came: forget the request.
    Withdrawn { ask_id: u64 },
}

/// The leader permission bridge. Cheap to clone; every clone feeds the same controller.
#[derive(Debug, Clone)]
pub struct LeaderBridge {
    tx: mpsc::UnboundedSender<BridgeMessage>,
    next_id: Arc<AtomicU64>,
}

impl LeaderBridge {
    /// A bridge and the receiving end the controller selects over.
    pub fn new() -> (LeaderBridge, mpsc::UnboundedReceiver<BridgeMessage>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            LeaderBridge {
                tx,
                next_id: Arc::new(AtomicU64::new(1)),
            },
            rx,
        )
    }

    /// This bridge as the asker handed to a teammate runtime.
    pub fn asker(&self) -> Arc<dyn PermissionAsker> {
        Arc::new(self.clone())
    }
}

/// Tells the controller when an ask is abandoned before its answer arrived.
struct WithdrawOnDrop {
    tx: mpsc::UnboundedSender<BridgeMessage>,
    ask_id: u64,
    answered: bool,
}

impl Drop for WithdrawOnDrop {
    fn drop(&mut self) {
        if !self.answered {
            let _ = self.tx.send(BridgeMessage::Withdrawn {
                ask_id: self.ask_id,
            });
        }
    }
}

impl PermissionAsker for LeaderBridge {
    fn ask(&self, asking: Asking) -> BoxFuture<'static, Result<PermissionResponse, AskError>> {
        let ask_id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply, answer) = oneshot::channel();
        let sent = self.tx.send(BridgeMessage::Ask {
            ask_id,
            asking: Box::new(asking),
            reply,
        });
        // Made before the first poll, so an ask dropped unpolled is withdrawn too.
        let guard = WithdrawOnDrop {
            tx: self.tx.clone(),
            ask_id,
            answered: sent.is_err(),
        };
        async move {
            // Moves the whole guard in (a field assignment alone would capture only the field).
            let mut guard = guard;
            if sent.is_err() {
                return Err(AskError::LeadGone);
            }
            let result = answer.await.map_err(|_| AskError::LeadGone);
            guard.answered = true;
            result
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::frames::PermissionRequest;

    fn asking() -> Asking {
        Asking {
            worker: "builder".into(),
            color: Some("red".into()),
            request: PermissionRequest {
                request_id: "perm-1-abc".into(),
                agent_id: "builder".into(),
                tool_name: "Bash".into(),
                tool_use_id: Some("toolu_1".into()),
                description: "list".into(),
                input: serde_json::json!({"command": "ls"}),
                permission_suggestions: vec![],
            },
        }
    }

    #[tokio::test]
    async fn answer_reaches_the_asker() {
        let (bridge, mut rx) = LeaderBridge::new();
        let ask = tokio::spawn(bridge.ask(asking()));
        let Some(BridgeMessage::Ask { asking, reply, .. }) = rx.recv().await else {
            panic!("no ask")
        };
        reply
            .send(PermissionResponse::approve(&asking.request, vec![]))
            .unwrap();
        let got = ask.await.unwrap().unwrap();
        assert!(got.approved());
    }

    #[tokio::test]
    async fn dropped_controller_is_lead_gone() {
        let (bridge, rx) = LeaderBridge::new();
        drop(rx);
        assert_eq!(bridge.ask(asking()).await, Err(AskError::LeadGone));
        let (bridge, mut rx) = LeaderBridge::new();
        let ask = tokio::spawn(bridge.ask(asking()));
        let msg = rx.recv().await;
        drop(msg); // the controller drops the reply without answering
        assert_eq!(ask.await.unwrap(), Err(AskError::LeadGone));
    }

    #[tokio::test]
    async fn abandoned_ask_is_withdrawn() {
        let (bridge, mut rx) = LeaderBridge::new();
        let fut = bridge.ask(asking());
        let ask = tokio::spawn(fut);
        let Some(BridgeMessage::Ask {
            ask_id,
            reply: _keep_reply_open,
            ..
        }) = rx.recv().await
        else {
            panic!("no ask")
        };
        ask.abort();
        let _ = ask.await;
        match rx.recv().await {
            Some(BridgeMessage::Withdrawn { ask_id: w }) => assert_eq!(w, ask_id),
            other => panic!("expected withdrawn, got {other:?}"),
        }
    }
}
