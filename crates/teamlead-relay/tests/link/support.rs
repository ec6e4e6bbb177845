//! Two hosts in one test: a lead and a relay on temporary homes, joined by a simulated
//! connection (two byte queues) that the test delivers in chunks of any size and can cut at any
//! byte, and a clock the test moves.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use teamlead_protocol::store::Home;
use teamlead_relay::wire::LineBuffer;
use teamlead_relay::{End, Event, Identity, Link, Step};
use teamlead_test_support::store::TempHome;

pub const TEAM: &str = "crew";
pub const LINK: &str = "5a0c1d2e-0000-4000-8000-00000000abcd";

/// This build's identity, as a test host.
pub fn identity(host: &str) -> Identity {
    let mut id = Identity::this_build("0.1.0");
    id.host = host.to_string();
    id
}

/// A lead and a relay on two homes and a connection between them.
pub struct Pair {
    pub lead_home: TempHome,
    pub relay_home: TempHome,
    pub lead: Link,
    pub relay: Link,
    /// Bytes written by the lead, not yet read by the relay (and the other way).
    pub to_relay: VecDeque<u8>,
    pub to_lead: VecDeque<u8>,
    pub relay_rx: LineBuffer,
    pub lead_rx: LineBuffer,
    pub now: Instant,
    pub events: Vec<(&'static str, Event)>,
    pub ends: Vec<(&'static str, End)>,
    pub connected: bool,
    /// The link's id (another host of the same lead has another).
    pub link: &'static str,
    /// Each side's `recv` before the last batch of lines it was given.
    pub lead_recv_before: u64,
    pub relay_recv_before: u64,
}

impl Pair {
    pub fn new() -> Pair {
        Pair::with(identity("lead-host"), identity("remote-host"))
    }

    pub fn with(lead_id: Identity, relay_id: Identity) -> Pair {
        Pair::with_homes(TempHome::new(), TempHome::new(), lead_id, relay_id)
    }

    /// Both homes in memory (a tmpfs, when the system has one): for the runs of hundreds of
    /// drops, whose pace would otherwise be the disk's `fsync` under whatever else the machine
    /// does, while what they check is the link's logic (durability across a power loss is not
    /// something a test here can show).
    pub fn in_memory() -> Pair {
        Pair::with_homes(
            memory_home(),
            memory_home(),
            identity("lead-host"),
            identity("remote-host"),
        )
    }

    /// A second remote host of the same lead (its own link, its own home for the host): the
    /// lead's home is `first`'s, which must outlive it.
    pub fn beside(first: &Pair, link: &'static str) -> Pair {
        let shared = TempHome {
            home: first.lead_home().clone(),
            ..TempHome::new()
        };
        let mut pair = Pair::with_homes(
            shared,
            TempHome::new(),
            identity("lead-host"),
            identity("other-host"),
        );
        pair.link = link;
        pair.lead =
            Link::lead(first.lead_home().clone(), TEAM, link, identity("lead-host")).unwrap();
        pair
    }

    fn with_homes(
        lead_home: TempHome,
        relay_home: TempHome,
        lead_id: Identity,
        relay_id: Identity,
    ) -> Pair {
        let lead = Link::lead(lead_home.home.clone(), TEAM, LINK, lead_id).unwrap();
        let relay = Link::relay(relay_home.home.clone(), relay_id);
        Pair {
            lead_home,
            relay_home,
            lead,
            relay,
            to_relay: VecDeque::new(),
            to_lead: VecDeque::new(),
            relay_rx: LineBuffer::new(),
            lead_rx: LineBuffer::new(),
            now: Instant::now(),
            events: Vec::new(),
            ends: Vec::new(),
            connected: false,
            link: LINK,
            lead_recv_before: 0,
            relay_recv_before: 0,
        }
    }

    pub fn lead_home(&self) -> &Home {
        &self.lead_home.home
    }

    pub fn relay_home(&self) -> &Home {
        &self.relay_home.home
    }

    fn take(&mut self, from: &'static str, step: Step) {
        if self.connected {
            let queue = if from == "lead" {
                &mut self.to_relay
            } else {
                &mut self.to_lead
            };
            for line in &step.lines {
                queue.extend(line.as_bytes());
            }
        }
        for e in step.events {
            self.events.push((from, e));
        }
        if let Some(end) = step.end {
            self.ends.push((from, end));
        }
    }

    /// Lines the test had the relay produce itself (outside a tick), onto the connection.
    pub fn take_relay(&mut self, step: Step) {
        self.take("relay", step);
    }

    /// Lines the test had the lead produce itself (outside a tick), onto the connection.
    pub fn take_lead(&mut self, step: Step) {
        self.take("lead", step);
    }

    /// A new connection: both ends start over, the lead says hello.
    pub fn connect(&mut self) {
        self.connected = true;
        self.to_relay.clear();
        self.to_lead.clear();
        self.relay_rx = LineBuffer::new();
        self.lead_rx = LineBuffer::new();
        let step = self.relay.connect(self.now);
        self.take("relay", step);
        let step = self.lead.connect(self.now);
        self.take("lead", step);
    }

    /// The connection drops: bytes in flight are lost, a frame cut in the middle included.
    pub fn drop_link(&mut self) {
        self.connected = false;
        self.to_relay.clear();
        self.to_lead.clear();
        self.relay_rx = LineBuffer::new();
        self.lead_rx = LineBuffer::new();
        self.lead.disconnect();
        self.relay.disconnect();
    }

    /// Delivers up to `max` bytes towards `to` ("lead" or "relay"); returns how many.
    pub fn deliver(&mut self, to: &'static str, max: usize) -> usize {
        let queue = if to == "relay" {
            &mut self.to_relay
        } else {
            &mut self.to_lead
        };
        let n = max.min(queue.len());
        let chunk: Vec<u8> = queue.drain(..n).collect();
        let rx = if to == "relay" {
            &mut self.relay_rx
        } else {
            &mut self.lead_rx
        };
        let lines = rx.feed(&chunk).unwrap();
        if !lines.is_empty() {
            let link = if to == "relay" {
                self.relay_recv_before = self.relay.recv();
                &mut self.relay
            } else {
                self.lead_recv_before = self.lead.recv();
                &mut self.lead
            };
            let step = link
                .on_lines(&lines, self.now)
                .unwrap_or_else(|e| panic!("{to} broke: {e}"));
            self.take(to, step);
        }
        n
    }

    /// Everything in flight delivered, both ways, until quiet.
    pub fn settle(&mut self) {
        for _ in 0..1000 {
            let moved = self.deliver("relay", usize::MAX) + self.deliver("lead", usize::MAX);
            if moved == 0 {
                return;
            }
        }
        panic!("the link did not settle");
    }

    /// Both ends tick at the test's clock.
    pub fn tick(&mut self) {
        let step = self.lead.tick(self.now).unwrap();
        self.take("lead", step);
        let step = self.relay.tick(self.now).unwrap();
        self.take("relay", step);
    }

    pub fn advance(&mut self, by: Duration) {
        self.now += by;
    }

    /// Rebuilds the lead from disk, as a restarted lead server would.
    pub fn restart_lead(&mut self, id: Identity) {
        self.lead = Link::lead(self.lead_home.home.clone(), TEAM, self.link, id).unwrap();
    }

    /// The lead server killed in the middle of its last batch: its entries are in the inboxes
    /// but `recv` on disk is where it was before the batch (as far back as the relay still
    /// holds data: above what the lead acknowledged), then rebuilt from disk.
    pub fn crash_lead(&mut self, id: Identity) {
        let recv = self.lead_recv_before.max(read_acked(self.relay_home()));
        write_recv(self.lead_home(), recv);
        self.restart_lead(id);
    }

    /// The relay killed in the middle of its last batch (see [`Pair::crash_lead`]).
    pub fn crash_relay(&mut self, id: Identity) {
        let recv = self.relay_recv_before.max(read_acked(self.lead_home()));
        write_recv(self.relay_home(), recv);
        self.restart_relay(id);
    }

    /// A new relay process on the remote host.
    pub fn restart_relay(&mut self, id: Identity) {
        self.relay = Link::relay(self.relay_home.home.clone(), id);
    }
}

/// The `text` of every entry of an inbox (missing: none).
pub fn texts(home: &Home, member: &str) -> Vec<String> {
    teamlead_protocol::store::inbox::read(home, TEAM, member)
        .unwrap()
        .entries
        .into_iter()
        .map(|e| e.text)
        .collect()
}

/// Steps until `cond` holds, `limit` rounds at most (each: tick, deliver, a step of the clock).
pub fn run_until(pair: &mut Pair, limit: usize, mut cond: impl FnMut(&Pair) -> bool) -> bool {
    for _ in 0..limit {
        if cond(pair) {
            return true;
        }
        pair.tick();
        pair.settle();
        pair.advance(Duration::from_millis(10));
    }
    cond(pair)
}

/// Sets the link's persisted `recv` on `home` (what a crash before its write leaves).
fn write_recv(home: &Home, recv: u64) {
    let dir = teamlead_relay::link_dir::LinkDir::path(home, TEAM, LINK).unwrap();
    if dir.exists() {
        std::fs::write(dir.join("recv"), recv.to_string()).unwrap();
    }
}

/// What the link on `home` has on disk as acknowledged by its peer (everything above it is still
/// in its outbox).
fn read_acked(home: &Home) -> u64 {
    teamlead_relay::link_dir::LinkDir::path(home, TEAM, LINK)
        .ok()
        .and_then(|dir| std::fs::read_to_string(dir.join("acked")).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// A temporary home on a memory file system when there is one (`/dev/shm`), else on the usual
/// temporary directory.
fn memory_home() -> TempHome {
    let shm = std::path::Path::new("/dev/shm");
    let Ok(dir) = tempfile::Builder::new()
        .prefix("teamlead-relay-")
        .tempdir_in(shm)
    else {
        return TempHome::new();
    };
    let root = dir.path().join("home");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    TempHome {
        home: Home::new(root),
        outside,
        dir,
    }
}
