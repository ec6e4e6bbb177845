//! Harness for the hostile-file tests: a seeded home (team `alpha` with a member, inboxes,
//! two tasks and a high-water mark), FIFOs, a snapshot of every byte, mode and link of a
//! tree, and `expect_refused`, which runs one store entry point on its own thread with a
//! deadline and checks that it returned the wanted error, promptly, leaving the tree as it was;
//! the tables of entry points (`inbox_ops`, `team_ops`, `task_ops`, `id_ops`) and bad JSON.

use std::collections::BTreeMap;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use teamlead_protocol::store::{
    ClaimError, DeliveryLog, Home, StoreError, TaskList, edit_team, inbox, read_team,
};
use teamlead_protocol::{InboxEntry, Member, PermissionMode, TeamFile};

use super::TempHome;

pub const TEAM: &str = "alpha";
/// Far below the 10 s lock timeout: "fails at once" means well within this.
pub const DEADLINE: Duration = Duration::from_secs(3);

/// A home with team `alpha` (member `worker`), an inbox for `worker` and `team-lead`, tasks
/// 1 and 2, the tasks `.lock` file and a `.highwatermark`.
pub fn seeded() -> TempHome {
    let t = TempHome::new();
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead_protocol::store::create_team(&t.home, &TeamFile::new(TEAM, None, &cwd)).unwrap();
    teamlead_protocol::store::add_member(&t.home, TEAM, Member::new("worker", TEAM, &cwd)).unwrap();
    teamlead_protocol::store::inbox::append(
        &t.home,
        TEAM,
        "worker",
        &InboxEntry::new("team-lead", "hi"),
    )
    .unwrap();
    teamlead_protocol::store::inbox::append(
        &t.home,
        TEAM,
        "team-lead",
        &InboxEntry::new("worker", "yo"),
    )
    .unwrap();
    let list = TaskList::new(&t.home, TEAM).unwrap();
    list.create("one", "", vec![], None).unwrap();
    list.create("two", "", vec!["1".into()], None).unwrap();
    t
}

/// Makes a FIFO at `path` (its directory must exist).
pub fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// Replaces whatever is at `path` with `bytes`.
pub fn put(path: &Path, bytes: &[u8]) {
    remove_any(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, bytes).unwrap();
}

/// Removes a file, link, FIFO or directory tree at `path` (nothing there is fine).
pub fn remove_any(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path).unwrap(),
        Ok(_) => std::fs::remove_file(path).unwrap(),
        Err(_) => {}
    }
}

/// One entry of a tree snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    File { mode: u32, bytes: Vec<u8> },
    Dir { mode: u32 },
    Link(PathBuf),
    Fifo,
    Other,
}

/// Every entry below `root` (links not followed, FIFOs not opened), by relative path.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Node> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Node>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        let mode = meta.permissions().mode() & 0o7777;
        let t = meta.file_type();
        let node = if t.is_symlink() {
            Node::Link(std::fs::read_link(&path).unwrap())
        } else if t.is_dir() {
            walk(root, &path, out);
            Node::Dir { mode }
        } else if t.is_file() {
            Node::File {
                mode,
                bytes: std::fs::read(&path).unwrap(),
            }
        } else if t.is_fifo() {
            Node::Fifo
        } else {
            Node::Other
        };
        out.insert(path.strip_prefix(root).unwrap().to_path_buf(), node);
    }
}

/// The error a case wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    Parse,
    NotAFile,
    NotADirectory,
    /// A symbolic link; `true` when it must be reported as leading outside the home.
    Link(bool),
    LockKind,
    Exhausted,
}

impl Want {
    pub fn matches(self, err: &StoreError) -> bool {
        match (self, err) {
            (Want::Parse, StoreError::Parse { .. })
            | (Want::NotAFile, StoreError::NotAFile { .. })
            | (Want::NotADirectory, StoreError::NotADirectory { .. })
            | (Want::LockKind, StoreError::LockNotADirectory { .. })
            | (Want::Exhausted, StoreError::TaskIdsExhausted { .. }) => true,
            (Want::Link(want), StoreError::Symlink { outside, .. }) => want == *outside,
            _ => false,
        }
    }
}

/// Runs `f` on its own thread; panics if it has not returned within [`DEADLINE`].
pub fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name(what.to_string())
        .spawn(move || {
            let _ = tx.send(f());
        })
        .unwrap();
    match rx.recv_timeout(DEADLINE) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: still running after {DEADLINE:?} (it blocks)")
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// Runs the entry point `op` against `t`'s home and checks: it returns promptly, with an
/// error of the `want` kind whose one-line message names `names`, and every byte, mode and
/// link under the temporary directory (home and its sibling) is as it was.
pub fn expect_refused(
    t: &TempHome,
    what: &str,
    want: Want,
    names: &str,
    op: impl FnOnce(Home) -> Result<(), StoreError> + Send + 'static,
) {
    let before = snapshot(t.dir.path());
    let home = t.home.clone();
    let result = within(what, move || op(home));
    let err = match result {
        Ok(()) => panic!("{what}: succeeded, but {want:?} was wanted"),
        Err(e) => e,
    };
    assert!(want.matches(&err), "{what}: wanted {want:?}, got {err:?}");
    let message = err.to_string();
    assert!(
        message.contains(names) && !message.contains('\n'),
        "{what}: the message should name `{names}` on one line: {message}"
    );
    let after = snapshot(t.dir.path());
    if before != after {
        let changed: Vec<_> = before
            .iter()
            .filter(|(k, v)| after.get(*k) != Some(*v))
            .map(|(k, _)| k.clone())
            .chain(after.keys().filter(|k| !before.contains_key(*k)).cloned())
            .collect();
        panic!("{what}: changed the tree: {changed:?}");
    }
}

