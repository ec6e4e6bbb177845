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

use crate::lead::view::{LeadCommand, LeadEvent};
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

/// Runs the UI on the real terminal until the controller exits; the terminal is restored
/// however this ends. When the controller asks for the terminal (`HandOverTerminal`), the UI
/// leaves its screen, stops reading keys, calls `hand_over` with the program (the caller runs
/// it: the UI never starts processes), then takes the terminal back and redraws.
pub async fn run_tui(
    events: mpsc::Receiver<LeadEvent>,
    commands: mpsc::Sender<LeadCommand>,
    setup: UiSetup,
    hand_over: &mut (dyn FnMut(&[String]) + Send),
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
                let Some(argv) = next.hand_over.take() else {
                    // Back on the normal screen: what must stay on the terminal (the
                    // worktrees a `/quit` kept or removed).
                    print_farewell(&next.farewell);
                    return Ok(());
                };
                // Nobody may read the keyboard while the program has it.
                let AppIo {
                    input,
                    events,
                    commands,
                    signals,
                    clock,
                } = io;
                drop(input);
                hand_over(&argv);
                io = AppIo {
                    input: EventStream::new(),
                    events,
                    commands,
                    signals,
                    clock,
                };
                next.exit = false;
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
