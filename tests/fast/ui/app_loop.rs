//! The whole app loop on a `TestBackend`, driven by a scripted key stream and a fake lead (the
//! test holds the other ends of the event and command channels): the commands it sends, the
//! final screen, and that bursts of events are drawn as one frame.

use crate::ui_common;

use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crossterm::event::{Event, KeyCode, KeyEvent};
use futures::channel::mpsc::{UnboundedSender, unbounded};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tokio::sync::mpsc;

use teamlead::lead::contract::{
    HandOver, LeadCommand, LeadEvent, PermissionDecision, TranscriptItem, ViewTarget,
};
use teamlead::protocol::PermissionMode;
use teamlead::ui::{AppIo, AppState};
use ui_common::*;

/// A clock that moves on by more than a dialog's grace period each time the loop reads it
/// (before every key, event and tick): every scripted key comes after the person could see
/// what the previous one showed.
static STEPPED: AtomicU64 = AtomicU64::new(NOW);

fn stepping_clock() -> u64 {
    STEPPED.fetch_add(teamlead::ui::modal::guard::GRACE_MS + 100, Ordering::SeqCst)
}

struct Script {
    keys: UnboundedSender<io::Result<Event>>,
    events: mpsc::Sender<LeadEvent>,
    commands: mpsc::Receiver<LeadCommand>,
    seen: Vec<LeadCommand>,
}

impl Script {
    fn keys(&self, keys: &[KeyEvent]) {
        for k in keys {
            self.keys
                .unbounded_send(Ok(Event::Key(*k)))
                .expect("app reads keys");
        }
    }

    fn text(&self, text: &str) {
        let keys: Vec<KeyEvent> = text.chars().map(ch).collect();
        self.keys(&keys);
    }

    async fn event(&self, event: LeadEvent) {
        self.events.send(event).await.expect("app reads events");
    }

    /// The next command the app sends (fails after a deadline).
    async fn command(&mut self) -> LeadCommand {
        let command = tokio::time::timeout(Duration::from_secs(10), self.commands.recv())
            .await
            .expect("a command within the deadline")
            .expect("app still running");
        self.seen.push(command.clone());
        command
    }
}

#[tokio::test]
async fn scripted_session_sends_the_right_commands_and_ends_on_exited() {
    let (event_tx, event_rx) = mpsc::channel(64);
    let (command_tx, command_rx) = mpsc::channel(64);
    let (key_tx, key_rx) = unbounded();
    let mut terminal = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
    let mut script = Script {
        keys: key_tx,
        events: event_tx,
        commands: command_rx,
        seen: Vec::new(),
    };
    script
        .event(LeadEvent::Started {
            team: "demo".to_string(),
            backend: teamlead::backend::BackendKind::InProcess,
            lead_mode: PermissionMode::Default,
        })
        .await;
    script.event(LeadEvent::Team(mixed_team())).await;
    let io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock: stepping_clock,
    };
    let app = teamlead::ui::run(&mut terminal, AppState::new(), io);

    let lead = async move {
        // A prompt to the lead; the fake lead echoes it as the controller does.
        script.text("hello team");
        script.keys(&[key(KeyCode::Enter)]);
        assert_eq!(
            script.command().await,
            LeadCommand::Submit {
                target: ViewTarget::Lead,
                text: "hello team".to_string()
            }
        );
        script
            .event(LeadEvent::Transcript(TranscriptItem::User {
                text: "hello team".to_string(),
            }))
            .await;
        script
            .event(teammate_turn(
                "builder",
                "blue",
                Some("parser done"),
                "All 42 tests pass.",
            ))
            .await;

        // A permission request arrives; Ctrl+P brings it up, y answers it once: the second y
        // finds no dialog and is typed into the composer (Backspace removes it).
        script
            .event(LeadEvent::Permissions(vec![bash_request(
                7,
                "tester",
                "green",
                "cargo test",
            )]))
            .await;
        script.keys(&[ctrl('p'), ch('y'), ch('y'), key(KeyCode::Backspace)]);
        assert_eq!(
            script.command().await,
            LeadCommand::AnswerPermission {
                key: 7,
                decision: PermissionDecision::AllowOnce
            }
        );
        script.event(LeadEvent::Permissions(vec![])).await;

        // Shift+Tab cycles the lead's mode; the controller reports the new mode.
        script.keys(&[shift_tab()]);
        assert_eq!(script.command().await, LeadCommand::CycleLeadMode);
        script
            .event(LeadEvent::LeadMode(PermissionMode::AcceptEdits))
            .await;

        // Teams dialog from the badge; Shift+Tab there cycles every teammate's mode, once.
        script.keys(&[
            key(KeyCode::Down),
            key(KeyCode::Enter),
            shift_tab(),
            key(KeyCode::Esc),
        ]);
        assert_eq!(script.command().await, LeadCommand::CycleAllModes);

        // Ctrl+C twice: Quit; the controller finishes and says so.
        script.keys(&[ctrl('c'), ctrl('c')]);
        assert_eq!(script.command().await, LeadCommand::Quit);
        script
            .event(LeadEvent::Transcript(TranscriptItem::System {
                text: "The team has shut down.".to_string(),
            }))
            .await;
        script.event(LeadEvent::Exited).await;
        // Nothing else was sent (the second y, Down and Esc were not commands).
        let rest = tokio::time::timeout(Duration::from_secs(10), script.commands.recv())
            .await
            .expect("the app ends and closes its command channel");
        assert_eq!(rest, None);
        script.seen
    };

    let (state, seen) = tokio::join!(app, lead);
    let state = state.expect("app loop ends cleanly");
    assert!(state.exit);
    assert_eq!(seen.len(), 5, "{seen:?}");
    let screen = rows(&terminal);
    let text = screen.join("\n");
    assert!(text.contains("> hello team"), "{text}");
    assert!(text.contains("●builder parser done"), "{text}");
    assert!(text.contains("The team has shut down."), "{text}");
    assert!(text.contains("quitting"), "{text}");
    assert_eq!(state.lead_mode, PermissionMode::AcceptEdits);
    insta::assert_snapshot!("app_loop_final_screen", terminal.backend());
}

