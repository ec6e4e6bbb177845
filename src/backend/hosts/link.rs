//! The lead's side of the link to one host for one team (DESIGN.md "Hosts", "The relay"): a
//! thread of its own runs `teamlead relay --stdio` on the host over the host's ssh master
//! ([`Connection::command`], which checks the master and replaces a dead one first) and drives
//! `teamlead_relay`'s [`Link`] (role lead) over the child's pipes. Before each connection it
//! queues the route (the members that run on the host) and the team file the host needs; the
//! link sends both after the handshake. When the connection ends it kills the child and
//! reconnects with backoff. A route change goes over the connection that is open (the driver's
//! `between` step puts it in the outbox and sends it; no new relay), and a link that is down
//! connects again at once to carry it. A teammate's session to start goes the same way,
//! right behind its route, to a relay with capability `start` ([`HostLink::start_session`]).
//! The task list's mirror, the host's claims
//! and its members' fields travel inside the link itself (`teamlead_relay::tasks_lead`,
//! `members`): nothing here but the identity that needs them of the relay.
//!
//! It reports the host's state ([`HostState`]: up, or down since when and why) to a sink, by
//! traffic: a connection whose relay sent nothing for [`QUIET_LIMIT`] is reported down before
//! the link gives up on it (pings go every 2 s, so a live relay answers well inside that),
//! and up again when traffic comes back. Nothing here blocks the controller: the sink only
//! sends an event.

use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use teamlead_relay::{DriverOptions, Ended, Event, Identity, Link};

use super::Connection;
use crate::protocol::InboxEntry;
use crate::protocol::time::now_ms;
use crate::store::Home;

/// No frame from the relay for this long: the host is reported down (the link itself ends the
/// connection after 6 s of silence).
pub const QUIET_LIMIT: Duration = Duration::from_millis(3000);

/// The most entries handed over ([`HostLink::hand_off`]) that wait for a connection; past
/// it the link's pick-up from the inbox files carries them, and every later one.
const MAX_HANDED: usize = 1024;

/// The lead's entries handed over to a link, waiting for its driver's next turn
/// ([`HostLink::hand_off`]).
#[derive(Default)]
struct Handed {
    /// The member and the entry, in order.
    entries: Vec<(String, InboxEntry)>,
    /// More than [`MAX_HANDED`] waited once: from then on the file carries every entry, so a
    /// later hand-off never overtakes one that was let go.
    gave_up: bool,
}

impl Handed {
    /// Queues `entry` for `to`; false when it is left to the file (this link gave up, now or
    /// before).
    fn push(&mut self, to: &str, entry: InboxEntry) -> bool {
        if self.gave_up {
            return false;
        }
        if self.entries.len() >= MAX_HANDED {
            self.entries = Vec::new();
            self.gave_up = true;
            return false;
        }
        self.entries.push((to.to_string(), entry));
        true
    }

    /// What waits, for the driver to send.
    fn take(&mut self) -> Vec<(String, InboxEntry)> {
        std::mem::take(&mut self.entries)
    }
}

/// The first wait before a reconnect, and the longest.
const BACKOFF_MIN: Duration = Duration::from_millis(250);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// One host's state, as the lead shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostState {
    pub team: String,
    pub host: String,
    /// The link carries traffic.
    pub up: bool,
    /// Since when (epoch ms).
    pub since_ms: u64,
    /// Why it is down, in words (empty when up).
    pub why: String,
}

/// Where a link reports its host's state (an event to the controller; never blocks).
pub type StateSink = Arc<dyn Fn(HostState) + Send + Sync>;

