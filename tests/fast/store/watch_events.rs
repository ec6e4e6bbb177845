//! The watcher on a real temporary home: atomic writes, in-place writes, deletions, teams that
//! appear after the watcher started, lock directories, and the polling fallback. Every wait is a
//! poll of the channel with a deadline.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use teamlead::store::Home;
use teamlead::store::atomic::write_atomic;
use teamlead::watch::{
    ChangeEvent, ChangeKind, WatchMode, WatchOptions, WatchScope, watch, watch_sync,
};
use tokio::sync::mpsc::UnboundedReceiver;

const DEADLINE: Duration = Duration::from_secs(5);

/// Receives events until one matches, failing after the deadline. Returns everything seen.
async fn wait_for(
    rx: &mut UnboundedReceiver<ChangeEvent>,
    seen: &mut Vec<ChangeEvent>,
    path: &Path,
    kind: ChangeKind,
) {
    let deadline = Instant::now() + DEADLINE;
    if seen.iter().any(|e| e.path == path && e.kind == kind) {
        return;
    }
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Some(e)) => {
                let hit = e.path == path && e.kind == kind;
                seen.push(e);
                if hit {
                    return;
                }
            }
            _ => panic!(
                "no {kind:?} for {} before the deadline; saw {seen:#?}",
                path.display()
            ),
        }
    }
}

fn options(poll: bool) -> WatchOptions {
    WatchOptions::default().with_poll(poll)
}

fn team_home() -> (tempfile::TempDir, Home, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path());
    let team = home.team_dir("alpha").unwrap();
    let tasks = home.tasks_dir("alpha").unwrap();
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    (dir, home, team, tasks)
}

async fn atomic_lifecycle(poll: bool) {
    let (_dir, home, team, tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let (watcher, mut rx) = watch(&scope, &options(poll)).unwrap();
    assert_eq!(
        watcher.mode(),
        if poll {
            WatchMode::Poll
        } else {
            WatchMode::Notify
        }
    );
    let mut seen = Vec::new();

    let config = team.join("config.json");
    write_atomic(&config, b"{\"name\":\"alpha\"}").unwrap();
    wait_for(&mut rx, &mut seen, &config, ChangeKind::Created).await;

    write_atomic(&config, b"{\"name\":\"alpha\",\"members\":[]}").unwrap();
    wait_for(&mut rx, &mut seen, &config, ChangeKind::Modified).await;

    let task = tasks.join("1.json");
    std::fs::write(&task, b"{}").unwrap();
    wait_for(&mut rx, &mut seen, &task, ChangeKind::Created).await;
    std::fs::remove_file(&task).unwrap();
    wait_for(&mut rx, &mut seen, &task, ChangeKind::Removed).await;

    assert!(
        seen.iter()
            .all(|e| !e.path.to_string_lossy().contains(".tmp.")),
        "temp files are never reported: {seen:#?}"
    );
    assert!(
        seen.iter().all(|e| !e.kind.is_lock()),
        "no lock events unless asked: {seen:#?}"
    );
}

#[tokio::test]
async fn notify_reports_atomic_writes_and_deletions() {
    atomic_lifecycle(false).await;
}

#[tokio::test]
async fn polling_reports_the_same() {
    atomic_lifecycle(true).await;
}

#[tokio::test]
async fn a_team_that_appears_later_is_seen() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path());
    // Neither teams/ nor tasks/ exists yet.
    let scope = WatchScope::team(&home, "late").unwrap();
    let (_watcher, mut rx) = watch(&scope, &options(false)).unwrap();
    let mut seen = Vec::new();

    let team = home.team_dir("late").unwrap();
    std::fs::create_dir_all(team.join("inboxes")).unwrap();
    let inbox = team.join("inboxes").join("team-lead.json");
    // Written right after the directories appear, before any watch on them can exist.
    write_atomic(&inbox, b"[]").unwrap();
    wait_for(&mut rx, &mut seen, &team, ChangeKind::Created).await;
    wait_for(&mut rx, &mut seen, &inbox, ChangeKind::Created).await;

    write_atomic(
        &inbox,
        b"[{\"from\":\"a\",\"text\":\"hi\",\"timestamp\":\"x\"}]",
    )
    .unwrap();
    wait_for(&mut rx, &mut seen, &inbox, ChangeKind::Modified).await;

    let tasks = home.tasks_dir("late").unwrap();
    std::fs::create_dir_all(&tasks).unwrap();
    let task = tasks.join("1.json");
    write_atomic(&task, b"{}").unwrap();
    wait_for(&mut rx, &mut seen, &task, ChangeKind::Created).await;

    // Another team is out of scope.
    let other = home.team_dir("other").unwrap();
    std::fs::create_dir_all(&other).unwrap();
    write_atomic(&other.join("config.json"), b"{}").unwrap();
    write_atomic(&inbox, b"[]").unwrap();
    wait_for(&mut rx, &mut seen, &inbox, ChangeKind::Modified).await;
    assert!(
        seen.iter().all(|e| !e.path.starts_with(&other)),
        "{seen:#?}"
    );
}

