//! The real terminal: raw mode, alternate screen, bracketed paste and (where the terminal
//! supports it) disambiguated keys so Shift+Enter is seen; restored on drop, on panic (a hook
//! that restores before the previous hook prints) and after SIGINT/SIGTERM/SIGHUP (the loop
//! asks the controller to quit and returns normally). [`run_tui`] is the production entry.

use std::io::{Stdout, Write, stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, EnableBracketedPaste, EnableFocusChange,
    EventStream, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use crossterm::{cursor, execute};
use futures::Stream;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use tokio::sync::mpsc;

use crate::lead::contract::{LeadCommand, LeadEvent};
use crate::ui::app::{self, AppIo};
use crate::ui::colors::{ColorMode, ColorWriter};
use crate::ui::error::UiError;
use crate::ui::keymap::Keymap;
use crate::ui::state::AppState;

/// Whether the terminal is in UI mode (so restoring twice is harmless).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether keyboard enhancement flags were pushed.
static ENHANCED: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Puts the terminal back as it was. Safe to call at any time, any number of times.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if ENHANCED.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        DisableFocusChange,
        LeaveAlternateScreen,
        cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Restores the terminal when dropped (normal exit and errors alike).
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<ColorWriter<Stdout>>>,
}

/// What the session decided for the UI: its keys and its colours.
#[derive(Debug, Clone, Default)]
pub struct UiSetup {
    pub keymap: Keymap,
    pub colors: ColorMode,
    /// Written when the terminal reports focus changes (read by a screen's notifications).
    pub focus: crate::ui::focus::TerminalFocus,
}

impl TerminalGuard {
    /// Enters UI mode and installs the panic hook (once per process); frames are written
    /// with the colours `colors` allows.
    pub fn enter(colors: ColorMode) -> Result<TerminalGuard, UiError> {
        HOOK.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                previous(info);
            }));
        });
        enable_raw_mode()?;
        ACTIVE.store(true, Ordering::SeqCst);
        let mut out = stdout();
        let entered = execute!(
            out,
            EnterAlternateScreen,
            EnableBracketedPaste,
            EnableFocusChange,
            cursor::Hide
        );
        if let Err(e) = entered {
            restore();
            return Err(e.into());
        }
        if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
            && execute!(
                out,
                PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
            )
            .is_ok()
        {
            ENHANCED.store(true, Ordering::SeqCst);
        }
        match Terminal::new(CrosstermBackend::new(ColorWriter::new(stdout(), colors))) {
            Ok(terminal) => Ok(TerminalGuard { terminal }),
            Err(e) => {
                restore();
                Err(e.into())
            }
        }
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// One item per SIGINT, SIGTERM or SIGHUP.
pub fn signal_stream() -> Result<impl Stream<Item = ()> + Unpin, UiError> {
    use futures::StreamExt;
    use tokio::signal::unix::{SignalKind, signal};
    let mut streams = Vec::new();
    for kind in [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ] {
        let s = signal(kind)?;
        streams.push(
            futures::stream::unfold(s, |mut s| async move { s.recv().await.map(|()| ((), s)) })
                .boxed(),
        );
    }
    Ok(futures::stream::select_all(streams))
}

/// Prints `lines` on the normal screen (the terminal restored), escaped like every text from
/// files.
fn print_farewell(lines: &[String]) {
    use std::io::Write;
    if lines.is_empty() {
        return;
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{}", crate::protocol::display::visible_line(line));
    }
    let _ = out.flush();
}

/// Runs the program a jump hands the terminal to, until it ends: `Ok` when it ran and ended
/// well, `Err` saying what went wrong (it could not start, or it failed). The caller starts it
/// (the UI never starts processes); the future must not block the runtime while it runs.
pub type HandOverFn<'a> =
    dyn FnMut(&[String]) -> futures::future::BoxFuture<'static, Result<(), String>> + Send + 'a;

