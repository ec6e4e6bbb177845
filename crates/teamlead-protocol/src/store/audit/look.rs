//! Looking without touching: what is at a path (by `symlink_metadata`, never following a
//! link), where a link leads (inside or outside the home), bounded directory listings, and
//! reading a JSON file through `safe_file` with the torn-read retry.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::{MAX_ENTRIES, Problem, ProblemKind};
use crate::store::atomic::is_temp_file;
use crate::store::error::StoreError;
use crate::store::home::Home;
use crate::store::safe_file::{FileKind, MAX_FILE_BYTES, read_regular};

/// What is at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Look {
    Missing,
    File,
    Dir,
    /// A symbolic link: its target as written, and whether it leads out of the home.
    Link {
        target: PathBuf,
        outside: bool,
    },
    /// A FIFO, socket, device or other non-file.
    Special(FileKind),
    /// `lstat` failed.
    Error(String),
}

impl Look {
    /// The problem of finding this where `what` should be (`None` for a file, a directory or
    /// nothing: whether those are right is the caller's business).
    pub fn problem(&self, path: &Path, what: &str) -> Option<Problem> {
        match self {
            Look::Missing | Look::File | Look::Dir => None,
            Look::Link { target, outside } => Some(if *outside {
                Problem::new(
                    ProblemKind::SymlinkOutsideHome,
                    path,
                    format!(
                        "{what} is a symbolic link to {} (outside the home); not followed",
                        target.display()
                    ),
                )
            } else {
                Problem::new(
                    ProblemKind::Symlink,
                    path,
                    format!(
                        "{what} is a symbolic link to {}; not followed",
                        target.display()
                    ),
                )
            }),
            Look::Special(kind) => Some(Problem::new(
                ProblemKind::WrongKind,
                path,
                format!("{what} is {}; never opened", kind.describe()),
            )),
            Look::Error(e) => Some(Problem::new(ProblemKind::Unreadable, path, e.clone())),
        }
    }
}

/// What is at `path`, without following a link.
pub fn look(home: &Home, path: &Path) -> Look {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Look::Missing,
        Err(e) => return Look::Error(e.to_string()),
    };
    match FileKind::of(&meta) {
        FileKind::Regular => Look::File,
        FileKind::Directory => Look::Dir,
        FileKind::Symlink => {
            let target = std::fs::read_link(path).unwrap_or_default();
            Look::Link {
                outside: leads_outside(home, path, &target),
                target,
            }
        }
        other => Look::Special(other),
    }
}

/// Does the link at `path` (to `target`) lead out of the home? The target is resolved by
/// `canonicalize`, which only looks up names (it never opens the file); a dangling link is
/// judged by its text.
fn leads_outside(home: &Home, path: &Path, target: &Path) -> bool {
    let root = home
        .root
        .canonicalize()
        .unwrap_or_else(|_| home.root.clone());
    let joined = match path.parent() {
        Some(parent) => parent.join(target),
        None => target.to_path_buf(),
    };
    match joined.canonicalize() {
        Ok(resolved) => !resolved.starts_with(&root),
        Err(_) => {
            target.is_absolute() && !target.starts_with(&root) && !target.starts_with(&home.root)
                || target
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
        }
    }
}

/// Atomic writers' temp files.
pub(crate) fn is_temp(name: &str) -> bool {
    is_temp_file(name)
}

