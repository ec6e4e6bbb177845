//! The reliable session, as a state machine without I/O of its own on the link: a driver
//! feeds it the lines the peer sent ([`Link::on_line`]) and the passing of time
//! ([`Link::tick`], with a clock the caller passes in), and writes the lines each [`Step`]
//! returns. Its state lives on disk ([`LinkDir`]) and the inboxes it reads and writes are the
//! store's, so it can be dropped at any point and rebuilt from disk.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, StoreError};

use crate::forward::{self, Batch, Scanner};
use crate::hello::{self, Hello, Identity, Refusal, Role};
use crate::link_dir::LinkDir;
use crate::members::{self, MemberFeed};
use crate::reads::ReadFeed;
use crate::tasks_lead::{self, Outcome, TaskFeed};
use crate::tasks_mirror::Mirror;
use crate::transcripts::TranscriptFeed;
use crate::wire::{self, Body, Frame, WireError};

/// The lead pings this often.
pub const PING_EVERY: Duration = Duration::from_secs(1);

/// No frame for this long: the link is down. A link cut just after a frame is seen down within
/// this plus one driver poll, inside the 5 s the lead has to show a host's teammates
/// `unreachable`; it still lets three pings in a row go unanswered.
pub const SILENCE_LIMIT: Duration = Duration::from_secs(4);

/// How long a new relay waits for an old relay of the same link to end (it ends within
/// [`SILENCE_LIMIT`] of its lead's last frame): less than the lead's own [`SILENCE_LIMIT`], so
/// a relay that gives up says so before the lead gives up on it.
pub const RELAY_LOCK_WAIT: Duration = Duration::from_secs(3);

/// What a step of the session asks of its driver.
#[derive(Debug, Default)]
pub struct Step {
    /// Lines to write to the peer, in order, newline included.
    pub lines: Vec<String>,
    /// What happened, for the caller's log and screen.
    pub events: Vec<Event>,
    /// The connection is over: close it (the link's state stays on disk).
    pub end: Option<End>,
}

impl Step {
    fn send(&mut self, frame: &Frame) {
        self.lines.push(wire::encode(frame));
    }
}

/// What happened in a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Both hellos are through; the peer's.
    Up(Hello),
    /// An entry from the peer is in its inbox (appended now, or found there from before a
    /// crash).
    Delivered {
        team: String,
        to: String,
        id: String,
    },
    /// A local entry entered the outbox for the peer.
    Queued {
        team: String,
        to: String,
        id: String,
        seq: u64,
    },
    /// The peer applied everything up to this seq.
    Acked(u64),
    /// The lead applied (or refused) a host's change of a task of its list.
    TaskUpdate { id: String, outcome: Outcome },
    /// The lead wrote a remote member's fields (`isActive`, `mode`) into its team file.
    MemberFields { name: String },
    /// The lead kept a remote `claude` teammate's transcript facts (`store::remote_facts`).
    Transcript { name: String },
    /// The relay ran the `start` of `name` (`error`: why it failed).
    Started { name: String, error: Option<String> },
}

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    /// This side refused the peer (and told it so).
    Refused(Refusal),
    /// The peer refused this side.
    RefusedByPeer(Refusal),
    /// Nothing came from the peer for [`SILENCE_LIMIT`].
    Silent,
}