#[tokio::test]
async fn every_team_scope_sees_new_teams_and_removals() {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path());
    let scope = WatchScope::all(&home);
    let (_watcher, mut rx) = watch(&scope, &options(false)).unwrap();
    let mut seen = Vec::new();
    for name in ["one", "two"] {
        let team = home.team_dir(name).unwrap();
        std::fs::create_dir_all(&team).unwrap();
        write_atomic(&team.join("config.json"), b"{}").unwrap();
        wait_for(
            &mut rx,
            &mut seen,
            &team.join("config.json"),
            ChangeKind::Created,
        )
        .await;
    }
    // A team deleted the protocol's way: renamed, then removed.
    let one = home.team_dir("one").unwrap();
    let doomed = home.teams_dir().join("one.deleted-0001");
    std::fs::rename(&one, &doomed).unwrap();
    std::fs::remove_dir_all(&doomed).unwrap();
    wait_for(
        &mut rx,
        &mut seen,
        &one.join("config.json"),
        ChangeKind::Removed,
    )
    .await;
    wait_for(&mut rx, &mut seen, &one, ChangeKind::Removed).await;
    assert!(
        seen.iter().all(|e| !e.path.starts_with(&doomed)),
        "a team being deleted is not reported: {seen:#?}"
    );
}

#[tokio::test]
async fn lock_churn_is_reported_when_asked() {
    let (_dir, home, team, _tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let (_watcher, mut rx) = watch(&scope, &options(false).with_locks(true)).unwrap();
    let mut seen = Vec::new();
    let config = team.join("config.json");
    {
        let _guard = teamlead::store::lock::acquire_default(&config).unwrap();
        let lock = team.join("config.json.lock");
        wait_for(&mut rx, &mut seen, &lock, ChangeKind::LockAcquired).await;
        write_atomic(&config, b"{}").unwrap();
    }
    let lock = team.join("config.json.lock");
    wait_for(&mut rx, &mut seen, &lock, ChangeKind::LockReleased).await;
    wait_for(&mut rx, &mut seen, &config, ChangeKind::Created).await;
    let released = seen
        .iter()
        .find(|e| e.kind == ChangeKind::LockReleased)
        .unwrap();
    assert_eq!(released.lock_target(), Some(config));
}

/// The kernel watches of this process, from `/proc/self/fdinfo`: each watched inode with the
/// events asked for it.
#[cfg(target_os = "linux")]
fn kernel_watches() -> Vec<(u64, u32)> {
    let mut watches = Vec::new();
    for fd in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let is_inotify =
            std::fs::read_link(fd.path()).is_ok_and(|l| l.to_string_lossy().contains("inotify"));
        if !is_inotify {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/self/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|w| w.strip_prefix(name))
                    .and_then(|v| u64::from_str_radix(v, 16).ok())
            };
            if let (Some(ino), Some(mask)) = (field("ino:"), field("mask:")) {
                watches.push((ino, mask as u32));
            }
        }
    }
    watches
}

