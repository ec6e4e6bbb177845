//! Many real writer processes on one inbox: nothing lost, nothing duplicated, and a writer
//! killed at any moment never leaves an invalid inbox, nor a lock that blocks the next writer
//! (its holder marker says it is dead). Stale lock directories are taken over, fresh ones are
//! waited for, and a signalled process removes the locks it holds.

use crate::store_common;

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use rand::Rng;
use teamlead::protocol::InboxEntry;
use teamlead::store::{StoreError, inbox, lock};

use store_common::{
    ChildGuard, ChildJob, TempHome, assert_exactly_once, child_command, inbox_texts, wait_until,
};

const TEAM: &str = "alpha";
const TO: &str = "team-lead";

fn lock_dir(path: &std::path::Path) -> PathBuf {
    lock::lock_dir_of(path)
}

/// One writer process per prefix, all started at once, each appending `per_writer` messages
/// `<prefix>-<i>` to `to`'s inbox; returns once all have succeeded.
fn append_all_at_once(t: &TempHome, to: &str, prefixes: &[String], per_writer: usize) {
    let children: Vec<ChildGuard> = prefixes
        .iter()
        .map(|p| {
            ChildGuard(
                child_command(ChildJob::Append {
                    home: &t.home.root,
                    team: TEAM,
                    to,
                    from: p,
                    count: per_writer,
                    prefix: p,
                })
                .spawn()
                .unwrap(),
            )
        })
        .collect();
    for mut child in children {
        let out = child.0.wait().unwrap();
        let mut err = String::new();
        if let Some(mut e) = child.0.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        assert!(out.success(), "a writer failed: {err}");
    }
}

#[test]
fn thirty_two_writers_times_a_hundred_messages() {
    let t = TempHome::new();
    let writers = 32;
    let per_writer = 100;
    let prefixes: Vec<String> = (0..writers).map(|w| format!("w{w}")).collect();
    append_all_at_once(&t, TO, &prefixes, per_writer);
    let path = t.home.inbox_path(TEAM, TO).unwrap();
    let texts = inbox_texts(&path);
    assert_exactly_once(&texts, &prefixes, per_writer);
    assert!(!lock_dir(&path).exists(), "lock directory left behind");
    let read = inbox::read(&t.home, TEAM, TO).unwrap();
    assert_eq!(read.entries.len(), writers * per_writer);
    assert!(read.bad.is_empty());
}

/// A missing inbox is made by its first writer without the lock (a rename that never
/// replaces); writers racing to make the same new inbox lose nothing.
#[test]
fn writers_racing_to_make_new_inboxes_lose_nothing() {
    let t = TempHome::new();
    let (writers, per_writer) = (4, 3);
    for round in 0..12 {
        let to = format!("new-{round}");
        let prefixes: Vec<String> = (0..writers).map(|w| format!("r{round}w{w}")).collect();
        append_all_at_once(&t, &to, &prefixes, per_writer);
        let path = t.home.inbox_path(TEAM, &to).unwrap();
        assert_exactly_once(&inbox_texts(&path), &prefixes, per_writer);
        assert!(!lock_dir(&path).exists(), "lock directory left behind");
    }
}

#[test]
fn sigkilled_writers_never_leave_an_invalid_inbox() {
    let t = TempHome::new();
    let path = t.home.inbox_path(TEAM, TO).unwrap();
    let mut rng = rand::rng();
    let mut previous = 0;
    for round in 0..25 {
        let prefix = format!("r{round}");
        let mut child = ChildGuard(
            child_command(ChildJob::Append {
                home: &t.home.root,
                team: TEAM,
                to: TO,
                from: "killer-test",
                count: 100_000,
                prefix: &prefix,
            })
            .spawn()
            .unwrap(),
        );
        // Kill it at a random moment while it is appending.
        let started = wait_until(Duration::from_secs(20), || {
            std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                .and_then(|v| v.as_array().map(Vec::len))
                .is_some_and(|n| n > previous)
        });
        assert!(started, "round {round}: the writer never appended");
        std::thread::sleep(Duration::from_millis(rng.random_range(0..15)));
        child.0.kill().unwrap();
        child.0.wait().unwrap();

        let texts = inbox_texts(&path);
        assert!(
            texts.len() >= previous,
            "round {round}: entries were lost ({} < {previous})",
            texts.len()
        );
        let read = inbox::read(&t.home, TEAM, TO).unwrap();
        assert!(read.bad.is_empty());
        previous = texts.len();
        // A lock held at the moment of the kill stays behind (SIGKILL runs no cleanup), but
        // its holder marker tells the next writer at once that its holder is dead.
    }
    // The inbox still takes appends, and every entry's text is one of ours, in order per round.
    inbox::append(&t.home, TEAM, TO, &InboxEntry::new("after", "last")).unwrap();
    let texts = inbox_texts(&path);
    assert_eq!(texts.last().map(String::as_str), Some("last"));
    assert_eq!(texts.len(), previous + 1);
}