/// A broken connection: the driver closes it; the link's state stays on disk.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the peer sent {0}")]
    Wire(#[from] WireError),
    #[error("the peer broke the link protocol: {0}")]
    Protocol(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Where the connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No connection.
    Down,
    /// Connected, waiting for the peer's hello.
    Greeting,
    /// Both hellos through: data flows.
    Open,
}

/// The link's team, id and state on disk (a relay learns the first two from the lead's hello).
#[derive(Debug)]
struct Bound {
    team: String,
    link: String,
    dir: LinkDir,
    /// A relay's hold on its link ([`LinkDir::hold_relay`]); the lead's end holds none.
    _relay_lock: Option<std::fs::File>,
}

/// One end of a link.
#[derive(Debug)]
pub struct Link {
    home: Home,
    role: Role,
    me: Identity,
    bound: Option<Bound>,
    phase: Phase,
    peer: Option<Hello>,
    last_rx: Option<Instant>,
    last_ping: Option<Instant>,
    ping_n: u64,
    /// Relay ids applied from this link: never sent back over it.
    received: HashSet<String>,
    /// The highest seq applied in the current batch of lines, not yet persisted.
    pending_recv: Option<u64>,
    /// Inbox entries of the current batch, appended together before `recv` is persisted.
    staged: Batch,
    /// An ack is owed at the end of the current batch (a repeat was received).
    ack_due: bool,
    scanner: Scanner,
    /// The last `team` body put in the outbox (the lead's; sent again by a new process).
    team_sent: Option<Body>,
    /// The lead's task list as sent over this connection.
    feed: TaskFeed,
    /// A relay's mirror of the lead's task list (loaded when the link is bound).
    mirror: Option<Mirror>,
    /// A relay's hosted members' fields as sent over this connection.
    member_feed: MemberFeed,
    /// A relay's hosted `claude` teammates' transcript facts as sent over this connection.
    transcript_feed: TranscriptFeed,
    /// A relay's hosted members' read marks as sent over this connection.
    read_feed: ReadFeed,
    /// The lead's config price rows, sent at each connection to a relay that has `prices`.
    prices: Option<serde_json::Value>,
    /// Told each entry for the lead's own inbox as it arrives (see [`Link::on_lead_entry`]).
    lead_entries: Option<LeadEntries>,
}

/// Where a lead's end hands the entries that arrive for the lead's own inbox.
pub struct LeadEntries(Box<dyn FnMut(InboxEntry) + Send>);

impl std::fmt::Debug for LeadEntries {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeadEntries")
    }
}

impl Link {
    /// The lead's end hands `f` each entry for the lead's own inbox (`team-lead`) as its frame
    /// is read, before the batch is appended to that inbox: the lead can show a teammate's
    /// message without waiting for its own durable append and a file event. The append, `recv`
    /// and the ack still follow as before (a lead that shows an entry and dies before the ack
    /// has it sent again, and its delivery log knows it). A repeat (a seq already applied) is
    /// not handed on. A relay's end never calls it.
    pub fn on_lead_entry(&mut self, f: impl FnMut(InboxEntry) + Send + 'static) {
        self.lead_entries = Some(LeadEntries(Box::new(f)));
    }

    /// The lead's end of `link` for `team`, with its state loaded from `home`.
    pub fn lead(home: Home, team: &str, link: &str, me: Identity) -> Result<Link, LinkError> {
        let dir = LinkDir::open(&home, team, link)?;
        let mut me = Link::new(home, Role::Lead, me);
        me.bound = Some(Bound {
            team: team.to_string(),
            link: link.to_string(),
            dir,
            _relay_lock: None,
        });
        Ok(me)
    }

    /// A relay's end: bound to a team and link by the lead's hello.
    pub fn relay(home: Home, me: Identity) -> Link {
        Link::new(home, Role::Relay, me)
    }

    fn new(home: Home, role: Role, me: Identity) -> Link {
        Link {
            home,
            role,
            me,
            bound: None,
            phase: Phase::Down,
            peer: None,
            last_rx: None,
            last_ping: None,
            ping_n: 0,
            received: HashSet::new(),
            lead_entries: None,
            pending_recv: None,
            staged: Batch::default(),
            ack_due: false,
            scanner: Scanner::default(),
            team_sent: None,
            feed: TaskFeed::default(),
            mirror: None,
            member_feed: MemberFeed::default(),
            transcript_feed: TranscriptFeed::default(),
            read_feed: ReadFeed::default(),
            prices: None,
        }
    }

    /// The lead's config price rows ([`crate::prices::rows_value`]): sent as a `prices` body at
    /// each connection to a relay that has the capability.
    pub fn set_prices(&mut self, rows: serde_json::Value) {
        self.prices = Some(rows);
    }

    /// Whether data flows.
    pub fn is_open(&self) -> bool {
        self.phase == Phase::Open
    }

    /// The peer's hello of the current connection.
    pub fn peer(&self) -> Option<&Hello> {
        self.peer.as_ref()
    }

    /// The highest seq received and applied (0 before a relay is bound).
    pub fn recv(&self) -> u64 {
        self.bound.as_ref().map_or(0, |b| b.dir.recv())
    }

    /// The highest seq the peer acknowledged (0 before a relay is bound).
    pub fn acked(&self) -> u64 {
        self.bound.as_ref().map_or(0, |b| b.dir.acked())
    }

    /// How many sent `data` wait for the peer's acknowledgement.
    pub fn unacked(&self) -> usize {
        self.bound.as_ref().map_or(0, |b| b.dir.unacked().len())
    }