#[tokio::test]
async fn a_burst_of_events_is_drawn_as_one_frame() {
    let (event_tx, event_rx) = mpsc::channel(2048);
    let (command_tx, _command_rx) = mpsc::channel(8);
    let (_key_tx, key_rx) = unbounded::<io::Result<Event>>();
    for i in 0..1000 {
        event_tx
            .send(LeadEvent::Transcript(TranscriptItem::System {
                text: format!("note {i}"),
            }))
            .await
            .expect("send");
    }
    event_tx.send(LeadEvent::Exited).await.expect("send");
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).expect("terminal");
    let io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock,
    };
    let state = teamlead::ui::run(&mut terminal, AppState::new(), io)
        .await
        .expect("app loop");
    // The first frame (before any event), then one for the whole burst.
    assert_eq!(state.frames, 2);
    assert!(rows(&terminal).join("\n").contains("note 999"));
}

#[tokio::test]
async fn a_signal_tells_the_lead_that_the_screen_closed() {
    let (event_tx, event_rx) = mpsc::channel(8);
    let (command_tx, mut command_rx) = mpsc::channel(8);
    let (_key_tx, key_rx) = unbounded::<io::Result<Event>>();
    let (signal_tx, signal_rx) = unbounded::<()>();
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).expect("terminal");
    let io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: signal_rx,
        clock,
    };
    let app = teamlead::ui::run(&mut terminal, AppState::new(), io);
    let lead = async move {
        signal_tx.unbounded_send(()).expect("signal");
        let command = tokio::time::timeout(Duration::from_secs(10), command_rx.recv())
            .await
            .expect("deadline");
        assert_eq!(command, Some(LeadCommand::ScreenClosed));
        event_tx.send(LeadEvent::Exited).await.expect("send");
    };
    let (state, ()) = tokio::join!(app, lead);
    assert!(state.expect("app loop").exit);
}

#[tokio::test]
async fn the_loop_ends_when_the_controller_goes_away() {
    let (event_tx, event_rx) = mpsc::channel::<LeadEvent>(8);
    let (command_tx, _command_rx) = mpsc::channel(8);
    let (_key_tx, key_rx) = unbounded::<io::Result<Event>>();
    let mut terminal = Terminal::new(TestBackend::new(60, 12)).expect("terminal");
    drop(event_tx);
    let io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock,
    };
    let result = tokio::time::timeout(
        Duration::from_secs(10),
        teamlead::ui::run(&mut terminal, AppState::new(), io),
    )
    .await
    .expect("ends without a controller");
    assert!(result.expect("no error").exit);
}

/// `HandOverTerminal` ends the loop with the program to run (the caller runs it and resumes
/// with the same state and channels), and the resumed loop goes on with the queued events.
#[tokio::test]
async fn hand_over_returns_the_program_and_the_loop_resumes() {
    let (event_tx, event_rx) = mpsc::channel(64);
    let (command_tx, _command_rx) = mpsc::channel(64);
    let (_key_tx, key_rx) = unbounded();
    let mut terminal = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
    let hand_over = HandOver {
        argv: vec!["tmux".to_string(), "attach".to_string()],
        back: "b's pane: detach with ctrl+b d to come back to the lead.".to_string(),
        shown_inside: true,
    };
    event_tx
        .send(LeadEvent::HandOverTerminal(hand_over.clone()))
        .await
        .expect("send");
    let mut io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock,
    };
    let mut state = teamlead::ui::app::run_io(&mut terminal, AppState::new(), &mut io)
        .await
        .expect("the loop returns");
    assert_eq!(state.hand_over.take(), Some(hand_over));
    // Resume: the next events are read by the same loop, and Exited ends it for good.
    state.exit = false;
    event_tx
        .send(LeadEvent::Transcript(TranscriptItem::System {
            text: "back from the pane".to_string(),
        }))
        .await
        .expect("send");
    event_tx.send(LeadEvent::Exited).await.expect("send");
    let state = teamlead::ui::app::run_io(&mut terminal, state, &mut io)
        .await
        .expect("the loop ends");
    assert!(state.hand_over.is_none());
    let screen = format!("{:?}", terminal.backend());
    assert!(screen.contains("back from the pane"), "{screen}");
}

