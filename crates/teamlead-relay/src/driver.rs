//! A small blocking driver: runs a [`Link`] over any `Read`/`Write` pair (a relay's stdin and
//! stdout, an ssh child's pipes, a pair of pipes in a test). A thread reads the input and cuts
//! it into lines; the driver's loop applies them, ticks the link when a file of the team's
//! inboxes changes ([`crate::wake`]: new local entries go to the peer at once) and every `poll`
//! (liveness, and the safety net of polling the inboxes), and writes what each step returns.
//! [`run_stdio`] is the relay's side, as `teamlead relay --stdio` runs it.

use std::io::{Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use teamlead_protocol::store::Home;

use crate::hello::Identity;
use crate::session::{End, Event, Link, LinkError, Step};
use crate::wake::Wake;
use crate::wire::{LineBuffer, WireError};

/// How often the driver ticks the link when no line arrives and no file event woke it: the
/// longest a new local inbox entry waits to be picked up for the peer when the kernel gives no
/// file events (the inboxes are polled; see [`crate::forward`]).
pub const DEFAULT_POLL: Duration = Duration::from_millis(50);

/// How often the loop looks at [`DriverOptions::stop`] when nothing happens.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// The most lines applied as one batch.
const MAX_BATCH: usize = 256;

/// How [`drive`] and [`run_stdio`] run.
#[derive(Debug, Clone)]
pub struct DriverOptions {
    /// See [`DEFAULT_POLL`].
    pub poll: Duration,
    /// Set from elsewhere to end the connection at the next poll ([`Ended::Stopped`]).
    pub stop: Option<Arc<AtomicBool>>,
    /// Lets another thread wake the loop at once (its `between` step then runs), e.g. for a
    /// route that changed, instead of at the next poll.
    pub nudge: Option<Nudge>,
}

impl Default for DriverOptions {
    fn default() -> DriverOptions {
        DriverOptions {
            poll: DEFAULT_POLL,
            stop: None,
            nudge: None,
        }
    }
}

/// A handle that wakes a running driver's loop ([`DriverOptions::nudge`]); a nudge while no
/// driver runs does nothing (the next one runs its `between` step first anyway).
#[derive(Clone, Default)]
pub struct Nudge(Arc<std::sync::Mutex<Option<mpsc::Sender<Input>>>>);

impl std::fmt::Debug for Nudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Nudge")
    }
}

impl Nudge {
    /// Wakes the driver that runs now, if one does.
    pub fn nudge(&self) {
        if let Ok(tx) = self.0.lock()
            && let Some(tx) = tx.as_ref()
        {
            let _ = tx.send(Input::Wake);
        }
    }

    fn set(&self, tx: Option<mpsc::Sender<Input>>) {
        if let Ok(mut slot) = self.0.lock() {
            *slot = tx;
        }
    }
}

/// How a connection ended without an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// The peer closed its side (end of input).
    Closed,
    /// The handshake failed, or the peer went silent.
    Link(End),
    /// [`DriverOptions::stop`] was set.
    Stopped,
}

/// Why a connection broke.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("the link's output failed: {0}")]
    Write(std::io::Error),
    #[error("the link's input failed: {0}")]
    Read(std::io::Error),
}

/// What the reading thread hands the loop.
enum Input {
    Line(Vec<u8>),
    Broken(WireError),
    Failed(std::io::Error),
    Closed,
    /// A file of the team's inboxes changed.
    Wake,
}

/// Runs one connection of `link` over `reader`/`writer` until it ends: the peer closes, the
/// handshake fails, the peer goes silent, or a frame or the store breaks it. `on_event` sees
/// every event. The link's state stays on disk either way; the next connection resumes. The
/// reading thread ends when `reader` does (a blocked read outlives this call until then).
pub fn drive<R, W>(
    link: &mut Link,
    reader: R,
    writer: W,
    options: &DriverOptions,
    on_event: impl FnMut(&Event),
) -> Result<Ended, DriveError>
where
    R: Read + Send + 'static,
    W: Write,
{
    drive_with(link, reader, writer, options, on_event, |_| {
        Ok(Step::default())
    })
}