    /// A new connection: the lead says hello first; a relay waits for the lead's, which names
    /// the link and team its own hello reports on.
    pub fn connect(&mut self, now: Instant) -> Step {
        self.phase = Phase::Greeting;
        self.peer = None;
        self.last_rx = Some(now);
        self.last_ping = Some(now);
        let mut step = Step::default();
        if let (Role::Lead, Some(b)) = (self.role, &self.bound) {
            let hello = self
                .me
                .hello(Role::Lead, &b.link, &b.team, b.dir.recv(), b.dir.acked());
            step.send(&Frame::Hello(hello));
        }
        step
    }

    /// The connection is gone (closed, broken or given up): nothing is sent until the next
    /// [`Link::connect`]; what was queued stays in the outbox.
    pub fn disconnect(&mut self) {
        self.phase = Phase::Down;
        self.peer = None;
    }

    /// The lead's route: the members of the team that run on the relay's host. Persisted and
    /// sent to the relay as a `route` when it changed.
    pub fn set_hosted(&mut self, hosted: &[String]) -> Result<Step, LinkError> {
        let mut step = Step::default();
        let open = self.is_open();
        let Some(b) = self.bound.as_mut() else {
            return Ok(step);
        };
        if self.role != Role::Lead || b.dir.hosted() == Some(hosted) {
            return Ok(step);
        }
        b.dir.set_hosted(hosted.to_vec())?;
        let body = Body::Route {
            team: b.team.clone(),
            hosted: hosted.to_vec(),
        };
        let out = b.dir.push(body, None)?;
        if open {
            step.send(&Frame::Data {
                seq: out.seq,
                body: out.body,
            });
        }
        Ok(step)
    }

    /// The lead's team file for the relay's host (its lead and members): put in the outbox and
    /// sent as a `team` when it differs from the last one this connection sent.
    pub fn set_team(
        &mut self,
        lead_agent_id: &str,
        members: &[teamlead_protocol::Member],
    ) -> Result<Step, LinkError> {
        let mut step = Step::default();
        let open = self.is_open();
        let Some(b) = self.bound.as_mut() else {
            return Ok(step);
        };
        let body = Body::Team {
            team: b.team.clone(),
            lead_agent_id: lead_agent_id.to_string(),
            members: members.to_vec(),
        };
        if self.role != Role::Lead || self.team_sent.as_ref() == Some(&body) {
            return Ok(step);
        }
        self.team_sent = Some(body.clone());
        let out = b.dir.push(body, None)?;
        if open {
            step.send(&Frame::Data {
                seq: out.seq,
                body: out.body,
            });
        }
        Ok(step)
    }

    /// The lead asks the relay's host to start `name`'s session with `line` (a POSIX `sh`
    /// command line), after everything queued before it: put in the outbox and sent when
    /// open. Only for a peer with capability `start` ([`Link::peer_can`]).
    pub fn start_session(&mut self, name: &str, line: &str) -> Result<Step, LinkError> {
        let mut step = Step::default();
        if self.role != Role::Lead {
            return Ok(step);
        }
        let Some(team) = self.bound.as_ref().map(|b| b.team.clone()) else {
            return Ok(step);
        };
        let body = Body::Start {
            team,
            name: name.to_string(),
            line: line.to_string(),
        };
        self.queue_body(body, &mut step)?;
        Ok(step)
    }

    /// Entries the caller is about to append to `to`'s inbox here (a member whose inbox goes to
    /// the peer), handed to the link at once instead of picked up from the file after the
    /// append: each goes into the outbox (synced) and onto the link when it is open, keyed as
    /// the pick-up keys it, so the copy the caller appends (before or after this) is not
    /// forwarded a second time. The lead's own messages to a remote teammate go this way, so
    /// their delivery does not wait for the local copy's durable append, its file event and a
    /// read of the inbox. An entry already forwarded, or for an inbox that does not go to the
    /// peer, is left to the file (nothing is sent for it here).
    pub fn send_entries(&mut self, to: &str, entries: &[InboxEntry]) -> Result<Step, LinkError> {
        let mut step = Step::default();
        let open = self.is_open();
        let Some(b) = self.bound.as_mut() else {
            return Ok(step);
        };
        let members = forward::outgoing(&self.home, &b.team, self.role, b.dir.hosted())?;
        if !members.iter().any(|m| m == to) {
            return Ok(step);
        }
        let mut keys = HashSet::new();
        let items: Vec<(Body, Option<String>)> = entries
            .iter()
            .filter_map(|entry| {
                let key = forward::entry_key(to, entry);
                (!b.dir.was_forwarded(&key) && keys.insert(key.clone())).then(|| {
                    (
                        forward::entry_body(&b.team, to, entry.clone(), &key),
                        Some(key),
                    )
                })
            })
            .collect();
        let pushed = b.dir.push_many(items)?;
        queued(pushed, open, &mut step);
        Ok(step)
    }

