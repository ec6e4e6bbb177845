//! Writers that die leave nothing that blocks (issue 10, item 5). A teamlead process
//! SIGKILLed while it holds a lock is noticed at once by the next teamlead writer (its holder
//! marker's flock is free), while a lock no marker names (Claude Code's) keeps the 10 s rule;
//! `teamlead send` processes killed at random never make another send fail, never cost a
//! proper-lockfile (Claude Code-style) writer its lock or a message, and whatever they leave
//! behind is gone after `teamlead clean`. The figures are printed (`--nocapture`).

use crate::store_common;

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use teamlead::store::lock::{self, lock_dir_of};

use crate::store_killers::identity;
use store_common::{ChildGuard, ChildJob, TempHome, child_command, wait_until};

/// The goal for the wait after a teamlead holder died: asserted for 90 % of kills.
pub const GOAL: Duration = Duration::from_millis(100);
/// What no kill may exceed, even on a loaded machine (the old rule cost 10 s).
pub const WORST: Duration = Duration::from_millis(500);

/// Asserts the takeover times meet [`GOAL`] at p90 and [`WORST`] at the maximum.
pub fn assert_fast(samples: &[Duration]) {
    let mut s = samples.to_vec();
    s.sort();
    let p90 = s[((s.len() as f64 - 1.0) * 0.9).round() as usize];
    assert!(p90 <= GOAL, "{}", distribution(samples));
    assert!(*s.last().unwrap() <= WORST, "{}", distribution(samples));
}

/// p50, p90 and max of some durations, in ms, as one line.
pub fn distribution(samples: &[Duration]) -> String {
    let mut s = samples.to_vec();
    s.sort();
    let at = |p: f64| s[((s.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3;
    format!(
        "n={} p50={:.1} ms p90={:.1} ms max={:.1} ms",
        s.len(),
        at(0.5),
        at(0.9),
        at(1.0)
    )
}

/// A record naming `dir` as it is now, as a teamlead holder writes it.
fn record_naming(dir: &Path, pid: u32) -> String {
    let id = identity(dir).unwrap();
    let (s, n) = id.mtime;
    format!(
        "teamlead-lock-holder 1 held pid={pid} dev={} ino={} m1={s}.{n} m2={s}.{n}\n",
        id.dev, id.ino
    )
}

fn marker_beside(dir: &Path, token: &str) -> std::path::PathBuf {
    lock::holder::marker_path(dir, token)
}

#[test]
fn a_sigkilled_holder_process_is_taken_over_at_once() {
    let t = TempHome::new();
    let target = t.home.root.join("shared.json");
    let dir = lock_dir_of(&target);
    let held = t.home.root.join("shared.json.held");
    let mut samples = Vec::new();
    for round in 0..20 {
        let _ = std::fs::remove_file(&held);
        let mut child = ChildGuard(
            child_command(ChildJob::HoldLock { target: &target })
                .spawn()
                .unwrap(),
        );
        assert!(
            wait_until(Duration::from_secs(20), || held.exists()),
            "round {round}: the holder never took the lock"
        );
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter_target = target.clone();
        let waiter = std::thread::spawn(move || {
            let guard = lock::acquire(&waiter_target, Duration::from_secs(30));
            tx.send(Instant::now()).unwrap();
            drop(guard.unwrap());
        });
        // The waiter really waits while the holder lives.
        assert!(rx.recv_timeout(Duration::from_millis(50)).is_err());
        let killed = Instant::now();
        child.0.kill().unwrap();
        let got = rx.recv_timeout(Duration::from_secs(30)).unwrap();
        waiter.join().unwrap();
        child.0.wait().unwrap();
        samples.push(got.duration_since(killed));
    }
    eprintln!(
        "takeover after SIGKILL of a holder process: {}",
        distribution(&samples)
    );
    assert_fast(&samples);
    assert!(!dir.exists());
}

#[test]
fn a_marker_whose_flock_is_held_is_waited_for_and_a_free_one_is_taken_over() {
    let t = TempHome::new();
    let target = t.home.root.join("f.json");
    let dir = lock_dir_of(&target);
    std::fs::create_dir(&dir).unwrap();
    let marker = marker_beside(&dir, "00000000000000aa");
    std::fs::write(&marker, record_naming(&dir, 1)).unwrap();
    // A live holder: another open file description holds the flock.
    let live = File::options()
        .read(true)
        .write(true)
        .open(&marker)
        .unwrap();
    live.lock().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter_target = target.clone();
    let waiter = std::thread::spawn(move || {
        let guard = lock::acquire(&waiter_target, Duration::from_secs(30)).unwrap();
        tx.send(Instant::now()).unwrap();
        drop(guard);
    });
    assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
    assert!(dir.is_dir() && marker.exists());
    let died = Instant::now();
    drop(live);
    let got = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    waiter.join().unwrap();
    assert!(got.duration_since(died) <= WORST);
    assert!(!marker.exists(), "the dead holder's marker was removed");
}

#[test]
fn a_lock_no_live_marker_names_keeps_the_ten_second_rule() {
    let t = TempHome::new();
    let target = t.home.root.join("g.json");
    let dir = lock_dir_of(&target);
    std::fs::create_dir(&dir).unwrap();
    // A dead marker that names another directory (the same inode, another mtime): it must
    // not be taken for this lock's holder.
    let marker = marker_beside(&dir, "00000000000000bb");
    let id = identity(&dir).unwrap();
    std::fs::write(
        &marker,
        format!(
            "teamlead-lock-holder 1 held pid=1 dev={} ino={} m1={}.1 m2={}.1\n",
            id.dev,
            id.ino,
            id.mtime.0 - 20,
            id.mtime.0 - 20
        ),
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter_target = target.clone();
    let waiter = std::thread::spawn(move || {
        let r = lock::acquire(&waiter_target, Duration::from_millis(300));
        tx.send(r.map(drop)).unwrap();
    });
    // Past its 300 ms deadline the waiter still waits (the lock may be a dead writer's that
    // turns stale), and nothing removes the lock early.
    assert!(rx.recv_timeout(Duration::from_secs(1)).is_err());
    assert_eq!(
        identity(&dir),
        Some(id),
        "a lock no live marker names was removed"
    );
    assert!(!marker.exists(), "a dead marker naming nothing was left");
    // Its holder (Claude Code) releases it: the waiter gets it.
    std::fs::remove_dir(&dir).unwrap();
    rx.recv_timeout(Duration::from_secs(5)).unwrap().unwrap();
    waiter.join().unwrap();
}

#[test]
fn a_waiter_outlives_its_deadline_until_a_dead_lock_is_stale() {
    let t = TempHome::new();
    let target = t.home.root.join("h.json");
    let dir = lock_dir_of(&target);
    std::fs::create_dir(&dir).unwrap();
    // Left by a Claude Code writer that died 8 s ago: stale in 2 s.
    let f = File::open(&dir).unwrap();
    f.set_modified(std::time::SystemTime::now() - Duration::from_secs(8))
        .unwrap();
    let started = Instant::now();
    let guard = lock::acquire(&target, Duration::from_millis(200)).unwrap();
    let took = started.elapsed();
    eprintln!("a 200 ms waiter got a lock 8 s old after {took:?}");
    assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(5));
    drop(guard);
}

#[test]
fn a_waiter_on_a_lock_kept_alive_still_times_out() {
    let t = TempHome::new();
    let target = t.home.root.join("k.json");
    let held = lock::acquire(&target, Duration::from_secs(1)).unwrap();
    // Refreshed as a live holder does, 5 s after it was made.
    let dir = held.dir().to_path_buf();
    let refresher = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(5));
        lock::touch_dir(&dir).unwrap();
    });
    let started = Instant::now();
    let err = lock::acquire(&target, Duration::from_millis(200)).unwrap_err();
    assert!(matches!(
        err,
        teamlead::store::StoreError::LockTimeout { .. }
    ));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(9), "{took:?}");
    refresher.join().unwrap();
    drop(held);
}