/// What the link thread and its owner share.
struct Shared {
    /// End for good.
    stop: AtomicBool,
    /// The route changed: the open connection sends it (or the next one does).
    route_changed: AtomicBool,
    hosted: Mutex<Vec<String>>,
    /// The last state reported (`None`: none yet).
    reported: Mutex<Option<bool>>,
    /// Bumped by each route change; `synced` is the last one the relay acknowledged.
    generation: AtomicU64,
    synced: AtomicU64,
    /// Told (under its mutex) whenever `synced` grows, so a wait for it wakes at once.
    synced_signal: (Mutex<()>, Condvar),
    /// Wakes the open connection's driver for a route change.
    nudge: teamlead_relay::driver::Nudge,
    /// Sessions to start on the host through the relay (`start`): name and command line.
    starts: Mutex<Vec<(String, String)>>,
    /// How each asked start went, as the relay said (`error`), until taken.
    started: Mutex<std::collections::HashMap<String, Option<String>>>,
    /// The open connection's relay can start sessions (capability `start`).
    can_start: AtomicBool,
    /// Entries the lead is appending to its copy of a hosted member's inbox, to send now
    /// ([`HostLink::hand_off`]): the member and the entry, in order.
    handed: Mutex<Handed>,
}

impl Shared {
    /// The relay acknowledged route `generation`: recorded, and whoever waits for it told.
    fn set_synced(&self, generation: u64) {
        self.synced.fetch_max(generation, Ordering::Relaxed);
        self.signal();
    }

    /// Wakes whoever waits on `synced_signal` (an ack of a route, a start's answer).
    fn signal(&self) {
        let (lock, signal) = &self.synced_signal;
        let _held = lock.lock();
        signal.notify_all();
    }
}

