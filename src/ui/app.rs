//! The app loop, generic over the ratatui backend and over its input stream so tests drive it
//! with a `TestBackend` and scripted keys. One `select!` over controller events, outgoing
//! commands, terminal input, signals and a [`TICK`]; a frame is drawn only when something
//! changed, after every event already waiting has been applied (coalesced redraws). The clock
//! is read before every event and key, so dialogs' grace periods and the typing pause are
//! measured on it (a test passes a scripted clock).

use std::collections::VecDeque;
use std::time::Duration;

use crossterm::event::Event;
use futures::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use tokio::sync::mpsc;
use tokio::time::MissedTickBehavior;

use crate::lead::contract::{LeadCommand, LeadEvent};
use crate::ui::error::UiError;
use crate::ui::render;
use crate::ui::state::{AppState, QuitState};

/// How often the loop looks at the clock without an event: a waiting request takes the
/// keyboard at most this long after typing has paused long enough.
pub const TICK: Duration = Duration::from_millis(250);

/// How the loop talks to the world.
pub struct AppIo<I, G> {
    /// Terminal events (crossterm's `EventStream`, or a scripted stream).
    pub input: I,
    /// Events from the lead controller.
    pub events: mpsc::Receiver<LeadEvent>,
    /// Commands to the lead controller.
    pub commands: mpsc::Sender<LeadCommand>,
    /// One item per SIGINT/SIGTERM/SIGHUP (an endless pending stream in tests).
    pub signals: G,
    /// The wall clock in epoch milliseconds.
    pub clock: fn() -> u64,
}

/// The system clock in epoch milliseconds.
pub fn system_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn draw_error<E: std::fmt::Display>(e: E) -> UiError {
    UiError::Terminal(e.to_string())
}

/// Runs the UI until the controller says `Exited` (or goes away), or the user forces a quit.
/// Returns the final state. The terminal is left as it is: restoring it is the caller's.
pub async fn run<B, I, G>(
    terminal: &mut Terminal<B>,
    state: AppState,
    mut io: AppIo<I, G>,
) -> Result<AppState, UiError>
where
    B: Backend,
    I: Stream<Item = std::io::Result<Event>> + Unpin,
    G: Stream<Item = ()> + Unpin,
{
    run_io(terminal, state, &mut io).await
}

/// [`run`] on borrowed I/O, so the caller can resume it after handing the terminal over.
pub async fn run_io<B, I, G>(
    terminal: &mut Terminal<B>,
    mut state: AppState,
    io: &mut AppIo<I, G>,
) -> Result<AppState, UiError>
where
    B: Backend,
    I: Stream<Item = std::io::Result<Event>> + Unpin,
    G: Stream<Item = ()> + Unpin,
{
    let mut outbox: VecDeque<LeadCommand> = VecDeque::new();
    let mut input_open = true;
    let mut signals_open = true;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(MissedTickBehavior::Skip);
    state.now_ms = (io.clock)();
    loop {
        outbox.extend(state.take_commands());
        if state.dirty {
            terminal
                .draw(|frame| render::render(frame, &mut state))
                .map_err(draw_error)?;
            state.dirty = false;
            state.frames += 1;
        }
        if state.exit {
            break;
        }
        tokio::select! {
            biased;
            event = io.events.recv() => match event {
                Some(event) => {
                    state.now_ms = (io.clock)();
                    state.apply(event);
                    // Apply everything already waiting before the next frame.
                    while !state.exit {
                        match io.events.try_recv() {
                            Ok(event) => state.apply(event),
                            Err(_) => break,
                        }
                    }
                    // Then the keys already typed: a busy team's stream of events never holds
                    // back what the person types (events come first in this select).
                    while input_open && !state.exit {
                        match ready_now(&mut io.input).await {
                            Some(Some(Ok(event))) => {
                                state.now_ms = (io.clock)();
                                state.handle_event(event);
                            }
                            Some(Some(Err(e))) => return Err(UiError::Io(e)),
                            Some(None) => input_open = false,
                            None => break,
                        }
                    }
                }
                None => {
                    // The controller is gone: nothing more will happen.
                    state.exit = true;
                    state.dirty = true;
                }
            },
            permit = io.commands.reserve(), if !outbox.is_empty() => match permit {
                Ok(permit) => {
                    if let Some(command) = outbox.pop_front() {
                        permit.send(command);
                    }
                }
                Err(_) => state.exit = true,
            },
            input = io.input.next(), if input_open => match input {
                Some(Ok(event)) => {
                    state.now_ms = (io.clock)();
                    state.handle_event(event);
                }
                Some(Err(e)) => return Err(UiError::Io(e)),
                None => input_open = false,
            },
            signal = io.signals.next(), if signals_open => match signal {
                Some(()) => {
                    if state.quit == QuitState::Requested {
                        state.exit = true;
                    } else {
                        // The lead decides: one in this process quits, a server keeps running.
                        state.send(LeadCommand::ScreenClosed);
                        state.quit = QuitState::Requested;
                        state.dirty = true;
                    }
                }
                None => signals_open = false,
            },
            _ = tick.tick() => state.tick((io.clock)()),
        }
    }
    outbox.extend(state.take_commands());
    if state.hand_over.is_some() {
        // The loop resumes after the hand-over: what was not sent yet goes then, in order.
        for command in outbox {
            state.send(command);
        }
        return Ok(state);
    }
    // Hand over what is still queued (a Quit, typically), unless the controller is gone or
    // does not take it within a second.
    for command in outbox {
        match tokio::time::timeout(Duration::from_secs(1), io.commands.send(command)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => break,
        }
    }
    Ok(state)
}

/// The input's next item if it is ready now (`None` if not), polled with this task's own
/// waker: crossterm's `EventStream` keeps the waker of the first poll that found nothing until
/// a key comes, so a poll with a no-op waker (`now_or_never`) left the loop asleep over typed
/// keys until the next tick, and they were applied after events that came later.
async fn ready_now<I>(input: &mut I) -> Option<Option<std::io::Result<Event>>>
where
    I: Stream<Item = std::io::Result<Event>> + Unpin,
{
    futures::future::poll_fn(|cx| match input.poll_next_unpin(cx) {
        std::task::Poll::Ready(item) => std::task::Poll::Ready(Some(item)),
        std::task::Poll::Pending => std::task::Poll::Ready(None),
    })
    .await
}
