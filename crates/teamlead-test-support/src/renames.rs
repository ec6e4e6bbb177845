//! Counting the files renamed into a folder (inotify `IN_MOVED_TO`): how tests see how many
//! times a file was written whole (every atomic write ends in a rename), which a figure such as
//! "a new teammate's inbox is written once" needs. Linux only.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A watch on one folder, from its creation on.
pub struct RenameWatch {
    fd: libc::c_int,
    seen: HashMap<Vec<u8>, usize>,
}

impl RenameWatch {
    /// Starts watching `dir` (which must exist).
    pub fn new(dir: &Path) -> RenameWatch {
        // SAFETY: plain syscalls on a descriptor this value owns.
        let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
        assert!(fd >= 0, "inotify_init1");
        let c_dir = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
        // `IN_MOVED_FROM` too, though only arrivals are counted: the kernel merges an event
        // into the one before it when they are alike (two renames onto one name in a row
        // would count once), and each rename's departure of its temp name sits between them.
        let mask = libc::IN_MOVED_TO | libc::IN_MOVED_FROM;
        let wd = unsafe { libc::inotify_add_watch(fd, c_dir.as_ptr(), mask) };
        assert!(wd >= 0, "inotify_add_watch {}", dir.display());
        RenameWatch {
            fd,
            seen: HashMap::new(),
        }
    }

    /// How many times a file named `name` was renamed into the folder so far.
    pub fn count(&mut self, name: &str) -> usize {
        self.read_events();
        self.seen.get(name.as_bytes()).copied().unwrap_or(0)
    }

    fn read_events(&mut self) {
        let header = std::mem::size_of::<libc::inotify_event>();
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            // SAFETY: reads into a buffer of the given length.
            let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
            if n <= 0 {
                return;
            }
            let mut at = 0usize;
            while at + header <= n as usize {
                // SAFETY: the kernel wrote whole events; read unaligned from the buffer.
                let event: libc::inotify_event =
                    unsafe { std::ptr::read_unaligned(buf.as_ptr().add(at).cast()) };
                let raw = &buf[at + header..at + header + event.len as usize];
                let end = raw.iter().position(|b| *b == 0).unwrap_or(raw.len());
                if event.mask & libc::IN_MOVED_TO != 0 {
                    *self.seen.entry(raw[..end].to_vec()).or_default() += 1;
                }
                at += header + event.len as usize;
            }
        }
    }
}

impl Drop for RenameWatch {
    fn drop(&mut self) {
        // SAFETY: the descriptor is this value's own.
        unsafe { libc::close(self.fd) };
    }
}