    /// Whether the peer of the open connection has capability `cap`.
    pub fn peer_can(&self, cap: &str) -> bool {
        self.is_open() && self.peer().is_some_and(|p| p.caps.iter().any(|c| c == cap))
    }

    /// `body` into the outbox, and onto the link when it is open.
    fn queue_body(&mut self, body: Body, step: &mut Step) -> Result<(), LinkError> {
        let open = self.is_open();
        let Some(b) = self.bound.as_mut() else {
            return Ok(());
        };
        let out = b.dir.push(body, None)?;
        if open {
            step.send(&Frame::Data {
                seq: out.seq,
                body: out.body,
            });
        }
        Ok(())
    }

    /// One line from the peer (without its newline).
    pub fn on_line(&mut self, line: &[u8], now: Instant) -> Result<Step, LinkError> {
        self.on_lines(&[line], now)
    }

    /// Lines from the peer that arrived together (without their newlines): applied in order,
    /// then `recv` is persisted and acknowledged once for the whole batch.
    pub fn on_lines<L: AsRef<[u8]>>(
        &mut self,
        lines: &[L],
        now: Instant,
    ) -> Result<Step, LinkError> {
        let mut step = Step::default();
        for line in lines {
            if let Err(e) = self.one_line(line.as_ref(), now, &mut step) {
                return Err(self.abandon_batch(e));
            }
            if step.end.is_some() {
                break;
            }
        }
        if let Err(e) = self.flush_staged(&mut step) {
            return Err(self.abandon_batch(e));
        }
        if let Some(b) = self.bound.as_mut() {
            if let Some(seq) = self.pending_recv.take() {
                // Written before the ack (the batch it covers is on disk already).
                b.dir.set_recv(seq)?;
                self.ack_due = true;
            }
            if std::mem::take(&mut self.ack_due) && step.end.is_none() {
                step.send(&Frame::Ack { seq: b.dir.recv() });
            }
        }
        if step.end.is_some() {
            self.disconnect();
        }
        Ok(step)
    }

    /// The lines of the last [`Link::on_lines`] were applied until `at`: the peer's silence
    /// counts from then, not from when they arrived. Nothing more can be heard while a step
    /// runs (a relay's hello step may wait seconds for an old relay's hold, then send the
    /// whole outbox again), so a slow step must not read as a silent peer.
    pub fn heard_until(&mut self, at: Instant) {
        if self.phase != Phase::Down && self.last_rx.is_some_and(|t| t < at) {
            self.last_rx = Some(at);
        }
    }

    /// A batch broke the connection: what was appended stays appended; without `recv` on
    /// disk the peer sends it again and its relay id keeps it from being appended twice.
    fn abandon_batch(&mut self, e: LinkError) -> LinkError {
        self.pending_recv = None;
        self.ack_due = false;
        self.staged = Batch::default();
        e
    }

    /// Appends the staged inbox entries (see [`Batch::apply`]).
    fn flush_staged(&mut self, step: &mut Step) -> Result<(), LinkError> {
        let staged = std::mem::take(&mut self.staged);
        for (team, to, id) in staged.apply(&self.home)? {
            step.events.push(Event::Delivered { team, to, id });
        }
        Ok(())
    }