/// A `[[[…]]]` of `levels` levels around `inner`.
pub fn deep(levels: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
}

pub type Op = Box<dyn FnOnce(Home) -> Result<(), StoreError> + Send>;

pub fn op(f: impl FnOnce(Home) -> Result<(), StoreError> + Send + 'static) -> Op {
    Box::new(f)
}

pub fn claim_err(e: ClaimError) -> StoreError {
    match e {
        ClaimError::Store(e) => e,
        other => panic!("a store error was wanted, got {other}"),
    }
}

/// Every entry point that reads or writes `worker`'s inbox.
pub fn inbox_ops() -> Vec<(&'static str, Op)> {
    vec![
        (
            "inbox::read",
            op(|h| inbox::read(&h, TEAM, "worker").map(drop)),
        ),
        (
            "inbox::append",
            op(|h| inbox::append(&h, TEAM, "worker", &InboxEntry::new("a", "x")).map(drop)),
        ),
        (
            "inbox::replace",
            op(|h| inbox::replace(&h, TEAM, "worker", &[InboxEntry::new("a", "x")])),
        ),
        (
            "inbox::drain_unread",
            op(|h| {
                let logs = tempfile::tempdir().unwrap();
                let mut log = DeliveryLog::open(&logs.path().join("log.jsonl"))?;
                inbox::drain_unread(&h, TEAM, "worker", &mut log).map(drop)
            }),
        ),
        (
            "inbox::take_unread",
            op(|h| inbox::take_unread(&h, TEAM, "worker").map(drop)),
        ),
        (
            "inbox::mark_read",
            op(|h| inbox::mark_read(&h, TEAM, "worker", &["k".to_string()]).map(drop)),
        ),
    ]
}

/// Every entry point that edits the team file (plus the plain read).
pub fn team_ops() -> Vec<(&'static str, Op)> {
    vec![
        ("read_team", op(|h| read_team(&h, TEAM).map(drop))),
        ("edit_team", op(|h| edit_team(&h, TEAM, |_| Ok(())))),
        (
            "set_active",
            op(|h| teamlead_protocol::store::set_active(&h, TEAM, "worker", true)),
        ),
        (
            "add_member",
            op(|h| {
                teamlead_protocol::store::add_member(&h, TEAM, Member::new("newbie", TEAM, "/"))
            }),
        ),
        (
            "remove_member",
            op(|h| teamlead_protocol::store::remove_member(&h, TEAM, "worker").map(drop)),
        ),
        (
            "set_modes",
            op(|h| {
                teamlead_protocol::store::set_modes(&h, TEAM, &[("worker", PermissionMode::Plan)])
            }),
        ),
        (
            "set_pane",
            op(|h| teamlead_protocol::store::set_pane(&h, TEAM, "worker", "%9", Some("tmux"))),
        ),
    ]
}

/// Entry points that read or write task `1`.
pub fn task_ops() -> Vec<(&'static str, Op)> {
    vec![
        (
            "TaskList::get",
            op(|h| TaskList::new(&h, TEAM)?.get("1").map(drop)),
        ),
        (
            "TaskList::update",
            op(|h| TaskList::new(&h, TEAM)?.update("1", |_| Ok(()))),
        ),
        (
            "TaskList::complete",
            op(|h| TaskList::new(&h, TEAM)?.complete("1").map(drop)),
        ),
        (
            "TaskList::claim",
            op(|h| {
                TaskList::new(&h, TEAM)?
                    .claim("1", "worker", false)
                    .map(drop)
                    .map_err(claim_err)
            }),
        ),
    ]
}

/// Entry points that need the high-water mark or the list lock.
pub fn id_ops() -> Vec<(&'static str, Op)> {
    vec![
        (
            "TaskList::create",
            op(|h| {
                TaskList::new(&h, TEAM)?
                    .create("new", "", vec![], None)
                    .map(drop)
            }),
        ),
        (
            "TaskList::delete",
            op(|h| TaskList::new(&h, TEAM)?.delete("2").map(drop)),
        ),
    ]
}

pub fn run_all(t: &TempHome, case: &str, want: Want, names: &str, ops: Vec<(&'static str, Op)>) {
    for (name, f) in ops {
        expect_refused(t, &format!("{case}: {name}"), want, names, f);
    }
}

pub fn inbox_path(t: &TempHome) -> std::path::PathBuf {
    t.home.inbox_path(TEAM, "worker").unwrap()
}

pub fn tasks_dir(t: &TempHome) -> std::path::PathBuf {
    t.home.tasks_dir(TEAM).unwrap()
}

/// Bad JSON contents, each a parse error for every reader and writer.
pub fn bad_json() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("50,000 levels deep", deep(50_000, "").into_bytes()),
        (
            "deep inside an object",
            format!(
                r#"[{{"from":"a","text":"x","timestamp":"t","x":{}}}]"#,
                deep(50_000, "1")
            )
            .into_bytes(),
        ),
        (
            "invalid UTF-8",
            b"[{\"from\":\"a\",\"text\":\"\xff\xfe\",\"timestamp\":\"2026-01-01T00:00:00.000Z\"}]"
                .to_vec(),
        ),
        (
            "a lone surrogate",
            br#"[{"from":"a","text":"\ud800","timestamp":"2026-01-01T00:00:00.000Z"}]"#.to_vec(),
        ),
        ("truncated", br#"[{"from":"a","text":"x","timest"#.to_vec()),
        ("binary", vec![0, 159, 146, 150, 0, 1]),
    ]
}
