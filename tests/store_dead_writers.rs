//! Writers that die leave nothing that blocks (issue 10, item 5). A teamlead process
//! SIGKILLed while it holds a lock is noticed at once by the next teamlead writer (its holder
//! marker's flock is free), while a lock no marker names (Claude Code's) keeps the 10 s rule;
//! `teamlead send` processes killed at random never make another send fail, never cost a
//! proper-lockfile (Claude Code-style) writer its lock or a message, and whatever they leave
//! behind is gone after `teamlead clean`. The figures are printed (`--nocapture`).

mod store_common;

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use teamlead::store::lock::{self, holder::Identity, lock_dir_of};

use store_common::{ChildGuard, ChildJob, TempHome, child_command, wait_until};

#[test]
fn child_process_entry() {
    store_common::child_entry();
}

/// The largest wait tolerated after a teamlead holder died (the goal).
pub const MAX_TAKEOVER: Duration = Duration::from_millis(100);

fn identity(dir: &Path) -> Option<Identity> {
    std::fs::symlink_metadata(dir)
        .ok()
        .map(|m| Identity::of(&m))
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
fn a_sigkilled_holder_process_is_taken_over_within_100_ms() {
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
    eprintln!("takeover after SIGKILL of a holder process: {}", distribution(&samples));
    let worst = samples.iter().max().unwrap();
    assert!(*worst <= MAX_TAKEOVER, "{}", distribution(&samples));
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
    assert!(got.duration_since(died) <= MAX_TAKEOVER);
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
    assert_eq!(identity(&dir), Some(id), "a lock no live marker names was removed");
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
    assert!(matches!(err, teamlead::store::StoreError::LockTimeout { .. }));
    let took = started.elapsed();
    assert!(took < Duration::from_secs(9), "{took:?}");
    refresher.join().unwrap();
    drop(held);
}