/// The kernel is asked only for changes of what is there: reads (`OPEN`), metadata (`ATTRIB`)
/// and each `write(2)` (`MODIFY`) of a team file wake no watcher (they woke every teammate
/// process on every read by any of them), and a lock directory taken gets no watch of its
/// own, while a new ordinary directory does.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn the_kernel_watch_skips_reads_and_lock_directories() {
    use std::os::unix::fs::MetadataExt;
    let (_dir, home, team, _tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let (_watcher, mut rx) = watch(&scope, &options(false).with_locks(true)).unwrap();
    let mut seen = Vec::new();
    let locks: Vec<PathBuf> = (0..4)
        .map(|i| team.join("inboxes").join(format!("m{i}.json.lock")))
        .collect();
    for lock in &locks {
        std::fs::create_dir(lock).unwrap();
    }
    let sub = team.join("plans");
    std::fs::create_dir(&sub).unwrap();
    let marker = sub.join("p.json");
    std::fs::write(&marker, b"{}").unwrap();
    for lock in &locks {
        wait_for(&mut rx, &mut seen, lock, ChangeKind::LockAcquired).await;
    }
    wait_for(&mut rx, &mut seen, &marker, ChangeKind::Created).await;
    let ino = |p: &Path| std::fs::metadata(p).unwrap().ino();
    let watches = kernel_watches();
    for lock in &locks {
        assert!(
            !watches.iter().any(|(i, _)| *i == ino(lock)),
            "{} is watched: {watches:?}",
            lock.display()
        );
    }
    assert!(watches.iter().any(|(i, _)| *i == ino(&sub)), "{watches:?}");
    let (_, team_mask) = watches
        .iter()
        .find(|(i, _)| *i == ino(&team))
        .copied()
        .expect("the team directory is watched");
    let noisy = (libc::IN_OPEN | libc::IN_ATTRIB | libc::IN_MODIFY) & team_mask;
    assert_eq!(noisy, 0, "asked for reads or metadata: mask {team_mask:#x}");
}

/// A directory moved into the watched tree is watched with what is below it: a file written
/// there later is seen, in place or by rename (the narrowed watch keeps its recursion by hand).
/// No safety re-scan, and the file comes after the re-scan of a new directory (150 ms), so
/// only a kernel watch on it can tell.
#[tokio::test]
async fn a_directory_moved_into_the_tree_is_watched() {
    let (dir, home, team, _tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let no_rescan = WatchOptions {
        safety_rescan: None,
        ..options(false)
    };
    let (_watcher, mut rx) = watch(&scope, &no_rescan).unwrap();
    let mut seen = Vec::new();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    let moved = team.join("moved");
    std::fs::rename(&outside, &moved).unwrap();
    wait_for(&mut rx, &mut seen, &moved.join("deep"), ChangeKind::Created).await;
    // Past the new directory's own re-scan: what follows is seen by its watch or not at all.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let later = moved.join("deep").join("later.json");
    write_atomic(&later, b"{}").unwrap();
    wait_for(&mut rx, &mut seen, &later, ChangeKind::Created).await;
    let in_place = moved.join("in-place.json");
    std::fs::write(&in_place, b"{}").unwrap();
    wait_for(&mut rx, &mut seen, &in_place, ChangeKind::Created).await;
}

#[tokio::test]
async fn in_place_writes_collapse_to_one_event() {
    let (_dir, home, team, _tasks) = team_home();
    let config = team.join("config.json");
    std::fs::write(&config, b"{}").unwrap();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let (_watcher, mut rx) = watch(&scope, &options(false)).unwrap();
    let mut seen = Vec::new();
    // Claude Code 2.1.329 writes config.json in place: truncate, write, close.
    std::fs::write(&config, b"{\"name\":\"alpha\"}").unwrap();
    wait_for(&mut rx, &mut seen, &config, ChangeKind::Modified).await;
    // A sentinel change: everything about config.json has been delivered before it.
    let sentinel = team.join("inboxes").join("b.json");
    write_atomic(&sentinel, b"[]").unwrap();
    wait_for(&mut rx, &mut seen, &sentinel, ChangeKind::Created).await;
    let about_config = seen.iter().filter(|e| e.path == config).count();
    assert!(
        about_config <= 2,
        "a single write is one or two events: {seen:#?}"
    );
}

#[test]
fn the_sync_flavor_works_without_a_runtime() {
    let (_dir, home, team, _tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    let (_watcher, rx) = watch_sync(&scope, &WatchOptions::default()).unwrap();
    let inbox = team.join("inboxes").join("team-lead.json");
    write_atomic(&inbox, b"[]").unwrap();
    let deadline = Instant::now() + DEADLINE;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = rx.recv_timeout(left).expect("an event before the deadline");
        if event.path == inbox && event.kind == ChangeKind::Created {
            break;
        }
    }
}

#[test]
fn dropping_the_watcher_closes_the_channel() {
    let (_dir, home, _team, _tasks) = team_home();
    let scope = WatchScope::team(&home, "alpha").unwrap();
    for poll in [false, true] {
        let (watcher, rx) = watch_sync(&scope, &options(poll)).unwrap();
        drop(watcher);
        let deadline = Instant::now() + DEADLINE;
        loop {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
                _ if Instant::now() > deadline => panic!("the watcher thread did not stop"),
                _ => {}
            }
        }
    }
}
