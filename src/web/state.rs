//! What the web view knows of the team, kept from the hub's events by one task ([`pump`]):
//! the team, the waiting requests, the tasks, the end of the transcript with the ledger's
//! receipts, and a numbered log of the page's events. Every event gets the next number
//! (`EPOCH-N`, the epoch new at each start): a page that comes back with the last number it
//! saw (`Last-Event-ID`) gets what it missed from the log, or a fresh snapshot when the log no
//! longer holds it or the server restarted. Live events go out on a broadcast channel; a page
//! that falls behind it is closed and comes back the same way.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use super::view;
use crate::lead::contract::{
    LeadEvent, PendingPermission, PendingPlan, TaskView, TeammateView, TranscriptItem,
};
use crate::server::wire::ServerMsg;

/// How many of the page's events the log keeps for a page that comes back.
pub const LOG_KEPT: usize = 4096;
/// And at most this many bytes of them.
pub const LOG_BYTES: usize = 8 * 1024 * 1024;
/// How many transcript items a new page gets.
pub const TRANSCRIPT_KEPT: usize = 300;

/// One numbered event: its number and its JSON.
pub type Numbered = (u64, Arc<str>);

/// The state behind the page.
pub struct WebState {
    pub epoch: String,
    pub team_name: String,
    seq: u64,
    log: VecDeque<Numbered>,
    log_bytes: usize,
    pub members: Vec<TeammateView>,
    pub permissions: Vec<PendingPermission>,
    pub plans: Vec<PendingPlan>,
    tasks: Vec<TaskView>,
    transcript: VecDeque<Value>,
    receipts: BTreeMap<u64, &'static str>,
    /// Requests answered from the web (`p:KEY`, `plan:ID`): a second page cannot answer them
    /// again, even before the lead's next queue arrives.
    pub answered: HashSet<String>,
    /// `ctl`-style barriers waiting for the lead (token → whether it refused something).
    barriers: HashMap<u64, oneshot::Sender<bool>>,
    /// The lead has finished.
    pub exited: bool,
    live: broadcast::Sender<Numbered>,
}

/// The state, shared by the pump and the HTTP handlers (each holds the lock briefly).
#[derive(Clone)]
pub struct Shared(Arc<Mutex<WebState>>);

impl Shared {
    pub fn new() -> Shared {
        let (live, _) = broadcast::channel(1024);
        let epoch: String = (0..4)
            .map(|_| format!("{:04x}", rand::random::<u16>()))
            .collect();
        Shared(Arc::new(Mutex::new(WebState {
            epoch,
            team_name: String::new(),
            seq: 0,
            log: VecDeque::new(),
            log_bytes: 0,
            members: Vec::new(),
            permissions: Vec::new(),
            plans: Vec::new(),
            tasks: Vec::new(),
            transcript: VecDeque::new(),
            receipts: BTreeMap::new(),
            answered: HashSet::new(),
            barriers: HashMap::new(),
            exited: false,
            live,
        })))
    }

    pub fn lock(&self) -> MutexGuard<'_, WebState> {
        // A handler that panicked cannot leave the state half-changed in a way that matters:
        // take it as it is.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Default for Shared {
    fn default() -> Shared {
        Shared::new()
    }
}

/// Where a page that comes back starts.
pub enum Resume {
    /// The events it missed (possibly none).
    Missed(Vec<Numbered>),
    /// A snapshot: the log no longer holds its place, or it never had one.
    Snapshot(Numbered),
}

impl WebState {
    /// Numbers an event, keeps it in the log and sends it to the pages.
    fn publish(&mut self, event: Value) {
        self.seq += 1;
        let data: Arc<str> = Arc::from(event.to_string());
        self.log_bytes += data.len();
        self.log.push_back((self.seq, data.clone()));
        while self.log.len() > LOG_KEPT || (self.log_bytes > LOG_BYTES && self.log.len() > 1) {
            if let Some((_, gone)) = self.log.pop_front() {
                self.log_bytes -= gone.len();
            }
        }
        let _ = self.live.send((self.seq, data));
    }