mod sends {
    //! The acceptance run: real `teamlead send` processes on one inbox, the current lock
    //! holder among them SIGKILLed again and again (and other senders at random moments),
    //! with node proper-lockfile writers and an in-process teamlead writer appending
    //! throughout.

    use std::collections::HashMap;
    use std::path::Path;
    use std::process::Command;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use rand::Rng;
    use teamlead::protocol::{InboxEntry, TeamFile};
    use teamlead::store::{create_team, inbox, lock};

    use super::store_common::{TempHome, inbox_texts, wait_until};
    use super::{assert_fast, distribution};
    use crate::store_killers::{
        Exits, Live, Outcome, TEAM, TO, kill_holder, kill_random, leftovers, node_loop, send_loop,
    };

    const SENDERS: usize = 16;
    const HOLDER_KILLS: usize = 150;

    #[test]
    fn sigkilled_sends_block_nobody_and_fail_nobody() {
        let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/node_modules");
        assert!(
            lib.join("proper-lockfile").is_dir(),
            "this test needs proper-lockfile: run `npm ci --prefix tests/interop`"
        );
        let t = TempHome::new();
        let cwd = t.home.root.to_string_lossy().into_owned();
        create_team(&t.home, &TeamFile::new(TEAM, None, &cwd)).unwrap();
        let path = t.home.inbox_path(TEAM, TO).unwrap();
        let dir = lock::lock_dir_of(&path);
        inbox::append(&t.home, TEAM, TO, &InboxEntry::new("seed", "seed")).unwrap();

        let stop = Arc::new(AtomicBool::new(false));
        let live: Live = Arc::default();
        let exits: Exits = Arc::default();
        let senders: Vec<_> = (0..SENDERS)
            .map(|n| {
                let (root, stop) = (t.home.root.clone(), stop.clone());
                let (live, exits) = (live.clone(), exits.clone());
                std::thread::spawn(move || send_loop(n, root, stop, live, exits))
            })
            .collect();
        let node = {
            let (inbox, stop) = (path.clone(), stop.clone());
            std::thread::spawn(move || node_loop(inbox, stop))
        };
        // A teamlead writer in this process keeps a waiter on the lock at all times.
        let own = {
            let (home, stop) = (t.home.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    let e = InboxEntry::new("inproc", format!("inproc-{n}"));
                    inbox::append(&home, TEAM, TO, &e).unwrap();
                    n += 1;
                }
                n
            })
        };

        // From the holder's exit (the goal), and from the kill signal (it includes the time
        // a process stuck in `fsync` takes to die).
        let mut samples = Vec::new();
        let mut from_kill = Vec::new();
        let mut random_kills = 0;
        let started = Instant::now();
        let mut rng = rand::rng();
        while samples.len() < HOLDER_KILLS && started.elapsed() < Duration::from_secs(240) {
            if rng.random_bool(0.5) {
                if let Some(took) = kill_holder(&dir, &live, &exits) {
                    samples.push(took.from_exit);
                    from_kill.push(took.from_kill);
                }
            } else {
                kill_random(&live);
                random_kills += 1;
            }
            std::thread::sleep(Duration::from_millis(rng.random_range(0..20)));
        }
        stop.store(true, Ordering::Relaxed);
        let mut results = Vec::new();
        for s in senders {
            results.extend(s.join().unwrap());
        }
        let node_runs = node.join().unwrap();
        let own_count = own.join().unwrap();

        eprintln!(
            "lock taken over after a holding `teamlead send` died: {} (from the SIGKILL: {})",
            distribution(&samples),
            distribution(&from_kill)
        );
        let failed: Vec<_> = results
            .iter()
            .filter_map(|(text, o)| match o {
                Outcome::Failed(e) => Some(format!("{text}: {e}")),
                _ => None,
            })
            .collect();
        let killed = results
            .iter()
            .filter(|(_, o)| matches!(o, Outcome::Killed))
            .count();
        eprintln!(
            "{} sends: {} killed ({random_kills} random kills), {} failed; {} node runs; {own_count} in-process appends",
            results.len(),
            killed,
            failed.len(),
            node_runs.len()
        );
        assert!(samples.len() >= HOLDER_KILLS / 2, "too few holder kills");
        assert!(failed.is_empty(), "sends failed: {failed:#?}");
        for (prefix, ok, err) in &node_runs {
            assert!(ok, "the proper-lockfile writer {prefix} failed: {err}");
        }
        assert_fast(&samples);

        // Nothing lost, nothing twice; the inbox is valid and readable.
        let texts = inbox_texts(&path);
        let mut count: HashMap<&str, usize> = HashMap::new();
        for text in &texts {
            *count.entry(text.as_str()).or_default() += 1;
        }
        for (text, o) in &results {
            let n = count.get(text.as_str()).copied().unwrap_or(0);
            match o {
                Outcome::Sent => assert_eq!(n, 1, "{text}"),
                _ => assert!(n <= 1, "{text} appears {n} times"),
            }
        }
        for (prefix, _, _) in &node_runs {
            for i in 0..20 {
                assert_eq!(count.get(format!("{prefix}-{i}").as_str()), Some(&1));
            }
        }
        for i in 0..own_count {
            assert_eq!(count.get(format!("inproc-{i}").as_str()), Some(&1));
        }
        assert!(inbox::read(&t.home, TEAM, TO).unwrap().bad.is_empty());

        // What the killed writers left, and `teamlead clean` removing it.
        let mut left = Vec::new();
        leftovers(&t.home.root, &mut left);
        eprintln!(
            "{} temp file(s) and lock side files left before clean",
            left.len()
        );
        // A leftover is removed once it is old enough to be sure its writer is not between
        // creating it and locking it (2 s).
        assert!(wait_until(Duration::from_secs(10), || left.iter().all(
            |p| {
                std::fs::symlink_metadata(p)
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|m| m.elapsed().ok())
                    .is_none_or(|age| age > Duration::from_millis(2100))
            }
        )));
        let out = Command::new(env!("CARGO_BIN_EXE_teamlead"))
            .arg("clean")
            .arg("--home")
            .arg(&t.home.root)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut after = Vec::new();
        leftovers(&t.home.root, &mut after);
        assert!(after.is_empty(), "left after clean: {after:?}");
        assert!(!dir.exists(), "a lock directory was left");
    }
}
