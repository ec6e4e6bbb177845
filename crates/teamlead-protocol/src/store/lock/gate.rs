//! One queue per lock directory inside this process: threads of one process that want the
//! same lock (the lead's store work and its in-process teammates, all writing `config.json`;
//! a bench's writers) take turns in the order they came, and a thread whose turn comes is
//! woken at once by the one before (a condvar, no sleeping backoff). Only the thread at the
//! head of the queue looks at the lock directory, where other processes (Claude Code, other
//! teamlead processes) still meet it by the mkdir rule. Before, 100 in-process teammates
//! starting at once each polled the directory: ~170,000 failed `flock`s and as many sleeps for
//! one spawn of 100, and waiters overtaken again and again until their deadline.
//!
//! A turn that does not come is given up like a kept lock: when the queue has not moved for
//! the caller's patience (its timeout plus the time a kept lock takes to turn stale), the
//! ticket is abandoned (skipped when its turn comes) and the caller fails with a lock timeout.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The queue of one lock directory.
#[derive(Debug, Default)]
struct Gate {
    state: Mutex<Queue>,
}

#[derive(Debug, Default)]
struct Queue {
    /// The next ticket to hand out.
    next: u64,
    /// The ticket whose turn it is.
    serving: u64,
    /// Tickets whose holders gave up waiting: skipped.
    abandoned: BTreeSet<u64>,
    /// The waiting threads by ticket: the turn wakes only the one whose turn it is (a
    /// condvar's notify_all woke all 100 waiters of a 100-teammate spawn at every hand-off).
    sleepers: HashMap<u64, std::thread::Thread>,
}

impl Queue {
    /// The turn passes on, past abandoned tickets, and its new holder is woken.
    fn advance(&mut self) {
        self.serving += 1;
        while self.abandoned.remove(&self.serving) {
            self.serving += 1;
        }
        if let Some(next) = self.sleepers.get(&self.serving) {
            next.unpark();
        }
    }

    fn idle(&self) -> bool {
        self.serving == self.next
    }
}

impl Gate {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        crate::store::unpoisoned(&self.state)
    }
}

fn gates() -> &'static Mutex<HashMap<PathBuf, Arc<Gate>>> {
    static GATES: OnceLock<Mutex<HashMap<PathBuf, Arc<Gate>>>> = OnceLock::new();
    GATES.get_or_init(|| Mutex::new(HashMap::new()))
}

fn with_gates<R>(f: impl FnOnce(&mut HashMap<PathBuf, Arc<Gate>>) -> R) -> R {
    let mut guard = crate::store::unpoisoned(gates());
    f(&mut guard)
}

/// Idle gates are kept (no allocation for the next turn at a busy lock) until there are more
/// than this many gates; then the idle ones go.
const KEEP_GATES: usize = 64;

/// This thread's turn at a lock directory; dropping it passes the turn on.
#[derive(Debug)]
pub(crate) struct Turn {
    /// The directory's hash, as [`HELD`] keeps it.
    key: u64,
    gate: Arc<Gate>,
}