fn set_mtime(dir: &std::path::Path, ago: Duration) {
    let f = std::fs::File::open(dir).unwrap();
    f.set_modified(SystemTime::now() - ago).unwrap();
}

#[test]
fn a_stale_lock_is_taken_over() {
    let t = TempHome::new();
    let path = t.home.inbox_path(TEAM, TO).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An inbox that is there (a new one is made without the lock).
    std::fs::write(&path, b"[]").unwrap();
    let dir = lock_dir(&path);
    std::fs::create_dir(&dir).unwrap();
    set_mtime(&dir, Duration::from_secs(11));
    let started = Instant::now();
    inbox::append(
        &t.home,
        TEAM,
        TO,
        &InboxEntry::new("a", "through a stale lock"),
    )
    .unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(inbox_texts(&path), vec!["through a stale lock".to_string()]);
    assert!(!dir.exists());
}

#[test]
fn a_fresh_lock_is_waited_for() {
    let t = TempHome::new();
    let path = t.home.inbox_path(TEAM, TO).unwrap();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An inbox that is there (a new one is made without the lock).
    std::fs::write(&path, b"[]").unwrap();
    let dir = lock_dir(&path);
    std::fs::create_dir(&dir).unwrap();

    let (tx, rx) = std::sync::mpsc::channel();
    let home = t.home.clone();
    let writer = std::thread::spawn(move || {
        let r = inbox::append(&home, TEAM, TO, &InboxEntry::new("a", "after the wait"));
        tx.send(r.map(|_| ())).unwrap();
    });
    // While the lock is there, the append does not happen.
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    assert!(inbox_texts(&path).is_empty());
    std::fs::remove_dir(&dir).unwrap();
    rx.recv_timeout(Duration::from_secs(5))
        .expect("append finished after the lock was released")
        .unwrap();
    writer.join().unwrap();
    assert_eq!(inbox_texts(&path), vec!["after the wait".to_string()]);
}

#[test]
fn a_busy_lock_times_out_with_a_clear_error() {
    let t = TempHome::new();
    let target = t.home.root.join("file.json");
    let held = lock::acquire(&target, Duration::from_secs(1)).unwrap();
    let started = Instant::now();
    let err = lock::acquire(&target, Duration::from_millis(200)).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(matches!(err, StoreError::LockTimeout { .. }));
    assert!(err.to_string().contains("file.json"), "{err}");
    drop(held);
    assert!(!lock_dir(&target).exists());
    lock::acquire(&target, Duration::from_millis(200)).unwrap();
}

#[test]
fn a_held_lock_is_refreshed_every_five_seconds() {
    let t = TempHome::new();
    let target = t.home.root.join("long.json");
    let held = lock::acquire(&target, Duration::from_secs(1)).unwrap();
    set_mtime(held.dir(), Duration::from_secs(8));
    let old = std::fs::metadata(held.dir()).unwrap().modified().unwrap();
    let refreshed = wait_until(Duration::from_secs(8), || {
        std::fs::metadata(held.dir()).unwrap().modified().unwrap() > old
    });
    assert!(refreshed, "the held lock's mtime was not refreshed");
    // Another process would now see it as fresh, not stale.
    let age = SystemTime::now()
        .duration_since(std::fs::metadata(held.dir()).unwrap().modified().unwrap())
        .unwrap_or_default();
    assert!(age < Duration::from_secs(2));
}