/// [`drive`], with `between` run on the link at every turn of the loop (at least every
/// [`STOP_CHECK`]): what its step says is written and reported as any other. The lead's end
/// puts a route that changed into the outbox there, so the open connection carries it.
pub fn drive_with<R, W>(
    link: &mut Link,
    reader: R,
    mut writer: W,
    options: &DriverOptions,
    mut on_event: impl FnMut(&Event),
    mut between: impl FnMut(&mut Link) -> Result<Step, LinkError>,
) -> Result<Ended, DriveError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let (tx, rx) = mpsc::channel();
    let wake_tx = tx.clone();
    let mut wake = Wake::new(move || {
        let _ = wake_tx.send(Input::Wake);
    });
    if let Some(nudge) = &options.nudge {
        nudge.set(Some(tx.clone()));
    }
    std::thread::Builder::new()
        .name("relay-read".into())
        .spawn(move || read_lines(reader, &tx))
        .map_err(DriveError::Read)?;
    let result = (|| {
        let step = link.connect(Instant::now());
        if let Some(end) = emit(step, &mut writer, &mut on_event)? {
            return Ok(Ended::Link(end));
        }
        let mut last_tick = Instant::now();
        let mut last_state = Instant::now();
        loop {
            wake.ensure(&link.watched_dirs());
            if options
                .stop
                .as_ref()
                .is_some_and(|s| s.load(Ordering::Relaxed))
            {
                return Ok(Ended::Stopped);
            }
            // The stop flag is looked at every STOP_CHECK even when the poll is longer.
            let wait = options
                .poll
                .saturating_sub(last_tick.elapsed())
                .min(STOP_CHECK);
            let mut due = false;
            let step = match rx.recv_timeout(wait) {
                Ok(Input::Line(line)) => {
                    // Lines that are already here go as one batch (one persist, one ack).
                    let mut batch = vec![line];
                    let mut after = None;
                    while batch.len() < MAX_BATCH {
                        match rx.try_recv() {
                            Ok(Input::Line(line)) => batch.push(line),
                            Ok(other) => {
                                after = Some(other);
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    // A tick follows a batch that applied data or opened the connection (what
                    // it changed may concern the peer); acks, pings and pongs need none.
                    let (recv_before, open_before) = (link.recv(), link.is_open());
                    let step = link.on_lines(&batch, Instant::now())?;
                    due = link.recv() != recv_before || link.is_open() != open_before;
                    link.heard_until(Instant::now());
                    if let Some(end) = emit(step, &mut writer, &mut on_event)? {
                        return Ok(Ended::Link(end));
                    }
                    match after {
                        None | Some(Input::Wake) => Step::default(),
                        Some(Input::Broken(e)) => return Err(LinkError::Wire(e).into()),
                        Some(Input::Failed(e)) => return Err(DriveError::Read(e)),
                        Some(Input::Closed) => return Ok(Ended::Closed),
                        Some(Input::Line(_)) => Step::default(),
                    }
                }
                Ok(Input::Broken(e)) => return Err(LinkError::Wire(e).into()),
                Ok(Input::Failed(e)) => return Err(DriveError::Read(e)),
                Ok(Input::Closed) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Ok(Ended::Closed);
                }
                Ok(Input::Wake) => {
                    due = true;
                    Step::default()
                }
                Err(mpsc::RecvTimeoutError::Timeout) => Step::default(),
            };
            if let Some(end) = emit(between(link)?, &mut writer, &mut on_event)? {
                return Ok(Ended::Link(end));
            }
            if !due && last_tick.elapsed() < options.poll {
                continue;
            }
            // Before the tick looks: a change made while it runs wakes the loop again.
            wake.rearm();
            last_tick = Instant::now();
            if let Some(end) = emit(step, &mut writer, &mut on_event)? {
                return Ok(Ended::Link(end));
            }
            // The messages' frames go out before the task list and member fields are looked at.
            let step = link.tick_messages(Instant::now())?;
            if let Some(end) = emit(step, &mut writer, &mut on_event)? {
                return Ok(Ended::Link(end));
            }
            // A file changed meanwhile (a reply, maybe): the next turn picks it up first, and
            // the scans wait for a turn with none pending, never longer than a poll.
            if wake.is_pending() && last_state.elapsed() < options.poll {
                continue;
            }
            last_state = Instant::now();
            let step = link.tick_state(Instant::now())?;
            if let Some(end) = emit(step, &mut writer, &mut on_event)? {
                return Ok(Ended::Link(end));
            }
        }
    })();
    if let Some(nudge) = &options.nudge {
        nudge.set(None);
    }
    link.disconnect();
    result
}

/// Writes a step's lines, reports its events, and says whether it ended the connection.
fn emit<W: Write>(
    step: Step,
    writer: &mut W,
    on_event: &mut impl FnMut(&Event),
) -> Result<Option<End>, DriveError> {
    if !step.lines.is_empty() {
        for line in &step.lines {
            writer
                .write_all(line.as_bytes())
                .map_err(DriveError::Write)?;
        }
        writer.flush().map_err(DriveError::Write)?;
    }
    for event in &step.events {
        on_event(event);
    }
    Ok(step.end)
}

/// The reading thread: lines until the end of input or a broken stream.
fn read_lines<R: Read>(mut reader: R, tx: &mpsc::Sender<Input>) {
    let mut lines = LineBuffer::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => {
                if lines.pending() > 0 {
                    tracing::info!("the input ended in the middle of a frame; it is dropped");
                }
                let _ = tx.send(Input::Closed);
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Input::Failed(e));
                return;
            }
        };
        match lines.feed(&buf[..n]) {
            Ok(complete) => {
                for line in complete {
                    if tx.send(Input::Line(line)).is_err() {
                        return;
                    }
                }
            }
            Err(e) => {
                let _ = tx.send(Input::Broken(e));
                return;
            }
        }
    }
}

/// How [`run_stdio`] runs.
#[derive(Debug, Clone)]
pub struct RelayOptions {
    /// The version the relay reports in its hello (the binary's).
    pub version: String,
    /// See [`DEFAULT_POLL`].
    pub poll: Duration,
}

/// What `teamlead relay --stdio` runs: the relay's end of a link over `reader`/`writer`
/// (its standard input and output), with its state and inboxes under `home`. Blocks until the
/// connection ends; the lead starts a new relay for the next one. New entries that local
/// writers put in the inboxes bound for the lead are found by polling the team's inboxes every
/// `options.poll` (and reading each in full at least every second).
pub fn run_stdio<R, W>(
    home: &Home,
    reader: R,
    writer: W,
    options: &RelayOptions,
) -> Result<Ended, DriveError>
where
    R: Read + Send + 'static,
    W: Write,
{
    let mut link = Link::relay(home.clone(), Identity::this_build(&options.version));
    let driver = DriverOptions {
        poll: options.poll,
        ..DriverOptions::default()
    };
    // The lead's presence on this host (its team's liveness lock and record) from the
    // handshake to the end of the connection.
    let mut presence = None;
    let ended = drive(&mut link, reader, writer, &driver, |event| {
        tracing::debug!("{event:?}");
        if let (Event::Up(peer), None) = (event, &presence) {
            presence = Some(crate::presence::Presence::hold(home, &peer.team));
        }
    });
    drop(presence);
    ended
}
