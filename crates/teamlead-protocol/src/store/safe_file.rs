//! The one way the store opens a file it did not make itself: look at the file type first
//! (without following a symlink), open with `O_NOFOLLOW | O_NONBLOCK` so a FIFO, a device or a
//! symlink swapped in between the look and the open can never block or redirect the read, check
//! the type again on the open descriptor, and read at most a bounded number of bytes. A FIFO,
//! socket, device, directory or symlink is reported by kind, never read. It also holds the
//! modes of what teamlead creates (0600 files, 0700 directories).

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use super::error::{Result, StoreError};

/// The largest protocol file the store reads (an inbox of tens of thousands of entries fits).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// The largest small file it reads (`.highwatermark`, liveness files, pids).
pub const MAX_SMALL_FILE_BYTES: u64 = 4 * 1024;

/// What is at a path, as `lstat` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Regular,
    Directory,
    Symlink,
    Fifo,
    Socket,
    Device,
    Other,
}

impl FileKind {
    /// From `lstat` metadata.
    pub fn of(meta: &std::fs::Metadata) -> FileKind {
        let t = meta.file_type();
        if t.is_symlink() {
            FileKind::Symlink
        } else if t.is_file() {
            FileKind::Regular
        } else if t.is_dir() {
            FileKind::Directory
        } else if t.is_fifo() {
            FileKind::Fifo
        } else if t.is_socket() {
            FileKind::Socket
        } else if t.is_block_device() || t.is_char_device() {
            FileKind::Device
        } else {
            FileKind::Other
        }
    }

    /// What is at `path` without following a symlink; `None` when nothing is.
    pub fn at(path: &Path) -> Result<Option<FileKind>> {
        match std::fs::symlink_metadata(path) {
            Ok(meta) => Ok(Some(FileKind::of(&meta))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::io(path, e)),
        }
    }

    /// A few words for messages: "a FIFO", "a directory", …
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "a regular file",
            FileKind::Directory => "a directory",
            FileKind::Symlink => "a symbolic link",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::Device => "a device",
            FileKind::Other => "an unknown kind of file",
        }
    }
}

/// The error for a path that holds `kind` where a regular file should be.
pub(crate) fn wrong_kind(path: &Path, kind: FileKind) -> StoreError {
    match kind {
        FileKind::Symlink => StoreError::Symlink {
            path: path.to_path_buf(),
            target: std::fs::read_link(path).ok(),
            outside: false,
        },
        found => StoreError::NotAFile {
            path: path.to_path_buf(),
            found,
        },
    }
}

/// Files teamlead creates are private to the user (Claude Code runs as the same user).
pub(crate) const PRIVATE_FILE_MODE: u32 = 0o600;
/// Directories teamlead creates are private to the user.
pub const PRIVATE_DIR_MODE: u32 = 0o700;

const SAFE_FLAGS: libc::c_int = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;

/// Opens `options` at `path` after checking that nothing or a regular file is there; the
/// descriptor is checked again with fstat. `Ok(None)` when nothing is there (and `options`
/// does not create).
fn open_checked(path: &Path, options: &mut std::fs::OpenOptions) -> Result<Option<File>> {
    match FileKind::at(path)? {
        None | Some(FileKind::Regular) => {}
        Some(kind) => return Err(wrong_kind(path, kind)),
    }
    let file = match options.open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        // O_NOFOLLOW on a symlink swapped in after the lstat.
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(wrong_kind(path, FileKind::Symlink));
        }
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let kind = FileKind::of(&file.metadata().map_err(|e| StoreError::io(path, e))?);
    if kind != FileKind::Regular {
        return Err(wrong_kind(path, kind));
    }
    Ok(Some(file))
}

/// Opens an existing regular file for reading, never following a symlink and never blocking
/// (a FIFO, socket, device or directory is an error). `Ok(None)` when nothing is at `path`.
pub(crate) fn open_regular(path: &Path) -> Result<Option<File>> {
    open_checked(
        path,
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(SAFE_FLAGS),
    )
}

/// Opens a regular file for reading and writing, creating it (mode 0600) when missing, never
/// following a symlink and never blocking. For files only teamlead uses and locks with flock.
pub(crate) fn open_or_create_private(path: &Path) -> Result<File> {
    open_checked(
        path,
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(SAFE_FLAGS),
    )?
    .ok_or_else(|| StoreError::not_found(path.display().to_string()))
}

/// Reads at most `limit` bytes of an open file; more is an error naming `path`.
pub fn read_bounded(path: &Path, file: &mut File, limit: u64) -> Result<Vec<u8>> {
    let len = file.metadata().map_err(|e| StoreError::io(path, e))?.len();
    if len > limit {
        return Err(too_big(path, len, limit));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| StoreError::io(path, e))?;
    if bytes.len() as u64 > limit {
        return Err(StoreError::parse(
            path,
            format!("more than the {limit} bytes this reader accepts"),
        ));
    }
    Ok(bytes)
}

fn too_big(path: &Path, len: u64, limit: u64) -> StoreError {
    StoreError::parse(
        path,
        format!("{len} bytes, more than the {limit} this reader accepts"),
    )
}

/// Reads a regular file of at most `limit` bytes. `Ok(None)` when nothing is at `path`; an
/// error (never a block) when it is a symlink, FIFO, socket, device or directory, or larger
/// than `limit`.
pub fn read_regular(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    match open_regular(path)? {
        None => Ok(None),
        Some(mut file) => read_bounded(path, &mut file, limit).map(Some),
    }
}

/// Like [`read_regular`] but follows a symbolic link (for user configuration files, which
/// are often links into a dotfiles repository): still never blocks on a FIFO or device,
/// refuses what is not a regular file once opened, and bounds the size.
pub fn read_regular_following(path: &Path, limit: u64) -> Result<Option<Vec<u8>>> {
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let mut file = match opened {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let kind = FileKind::of(&file.metadata().map_err(|e| StoreError::io(path, e))?);
    if kind != FileKind::Regular {
        return Err(wrong_kind(path, kind));
    }
    read_bounded(path, &mut file, limit).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifos_and_symlinks_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("f");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo with a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_regular(&fifo, 10),
            Err(StoreError::NotAFile { .. })
        ));
        let link = dir.path().join("l");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        assert!(matches!(
            read_regular(&link, 10),
            Err(StoreError::Symlink { .. })
        ));
        assert!(
            read_regular(&dir.path().join("none"), 10)
                .unwrap()
                .is_none()
        );
        let big = dir.path().join("big");
        std::fs::write(&big, [b'1'; 11]).unwrap();
        assert!(read_regular(&big, 10).is_err());
        assert_eq!(read_regular(&big, 11).unwrap().unwrap().len(), 11);
    }
}