/// The entries of a directory (name, or its lossy form when not UTF-8; path), sorted by path,
/// at most [`MAX_ENTRIES`]. `None` when there is nothing to list: missing, or not a real
/// directory (reported).
pub(crate) fn dir_entries(
    home: &Home,
    dir: &Path,
    problems: &mut Vec<Problem>,
) -> Option<Vec<(Result<String, String>, PathBuf)>> {
    match look(home, dir) {
        Look::Dir => {}
        Look::Missing => return None,
        Look::File => {
            problems.push(Problem::new(
                ProblemKind::WrongKind,
                dir,
                "a regular file where a directory should be",
            ));
            return None;
        }
        other => {
            problems.extend(other.problem(dir, "the directory"));
            return None;
        }
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(Problem::new(ProblemKind::Unreadable, dir, e.to_string()));
            return None;
        }
    };
    let mut out = Vec::new();
    for entry in entries {
        let Ok(entry) = entry else { continue };
        if out.len() >= MAX_ENTRIES {
            problems.push(Problem::new(
                ProblemKind::TooLarge,
                dir,
                format!("more than {MAX_ENTRIES} entries; the rest were not looked at"),
            ));
            break;
        }
        let name = entry
            .file_name()
            .into_string()
            .map_err(|raw| raw.to_string_lossy().into_owned());
        out.push((name, entry.path()));
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    Some(out)
}

/// How often a file that does not parse is read again (Claude Code writes some in place).
const TORN_READ_RETRIES: u32 = 3;
const TORN_READ_PAUSE: Duration = Duration::from_millis(25);

/// How long a file that does not parse is read again while a writer holds its lock directory:
/// Claude Code (and proper-lockfile's users) truncate and rewrite a file in place under that
/// lock, and a writer descheduled on a loaded machine leaves it empty or cut for longer than
/// the quick retries wait. Bounded: a lock that stays (a dead writer) ends the wait.
const TORN_READ_LOCKED_WAIT: Duration = Duration::from_secs(2);

/// Reads a regular file through `safe_file` and parses it as JSON; the problem otherwise.
/// `Ok(None)` when nothing is there. A file that does not parse is read again a few times,
/// and for up to [`TORN_READ_LOCKED_WAIT`] while its lock directory is there (a writer in the
/// middle of an in-place write).
pub(crate) fn read_json_opt(path: &Path) -> Result<Option<Value>, Problem> {
    let mut attempt = 0;
    let started = Instant::now();
    let lock = crate::store::lock::lock_dir_of(path);
    loop {
        let bytes = match read_regular(path, MAX_FILE_BYTES) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(None),
            Err(e) => return Err(read_problem(path, e)),
        };
        match parse_bytes(path, &bytes) {
            Ok(v) => return Ok(Some(v)),
            Err(p)
                if p.kind == ProblemKind::NotJson
                    && (attempt < TORN_READ_RETRIES
                        || (started.elapsed() < TORN_READ_LOCKED_WAIT && lock.is_dir())) =>
            {
                attempt += 1;
                std::thread::sleep(TORN_READ_PAUSE);
            }
            Err(p) => return Err(p),
        }
    }
}

/// UTF-8 first (so invalid bytes are named as such), then JSON.
fn parse_bytes(path: &Path, bytes: &[u8]) -> Result<Value, Problem> {
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(Problem::new(
            ProblemKind::NotUtf8,
            path,
            format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()),
        ));
    }
    serde_json::from_slice(bytes).map_err(|e| {
        let detail = if e.to_string().contains("recursion limit") {
            format!("not valid JSON: nested too deeply ({e})")
        } else {
            format!("not valid JSON: {e}")
        };
        Problem::new(ProblemKind::NotJson, path, detail)
    })
}

/// A `safe_file` refusal as a problem.
pub(crate) fn read_problem(path: &Path, e: StoreError) -> Problem {
    match e {
        StoreError::Symlink { .. } => Problem::new(
            ProblemKind::Symlink,
            path,
            "a symbolic link where a file should be; not followed",
        ),
        StoreError::NotAFile { .. } => {
            let kind = FileKind::at(path).ok().flatten();
            Problem::new(
                ProblemKind::WrongKind,
                path,
                format!(
                    "{} where a file should be; never opened",
                    kind.map_or("not a regular file", FileKind::describe)
                ),
            )
        }
        StoreError::Parse { detail, .. } => Problem::new(ProblemKind::TooLarge, path, detail),
        other => Problem::new(ProblemKind::Unreadable, path, other.to_string()),
    }
}

/// The JSON type of a value, for messages.
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
