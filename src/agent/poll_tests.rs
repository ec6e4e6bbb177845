//! The teammate's polls under tokio's paused time: an idle teammate sees a message no wake
//! announced within its poll interval (at once when woken), and a wait for one answer in the
//! mailbox ([`super::incoming::wait_for`]) picks it up within one poll. Real files in a
//! temporary home; every wait measured on the paused clock.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::engines::EngineKind;
use super::runtime::mailroom::Mailroom;
use super::runtime::{Controls, TeammateConfig, run_teammate};
use crate::agent::events::{EventSink, TeammateEvent, TeammateEventKind};
use crate::agent::mailbox_asker::MailboxAsker;
use crate::protocol::{InboxEntry, LEAD_NAME, Member, TeamFile};
use crate::store::{self, Home};

const POLL: Duration = Duration::from_secs(1);

/// A team `t` with the lead and `builder` in a temporary home.
fn team() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path().join("home"));
    let cwd = dir.path().to_string_lossy().to_string();
    let mut file = TeamFile::new("t", None, &cwd);
    file.members.push(Member::new("builder", "t", &cwd));
    store::create_team(&home, &file).expect("create team");
    (dir, home)
}

fn to_builder(home: &Home, text: &str) {
    store::inbox::append(home, "t", "builder", &InboxEntry::new(LEAD_NAME, text)).expect("append");
}

/// The next event of `kind` (others are skipped).
async fn next(
    events: &mut mpsc::UnboundedReceiver<TeammateEvent>,
    what: &str,
    pred: impl Fn(&TeammateEventKind) -> bool,
) -> TeammateEventKind {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
            .unwrap_or_else(|| panic!("the teammate ended while waiting for {what}"));
        if pred(&event.kind) {
            return event.kind;
        }
    }
}

fn received(kind: &TeammateEventKind, needle: &str) -> bool {
    matches!(kind, TeammateEventKind::Received { text, .. } if text.contains(needle))
}

#[tokio::test(start_paused = true)]
async fn an_idle_teammate_sees_an_unannounced_message_within_its_poll_interval() {
    let (dir, home) = team();
    let mut config = TeammateConfig::new(&home, "t", "builder", dir.path());
    config.poll_interval = POLL;
    let controls = Controls::new();
    let (tx, mut events) = mpsc::unbounded_channel();
    let asker = Arc::new(MailboxAsker::new(&home, "t", "builder", None));
    let teammate = tokio::spawn(run_teammate(
        config,
        EngineKind::Shell.engine(),
        asker,
        EventSink::new("builder", tx),
        controls.clone(),
    ));
    next(
        &mut events,
        "the start",
        |k| matches!(k, TeammateEventKind::Log { text, .. } if text.contains("started in")),
    )
    .await;
    // Time moves only once the teammate waits: it is idle now.
    tokio::time::sleep(Duration::from_millis(10)).await;

    let written_at = Instant::now();
    to_builder(&home, "the parser is yours");
    next(&mut events, "the message", |k| {
        received(k, "the parser is yours")
    })
    .await;
    let seen_after = written_at.elapsed();
    assert!(
        seen_after > Duration::ZERO && seen_after <= POLL,
        "seen {seen_after:?} after it was written (poll {POLL:?})"
    );

    next(&mut events, "idle again", |k| {
        matches!(k, TeammateEventKind::Idle { .. })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let written_at = Instant::now();
    to_builder(&home, "and the lexer");
    controls.wake();
    next(&mut events, "the woken message", |k| {
        received(k, "and the lexer")
    })
    .await;
    assert_eq!(
        written_at.elapsed(),
        Duration::ZERO,
        "a wake waited for the poll"
    );
    controls.stop();
    // Its last writes (isActive) happen before the temporary home is removed.
    tokio::time::timeout(Duration::from_secs(60), teammate)
        .await
        .expect("the teammate stops")
        .expect("the teammate task");
}

#[tokio::test(start_paused = true)]
async fn a_wait_for_an_answer_picks_it_up_within_one_poll_and_leaves_the_rest_unread() {
    let (_dir, home) = team();
    let mailroom = Mailroom::new(&home, "t", "builder", None);
    let wake = Arc::new(tokio::sync::Notify::new());
    let waiting = tokio::spawn({
        let (mailroom, wake) = (mailroom.clone(), wake.clone());
        async move {
            crate::agent::runtime::incoming::wait_for(&mailroom, &wake, POLL, |e| {
                e.text.starts_with("answer:").then(|| e.text.clone())
            })
            .await
        }
    });
    tokio::time::sleep(POLL * 3 + Duration::from_millis(10)).await;
    assert!(!waiting.is_finished());

    let written_at = Instant::now();
    to_builder(&home, "something else");
    to_builder(&home, "answer: yes");
    let got = waiting.await.expect("the wait").expect("an answer");
    assert_eq!(got, "answer: yes");
    let seen_after = written_at.elapsed();
    assert!(
        seen_after > Duration::ZERO && seen_after <= POLL,
        "seen {seen_after:?} after it was written (poll {POLL:?})"
    );
    let unread: Vec<String> = mailroom
        .unread()
        .expect("unread")
        .into_iter()
        .map(|e| e.text)
        .collect();
    assert_eq!(unread, ["something else"]);
}
