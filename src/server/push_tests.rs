//! Push to a phone against a local HTTP receiver: a request that waits longer than `after`
//! with no screen attached is pushed once (title, token, link, the command in one line); with
//! a screen attached nothing is pushed; an answered request is not pushed.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use super::hub::{self, HubInput, HubOptions};
use super::push::PushOptions;
use super::wire::ClientMsg;
use crate::lead::contract::{LeadEvent, PendingPermission, PermissionSource};

/// A receiver on loopback: every request it got, as text (head and body).
async fn receiver() -> (String, mpsc::UnboundedReceiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/teamlead-topic", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head, then as much body as Content-Length says.
                loop {
                    let n = socket.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        break;
                    }
                    seen.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&seen).into_owned();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if body.len() >= length {
                            break;
                        }
                    }
                }
                let _ = socket
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    .await;
                let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
            });
        }
    });
    (url, rx)
}

fn request(key: u64, worker: &str, command: &str) -> PendingPermission {
    PendingPermission {
        key,
        request_id: format!("perm-{key}"),
        worker: worker.to_string(),
        color: None,
        tool_name: "Bash".to_string(),
        description: String::new(),
        input: serde_json::json!({ "command": command }),
        suggestions: Vec::new(),
        source: PermissionSource::Inbox,
        in_part: None,
        host: None,
    }
}

async fn hub_with_push(url: &str) -> (mpsc::Sender<LeadEvent>, mpsc::Sender<HubInput>) {
    let (events_tx, events) = mpsc::channel::<LeadEvent>(16);
    let (inputs_tx, inputs) = mpsc::channel(16);
    let (controller, commands) = mpsc::channel(16);
    std::mem::forget(commands);
    let options = HubOptions {
        team: "night".into(),
        policy: None,
        idle_exit: None,
        push: Some(PushOptions {
            url: url.to_string(),
            token: Some("tok-123".into()),
            after: Duration::from_millis(300),
            web_url: Some("https://phone.example/teamlead".into()),
        }),
    };
    tokio::spawn(hub::run(events, inputs, controller, options));
    (events_tx, inputs_tx)
}

#[tokio::test]
async fn a_request_that_waits_with_no_screen_is_pushed_once() {
    let (url, mut got) = receiver().await;
    let (events, _inputs) = hub_with_push(&url).await;
    let waiting = vec![request(1, "alpha", "cargo test\nrm -rf target")];
    events
        .send(LeadEvent::Permissions(waiting.clone()))
        .await
        .unwrap();
    let push = tokio::time::timeout(Duration::from_secs(10), got.recv())
        .await
        .expect("a push within the deadline")
        .unwrap();
    assert!(push.starts_with("POST /teamlead-topic "), "{push}");
    let lower = push.to_ascii_lowercase();
    assert!(lower.contains("title: teamlead · night"), "{push}");
    assert!(lower.contains("authorization: bearer tok-123"), "{push}");
    assert!(
        lower.contains("click: https://phone.example/teamlead"),
        "{push}"
    );
    assert!(
        push.ends_with("@alpha asks to run Bash: cargo test ⏎ rm -rf target (request #1)"),
        "{push}"
    );
    // The same queue again, and time: pushed once.
    events.send(LeadEvent::Permissions(waiting)).await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(900), got.recv())
            .await
            .is_err(),
        "pushed once"
    );
}

#[tokio::test]
async fn nothing_is_pushed_while_a_screen_is_attached_or_once_answered() {
    let (url, mut got) = receiver().await;
    let (events, inputs) = hub_with_push(&url).await;
    let (screen, _to_screen) = mpsc::channel(64);
    inputs
        .send(HubInput::Connected { id: 1, tx: screen })
        .await
        .unwrap();
    inputs
        .send(HubInput::Message {
            id: 1,
            msg: ClientMsg::Attach { transcripts: true },
        })
        .await
        .unwrap();
    events
        .send(LeadEvent::Permissions(vec![request(1, "alpha", "make")]))
        .await
        .unwrap();
    // Answered (gone from the queue) before the screen leaves: never pushed.
    tokio::time::sleep(Duration::from_millis(500)).await;
    events
        .send(LeadEvent::Permissions(Vec::new()))
        .await
        .unwrap();
    inputs.send(HubInput::Gone { id: 1 }).await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(900), got.recv())
            .await
            .is_err(),
        "nothing pushed"
    );
}
