//! The idle limit under paused time: the clock runs while nobody is connected (from the
//! start, and again from when the last client leaves), stops while a client is connected, and
//! ends the team once, with `LeadCommand::Quit`, at the limit to the millisecond.

use std::time::Duration;

use tokio::sync::mpsc;

use super::hub::{self, HubInput, HubOptions};
use super::wire::ServerMsg;
use crate::lead::contract::{LeadCommand, LeadEvent, TranscriptItem};

const LIMIT: Duration = Duration::from_secs(8 * 3600);

/// Whatever the controller has been sent so far.
fn sent(rx: &mut mpsc::Receiver<LeadCommand>) -> Vec<LeadCommand> {
    std::iter::from_fn(|| rx.try_recv().ok()).collect()
}

#[tokio::test(start_paused = true)]
async fn the_team_ends_once_nobody_has_been_connected_for_the_limit() {
    let (events_tx, events) = mpsc::channel::<LeadEvent>(16);
    let (inputs_tx, inputs) = mpsc::channel(16);
    let (controller, mut commands) = mpsc::channel(16);
    let options = HubOptions {
        team: "night".into(),
        policy: None,
        idle_exit: Some(LIMIT),
        push: None,
    };
    let hub = tokio::spawn(hub::run(events, inputs, controller, options));

    // Nobody from the start: nothing until the limit.
    tokio::time::sleep(LIMIT - Duration::from_secs(1)).await;
    assert!(sent(&mut commands).is_empty());

    // A screen connects and stays: the clock stops however long it stays.
    let (screen, mut to_screen) = mpsc::channel(64);
    inputs_tx
        .send(HubInput::Connected { id: 1, tx: screen })
        .await
        .unwrap();
    tokio::time::sleep(LIMIT * 3).await;
    assert!(sent(&mut commands).is_empty());

    // It goes: the clock starts again from that moment.
    inputs_tx.send(HubInput::Gone { id: 1 }).await.unwrap();
    tokio::task::yield_now().await;
    let left = tokio::time::Instant::now();
    tokio::time::sleep(LIMIT - Duration::from_millis(1)).await;
    assert!(sent(&mut commands).is_empty(), "not before the limit");
    let quit = tokio::time::timeout(Duration::from_millis(2), commands.recv())
        .await
        .expect("the team ends at the limit");
    assert_eq!(quit, Some(LeadCommand::Quit));
    assert_eq!(tokio::time::Instant::now() - left, LIMIT);

    // Said once, even while the team takes its time to end.
    tokio::time::sleep(LIMIT * 2).await;
    assert!(sent(&mut commands).is_empty());
    // The screen was gone: it heard nothing of it, but the story keeps the note (a late `ctl
    // events` shows it).
    assert!(
        std::iter::from_fn(|| to_screen.try_recv().ok()).all(|m| !matches!(
            m,
            ServerMsg::Event(LeadEvent::Transcript(TranscriptItem::System { .. }))
        ))
    );
    let (late, mut to_late) = mpsc::channel(64);
    inputs_tx
        .send(HubInput::Connected { id: 2, tx: late })
        .await
        .unwrap();
    inputs_tx
        .send(HubInput::Message {
            id: 2,
            msg: super::wire::ClientMsg::Story { follow: false },
        })
        .await
        .unwrap();
    let mut story = Vec::new();
    while let Some(msg) = to_late.recv().await {
        match msg {
            ServerMsg::Story(e) => story.push(serde_json::to_string(&e).unwrap()),
            ServerMsg::StoryEnd => break,
            _ => {}
        }
    }
    assert!(
        story.iter().any(|e| e.contains("server-idle-exit")),
        "{story:#?}"
    );

    drop(events_tx);
    hub.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn without_a_limit_the_team_never_ends_by_itself() {
    let (events_tx, events) = mpsc::channel::<LeadEvent>(16);
    let (_inputs_tx, inputs) = mpsc::channel(16);
    let (controller, mut commands) = mpsc::channel(16);
    let options = HubOptions {
        team: "day".into(),
        ..HubOptions::default()
    };
    let hub = tokio::spawn(hub::run(events, inputs, controller, options));
    tokio::time::sleep(Duration::from_secs(365 * 24 * 3600)).await;
    assert!(sent(&mut commands).is_empty());
    drop(events_tx);
    hub.await.unwrap();
}
