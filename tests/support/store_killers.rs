//! Killing `teamlead send` processes for the dead-writer tests: send loops whose children
//! can be SIGKILLed safely (a pid leaves the live set before it is reaped), finding the
//! process that holds a lock from the markers beside it, a node proper-lockfile writer loop,
//! and a walk for leftovers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::Rng;
use teamlead::store::lock::holder::{Identity, State, open_existing, parse_side_name, read_record};

use teamlead_test_support::store::wait_until;

/// The team and inbox of the runs.
pub const TEAM: &str = "killers";
pub const TO: &str = "team-lead";

/// The identity of a directory, if it exists.
pub fn identity(dir: &Path) -> Option<Identity> {
    std::fs::symlink_metadata(dir)
        .ok()
        .map(|m| Identity::of(&m))
}

/// Pids of running `send` children that may be killed (removed before they are reaped).
pub type Live = Arc<Mutex<HashSet<u32>>>;
/// When each killed or finished `send` child was seen to exit (`waitid`).
pub type Exits = Arc<Mutex<HashMap<u32, Instant>>>;

#[derive(Debug)]
pub enum Outcome {
    Sent,
    Killed,
    Failed(String),
}

/// Waits for `pid` to exit without reaping it.
pub fn wait_unreaped(pid: u32) {
    loop {
        // SAFETY: a zeroed siginfo_t is a valid out-parameter for waitid.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits on our own child; WNOWAIT leaves it unreaped.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return;
        }
    }
}

pub fn send_loop(
    n: usize,
    root: PathBuf,
    stop: Arc<AtomicBool>,
    live: Live,
    exits: Exits,
) -> Vec<(String, Outcome)> {
    let mut out = Vec::new();
    let mut i = 0;
    while !stop.load(Ordering::Relaxed) {
        let text = format!("send{n}-{i}");
        i += 1;
        let child = Command::new(env!("CARGO_BIN_EXE_teamlead"))
            .arg("send")
            .arg("--home")
            .arg(&root)
            .args(["--team", TEAM, "--to", TO, "--from", "sender", &text])
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let pid = child.id();
        live.lock().unwrap().insert(pid);
        wait_unreaped(pid);
        live.lock().unwrap().remove(&pid);
        exits.lock().unwrap().insert(pid, Instant::now());
        let output = child.wait_with_output().unwrap();
        use std::os::unix::process::ExitStatusExt;
        let outcome = if output.status.success() {
            Outcome::Sent
        } else if output.status.signal() == Some(libc::SIGKILL) {
            Outcome::Killed
        } else {
            Outcome::Failed(String::from_utf8_lossy(&output.stderr).into_owned())
        };
        out.push((text, outcome));
    }
    out
}

/// The pid holding the lock directory `dir` now (from the markers beside it), with its
/// open marker and the identity it holds.
pub fn holder(dir: &Path) -> Option<(u32, std::fs::File, Identity)> {
    let id = identity(dir)?;
    let parent = dir.parent()?;
    let lock_name = dir.file_name()?.to_str()?;
    for entry in std::fs::read_dir(parent).ok()?.flatten() {
        let name = entry.file_name().into_string().ok()?;
        if !matches!(parse_side_name(&name), Some((l, _, true)) if l == lock_name) {
            continue;
        }
        let Ok(file) = open_existing(&entry.path()) else {
            continue;
        };
        if let Some(r) = read_record(&file)
            && r.names(&id)
        {
            return Some((r.pid, file, id));
        }
    }
    None
}

/// What one kill of a holder measured: from the kill, and from the exit (a process in an
/// uninterruptible `fsync` dies only when it returns, and holds its lock until then).
pub struct Takeover {
    pub from_kill: Duration,
    pub from_exit: Duration,
}

/// Kills the current holder if it is one of the senders; if it died holding the lock, how
/// long until the lock directory was gone or another one.
pub fn kill_holder(dir: &Path, live: &Live, exits: &Exits) -> Option<Takeover> {
    let (pid, marker, id) = holder(dir)?;
    let killed = {
        let live = live.lock().unwrap();
        if !live.contains(&pid) {
            return None;
        }
        let at = Instant::now();
        // SAFETY: `pid` is our unreaped child (it leaves `live` only after it exited).
        unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        at
    };
    let changed = wait_until(Duration::from_secs(30), || identity(dir) != Some(id));
    let at = Instant::now();
    assert!(
        changed,
        "the lock of killed holder {pid} was never taken over"
    );
    let exited = wait_until(Duration::from_secs(30), || {
        exits.lock().unwrap().contains_key(&pid)
    });
    assert!(exited, "killed holder {pid} never exited");
    let exit = exits.lock().unwrap()[&pid];
    // Only a holder that died holding the lock counts (not one that released it first).
    match read_record(&marker).map(|r| r.state) {
        Some(State::Held { .. }) | Some(State::Reaped) => Some(Takeover {
            from_kill: at.duration_since(killed),
            from_exit: at.saturating_duration_since(exit),
        }),
        _ => None,
    }
}

pub fn kill_random(live: &Live) {
    let live = live.lock().unwrap();
    let pids: Vec<u32> = live.iter().copied().collect();
    if let Some(pid) = pids.get(rand::rng().random_range(0..pids.len().max(1))) {
        // SAFETY: as above.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
}

pub fn node_loop(inbox: PathBuf, stop: Arc<AtomicBool>) -> Vec<(String, bool, String)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/append.js");
    let mut runs = Vec::new();
    let mut round = 0;
    while !stop.load(Ordering::Relaxed) {
        let prefix = format!("node{round}");
        round += 1;
        let out = Command::new("node")
            .arg(&script)
            .arg(&inbox)
            .arg("node")
            .arg("20")
            .arg(&prefix)
            .output()
            .expect("node must be installed for this test");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        runs.push((prefix, out.status.success(), err));
    }
    runs
}

/// Every name under `dir` with `.tmp.` in it.
pub fn leftovers(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .contains(".tmp.")
        {
            found.push(path.clone());
        }
        if entry.file_type().unwrap().is_dir() {
            leftovers(&path, found);
        }
    }
}