/// Runs the UI on the real terminal until the controller exits; the terminal is restored
/// however this ends. When the controller asks for the terminal (`HandOverTerminal`), the UI
/// leaves its screen, stops reading keys, says how to come back (and, where the program cannot
/// show it, waits for Enter so it is read), has `hand_over` run the program while it keeps
/// taking the controller's events, then takes the terminal back and redraws.
pub async fn run_tui(
    events: mpsc::Receiver<LeadEvent>,
    commands: mpsc::Sender<LeadCommand>,
    setup: UiSetup,
    hand_over: &mut HandOverFn<'_>,
) -> Result<(), UiError> {
    let signals = signal_stream()?;
    let mut io = AppIo {
        input: EventStream::new(),
        events,
        commands,
        signals,
        clock: app::system_clock,
    };
    let mut state = AppState::new();
    state.keymap = setup.keymap;
    state.colors = setup.colors;
    state.terminal_focus = setup.focus;
    loop {
        let mut guard = TerminalGuard::enter(setup.colors)?;
        let result = app::run_io(&mut guard.terminal, state, &mut io).await;
        restore();
        match result {
            Ok(mut next) => {
                drop(guard);
                let Some(hand) = next.hand_over.take() else {
                    // Back on the normal screen: what must stay on the terminal (the
                    // worktrees a `/quit` kept or removed).
                    print_farewell(&next.farewell);
                    return Ok(());
                };
                // Nobody may read the keyboard while the program has it.
                let AppIo {
                    input,
                    mut events,
                    commands,
                    signals,
                    clock,
                } = io;
                drop(input);
                next.exit = false;
                let went = match away::say_way_back(&hand, &mut events, &mut next, clock).await {
                    Ok(went) => went,
                    Err(e) => {
                        tracing::warn!("before handing the terminal over: {e}");
                        true
                    }
                };
                if went {
                    let program = hand_over(&hand.argv);
                    if let Err(why) = away::run_away(program, &mut events, &mut next, clock).await {
                        // The command as a person would type it (tmux's chained commands left
                        // out).
                        let shown: Vec<&str> = hand
                            .argv
                            .iter()
                            .map(String::as_str)
                            .take_while(|a| *a != ";")
                            .collect();
                        away::note(&mut next, format!("`{}` {why}", shown.join(" ")));
                    }
                } else {
                    away::note(&mut next, "Stayed in the lead.".to_string());
                }
                next.now_ms = clock();
                next.back_from_elsewhere();
                io = AppIo {
                    input: EventStream::new(),
                    events,
                    commands,
                    signals,
                    clock,
                };
                next.dirty = true;
                state = next;
            }
            Err(e) => {
                // The terminal is gone (a hangup): ratatui's `Terminal` would try to show the
                // cursor when dropped and print the failure to the dead stderr, which panics.
                // Leak it instead.
                std::mem::forget(guard);
                return Err(e);
            }
        }
    }
}

mod away {
    //! While the terminal is handed over: the way back said on the normal screen first (and,
    //! when the program cannot show it, Enter asked for, Esc staying), then the program run
    //! while the controller's events keep being applied (a busy team never fills the
    //! connection while the user is away; nothing is drawn).

    use std::io::Write;

    use crossterm::event::{Event, EventStream, KeyCode, KeyEventKind, KeyModifiers};
    use futures::StreamExt;
    use tokio::sync::mpsc;

    use crate::lead::contract::{HandOver, LeadEvent, TranscriptItem};
    use crate::ui::state::AppState;

    /// A note of the screen's own in the lead's transcript.
    pub fn note(state: &mut AppState, text: String) {
        state.apply(LeadEvent::Transcript(TranscriptItem::System { text }));
    }

    /// Applies one controller event while the UI is away (a second hand-over is ignored: the
    /// terminal is already elsewhere); `false` once the controller is gone.
    fn apply(state: &mut AppState, event: Option<LeadEvent>, clock: fn() -> u64) -> bool {
        match event {
            Some(LeadEvent::HandOverTerminal(_)) => true,
            Some(event) => {
                state.now_ms = clock();
                state.apply(event);
                true
            }
            None => {
                state.exit = true;
                false
            }
        }
    }

    /// Prints the way back; asks for Enter when the program will not show it. Returns
    /// whether to go.
    pub async fn say_way_back(
        hand: &HandOver,
        events: &mut mpsc::Receiver<LeadEvent>,
        state: &mut AppState,
        clock: fn() -> u64,
    ) -> std::io::Result<bool> {
        let mut out = std::io::stdout();
        let back = crate::protocol::display::visible_line(&hand.back);
        if hand.shown_inside || back.is_empty() {
            writeln!(out, "teamlead: {back}")?;
            out.flush()?;
            return Ok(true);
        }
        write!(
            out,
            "teamlead: {back}\r\nPress Enter to go there (Esc stays in the lead).\r\n"
        )?;
        out.flush()?;
        crossterm::terminal::enable_raw_mode()?;
        let mut keys = EventStream::new();
        let mut events_open = true;
        let went = loop {
            tokio::select! {
                key = keys.next() => match key {
                    Some(Ok(Event::Key(k))) if k.kind != KeyEventKind::Release => match k.code {
                        KeyCode::Enter => break true,
                        KeyCode::Esc => break false,
                        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => {
                            break false;
                        }
                        _ => {}
                    },
                    Some(Ok(_)) => {}
                    Some(Err(_)) | None => break false,
                },
                event = events.recv(), if events_open => {
                    events_open = apply(state, event, clock);
                    if !events_open {
                        break false;
                    }
                }
            }
        };
        drop(keys);
        if let Err(e) = crossterm::terminal::disable_raw_mode() {
            tracing::warn!("after asking before a hand-over: {e}");
        }
        Ok(went)
    }

    /// Runs `program` while applying the controller's events.
    pub async fn run_away(
        program: futures::future::BoxFuture<'static, Result<(), String>>,
        events: &mut mpsc::Receiver<LeadEvent>,
        state: &mut AppState,
        clock: fn() -> u64,
    ) -> Result<(), String> {
        tokio::pin!(program);
        let mut events_open = true;
        loop {
            tokio::select! {
                outcome = &mut program => return outcome,
                event = events.recv(), if events_open => {
                    events_open = apply(state, event, clock);
                }
            }
        }
    }
}
