//! Shared helpers for the store tests: temporary homes seeded from the fixtures, and child
//! processes. A child is this very test executable re-run on its `child_process_entry` test
//! with an environment variable saying what to do (append messages, hold the lead lock), so
//! every test file that spawns children has a real writer process without extra binaries.

pub mod hostile;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, LeadLiveness, inbox, lock};

/// The variable that turns a test executable into a child process.
pub const CHILD_ENV: &str = "TEAMLEAD_STORE_TEST_CHILD";

/// The workspace's `tests/fixtures` (real files from real runs of Claude Code).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// Copies a directory tree (files made writable).
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
            let mut perms = std::fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&target, perms).unwrap();
        }
    }
}

/// A temporary home inside a temporary directory; `outside` is a sibling directory of the home
/// that must stay empty.
pub struct TempHome {
    pub dir: tempfile::TempDir,
    pub home: Home,
    pub outside: PathBuf,
}

impl Default for TempHome {
    fn default() -> Self {
        TempHome::new()
    }
}

impl TempHome {
    pub fn new() -> TempHome {
        let dir = tempfile::tempdir().unwrap();
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

    /// A home seeded with a copy of `tests/fixtures/<name>`.
    pub fn from_fixture(name: &str) -> TempHome {
        let t = TempHome::new();
        copy_tree(&fixtures().join(name), &t.home.root);
        t
    }

    /// Every file path under the sibling directory (must stay empty).
    pub fn outside_entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(&self.outside)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }
}

/// A child process killed (and reaped) on drop.
pub struct ChildGuard(pub Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// What a child should do.
pub enum ChildJob<'a> {
    /// Append `count` messages `<prefix>-<i>` from `from` to `to`'s inbox.
    Append {
        home: &'a Path,
        team: &'a str,
        to: &'a str,
        from: &'a str,
        count: usize,
        prefix: &'a str,
    },
    /// Take the lead liveness lock, write `<home>/held-marker`, then wait forever.
    HoldLead { home: &'a Path, team: &'a str },
    /// Install the signal cleanup, take `<target>.lock/`, write `<target>.held`, wait forever.
    HoldLock { target: &'a Path },
    /// `release_all_in_this_process`'s checks of `release_all_held`, which releases every lock of the
    /// process it runs in.
    ReleaseAll { dir: &'a Path },
}

/// A command that re-runs this test executable as a child doing `job`.
pub fn child_command(job: ChildJob<'_>) -> Command {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "child_process_entry",
        "--nocapture",
        "--test-threads=1",
    ]);
    let spec = match job {
        ChildJob::Append {
            home,
            team,
            to,
            from,
            count,
            prefix,
        } => format!(
            "append\n{}\n{team}\n{to}\n{from}\n{count}\n{prefix}",
            home.display()
        ),
        ChildJob::HoldLead { home, team } => format!("hold-lead\n{}\n{team}", home.display()),
        ChildJob::HoldLock { target } => format!("hold-lock\n{}", target.display()),
        ChildJob::ReleaseAll { dir } => format!("release-all\n{}", dir.display()),
    };
    cmd.env(CHILD_ENV, spec)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("TEAMLEAD_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Called by the binary's `child_process_entry` test: does the job and exits when this
/// process is a child, returns at once otherwise.
pub fn child_entry() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let parts: Vec<&str> = spec.split('\n').collect();
    let code = match parts.as_slice() {
        ["append", home, team, to, from, count, prefix] => {
            lock::install_signal_cleanup().unwrap();
            let home = Home::new(*home);
            let count: usize = count.parse().unwrap();
            let mut code = 0;
            for i in 0..count {
                let entry = InboxEntry::new(from, format!("{prefix}-{i}"));
                if let Err(e) = inbox::append(&home, team, to, &entry) {
                    eprintln!("append: {e}");
                    code = 1;
                    break;
                }
            }
            code
        }
        ["hold-lead", home, team] => {
            let home = Home::new(*home);
            let _held = LeadLiveness::acquire(&home, team).unwrap();
            use std::io::Write;
            let mut out = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(home.root.join("held-marker"))
                .unwrap();
            out.write_all(b"held").unwrap();
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        }
        ["hold-lock", target] => {
            lock::install_signal_cleanup().unwrap();
            let target = Path::new(target);
            let _held = lock::acquire(target, Duration::from_secs(10)).unwrap();
            let mut marker = target.as_os_str().to_owned();
            marker.push(".held");
            std::fs::write(PathBuf::from(marker), b"held").unwrap();
            loop {
                std::thread::sleep(Duration::from_secs(60));
            }
        }
        ["release-all", dir] => {
            release_all_in_this_process(Path::new(dir));
            0
        }
        _ => {
            eprintln!("bad child spec: {spec:?}");
            2
        }
    };
    std::process::exit(code);
}

/// Polls `cond` until it holds or `timeout` passes ([`crate::wait::poll_until`]).
pub fn wait_until(timeout: Duration, cond: impl FnMut() -> bool) -> bool {
    crate::wait::poll_until(timeout, cond)
}

/// Reads an inbox file as raw JSON and returns the `text` of every entry (panics if invalid).
pub fn inbox_texts(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{} is not valid JSON: {e}", path.display()));
    v.as_array()
        .unwrap_or_else(|| panic!("{} is not an array", path.display()))
        .iter()
        .map(|e| e["text"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Asserts `texts` hold `<prefix>-0..count` exactly once each for every prefix, nothing else.
pub fn assert_exactly_once(texts: &[String], prefixes: &[String], count: usize) {
    use std::collections::HashMap;
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for t in texts {
        *seen.entry(t.as_str()).or_default() += 1;
    }
    let mut missing = Vec::new();
    for p in prefixes {
        for i in 0..count {
            let key = format!("{p}-{i}");
            match seen.remove(key.as_str()) {
                Some(1) => {}
                Some(n) => panic!("`{key}` appears {n} times"),
                None => missing.push(key),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} message(s) lost, e.g. {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(
        seen.is_empty(),
        "unexpected entries: {:?}",
        seen.keys().take(5).collect::<Vec<_>>()
    );
    assert_eq!(texts.len(), prefixes.len() * count);
}

/// The child's side of [`ChildJob::ReleaseAll`]: takes two locks in `dir`, releases all, lets
/// someone else take one, drops the stale guards. Panics (a failed child) when a check fails.
pub fn release_all_in_this_process(dir: &Path) {
    use teamlead_protocol::store::lock::lock_dir_of;
    let a = dir.join("a.json");
    let b = dir.join("b.json");
    let ga = lock::acquire(&a, Duration::from_secs(1)).unwrap();
    let gb = lock::acquire(&b, Duration::from_secs(1)).unwrap();
    lock::release_all_held();
    assert!(!lock_dir_of(&a).exists() && !lock_dir_of(&b).exists());
    // Someone else takes `a`; our stale guard must not remove their lock when dropped.
    std::fs::create_dir(lock_dir_of(&a)).unwrap();
    drop(ga);
    drop(gb);
    assert!(lock_dir_of(&a).exists());
}