    fn one_line(&mut self, line: &[u8], now: Instant, step: &mut Step) -> Result<(), LinkError> {
        let frame = wire::decode(line)?;
        self.last_rx = Some(now);
        match (self.phase, frame) {
            (Phase::Down, _) => {
                return Err(LinkError::Protocol("a frame with no connection".into()));
            }
            (_, Frame::Refused { why, fix }) => {
                step.end = Some(End::RefusedByPeer(Refusal { why, fix }));
            }
            (Phase::Greeting, Frame::Hello(peer)) => self.on_hello(peer, step)?,
            (Phase::Greeting, other) => {
                return Err(LinkError::Protocol(format!(
                    "{} before its hello",
                    other.name()
                )));
            }
            (Phase::Open, Frame::Hello(_)) => {
                return Err(LinkError::Protocol("a second hello".into()));
            }
            (Phase::Open, Frame::Data { seq, body }) => self.on_data(seq, body, step)?,
            (Phase::Open, Frame::Ack { seq }) => {
                if let Some(b) = self.bound.as_mut() {
                    b.dir.ack(seq)?;
                }
                step.events.push(Event::Acked(seq));
            }
            (Phase::Open, Frame::Ping { n }) => step.send(&Frame::Pong { n }),
            (Phase::Open, Frame::Pong { .. }) => {}
        }
        Ok(())
    }

    fn on_hello(&mut self, peer: Hello, step: &mut Step) -> Result<(), LinkError> {
        let expect = match (self.role, &self.bound) {
            (Role::Lead, Some(b)) => Some((b.link.as_str(), b.team.as_str())),
            _ => None,
        };
        if let Err(refusal) = hello::check(&self.me, self.role, &peer, expect) {
            step.send(&Frame::Refused {
                why: refusal.why.clone(),
                fix: refusal.fix.clone(),
            });
            step.end = Some(End::Refused(refusal));
            return Ok(());
        }
        if self.role == Role::Relay {
            let rebind = self
                .bound
                .as_ref()
                .is_none_or(|b| b.link != peer.link || b.team != peer.team);
            if rebind {
                // The old binding (and its hold) goes first.
                self.bound = None;
                let held =
                    LinkDir::hold_relay(&self.home, &peer.team, &peer.link, RELAY_LOCK_WAIT)?;
                let dir = LinkDir::open(&self.home, &peer.team, &peer.link)?;
                self.mirror = Some(Mirror::load(&self.home, &peer.team, &peer.link)?);
                self.transcript_feed
                    .set_prices(crate::prices::table(crate::prices::load(dir.dir())));
                self.received.clear();
                self.scanner = Scanner::default();
                self.bound = Some(Bound {
                    team: peer.team.clone(),
                    link: peer.link.clone(),
                    dir,
                    _relay_lock: Some(held),
                });
            }
        }
        let Some(b) = self.bound.as_mut() else {
            return Err(LinkError::Protocol(
                "a hello before the link was named".into(),
            ));
        };
        // The peer acknowledged more than this side applied: this side's state was lost (its
        // directory removed). What the peer acknowledged was applied here before, so `recv`
        // continues from there.
        if peer.acked > b.dir.recv() {
            tracing::warn!(
                "the peer says {} was applied here, this side's recv is {}: continuing from it",
                peer.acked,
                b.dir.recv()
            );
            b.dir.set_recv_synced(peer.acked)?;
        }
        // The peer's recv acknowledges; everything above it is sent again, in order (after the
        // relay's own hello).
        b.dir.skip_to(peer.recv)?;
        b.dir.ack(peer.recv)?;
        if self.role == Role::Relay {
            let hello = self
                .me
                .hello(Role::Relay, &b.link, &b.team, b.dir.recv(), b.dir.acked());
            step.send(&Frame::Hello(hello));
        }
        for o in b.dir.unacked() {
            step.send(&Frame::Data {
                seq: o.seq,
                body: o.body.clone(),
            });
        }
        // A new connection: the whole task list goes to the host again, and the host's
        // members' fields to the lead.
        self.feed.reset();
        self.member_feed.reset();
        self.transcript_feed.reset();
        self.read_feed = ReadFeed::default();
        self.phase = Phase::Open;
        let prices_ok = peer.caps.iter().any(|c| c == "prices");
        step.events.push(Event::Up(peer.clone()));
        self.peer = Some(peer);
        if self.role == Role::Lead
            && prices_ok
            && let (Some(rows), Some(b)) = (self.prices.clone(), self.bound.as_ref())
        {
            let team = b.team.clone();
            self.queue_body(Body::Prices { team, rows }, step)?;
        }
        Ok(())
    }

