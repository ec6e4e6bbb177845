//! Faults do not stall the lead, with the real binary in a pseudo-terminal:
//! - a lock on the lead's inbox left by a writer that was SIGKILLed (a plain `mkdir` writer, as
//!   Claude Code's: no teamlead marker, so only the 10 s staleness rule frees it) while the
//!   person types a command: the command is acknowledged at once, long before the lock goes
//!   stale, and the message the dead writer left arrives once it is;
//! - sends retry past such a lock instead of failing: `teamlead send`, and the lead's own;
//! - a full disk, then free: every message of the lead's inbox reaches the transcript (the
//!   lead's home on a small tmpfs in a private mount namespace; skipped, saying why, where no
//!   mount namespace can be made).

use crate::lead_common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::pty_harness::{DEADLINE, PtyLead};
use teamlead::protocol::{InboxEntry, Member, TeamFile};
use teamlead::store::{self, Home};

const TEAM: &str = "faults";

fn inbox_path(home: &Path, member: &str) -> PathBuf {
    home.join("teams")
        .join(TEAM)
        .join("inboxes")
        .join(format!("{member}.json"))
}

fn lock_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// A writer that is not teamlead (a plain `mkdir` lock, as proper-lockfile makes) takes the
/// lock `lock`, writes `entries` as the inbox at `inbox` (when given) and is SIGKILLed before
/// it releases the lock. Returns once it is dead, the lock left behind.
fn dead_writer(lock: &Path, inbox: Option<(&Path, &[InboxEntry])>) {
    let mut script = String::from("mkdir \"$1\" || exit 1\n");
    if let Some((path, entries)) = inbox {
        let text = serde_json::to_string_pretty(entries).expect("entries as JSON");
        let temp = path.with_extension("json.writing");
        std::fs::write(&temp, text).expect("the dead writer's new inbox");
        script.push_str(&format!("mv '{}' '{}'\n", temp.display(), path.display()));
    }
    script.push_str("kill -9 $$\n");
    let status = Command::new("sh")
        .args(["-c", &script, "sh"])
        .arg(lock)
        .status()
        .expect("run the writer");
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        status.signal(),
        Some(9),
        "the writer was SIGKILLed: {status:?}"
    );
    assert!(lock.is_dir(), "its lock is left behind");
}

/// Sets a directory's mtime `ago` into the past (a writer that died that long ago).
fn age(dir: &Path, ago: Duration) {
    std::fs::File::open(dir)
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - ago))
        .expect("set the lock's mtime");
}

fn poll_until(what: &str, deadline: Duration, session: &PtyLead, check: impl Fn() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < deadline,
            "timed out waiting for {what}; screen:\n{}",
            session.contents()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn file_contains(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(text))
}

#[test]
fn a_command_is_acknowledged_while_a_dead_writer_holds_the_lead_inbox_lock() {
    let home = tempfile::tempdir().expect("home");
    let project = tempfile::tempdir().expect("project");
    let h = home.path();
    let session = crate::pty_harness::lead(project.path())
        .home(h)
        .args(["--team", TEAM, "--backend", "in-process"])
        .start();

    // The writer appended a message and died holding the inbox's lock.
    let inbox = inbox_path(h, "team-lead");
    let lock = lock_of(&inbox);
    let text = "mail left by a writer that died";
    let locked_at = Instant::now();
    dead_writer(&lock, Some((&inbox, &[InboxEntry::new("alpha", text)])));
    // The lead's drain has recorded it and now waits for the lock (off the loop).
    let log = Home::new(h)
        .delivery_log_path(TEAM, "team-lead")
        .expect("log path");
    poll_until(
        "the drain to record the message",
        Duration::from_secs(5),
        &session,
        || file_contains(&log, text),
    );

    session.send(b"/task add \"check the parser\"\r");
    let typed = Instant::now();
    poll_until(
        "the command's acknowledgement",
        Duration::from_secs(2),
        &session,
        || session.contents().contains("Added task #1"),
    );
    let acknowledged = locked_at.elapsed();
    eprintln!(
        "acknowledged {:?} after Enter, {acknowledged:?} after the lock was left",
        typed.elapsed()
    );
    assert!(lock.is_dir(), "the dead writer's lock is still there");
    assert!(
        acknowledged < Duration::from_secs(9),
        "acknowledged before the lock could go stale: {acknowledged:?}"
    );

    // Once the lock is stale the drain goes on: the message arrives, nothing is left.
    session.wait_for("the dead writer's message", |s| s.contents().contains(text));
    poll_until("the lock to go", DEADLINE, &session, || !lock.exists());
}