/// A running link to one host for one team; dropped or [`HostLink::stop`]ped, it ends.
pub struct HostLink {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

/// What one link needs.
pub struct LinkSpec {
    pub connection: Connection,
    /// The lead's home (the team's directory, the link's state).
    pub home: Home,
    pub team: String,
    /// The link id (stable for this team on this host: [`link_id`]).
    pub link: String,
    /// The members that run on the host.
    pub hosted: Vec<String>,
    /// The version the lead says in its hello.
    pub version: String,
    /// The lead's config price rows, for the relay to price the host's `claude` teammates
    /// (`teamlead_relay::prices`).
    pub prices: serde_json::Value,
    /// Where the entries for the lead's inbox go as their frames are read, before the link
    /// appends them (`Link::on_lead_entry`; `None`: the lead reads them from its inbox).
    pub lead_entries: Option<crate::backend::executor::LeadEntrySink>,
}

/// The link id of `team` (created at `created_ms`) on `host`: a uuid made from both, so the
/// same team keeps it across lead restarts and a new team of the same name gets another.
pub fn link_id(team: &str, created_ms: u64, host: &str) -> String {
    teamlead_relay::forward::relay_id(team, &format!("link/{host}/{created_ms}"))
}

/// The relay's command line on the host, with the host's home when the config names one and
/// the grace the lead gives its teammates there (the relay keeps it in the lead's presence
/// record, for `teamlead clean` on that host).
pub fn relay_command(home: Option<&str>, grace_ms: u128) -> String {
    super::probe::remote_teamlead_env(
        home,
        None,
        &[(
            teamlead_relay::presence::GRACE_VAR.to_string(),
            grace_ms.to_string(),
        )],
        &["relay", "--stdio"],
    )
}

impl HostLink {
    /// Starts the link's thread.
    pub fn start(spec: LinkSpec, sink: StateSink) -> std::io::Result<HostLink> {
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            route_changed: AtomicBool::new(false),
            hosted: Mutex::new(spec.hosted.clone()),
            reported: Mutex::new(None),
            generation: AtomicU64::new(1),
            synced: AtomicU64::new(0),
            synced_signal: (Mutex::new(()), Condvar::new()),
            nudge: teamlead_relay::driver::Nudge::default(),
            starts: Mutex::new(Vec::new()),
            started: Mutex::new(std::collections::HashMap::new()),
            can_start: AtomicBool::new(false),
            handed: Mutex::new(Handed::default()),
        });
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("link-{}", spec.connection.host.name))
            .spawn(move || run(spec, &thread_shared, &sink))?;
        Ok(HostLink {
            shared,
            thread: Some(thread),
        })
    }

    /// The members that run on the host now, with the team file as it is now: sent to the
    /// relay (over the open connection, or the next). Returns the generation [`HostLink::wait_synced`]
    /// waits for.
    pub fn set_hosted(&self, hosted: Vec<String>) -> u64 {
        if let Ok(mut h) = self.shared.hosted.lock() {
            *h = hosted;
        }
        let generation = self.shared.generation.fetch_add(1, Ordering::Relaxed) + 1;
        self.shared.route_changed.store(true, Ordering::Relaxed);
        // The open connection sends it now, not at its next poll.
        self.shared.nudge.nudge();
        generation
    }

    /// Waits until the relay acknowledged the route and team file of `generation` (or a later
    /// one); false when `deadline` passed first (the host is unreachable).
    pub fn wait_synced(&self, generation: u64, deadline: Duration) -> bool {
        self.synced_waiter().wait(generation, deadline)
    }

    /// Whether the open connection's relay starts sessions itself (capability `start`): then
    /// [`HostLink::start_session`] does it in the same trip as the route.
    pub fn can_start(&self) -> bool {
        self.shared.can_start.load(Ordering::Relaxed)
    }

    /// Asks the relay to run `line` (the command line that starts `name`'s session on the
    /// host) after everything queued before it; [`SyncedWaiter::wait_started`] hears how it
    /// went.
    pub fn start_session(&self, name: &str, line: &str) {
        if let Ok(mut started) = self.shared.started.lock() {
            started.remove(name);
        }
        if let Ok(mut starts) = self.shared.starts.lock() {
            starts.push((name.to_string(), line.to_string()));
        }
        self.shared.nudge.nudge();
    }

    /// `entry`, which the lead appends to its copy of `to`'s inbox (a member on this host), goes
    /// over the open connection now (`Link::send_entries`: into the link's outbox, synced, and
    /// onto the link) instead of when the link finds it in the file: its delivery waits for
    /// neither the copy's durable append nor a file event and a read of the inbox. The copy is
    /// still appended (it is the lead's record, where the host's read marks land) and is not
    /// sent again. While no connection runs, entries wait here and the next connection sends
    /// them before it looks at the inboxes. Past [`MAX_HANDED`] waiting (a long partition and
    /// a talkative lead), they are let go and this link hands nothing over any more: the file
    /// carries those and every later entry, in its order (a later hand-off would overtake
    /// them).
    pub fn hand_off(&self, to: &str, entry: InboxEntry) {
        let queued = self
            .shared
            .handed
            .lock()
            .is_ok_and(|mut handed| handed.push(to, entry));
        if queued {
            self.shared.nudge.nudge();
        }
    }

    /// A handle that waits for this link's route acknowledgements without the link itself
    /// (so its owner's lock need not be held while waiting).
    pub fn synced_waiter(&self) -> SyncedWaiter {
        SyncedWaiter(self.shared.clone())
    }

    /// Whether the host was last reported up.
    pub fn is_up(&self) -> bool {
        self.shared
            .reported
            .lock()
            .map(|r| *r == Some(true))
            .unwrap_or(false)
    }

    /// Ends the link: the relay is killed, its state stays on disk for the next lead.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits for a link's route acknowledgement ([`HostLink::synced_waiter`]).
pub struct SyncedWaiter(Arc<Shared>);

impl SyncedWaiter {
    /// Waits until the relay acknowledged route `generation` (or a later one); false when
    /// `deadline` passed first or the link ended.
    pub fn wait(&self, generation: u64, deadline: Duration) -> bool {
        self.wait_for(deadline, |shared| {
            (shared.synced.load(Ordering::Relaxed) >= generation).then_some(())
        })
        .is_some()
    }

    /// Waits for the relay's answer to the start of `name` ([`HostLink::start_session`]):
    /// `Some(None)` it runs, `Some(Some(why))` it failed, `None` no answer within `deadline`
    /// (or the link ended).
    pub fn wait_started(&self, name: &str, deadline: Duration) -> Option<Option<String>> {
        self.wait_for(deadline, |shared| {
            shared.started.lock().ok().and_then(|mut s| s.remove(name))
        })
    }