    /// Applies data in seq order: a repeat is acknowledged again and not applied; a gap breaks
    /// the link (the peer resends from its last ack on the next connection).
    fn on_data(&mut self, seq: u64, body: Body, step: &mut Step) -> Result<(), LinkError> {
        let Some(b) = self.bound.as_mut() else {
            return Err(LinkError::Protocol("data before the link was named".into()));
        };
        let recv = self.pending_recv.unwrap_or(b.dir.recv());
        if seq <= recv {
            // A repeat (an ack lost with a dropped link): acknowledged again, not applied.
            self.ack_due = true;
            return Ok(());
        }
        if seq != recv + 1 {
            return Err(LinkError::Protocol(format!(
                "data {seq} after {recv}: a gap in the sequence"
            )));
        }
        if let Some(team) = body.team()
            && team != b.team
        {
            return Err(LinkError::Protocol(format!(
                "data for team {team} on the link of team {}",
                b.team
            )));
        }
        let (link, hosted) = (
            b.link.clone(),
            b.dir.hosted().map(<[String]>::to_vec).unwrap_or_default(),
        );
        match body {
            Body::InboxEntry {
                team,
                to,
                entry,
                id,
            } => {
                self.received.insert(id.clone());
                if self.role == Role::Lead
                    && to == teamlead_protocol::LEAD_NAME
                    && let Some(LeadEntries(f)) = self.lead_entries.as_mut()
                {
                    let mut arrived = (*entry).clone();
                    arrived.relay_id = Some(id.clone());
                    f(arrived);
                }
                self.staged.push(team, to, *entry, id);
            }
            Body::Route { hosted, .. } => {
                self.flush_staged(step)?;
                if self.role == Role::Relay
                    && let Some(b) = self.bound.as_mut()
                {
                    b.dir.set_hosted(hosted)?;
                    self.scanner = Scanner::default();
                }
            }
            Body::Team {
                team,
                lead_agent_id,
                members,
            } => {
                if self.role == Role::Relay {
                    forward::apply_team(&self.home, &team, &lead_agent_id, members, &hosted)?;
                }
            }
            Body::Tasks {
                tasks,
                removed,
                keep,
                applied,
                ..
            } => {
                if self.role == Role::Relay
                    && let Some(mirror) = self.mirror.as_mut()
                {
                    mirror.apply(tasks, &removed, keep.as_deref(), applied)?;
                }
            }
            Body::TaskUpdate {
                team,
                id,
                before,
                after,
            } => {
                if self.role == Role::Lead {
                    self.flush_staged(step)?;
                    let outcome = self.apply_task_update(
                        &team,
                        &link,
                        &hosted,
                        &id,
                        before.as_deref(),
                        after.as_deref(),
                    )?;
                    step.events.push(Event::TaskUpdate { id, outcome });
                }
            }
            Body::Member { team, name, fields } => {
                if self.role == Role::Lead
                    && members::apply_member(&self.home, &team, &hosted, &name, &fields)?
                {
                    step.events.push(Event::MemberFields { name });
                }
            }
            Body::Read { team, name, ids } => {
                if self.role == Role::Lead {
                    crate::reads::apply_read(&self.home, &team, &hosted, &name, &ids)?;
                }
            }
            Body::Transcript { team, name, facts } => {
                if self.role == Role::Lead
                    && crate::transcripts::apply_transcript(
                        &self.home, &team, &hosted, &name, facts,
                    )?
                {
                    step.events.push(Event::Transcript { name });
                }
            }
            Body::Start { team, name, line } => {
                if self.role == Role::Relay {
                    self.flush_staged(step)?;
                    let error = if hosted.contains(&name) {
                        crate::start::run(&line)
                    } else {
                        Some(format!("{name} is not in the route to this host"))
                    };
                    if let Some(e) = &error {
                        tracing::warn!("the start of {name} failed: {e}");
                    }
                    self.queue_body(Body::Started { team, name, error }, step)?;
                }
            }
            Body::Started { name, error, .. } => {
                if self.role == Role::Lead {
                    step.events.push(Event::Started { name, error });
                }
            }
            Body::Prices { rows, .. } => {
                if self.role == Role::Relay
                    && let Some(b) = self.bound.as_ref()
                {
                    crate::prices::save(b.dir.dir(), &rows)?;
                    self.transcript_feed
                        .set_prices(crate::prices::table(crate::prices::read_rows(&rows)));
                }
            }
            Body::Unknown => {
                tracing::warn!("data {seq} of a kind this build does not know: ignored");
            }
        }
        // Persisted, then acknowledged, at the end of the batch: a crash before that resends
        // the data, and the relay id in the inbox keeps it from being appended twice.
        self.pending_recv = Some(seq);
        Ok(())
    }

