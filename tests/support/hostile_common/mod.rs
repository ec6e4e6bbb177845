//! The hostile-input suite's machinery: temporary homes seeded from the fixtures, the real
//! binary run under a deadline (killed on expiry), the checks every case must pass (no hang,
//! no panic, no raw control character in the output, nothing changed unless said, the problem
//! named), and a small pool of worker threads so hundreds of cases stay within minutes.

#![allow(dead_code)]

pub mod corpus;
pub mod tree;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use teamlead::protocol::display::is_unsafe;

/// The team every case works on (from `tests/fixtures/seed-2.1.45`).
pub const TEAM: &str = "codebase-research";
/// How long one command may run before it counts as a hang.
pub const RUN_DEADLINE: Duration = Duration::from_secs(8);

/// `tests/fixtures` and copying a tree of it: the test support crate's.
pub use teamlead_test_support::store::{copy_tree, fixtures};

/// `<root>/home` and `<root>/logs`, removed on drop.
pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Sandbox {
    /// A home copied from the `seed-2.1.45` fixture (a real team with tasks and an inbox).
    pub fn seeded() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        copy_tree(&fixtures().join("seed-2.1.45"), &root.path().join("home"));
        std::fs::create_dir_all(root.path().join("logs")).unwrap();
        Sandbox { root }
    }

    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    pub fn logs(&self) -> PathBuf {
        self.root.path().join("logs")
    }

    /// The binary with `--home`, logs in the sandbox and a clean environment.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home").arg(self.home()).args(args);
        for var in [
            "CLAUDE_CONFIG_DIR",
            "TEAMLEAD_HOME",
            "TEAMLEAD_WATCH",
            "TMUX",
            "TMUX_PANE",
            "RUST_BACKTRACE",
        ] {
            cmd.env_remove(var);
        }
        cmd.env("NO_COLOR", "1")
            .env("TEAMLEAD_LOG_DIR", self.logs())
            .current_dir(self.root.path());
        cmd
    }
}

/// What one run printed and how it ended.
#[derive(Debug, Default)]
pub struct Run {
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `None` when it was killed at the deadline.
    pub code: Option<i32>,
    pub elapsed: Duration,
}

impl Run {
    pub fn text(&self) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

fn drain(mut from: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = from.read_to_end(&mut buf);
        buf
    })
}

/// Kills a child still running when dropped.
pub struct Reaper(pub Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Runs `cmd` (stdin closed) until it exits or the deadline passes; killed then.
pub fn run(mut cmd: Command, deadline: Duration) -> Run {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = Reaper(cmd.spawn().expect("spawn teamlead"));
    let out = drain(child.0.stdout.take().unwrap());
    let err = drain(child.0.stderr.take().unwrap());
    let code = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break Some(status.code().unwrap_or(-1));
        }
        if start.elapsed() > deadline {
            let _ = child.0.kill();
            let _ = child.0.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    Run {
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        code,
        elapsed: start.elapsed(),
    }
}

/// The first raw control, C1, bidi or invisible character in `bytes` (line breaks allowed),
/// or invalid UTF-8.
pub fn raw_control(bytes: &[u8]) -> Option<String> {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => return Some(format!("invalid UTF-8 at byte {}", e.valid_up_to())),
    };
    text.char_indices()
        .find(|(_, c)| *c != '\n' && is_unsafe(*c))
        .map(|(i, c)| {
            let start = text[..i].char_indices().rev().nth(20).map_or(0, |(j, _)| j);
            format!("U+{:04X} at byte {i} after {:?}", c as u32, &text[start..i])
        })
}

/// Signs of a panic in the output or the exit code.
pub fn panicked(run: &Run) -> Option<String> {
    let text = run.text();
    if run.code == Some(101) {
        return Some("exit code 101".into());
    }
    for sign in [
        "panicked",
        "RUST_BACKTRACE",
        "stack backtrace",
        "this is a bug in teamlead",
    ] {
        if text.contains(sign) {
            return Some(format!("`{sign}` in the output"));
        }
    }
    None
}

/// Runs `jobs` on `workers` threads; returns their results in order.
pub fn parallel<T: Send + 'static, R: Send + 'static>(
    jobs: Vec<T>,
    workers: usize,
    f: impl Fn(T) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let count = jobs.len();
    let queue = Arc::new(Mutex::new(jobs.into_iter().enumerate().collect::<Vec<_>>()));
    let results = Arc::new(Mutex::new(
        (0..count).map(|_| None).collect::<Vec<Option<R>>>(),
    ));
    let f = Arc::new(f);
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, results, f) = (queue.clone(), results.clone(), f.clone());
            std::thread::spawn(move || {
                loop {
                    let Some((i, job)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let r = f(job);
                    results.lock().unwrap()[i] = Some(r);
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a worker thread panicked");
    }
    Arc::try_unwrap(results)
        .ok()
        .expect("workers are done")
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// Makes a FIFO at `path`.
pub fn mkfifo(path: &Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(r, 0, "mkfifo {}", path.display());
}

/// Sets a path's mtime `secs` into the past (a stale lock directory).
pub fn age(path: &Path, secs: u64) {
    let old = std::time::SystemTime::now() - Duration::from_secs(secs);
    std::fs::File::open(path)
        .unwrap()
        .set_times(
            std::fs::FileTimes::new()
                .set_modified(old)
                .set_accessed(old),
        )
        .unwrap();
}