    /// Waits until `done` says something (looked at under the signal's lock, so no signal is
    /// missed), `deadline` passes or the link ends.
    fn wait_for<T>(&self, deadline: Duration, done: impl Fn(&Shared) -> Option<T>) -> Option<T> {
        let shared = &self.0;
        let until = Instant::now() + deadline;
        let (lock, signal) = &shared.synced_signal;
        let Ok(mut held) = lock.lock() else {
            return None;
        };
        loop {
            if let Some(found) = done(shared) {
                return Some(found);
            }
            let now = Instant::now();
            if now >= until || shared.stop.load(Ordering::Relaxed) {
                return None;
            }
            // A bounded wait, so a stop (which does not signal) is seen within 100 ms.
            let wait = (until - now).min(Duration::from_millis(100));
            held = match signal.wait_timeout(held, wait) {
                Ok((held, _)) => held,
                Err(_) => return None,
            };
        }
    }
}

impl Drop for HostLink {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Reports a state when it differs from the last one reported.
fn report(spec: &LinkSpec, shared: &Shared, sink: &StateSink, up: bool, why: &str) {
    StateOnly {
        team: &spec.team,
        host: &spec.connection.host.name,
    }
    .report(shared, sink, up, why);
}

/// Sleeps `d`, waking early when the link is stopped or its route changed.
fn pause(shared: &Shared, d: Duration) {
    let until = Instant::now() + d;
    while Instant::now() < until {
        if shared.stop.load(Ordering::Relaxed) || shared.route_changed.load(Ordering::Relaxed) {
            return;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The link's thread: connect, drive, reconnect with backoff, until stopped.
fn run(spec: LinkSpec, shared: &Arc<Shared>, sink: &StateSink) {
    // The lead needs the relay's task mirror and member fields, not only its inboxes: an
    // older relay is refused with what to do.
    let identity = Identity::lead_build(&spec.version);
    let mut link = match Link::lead(spec.home.clone(), &spec.team, &spec.link, identity) {
        Ok(link) => link,
        Err(e) => {
            report(
                &spec,
                shared,
                sink,
                false,
                &format!("the link's state: {e}"),
            );
            return;
        }
    };
    link.set_prices(spec.prices.clone());
    if let Some(sink) = spec.lead_entries.clone() {
        link.on_lead_entry(move |entry| sink(entry));
    }
    let mut backoff = BACKOFF_MIN;
    while !shared.stop.load(Ordering::Relaxed) {
        shared.route_changed.store(false, Ordering::Relaxed);
        let generation = shared.generation.load(Ordering::Relaxed);
        if let Err(e) = queue_route(&spec, shared, &mut link) {
            report(&spec, shared, sink, false, &e);
            pause(shared, backoff);
            backoff = (backoff * 2).min(BACKOFF_MAX);
            continue;
        }
        // What the relay must acknowledge for this route to be there.
        let sync = route_sync(generation, &link);
        match connect_once(&spec, shared, sink, &mut link, sync) {
            Ok(true) => backoff = BACKOFF_MIN,
            Ok(false) => {}
            Err(why) => report(&spec, shared, sink, false, &why),
        }
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        if !shared.route_changed.load(Ordering::Relaxed) {
            pause(shared, backoff);
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
    }
}

/// The route and the team file the host needs, into the link's outbox; the frames to send now
/// when the connection is open (else they go once it is).
fn queue_route(spec: &LinkSpec, shared: &Shared, link: &mut Link) -> Result<Vec<String>, String> {
    let hosted = shared
        .hosted
        .lock()
        .map(|h| h.clone())
        .map_err(|_| "the route's lock is poisoned".to_string())?;
    let mut lines = link
        .set_hosted(&hosted)
        .map_err(|e| format!("the link's state: {e}"))?
        .lines;
    let file = crate::store::team::read_team(&spec.home, &spec.team)
        .map_err(|e| format!("the team file: {e}"))?;
    lines.extend(
        link.set_team(&file.lead_agent_id, &file.members)
            .map_err(|e| format!("the link's state: {e}"))?
            .lines,
    );
    Ok(lines)
}

/// A route that changed while the connection runs: queued (with the team file) and its lines
/// to send; `sync` learns the seq whose ack means it is there.
fn route_step(
    spec: &LinkSpec,
    shared: &Shared,
    link: &mut Link,
    sync: &std::cell::Cell<RouteSync>,
) -> Result<teamlead_relay::Step, teamlead_relay::LinkError> {
    let mut step = teamlead_relay::Step::default();
    if !shared.route_changed.swap(false, Ordering::Relaxed) {
        return Ok(step);
    }
    let generation = shared.generation.load(Ordering::Relaxed);
    match queue_route(spec, shared, link) {
        Ok(lines) => step.lines = lines,
        Err(e) => {
            tracing::warn!(
                "the route to {} not sent for now: {e}",
                spec.connection.host.name
            );
            shared.route_changed.store(true, Ordering::Relaxed);
            return Ok(step);
        }
    }
    let now = route_sync(generation, link);
    sync.set(now);
    if now.target <= link.acked() {
        // Nothing new to send: the relay has it all already.
        shared.set_synced(now.generation);
    }
    Ok(step)
}

/// `generation` (read before its route was queued) is there once what is in `link`'s outbox
/// now is acknowledged.
fn route_sync(generation: u64, link: &Link) -> RouteSync {
    RouteSync {
        generation,
        target: link.acked() + link.unacked() as u64,
    }
}

/// The route generation a connection carries, and the seq whose ack means it is there.
#[derive(Debug, Clone, Copy)]
struct RouteSync {
    generation: u64,
    target: u64,
}

/// Counts the relay's traffic: the time of the last byte read.
struct Traffic<R> {
    inner: R,
    last_ms: Arc<AtomicU64>,
}

impl<R: Read> Read for Traffic<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.last_ms.store(now_ms(), Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// Kills the relay's ssh child and reaps it.
fn end_child(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// One connection: the relay started over the master, driven until it ends. `Ok(true)`: the
/// link was open at some point (the backoff starts over).
fn connect_once(
    spec: &LinkSpec,
    shared: &Arc<Shared>,
    sink: &StateSink,
    link: &mut Link,
    sync: RouteSync,
) -> Result<bool, String> {
    let mut cmd = spec
        .connection
        .command(&relay_command(
            spec.connection.host.home.as_deref(),
            super::remote::host_grace_ms(),
        ))
        .map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| format!("ssh did not start: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        end_child(&mut child);
        return Err("ssh's pipes are missing".to_string());
    };
    let last_ms = Arc::new(AtomicU64::new(now_ms()));
    let reader = Traffic {
        inner: stdout,
        last_ms: last_ms.clone(),
    };
    let ended = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicBool::new(false));
    // The watch: liveness by traffic, and the stop of this connection.
    let watch = {
        let (shared, ended, stop, opened, last_ms, sink) = (
            shared.clone(),
            ended.clone(),
            stop.clone(),
            opened.clone(),
            last_ms.clone(),
            sink.clone(),
        );
        let (team, host) = (spec.team.clone(), spec.connection.host.name.clone());
        std::thread::Builder::new()
            .name(format!("link-watch-{host}"))
            .spawn(move || {
                let quiet = QUIET_LIMIT.as_millis() as u64;
                while !ended.load(Ordering::Relaxed) {
                    if shared.stop.load(Ordering::Relaxed) {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if opened.load(Ordering::Relaxed) {
                        let silent = now_ms().saturating_sub(last_ms.load(Ordering::Relaxed));
                        let up = silent < quiet;
                        let why = format!("no traffic from the relay for {} s", silent / 1000);
                        let spec = StateOnly {
                            team: &team,
                            host: &host,
                        };
                        spec.report(&shared, &sink, up, if up { "" } else { &why });
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
            .map_err(|e| format!("no thread for the link's watch: {e}"))?
    };
    let options = DriverOptions {
        poll: teamlead_relay::driver::DEFAULT_POLL,
        stop: Some(stop.clone()),
        nudge: Some(shared.nudge.clone()),
    };
    let sync = std::cell::Cell::new(sync);
    let on_event = |event: &Event| {
        let target = sync.get();
        let synced = match event {
            Event::Up(peer) => {
                shared
                    .can_start
                    .store(peer.caps.iter().any(|c| c == "start"), Ordering::Relaxed);
                opened.store(true, Ordering::Relaxed);
                report(spec, shared, sink, true, "");
                peer.recv >= target.target
            }
            Event::Acked(seq) => *seq >= target.target,
            Event::Started { name, error } => {
                if let Ok(mut started) = shared.started.lock() {
                    started.insert(name.clone(), error.clone());
                }
                shared.signal();
                false
            }
            _ => false,
        };
        if synced {
            shared.set_synced(target.generation);
        }
    };
    // A route that changed while the connection runs: queued and sent over it.
    let between = |link: &mut Link| {
        // Sessions to start, after the route they need (the relay applies in order). They are
        // taken before the route is looked at: a start is asked for only after its route was
        // set (`set_hosted`, then `start_session`), so a start taken here has its route
        // queued by the step below or before it. (Taken after, a start asked for between the
        // two looks went out ahead of its route, and the relay refused it: "not in the route
        // to this host".)
        let starts = shared
            .starts
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default();
        let mut step = route_step(spec, shared, link, &sync)?;
        if !starts.is_empty() && shared.route_changed.load(Ordering::Relaxed) {
            // The route could not be queued now (or changed again): the starts wait for it.
            if let Ok(mut waiting) = shared.starts.lock() {
                let later = std::mem::replace(&mut *waiting, starts);
                waiting.extend(later);
            }
            return Ok(step);
        }
        for (name, line) in starts {
            step.lines.extend(link.start_session(&name, &line)?.lines);
        }
        // The lead's messages handed over, after the route they need (a member not in it yet
        // is left to the pick-up from the file).
        let handed = shared
            .handed
            .lock()
            .map(|mut h| h.take())
            .unwrap_or_default();
        // One outbox record (one sync) for each run of entries to the same member.
        for run in handed.chunk_by(|a, b| a.0 == b.0) {
            let entries: Vec<InboxEntry> = run.iter().map(|(_, e)| e.clone()).collect();
            let sent = link.send_entries(&run[0].0, &entries)?;
            step.lines.extend(sent.lines);
            step.events.extend(sent.events);
        }
        Ok(step)
    };
    let result = teamlead_relay::drive_with(link, reader, stdin, &options, on_event, between);
    shared.can_start.store(false, Ordering::Relaxed);
    ended.store(true, Ordering::Relaxed);
    let _ = watch.join();
    end_child(&mut child);
    let was_open = opened.load(Ordering::Relaxed);
    let why = match result {
        Ok(Ended::Stopped) => return Ok(was_open),
        Ok(Ended::Closed) => "the relay closed the link".to_string(),
        Ok(Ended::Link(end)) => format!("{end:?}"),
        Err(e) => e.to_string(),
    };
    if !shared.stop.load(Ordering::Relaxed) {
        report(spec, shared, sink, false, &why);
    }
    Ok(was_open)
}

/// The names a report needs, for the watch thread (which does not hold the spec).
struct StateOnly<'a> {
    team: &'a str,
    host: &'a str,
}

impl StateOnly<'_> {
    fn report(&self, shared: &Shared, sink: &StateSink, up: bool, why: &str) {
        let Ok(mut last) = shared.reported.lock() else {
            return;
        };
        if *last == Some(up) {
            return;
        }
        *last = Some(up);
        drop(last);
        tracing::info!(host = %self.host, team = %self.team, up, "host link {why}");
        sink(HostState {
            team: self.team.to_string(),
            host: self.host.to_string(),
            up,
            since_ms: now_ms(),
            why: why.to_string(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Past the limit the queue is let go and nothing is queued any more: the file carries
    /// every later entry behind the ones let go, so none overtakes them.
    #[test]
    fn a_queue_past_its_limit_gives_up_for_good() {
        let mut handed = Handed::default();
        for n in 0..MAX_HANDED {
            assert!(handed.push("mate", InboxEntry::new("team-lead", format!("m{n}"))));
        }
        assert!(!handed.push("mate", InboxEntry::new("team-lead", "one too many")));
        assert!(handed.take().is_empty(), "the waiting ones are let go");
        assert!(!handed.push("mate", InboxEntry::new("team-lead", "later")));
        assert!(
            handed.take().is_empty(),
            "a later one would overtake those let go"
        );
    }
}