    /// The directories whose files this side reads for the peer, once the link knows its team:
    /// the team's inboxes, its task list and (for the member fields) its team directory. A
    /// driver watches them to tick at once when one changes.
    pub fn watched_dirs(&self) -> Vec<std::path::PathBuf> {
        let Some(b) = self.bound.as_ref() else {
            return Vec::new();
        };
        [
            self.home.inboxes_dir(&b.team),
            self.home.tasks_dir(&b.team),
            self.home.team_dir(&b.team),
        ]
        .into_iter()
        .filter_map(Result::ok)
        .collect()
    }

    /// A host's change of task `id`, applied to the lead's list (see
    /// [`tasks_lead::apply_update`]). Whatever the outcome, the task goes back to the host in the
    /// next `tasks` body (so a refused change is set back there); a claimant whose claim lost is
    /// told, in its inbox here, which the link forwards to its host.
    fn apply_task_update(
        &mut self,
        team: &str,
        link: &str,
        hosted: &[String],
        id: &str,
        before: Option<&teamlead_protocol::Task>,
        after: Option<&teamlead_protocol::Task>,
    ) -> Result<Outcome, LinkError> {
        let outcome =
            match tasks_lead::apply_update(&self.home, team, link, hosted, id, before, after) {
                Ok(outcome) => outcome,
                // Busy or failing storage: the link breaks, the change comes again.
                Err(e @ (StoreError::LockTimeout { .. } | StoreError::Io { .. })) => {
                    return Err(e.into());
                }
                // Anything else would fail again: the host is set back to the lead's list.
                Err(e) => Outcome::Refused {
                    why: e.to_string(),
                    claimant: None,
                },
            };
        self.feed.mark(id);
        match &outcome {
            Outcome::Applied => {}
            Outcome::Created { id: made } => self.feed.mark(made),
            Outcome::Refused { why, claimant } => {
                tracing::info!("a host's change of task #{id} of {team} refused: {why}");
                if let Some(who) = claimant {
                    let text = format!(
                        "Your claim did not hold: {why}. Your host's task list is set back to \
                         the lead's; take another task."
                    );
                    let entry =
                        teamlead_protocol::InboxEntry::new(teamlead_protocol::LEAD_NAME, text)
                            .with_summary(Some(&format!("task #{id} went to someone else")));
                    teamlead_protocol::store::inbox::append(&self.home, team, who, &entry)?;
                }
            }
        }
        Ok(outcome)
    }

    /// The task list and the member fields, while data flows: the lead sends what changed in
    /// its task list; a relay sends the changes made to its mirror and its members' fields.
    /// A list or file that cannot be read now is read again at the next tick.
    fn sync_tasks(&mut self, now: Instant, step: &mut Step) -> Result<(), LinkError> {
        if !self.is_open() {
            return Ok(());
        }
        let peer_has = |cap: &str| {
            self.peer
                .as_ref()
                .is_some_and(|p| p.caps.iter().any(|c| c == cap))
        };
        let (tasks_ok, member_ok) = (peer_has("tasks"), peer_has("member"));
        let transcript_ok = peer_has("transcript");
        let read_ok = peer_has("read");
        let Some(b) = self.bound.as_mut() else {
            return Ok(());
        };
        let mut bodies = Vec::new();
        let mut found = Vec::new();
        match self.role {
            Role::Lead if tasks_ok => {
                match self.feed.bodies(&self.home, &b.team, b.dir.recv(), now) {
                    Ok(more) => bodies = more,
                    Err(e) => tracing::warn!("the task list of {} not sent for now: {e}", b.team),
                }
            }
            Role::Lead => {}
            Role::Relay => {
                if tasks_ok && let Some(mirror) = self.mirror.as_mut() {
                    match mirror.scan(now) {
                        Ok(more) => found = more,
                        Err(e) => tracing::warn!("the task mirror of {} not read: {e}", b.team),
                    }
                }
                // Read marks before member fields: a teammate that took an entry and began its
                // turn is seen to have read it first.
                if read_ok && let Some(hosted) = b.dir.hosted() {
                    match self.read_feed.scan(&self.home, &b.team, hosted, now) {
                        Ok(more) => bodies.extend(more),
                        Err(e) => tracing::warn!("read marks of {} not read: {e}", b.team),
                    }
                }
                if member_ok && let Some(hosted) = b.dir.hosted() {
                    match self.member_feed.scan(&self.home, &b.team, hosted, now) {
                        Ok(more) => bodies.extend(more),
                        Err(e) => tracing::warn!("member fields of {} not read: {e}", b.team),
                    }
                }
                if transcript_ok && let Some(hosted) = b.dir.hosted() {
                    match self.transcript_feed.scan(&self.home, &b.team, hosted, now) {
                        Ok(more) => bodies.extend(more),
                        Err(e) => tracing::warn!("transcripts of {} not read: {e}", b.team),
                    }
                }
            }
        }
        let mut all: Vec<(Body, Option<String>)> =
            found.iter().map(|f| (f.body.clone(), None)).collect();
        all.extend(bodies.into_iter().map(|body| (body, None)));
        if all.is_empty() {
            return Ok(());
        }
        let pushed = b.dir.push_many(all)?;
        if let Some(mirror) = self.mirror.as_mut() {
            let seqs = pushed.iter().map(|o| o.seq);
            mirror.sent(seqs.zip(found).collect())?;
        }
        for out in pushed {
            step.send(&Frame::Data {
                seq: out.seq,
                body: out.body,
            });
        }
        Ok(())
    }