    /// The whole picture, for a new page.
    pub fn snapshot(&self) -> Value {
        json!({
            "type": "snapshot",
            "team": self.team_name,
            "members": view::team(&self.members),
            "requests": view::requests(&self.permissions, &self.plans),
            "tasks": view::tasks(&self.tasks),
            "transcript": self.transcript.iter().collect::<Vec<_>>(),
            "receipts": self.receipts,
            "exited": self.exited,
        })
    }

    /// The events after `last` (`EPOCH-N`), or a snapshot; and a receiver of the live ones
    /// (taken under the same lock, so nothing falls between).
    pub fn resume(&self, last: Option<&str>) -> (Resume, broadcast::Receiver<Numbered>) {
        let rx = self.live.subscribe();
        let place = last
            .and_then(|l| l.split_once('-'))
            .filter(|(epoch, _)| *epoch == self.epoch)
            .and_then(|(_, n)| n.parse::<u64>().ok());
        let oldest = self.log.front().map_or(self.seq + 1, |(n, _)| *n);
        match place {
            // Everything after `n` is still in the log.
            Some(n) if n <= self.seq && n + 1 >= oldest => {
                let missed = self.log.iter().filter(|(m, _)| *m > n).cloned().collect();
                (Resume::Missed(missed), rx)
            }
            _ => (
                Resume::Snapshot((self.seq, Arc::from(self.snapshot().to_string()))),
                rx,
            ),
        }
    }

    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// Waits for the lead to carry out every command sent before `token`.
    pub fn barrier(&mut self, token: u64) -> oneshot::Receiver<bool> {
        let (tx, rx) = oneshot::channel();
        self.barriers.insert(token, tx);
        rx
    }

    /// Takes one of the lead's events into account.
    fn apply(&mut self, event: LeadEvent) {
        match event {
            LeadEvent::Started { team, .. } => {
                self.team_name = crate::protocol::display::visible_line(&team).into_owned();
                self.publish(json!({"type": "team_name", "team": self.team_name}));
            }
            LeadEvent::Team(members) => {
                self.members = members;
                self.publish(json!({"type": "members", "members": view::team(&self.members)}));
            }
            LeadEvent::Permissions(queue) => {
                self.permissions = queue;
                self.publish_requests();
            }
            LeadEvent::Plans(queue) => {
                self.plans = queue;
                self.publish_requests();
            }
            LeadEvent::Tasks(tasks) => {
                self.tasks = tasks;
                self.publish(json!({"type": "tasks", "tasks": view::tasks(&self.tasks)}));
            }
            LeadEvent::Transcript(item) => self.transcript_item(&item),
            LeadEvent::Receipt { id, state, .. } => {
                self.receipts.insert(id, state.as_str());
                self.publish(json!({"type": "receipt", "id": id, "state": state.as_str()}));
            }
            LeadEvent::Barrier { token, refused } => {
                if let Some(tx) = self.barriers.remove(&token) {
                    let _ = tx.send(refused);
                }
            }
            LeadEvent::Exited => {
                self.exited = true;
                self.publish(json!({"type": "exited"}));
            }
            _ => {}
        }
    }

    fn publish_requests(&mut self) {
        let requests = view::requests(&self.permissions, &self.plans);
        self.publish(json!({"type": "requests", "requests": requests}));
    }

    fn transcript_item(&mut self, item: &TranscriptItem) {
        let item = view::transcript_item(item);
        self.transcript.push_back(item.clone());
        while self.transcript.len() > TRANSCRIPT_KEPT {
            self.transcript.pop_front();
        }
        let kept: HashSet<u64> = self
            .transcript
            .iter()
            .filter_map(|i| i["receipt"].as_u64())
            .collect();
        self.receipts.retain(|id, _| kept.contains(id));
        self.publish(json!({"type": "transcript", "item": item}));
    }
}

/// Reads the hub's messages into the state until the lead's connection ends; the pages are
/// told when it does.
pub async fn pump(state: Shared, mut upstream: mpsc::Receiver<ServerMsg>) {
    while let Some(msg) = upstream.recv().await {
        if let ServerMsg::Event(event) = msg {
            state.lock().apply(event);
        }
    }
    let mut s = state.lock();
    if !s.exited {
        s.exited = true;
        s.publish(json!({"type": "exited"}));
    }
    // Barriers still waiting will never be answered.
    s.barriers.clear();
}