thread_local! {
    /// The lock directories (hashed) whose turn this thread holds: a lock it takes there under
    /// its own turn (a batch's write, `store::append_batch`) does not queue behind itself. (A
    /// hash that meets another directory's only lets a lock skip the queue; the lock directory
    /// still keeps writers apart.)
    static HELD: std::cell::RefCell<Vec<u64>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn key_of(dir: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    dir.hash(&mut hasher);
    hasher.finish()
}

/// Whether this thread holds the turn at `dir`.
pub(crate) fn held_here(dir: &Path) -> bool {
    let key = key_of(dir);
    HELD.with(|held| held.borrow().contains(&key))
}

impl Turn {
    /// Whether another thread of this process waits for its turn after this one (a ticket
    /// queued and not given up).
    pub(crate) fn others_wait(&self) -> bool {
        let queue = self.gate.queue();
        let behind = queue.next.saturating_sub(queue.serving + 1);
        let gave_up = queue
            .abandoned
            .iter()
            .filter(|t| **t > queue.serving)
            .count() as u64;
        behind > gave_up
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // A turn dropped on another thread leaves its mark behind there: that thread then
        // skips the queue at this directory (the lock directory still keeps writers apart).
        HELD.with(|held| {
            let mut held = held.borrow_mut();
            if let Some(i) = held.iter().position(|k| *k == self.key) {
                held.swap_remove(i);
            }
        });
        self.gate.queue().advance();
    }
}

/// Waits for this thread's turn at `dir`. `None` when the queue did not move for `patience`
/// (its ticket is then abandoned) or `give_up_after` passed in all.
pub(crate) fn wait_turn(dir: &Path, patience: Duration, give_up_after: Duration) -> Option<Turn> {
    // The ticket is taken under the map's lock, so a gate that just went idle is never
    // removed between finding it and queueing on it (the lock order: map, then queue).
    let (gate, ticket) = with_gates(|gates| {
        let gate = match gates.get(dir) {
            Some(gate) => gate.clone(),
            None => {
                if gates.len() >= KEEP_GATES {
                    // Nobody holds or waits at an idle gate (the map's lock is held).
                    gates.retain(|_, g| Arc::strong_count(g) > 1 || !g.queue().idle());
                }
                gates.entry(dir.to_path_buf()).or_default().clone()
            }
        };
        let mut queue = gate.queue();
        let ticket = queue.next;
        queue.next += 1;
        drop(queue);
        (gate, ticket)
    });
    let started = Instant::now();
    let mut queue = gate.queue();
    if queue.serving != ticket {
        queue.sleepers.insert(ticket, std::thread::current());
    }
    let mut seen = queue.serving;
    let mut moved_at = Instant::now();
    while queue.serving != ticket {
        if queue.serving != seen {
            seen = queue.serving;
            moved_at = Instant::now();
        }
        let stuck = moved_at.elapsed() >= patience || started.elapsed() >= give_up_after;
        if stuck {
            queue.sleepers.remove(&ticket);
            queue.abandoned.insert(ticket);
            drop(queue);
            return None;
        }
        let wait = patience.saturating_sub(moved_at.elapsed());
        drop(queue);
        // Woken by the turn before (an unpark that came first is kept), or to look again at
        // the time this wait would give up.
        std::thread::park_timeout(wait.min(Duration::from_secs(1)));
        queue = gate.queue();
    }
    queue.sleepers.remove(&ticket);
    drop(queue);
    let key = key_of(dir);
    HELD.with(|held| held.borrow_mut().push(key));
    Some(Turn { key, gate })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_take_their_turns_in_the_order_they_came() {
        let dir = PathBuf::from("/gate-test/order.lock");
        let first = wait_turn(&dir, Duration::from_secs(5), Duration::from_secs(60)).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for n in 0..8 {
            let (queued_dir, order) = (dir.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                let turn = wait_turn(&queued_dir, Duration::from_secs(5), Duration::from_secs(60));
                order.lock().unwrap().push(n);
                drop(turn);
            }));
            // Each is queued before the next comes.
            let deadline = Instant::now() + Duration::from_secs(5);
            while with_gates(|g| g[&dir].queue().next) < n + 2 {
                assert!(Instant::now() < deadline);
                std::thread::yield_now();
            }
        }
        drop(first);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
        assert!(
            with_gates(|g| g[&dir].queue().idle()),
            "the queue is left idle"
        );
    }

    #[test]
    fn a_turn_that_never_comes_is_given_up_and_skipped() {
        let dir = PathBuf::from("/gate-test/stuck.lock");
        let held = wait_turn(&dir, Duration::from_secs(5), Duration::from_secs(60)).unwrap();
        let started = Instant::now();
        assert!(wait_turn(&dir, Duration::from_millis(50), Duration::from_secs(60)).is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        drop(held);
        // The abandoned ticket is skipped: the next comer has its turn at once.
        assert!(wait_turn(&dir, Duration::from_millis(50), Duration::from_secs(60)).is_some());
    }
}