    /// The passing of time: [`Link::tick_messages`] then [`Link::tick_state`], as one step.
    pub fn tick(&mut self, now: Instant) -> Result<Step, LinkError> {
        let mut step = self.tick_messages(now)?;
        if step.end.is_some() {
            return Ok(step);
        }
        let more = self.tick_state(now)?;
        step.lines.extend(more.lines);
        step.events.extend(more.events);
        step.end = more.end;
        Ok(step)
    }

    /// Liveness (the lead pings every [`PING_EVERY`]; no frame for [`SILENCE_LIMIT`] ends the
    /// connection) and the pick-up of new local entries for the peer, queued in the outbox even
    /// while the link is down and sent when it is open. A driver writes this step before it
    /// runs [`Link::tick_state`], so a message never waits behind the scans of the task list,
    /// read marks, member fields and transcripts.
    pub fn tick_messages(&mut self, now: Instant) -> Result<Step, LinkError> {
        let mut step = Step::default();
        if self.phase != Phase::Down {
            if self
                .last_rx
                .is_some_and(|t| now.duration_since(t) >= SILENCE_LIMIT)
            {
                self.disconnect();
                step.end = Some(End::Silent);
                return Ok(step);
            }
            if self.role == Role::Lead
                && self.phase == Phase::Open
                && self
                    .last_ping
                    .is_none_or(|t| now.duration_since(t) >= PING_EVERY)
            {
                self.ping_n += 1;
                self.last_ping = Some(now);
                step.send(&Frame::Ping { n: self.ping_n });
            }
        }
        self.pick_up(now, &mut step)?;
        Ok(step)
    }

    /// The task list and the member fields (with a relay's read marks and transcripts), while
    /// data flows; see [`Link::tick_messages`].
    pub fn tick_state(&mut self, now: Instant) -> Result<Step, LinkError> {
        let mut step = Step::default();
        self.sync_tasks(now, &mut step)?;
        Ok(step)
    }

    /// New local entries for the peer into the outbox (and onto the link when open).
    fn pick_up(&mut self, now: Instant, step: &mut Step) -> Result<(), LinkError> {
        let open = self.is_open();
        let Some(b) = self.bound.as_mut() else {
            return Ok(());
        };
        let members = forward::outgoing(&self.home, &b.team, self.role, b.dir.hosted())?;
        let found =
            self.scanner
                .pick_up(&self.home, &b.team, &members, &b.dir, &self.received, now)?;
        let pushed = b.dir.push_many(
            found
                .into_iter()
                .map(|(body, key)| (body, Some(key)))
                .collect(),
        )?;
        queued(pushed, open, step);
        Ok(())
    }
}

/// Inbox entries just put in the outbox: each reported queued, and onto the link when it is
/// open (else they go at the next connection, with the rest of the outbox).
fn queued(pushed: Vec<crate::link_dir::Outgoing>, open: bool, step: &mut Step) {
    for out in pushed {
        if let Body::InboxEntry { team, to, id, .. } = &out.body {
            step.events.push(Event::Queued {
                team: team.clone(),
                to: to.clone(),
                id: id.clone(),
                seq: out.seq,
            });
        }
        if open {
            step.send(&Frame::Data {
                seq: out.seq,
                body: out.body,
            });
        }
    }
}