#[test]
fn teamlead_send_retries_past_a_stale_lock() {
    let home = tempfile::tempdir().expect("home");
    let h = Home::new(home.path());
    store::create_team(&h, &TeamFile::new(TEAM, None, "/")).expect("team");
    let inbox = inbox_path(home.path(), "alpha");
    std::fs::create_dir_all(inbox.parent().unwrap()).unwrap();
    // An inbox that is there: a missing one is made without its lock (no wait at all).
    std::fs::write(&inbox, b"[]").unwrap();
    let lock = lock_of(&inbox);
    dead_writer(&lock, None);
    // It died 8 s ago: the lock is stale in 2 s, past `send`'s own deadline.
    age(&lock, Duration::from_secs(8));
    crate::panes_common::teamlead_send(home.path(), TEAM, None, "alpha", "hello past the lock");
    assert!(file_contains(&inbox, "hello past the lock"));
    assert!(!lock.exists(), "the stale lock was taken and released");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leads_own_send_retries_past_a_stale_lock() {
    use teamlead::lead::contract::{LeadEvent, TranscriptItem};
    let mut s = lead_common::Session::start(TEAM).await;
    // A member with no runtime (its process is elsewhere): only its inbox matters.
    let mut member = Member::new("bravo", TEAM, "/");
    member.backend_type = Some("tmux".to_string());
    store::add_member(&s.home, TEAM, member).expect("add bravo");
    let inbox = s.home.inbox_path(TEAM, "bravo").unwrap();
    std::fs::create_dir_all(inbox.parent().unwrap()).unwrap();
    // An inbox that is there: a missing one is made without its lock (no wait at all).
    std::fs::write(&inbox, b"[]").unwrap();
    let lock = lock_of(&inbox);
    dead_writer(&lock, None);
    age(&lock, Duration::from_secs(8));
    s.submit("/msg @bravo hello past the lock").await;
    s.wait_for("the message echoed", |e| {
        matches!(e, LeadEvent::Transcript(TranscriptItem::ToTeammate { to, .. }) if to == "bravo")
    })
    .await;
    assert!(file_contains(&inbox, "hello past the lock"));
    assert!(
        !s.seen.iter().any(|e| matches!(
            e,
            LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains("Could not")
        )),
        "no failure: {:?}",
        s.seen
    );
    assert!(!lock.exists());
    // The lead's last writes (its quit) happen before the temporary home is removed.
    s.quit().await;
}

// ---------------------------------------------------------------------------------------------
// A full disk.

/// The wrapper that runs the lead in a private mount namespace with a 1 MiB tmpfs on `dir`
/// (gone with the namespace when the lead exits), or why it cannot be made here.
fn tmpfs_wrapper(dir: &Path) -> Result<Vec<String>, String> {
    let mut wrapper = vec!["unshare".to_string()];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        wrapper.push("--map-root-user".to_string());
    }
    wrapper.extend(["--mount", "--propagation", "private", "sh", "-c"].map(String::from));
    let probe = Command::new(&wrapper[0])
        .args(&wrapper[1..])
        .arg("mount -t tmpfs -o size=1m tmpfs \"$0\"")
        .arg(dir)
        .output()
        .map_err(|e| format!("cannot run unshare: {e}"))?;
    if !probe.status.success() {
        return Err(format!(
            "cannot mount a tmpfs in a private mount namespace: {}",
            String::from_utf8_lossy(&probe.stderr).trim()
        ));
    }
    wrapper.push(
        "mount -t tmpfs -o size=1m,mode=700 tmpfs \"$0\" && mkdir -m 700 \"$0/home\" && exec \"$@\""
            .to_string(),
    );
    wrapper.push(dir.to_string_lossy().into_owned());
    Ok(wrapper)
}

/// `teamlead send` from alpha to the lead, into the home at `home`.
fn send_to_lead(home: &Path, text: &str) {
    crate::panes_common::teamlead_send(home, TEAM, Some("alpha"), "team-lead", text);
}

/// Fills the file system of `dir` until it refuses a byte more.
fn fill(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).expect("filler");
    let block = vec![0u8; 4096];
    loop {
        match f.write(&block) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
    let _ = f.sync_all();
}

fn signal(pid: u32, sig: i32) {
    // SAFETY: kill(2) on the lead this test started.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
}

#[test]
fn disk_full_then_free_every_message_reaches_the_transcript() {
    let mount = tempfile::tempdir().expect("mount point");
    let project = tempfile::tempdir().expect("project");
    let wrapper = match tmpfs_wrapper(mount.path()) {
        Ok(w) => w,
        Err(why) => {
            eprintln!("skipped: {why}");
            return;
        }
    };
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let inner_home = mount.path().join("home");
    let session = crate::pty_harness::lead(project.path())
        .wrapper(&wrapper)
        .home(&inner_home)
        .args(["--team", TEAM, "--backend", "in-process"])
        .start();
    let pid = session.child.process_id().expect("the lead's pid");
    // The lead's view of the files (its mount namespace), seen from here.
    let root =
        PathBuf::from(format!("/proc/{pid}/root")).join(mount.path().strip_prefix("/").unwrap());
    let home = root.join("home");

    send_to_lead(&home, "message 0, before the disk is full");
    session.wait_for("the first message", |s| {
        s.contents().contains("message 0, before")
    });

    // Six messages wait while the disk fills up; then the lead looks.
    signal(pid, libc::SIGSTOP);
    let texts: Vec<String> = (1..=6).map(|i| format!("message {i} of 6")).collect();
    for text in &texts {
        send_to_lead(&home, text);
    }
    let filler = root.join("filler");
    fill(&filler);
    signal(pid, libc::SIGCONT);

    // Every message shown at some moment (the transcript may scroll).
    let seen = std::sync::Mutex::new(HashSet::new());
    let look = || {
        let screen = session.contents();
        let mut seen = seen.lock().unwrap();
        for text in &texts {
            if screen.contains(text.as_str()) {
                seen.insert(text.clone());
            }
        }
        seen.len()
    };
    poll_until("the lead to meet the full disk", DEADLINE, &session, || {
        look();
        session.contents().contains("No space left") || look() == texts.len()
    });
    eprintln!("while the disk was full: {} of 6 shown", look());

    std::fs::remove_file(&filler).expect("free the disk");
    poll_until(
        "every message once the disk is free",
        DEADLINE,
        &session,
        || look() == texts.len(),
    );
    let inbox = inbox_path(&home, "team-lead");
    poll_until("the inbox drained", DEADLINE, &session, || {
        !texts.iter().any(|t| file_contains(&inbox, t))
    });
    session.send(b"/quit\r");
    let mut session = session;
    assert!(session.wait_exit(), "the lead quit");
}