#[test]
fn a_signalled_process_removes_its_locks() {
    let t = TempHome::new();
    let target = t.home.root.join("held.json");
    let mut child = ChildGuard(
        child_command(ChildJob::HoldLock { target: &target })
            .spawn()
            .unwrap(),
    );
    let marker = t.home.root.join("held.json.held");
    assert!(wait_until(Duration::from_secs(20), || marker.exists()));
    assert!(lock_dir(&target).is_dir());
    let pid = child.0.id() as i32;
    // SAFETY: plain kill(2) on our own child.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let status = child.0.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGTERM),
        "{status:?} {:?}",
        status.signal()
    );
    assert!(!lock_dir(&target).exists(), "the lock survived SIGTERM");
}

#[test]
fn sigkilled_teamlead_send_never_leaves_an_invalid_inbox() {
    let t = TempHome::new();
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead::store::create_team(
        &t.home,
        &teamlead::protocol::TeamFile::new(TEAM, None, &cwd),
    )
    .unwrap();
    let path = t.home.inbox_path(TEAM, TO).unwrap();
    let filler: Vec<InboxEntry> = (0..300)
        .map(|i| InboxEntry::new("filler", format!("filler-{i}")))
        .collect();
    inbox::append_many(&t.home, TEAM, TO, &filler).unwrap();
    let mut rng = rand::rng();
    let mut previous = inbox_texts(&path).len();
    let mut confirmed = Vec::new();
    for round in 0..40 {
        let text = format!("send-{round}");
        let mut child = ChildGuard(
            std::process::Command::new(env!("CARGO_BIN_EXE_teamlead"))
                .arg("send")
                .arg("--home")
                .arg(&t.home.root)
                .args(["--team", TEAM, "--to", TO, "--from", "killer-test", &text])
                .env_remove("CLAUDE_CONFIG_DIR")
                .env_remove("TEAMLEAD_HOME")
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        );
        std::thread::sleep(Duration::from_micros(rng.random_range(0..20_000)));
        let _ = child.0.kill();
        let status = child.0.wait().unwrap();
        if status.success() {
            // Exit 0 promises the message is durably there.
            confirmed.push(text);
        }
        let texts = inbox_texts(&path);
        assert!(texts.len() >= previous, "round {round}: entries were lost");
        previous = texts.len();
    }
    eprintln!("{} of 40 sends finished before the kill", confirmed.len());
    let texts = inbox_texts(&path);
    for text in &confirmed {
        assert_eq!(texts.iter().filter(|t| *t == text).count(), 1, "{text}");
    }
    assert_eq!(
        texts.iter().filter(|t| t.starts_with("filler-")).count(),
        300
    );
}

/// Many writers find the same stale lock at once (a writer died holding it, as in a crash):
/// exactly one of them removes it, and no two ever hold the lock at the same time. Repeated,
/// because the lost race (one taker removing the lock another taker has just made) depends on
/// timing.
#[test]
fn writers_that_find_the_same_stale_lock_never_hold_it_together() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Barrier};
    let t = TempHome::new();
    let target = t.home.root.join("shared.json");
    let dir = lock_dir(&target);
    let writers = 8;
    let mut overlaps = 0;
    for _round in 0..25 {
        std::fs::create_dir(&dir).unwrap();
        set_mtime(&dir, Duration::from_secs(11));
        let holding = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(Barrier::new(writers));
        let threads: Vec<_> = (0..writers)
            .map(|_| {
                let (target, holding, most, start) =
                    (target.clone(), holding.clone(), most.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait();
                    let guard = lock::acquire(&target, Duration::from_secs(20)).expect("lock");
                    let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    holding.fetch_sub(1, Ordering::SeqCst);
                    drop(guard);
                })
            })
            .collect();
        for th in threads {
            th.join().unwrap();
        }
        if most.load(Ordering::SeqCst) > 1 {
            overlaps += 1;
        }
        assert!(!dir.exists(), "the last holder released the lock");
    }
    assert_eq!(
        overlaps, 0,
        "rounds in which two writers held the lock together"
    );
    let left: Vec<_> = std::fs::read_dir(&t.home.root)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "nothing left beside the target: {left:?}");
}