/// Keys the way crossterm's `EventStream` gives them: the waker of the first poll that finds
/// nothing is the one woken when a key comes (later polls do not replace it until then).
#[derive(Clone, Default)]
struct LatchedKeys(std::sync::Arc<std::sync::Mutex<LatchedInner>>);

#[derive(Default)]
struct LatchedInner {
    keys: std::collections::VecDeque<Event>,
    waker: Option<std::task::Waker>,
}

impl LatchedKeys {
    fn push(&self, key: KeyEvent) {
        let mut inner = self.0.lock().unwrap();
        inner.keys.push_back(Event::Key(key));
        if let Some(waker) = inner.waker.take() {
            waker.wake();
        }
    }
}

impl futures::Stream for LatchedKeys {
    type Item = io::Result<Event>;
    fn poll_next(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        let mut inner = self.0.lock().unwrap();
        match inner.keys.pop_front() {
            Some(event) => std::task::Poll::Ready(Some(Ok(event))),
            None => {
                if inner.waker.is_none() {
                    inner.waker = Some(cx.waker().clone());
                }
                std::task::Poll::Pending
            }
        }
    }
}

static PAUSED_BASE: std::sync::OnceLock<tokio::time::Instant> = std::sync::OnceLock::new();

/// Milliseconds of tokio's (paused) clock.
fn paused_clock() -> u64 {
    let base = *PAUSED_BASE.get_or_init(tokio::time::Instant::now);
    NOW + (tokio::time::Instant::now() - base).as_millis() as u64
}

/// A key typed while the team is busy is taken at once. The loop reads the keys already typed
/// after each controller event; read with a no-op waker (`now_or_never`), crossterm kept that
/// waker, and the next key slept until the loop's tick, up to 250 ms, behind events that came
/// after it.
#[tokio::test(start_paused = true)]
async fn a_key_typed_after_a_busy_moment_is_taken_at_once() {
    let _ = paused_clock();
    let (event_tx, event_rx) = mpsc::channel(64);
    let (command_tx, _command_rx) = mpsc::channel(64);
    let keys = LatchedKeys::default();
    let io = AppIo {
        input: keys.clone(),
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock: paused_clock,
    };
    let app = tokio::spawn(async move {
        let mut terminal = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
        teamlead::ui::app::run(&mut terminal, AppState::new(), io).await
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A key, and an event right behind it: the loop reads the event first, then the keys.
    keys.push(ch('a'));
    event_tx
        .send(LeadEvent::Transcript(TranscriptItem::System {
            text: "busy".to_string(),
        }))
        .await
        .expect("send");
    tokio::time::sleep(Duration::from_millis(30)).await;
    // The next key, between two ticks.
    keys.push(ch('b'));
    let typed_at = paused_clock();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    event_tx.send(LeadEvent::Exited).await.expect("send");
    let state = app.await.expect("joined").expect("the loop ends");
    assert_eq!(state.composer.text(), "ab");
    assert_eq!(
        state.last_input_ms,
        Some(typed_at),
        "taken when typed (not at the next tick)"
    );
}

/// Commands queued when a hand-over ends the loop are sent when it resumes, in order (they
/// were sent with `try_send`, and dropped when the channel was full).
#[tokio::test]
async fn commands_queued_at_a_hand_over_are_sent_after_it() {
    let (event_tx, event_rx) = mpsc::channel(64);
    let (command_tx, mut command_rx) = mpsc::channel(1);
    let (_key_tx, key_rx) = unbounded();
    let mut terminal = Terminal::new(TestBackend::new(80, 20)).expect("terminal");
    let mut io = AppIo {
        input: key_rx,
        events: event_rx,
        commands: command_tx,
        signals: futures::stream::pending(),
        clock,
    };
    let mut state = AppState::new();
    for name in ["a", "b", "c"] {
        state.send(LeadCommand::Jump {
            name: name.to_string(),
        });
    }
    event_tx
        .send(LeadEvent::HandOverTerminal(HandOver {
            argv: vec!["true".to_string()],
            back: String::new(),
            shown_inside: true,
        }))
        .await
        .expect("send");
    let mut state = teamlead::ui::app::run_io(&mut terminal, state, &mut io)
        .await
        .expect("the loop returns");
    assert!(state.hand_over.take().is_some());
    state.exit = false;
    let resumed =
        tokio::spawn(async move { teamlead::ui::app::run_io(&mut terminal, state, &mut io).await });
    let mut got = Vec::new();
    while got.len() < 3 {
        match tokio::time::timeout(Duration::from_secs(10), command_rx.recv()).await {
            Ok(Some(LeadCommand::Jump { name })) => got.push(name),
            other => panic!("expected the jumps, got {other:?} after {got:?}"),
        }
    }
    assert_eq!(got, ["a", "b", "c"]);
    event_tx.send(LeadEvent::Exited).await.expect("send");
    resumed.await.expect("joined").expect("the loop ends");
}
