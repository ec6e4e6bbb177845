//! Atomic writes (temp `<file>.tmp.<8 hex>` in the same directory, fsync, rename, fsync the
//! directory) and reads that survive torn files: Claude Code 2.1.329 writes some files in
//! place, so a parse error is retried a few times over ~100 ms before the file is called bad.
//! Reads go through `safe_file` (no symlink, no FIFO block, bounded size); files are created
//! with mode 0600. The writer holds an exclusive flock on its temp file from just after
//! creating it until after the rename, so a temp file whose flock is free belongs to a writer
//! that is gone: `store::leftovers` removes those (`teamlead clean`).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::error::{Result, StoreError, io_at};
use super::json_check::utf8_text;
use super::safe_file::{FileKind, MAX_FILE_BYTES, PRIVATE_FILE_MODE, read_regular, wrong_kind};

/// How often a file that does not parse is read again, and the pause between reads.
const TORN_READ_RETRIES: u32 = 4;
const TORN_READ_PAUSE: Duration = Duration::from_millis(25);

/// Is `name` exactly teamlead's atomic temp name (`<file>.tmp.<8 lower-case hex>`)?
pub(crate) fn is_own_temp_name(name: &str) -> bool {
    match name.rsplit_once(".tmp.") {
        Some((base, suffix)) => {
            !base.is_empty()
                && suffix.len() == 8
                && suffix
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        }
        None => false,
    }
}

/// Is `name` an atomic writer's temp file (`<file>.tmp.<hex>`)? Readers and watchers skip them.
pub(crate) fn is_temp_file(name: &str) -> bool {
    match name.rsplit_once(".tmp.") {
        Some((base, suffix)) => {
            !base.is_empty() && !suffix.is_empty() && suffix.bytes().all(|b| b.is_ascii_hexdigit())
        }
        None => false,
    }
}

/// Refuses symlinks and non-files at `path`; `Ok(false)` when it does not exist.
pub(crate) fn check_regular_file(path: &Path) -> Result<bool> {
    match FileKind::at(path)? {
        None => Ok(false),
        Some(FileKind::Regular) => Ok(true),
        Some(kind) => Err(wrong_kind(path, kind)),
    }
}

fn temp_path_for(path: &Path) -> Result<PathBuf> {
    let name = path
        .file_name()
        .ok_or_else(|| StoreError::parse(path, "not a file path"))?;
    let mut temp = name.to_owned();
    temp.push(format!(".tmp.{:08x}", rand::random::<u32>()));
    Ok(path.with_file_name(temp))
}

/// A new file, mode 0600, never through a symlink.
fn create_new_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(PRIVATE_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Writes `bytes` to `path` atomically: a temp file (mode 0600, which the rename keeps) in
/// the same directory, written and fsynced, renamed over the target, then the directory
/// fsynced. Refuses anything but a regular file at `path` (a symlink, a directory, a FIFO…).
/// The directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    check_regular_file(path)?;
    let temp = temp_path_for(path)?;
    // Kept open (and flocked) until the rename is done: the flock says "a writer is alive".
    let written = (|| -> std::io::Result<std::fs::File> {
        let mut f = create_new_private(&temp)?;
        // Only a cleaner peeking at a fresh temp file can hold this, for an instant.
        f.lock()?;
        f.write_all(bytes)?;
        f.sync_all()?;
        Ok(f)
    })();
    let _held = match written {
        Ok(f) => f,
        Err(e) => {
            let _ = std::fs::remove_file(&temp);
            return Err(StoreError::io(&temp, e));
        }
    };
    if let Err(e) = std::fs::rename(&temp, path) {
        let _ = std::fs::remove_file(&temp);
        return Err(StoreError::io(path, e));
    }
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

/// fsyncs a directory so a rename or create in it is durable.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    let d = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(d)
        .and_then(|f| f.sync_all())
        .map_err(io_at(d))
}

/// Creates `path` (mode 0600) with `bytes` only if nothing is there (a temp file renamed
/// without replacing: the file never shows empty). `Ok(false)`
/// when a regular file already was; an error when something else is (a symlink, a FIFO…).
pub(crate) fn create_exclusive(path: &Path, bytes: &[u8]) -> Result<bool> {
    // A file already there is the common case (every inbox append asks): one stat, and no
    // temp file written, fsynced and removed beside it (half a millisecond or more per append
    // on an ordinary disk, and a directory change every watcher of it wakes for).
    if check_regular_file(path)? {
        return Ok(false);
    }
    // The content is written under a temp name and the file appears whole (a rename that
    // never replaces): a file made in place is empty until its first write, and a writer
    // that finds it then (and writes into it) would have its first bytes overwritten.
    let temp = temp_path_for(path)?;
    let written = create_new_private(&temp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(StoreError::io(&temp, e));
    }
    let placed = super::lock::create::rename_no_replace(&temp, path);
    if placed.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    match placed {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            check_regular_file(path)?;
            Ok(false)
        }
        Err(e) => Err(StoreError::io(path, e)),
    }
}

/// What a tolerant read found.
#[derive(Debug)]
pub(crate) enum Parsed<T> {
    /// No file.
    Missing,
    /// The parsed content.
    Ok(T),
    /// Still unparsable after the retries: the last error.
    Invalid { detail: String },
}

/// Reads `path` (at most [`MAX_FILE_BYTES`]) and parses it with `parse`, retrying a torn file
/// a few times over ~100 ms. Only parse failures are retried: a symlink, a directory, a FIFO
/// or a file that is too large is an error at once, and nothing ever blocks.
pub(crate) fn read_parsed<T>(
    path: &Path,
    parse: impl Fn(&[u8]) -> std::result::Result<T, String>,
) -> Result<Parsed<T>> {
    read_parsed_limited(path, MAX_FILE_BYTES, parse)
}

/// [`read_parsed`] with a size limit of `limit` bytes.
pub(crate) fn read_parsed_limited<T>(
    path: &Path,
    limit: u64,
    parse: impl Fn(&[u8]) -> std::result::Result<T, String>,
) -> Result<Parsed<T>> {
    let mut attempt = 0;
    loop {
        let Some(bytes) = read_regular(path, limit)? else {
            return Ok(Parsed::Missing);
        };
        match parse(&bytes) {
            Ok(v) => return Ok(Parsed::Ok(v)),
            Err(detail) => {
                attempt += 1;
                if attempt > TORN_READ_RETRIES {
                    return Ok(Parsed::Invalid { detail });
                }
                std::thread::sleep(TORN_READ_PAUSE);
            }
        }
    }
}

/// Parses JSON text into a value, as an error string (invalid UTF-8 is named as such; the
/// nesting depth is bounded by serde_json's recursion limit).
pub(crate) fn parse_json(bytes: &[u8]) -> std::result::Result<Value, String> {
    let text = utf8_text(bytes)?;
    serde_json::from_str(text).map_err(|e| format!("not valid JSON: {e}"))
}

/// Pretty JSON (2-space indent) as bytes, without a trailing newline, as Claude Code writes.
pub(crate) fn pretty_bytes<T: serde::Serialize + ?Sized>(value: &T) -> Vec<u8> {
    crate::json::to_pretty(value)
        .unwrap_or_default()
        .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_names() {
        assert!(is_temp_file("worker.json.tmp.0a1b2c3d"));
        assert!(!is_temp_file("worker.json"));
        assert!(!is_temp_file("worker.json.tmp."));
        assert!(!is_temp_file("worker.json.tmp.zz"));
        assert!(is_own_temp_name("worker.json.tmp.0a1b2c3d"));
        assert!(!is_own_temp_name("worker.json.tmp.0A1B2C3D"));
        assert!(!is_own_temp_name("worker.json.tmp.0a1b2c3d4"));
        assert!(!is_own_temp_name(".tmp.0a1b2c3d"));
    }

    #[test]
    fn writes_atomically_and_refuses_directories() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.json");
        write_atomic(&p, b"[1]").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"[1]");
        let d = dir.path().join("d.json");
        std::fs::create_dir(&d).unwrap();
        assert!(matches!(
            write_atomic(&d, b"[]"),
            Err(StoreError::NotAFile { .. })
        ));
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 2, "no temp file left behind");
    }

    #[test]
    fn creating_a_file_that_is_there_touches_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("inbox.json");
        assert!(create_exclusive(&p, b"[]").unwrap());
        std::fs::write(&p, b"[{}]").unwrap();
        let long_ago = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1 << 30);
        std::fs::File::open(dir.path())
            .unwrap()
            .set_modified(long_ago)
            .unwrap();
        assert!(!create_exclusive(&p, b"[]").unwrap());
        assert_eq!(std::fs::read(&p).unwrap(), b"[{}]");
        assert_eq!(
            std::fs::metadata(dir.path()).unwrap().modified().unwrap(),
            long_ago,
            "no temp file was made and removed beside it (a write, an fsync and two directory \
             changes per inbox append)"
        );
    }
}
