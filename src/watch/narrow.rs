//! The kernel watch on Linux, narrowed to what the watcher reads: inotify on directories with
//! only the events that change what is there (`CREATE`, `DELETE`, `MOVED_FROM`/`MOVED_TO`,
//! `CLOSE_WRITE`, and the directory's own removal or move). The general watcher (`notify`)
//! also asks for every `OPEN`, `ATTRIB` and `MODIFY`, so every read of a team file by any
//! process (each teammate reading `config.json` or its inbox after a change), every lock
//! refresh and every `write(2)` woke every watching process: the cost grew with the square of
//! a team's size (DESIGN.md, "Watching"). A recursive watch here is kept by hand and never
//! enters lock or temp directories (their appearance and removal are seen in their parent;
//! nothing inside them is ever read), where `notify` added and dropped a watch for each lock
//! taken. Its events are handed on as `notify` events, so the watcher loop reads them as it
//! reads `notify`'s on other systems.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};
use notify::event::{AccessKind, AccessMode, CreateKind, Flag, ModifyKind, RemoveKind, RenameMode};
use notify::{Event, EventKind, RecursiveMode};

use super::event::{is_lock_dir_path, is_temp_path};
use super::scope::MAX_SCAN_DEPTH;

/// What a watch asks the kernel for; a directory watched for itself (a root, or a root's
/// parent) also for its own removal or move (one below it is seen going in its parent). Added
/// to what the directory was already watched for, never in its place.
fn mask(watch_self: bool) -> WatchMask {
    let changes = WatchMask::MASK_ADD
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::CLOSE_WRITE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK;
    if watch_self {
        changes | WatchMask::DELETE_SELF | WatchMask::MOVE_SELF
    } else {
        changes
    }
}

/// Is `dir` one a recursive watch enters? Not a lock directory, not a writer's temp directory.
fn entered(dir: &Path) -> bool {
    !is_lock_dir_path(dir) && !is_temp_path(dir)
}

type Handler = Box<dyn Fn(notify::Result<Event>) + Send>;

/// One watched directory.
struct Watched {
    path: PathBuf,
    /// Its subdirectories (and theirs) are watched too, and new ones as they appear.
    recursive: bool,
}

/// The watches, by descriptor and by path (the reader thread and the loop both change them).
#[derive(Default)]
struct WatchMap {
    by_wd: HashMap<WatchDescriptor, Watched>,
    by_path: HashMap<PathBuf, WatchDescriptor>,
}

fn lock(map: &Mutex<WatchMap>) -> MutexGuard<'_, WatchMap> {
    map.lock().unwrap_or_else(|e| e.into_inner())
}

/// The error the watcher loop expects for `error` on `path`.
fn notify_error(error: io::Error, path: &Path) -> notify::Error {
    match error.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => {
            notify::Error::path_not_found().add_path(path.to_path_buf())
        }
        Some(libc::ENOSPC) => notify::Error::new(notify::ErrorKind::MaxFilesWatch),
        _ => notify::Error::io(error).add_path(path.to_path_buf()),
    }
}

/// Watches `dir` (itself too at `depth` 0 with `watch_self`), and with `recursive` the
/// directories below it that a recursive watch enters (down to [`MAX_SCAN_DEPTH`] levels; one
/// that vanished meanwhile is skipped). Symbolic links below it are not followed.
fn add_dir(
    watches: &mut Watches,
    map: &Mutex<WatchMap>,
    dir: &Path,
    recursive: bool,
    depth: usize,
    watch_self: bool,
) -> notify::Result<()> {
    let wd = watches
        .add(dir, mask(watch_self && depth == 0))
        .map_err(|e| notify_error(e, dir))?;
    {
        let mut map = lock(map);
        map.by_path.insert(dir.to_path_buf(), wd.clone());
        let watched = map.by_wd.entry(wd).or_insert(Watched {
            path: dir.to_path_buf(),
            recursive,
        });
        watched.path = dir.to_path_buf();
        watched.recursive |= recursive;
    }
    if !recursive || depth >= MAX_SCAN_DEPTH {
        return Ok(());
    }
    let Ok(children) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    for child in children.flatten() {
        let path = child.path();
        if child.file_type().is_ok_and(|t| t.is_dir()) && entered(&path) {
            match add_dir(watches, map, &path, true, depth + 1, false) {
                Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {}
                other => other?,
            }
        }
    }
    Ok(())
}

/// Stops watching `path` and every directory below it.
fn forget(watches: &mut Watches, map: &Mutex<WatchMap>, path: &Path) {
    let mut map = lock(map);
    let gone: Vec<PathBuf> = map
        .by_path
        .keys()
        .filter(|p| p.starts_with(path))
        .cloned()
        .collect();
    for p in gone {
        if let Some(wd) = map.by_path.remove(&p) {
            map.by_wd.remove(&wd);
            // The kernel may have dropped it already (the directory is gone).
            let _ = watches.remove(wd);
        }
    }
}

/// The narrowed watcher: `watch` and `unwatch` as `notify`'s, its events to the handler from a
/// thread of its own, which ends when the watcher is dropped.
pub(crate) struct NarrowWatcher {
    watches: Watches,
    map: Arc<Mutex<WatchMap>>,
    /// Written when the watcher is dropped: the reader thread ends.
    stop: OwnedFd,
}

impl NarrowWatcher {
    pub fn new(handler: impl Fn(notify::Result<Event>) + Send + 'static) -> io::Result<Self> {
        let inotify = Inotify::init()?;
        let watches = inotify.watches();
        // SAFETY: eventfd has no preconditions; a valid descriptor it returns is ours alone.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a new, open descriptor nothing else owns.
        let stop = unsafe { OwnedFd::from_raw_fd(fd) };
        let map = Arc::new(Mutex::new(WatchMap::default()));
        let reader = Reader {
            inotify,
            watches: watches.clone(),
            map: map.clone(),
            stop: stop.try_clone()?,
            handler: Box::new(handler),
        };
        std::thread::Builder::new()
            .name("teamlead-inotify".into())
            .spawn(move || reader.run())?;
        Ok(NarrowWatcher { watches, map, stop })
    }

    /// Watches `path` (a directory), with its subdirectories when `mode` is recursive.
    pub fn watch(&mut self, path: &Path, mode: RecursiveMode) -> notify::Result<()> {
        let recursive = mode == RecursiveMode::Recursive;
        add_dir(&mut self.watches, &self.map, path, recursive, 0, true)
    }

    /// Stops watching `path` and what is below it.
    pub fn unwatch(&mut self, path: &Path) -> notify::Result<()> {
        forget(&mut self.watches, &self.map, path);
        Ok(())
    }
}

impl Drop for NarrowWatcher {
    fn drop(&mut self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
        unsafe {
            libc::write(
                self.stop.as_raw_fd(),
                (&one as *const u64).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }
}

/// The thread that reads the kernel's events.
struct Reader {
    inotify: Inotify,
    watches: Watches,
    map: Arc<Mutex<WatchMap>>,
    stop: OwnedFd,
    handler: Handler,
}

impl Reader {
    fn run(mut self) {
        let mut buffer = [0u8; 4096];
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.inotify.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: self.stop.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            // SAFETY: `fds` is a live array of two pollfd, its length given.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // The loop hears that the kernel watch ended, and scans from then on.
                (self.handler)(Err(notify::Error::io(error)));
                return;
            }
            if fds[1].revents != 0 {
                return;
            }
            let events: Vec<(WatchDescriptor, EventMask, Option<PathBuf>)> =
                match self.inotify.read_events(&mut buffer) {
                    Ok(events) => events
                        .map(|e| (e.wd, e.mask, e.name.map(PathBuf::from)))
                        .collect(),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    Err(e) => {
                        (self.handler)(Err(notify::Error::io(e)));
                        return;
                    }
                };
            for (wd, mask, name) in events {
                self.translate(wd, mask, name);
            }
        }
    }

    /// Hands one kernel event on as `notify`'s, keeping the recursive watches whole: a new
    /// directory in one is watched before its event goes out (the loop then scans it), one
    /// moved away is forgotten.
    fn translate(&mut self, wd: WatchDescriptor, mask: EventMask, name: Option<PathBuf>) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            (self.handler)(Ok(Event::new(EventKind::Other).set_flag(Flag::Rescan)));
            return;
        }
        let (dir, recursive) = {
            let map = lock(&self.map);
            match map.by_wd.get(&wd) {
                Some(w) => (w.path.clone(), w.recursive),
                None => return,
            }
        };
        if mask.contains(EventMask::IGNORED) {
            let mut map = lock(&self.map);
            map.by_wd.remove(&wd);
            if map.by_path.get(&dir) == Some(&wd) {
                map.by_path.remove(&dir);
            }
            return;
        }
        let is_dir = mask.contains(EventMask::ISDIR);
        let path = name.map_or_else(|| dir.clone(), |n| dir.join(n));
        let kind = if mask.contains(EventMask::CREATE) {
            EventKind::Create(if is_dir {
                CreateKind::Folder
            } else {
                CreateKind::File
            })
        } else if mask.contains(EventMask::MOVED_TO) {
            EventKind::Modify(ModifyKind::Name(RenameMode::To))
        } else if mask.contains(EventMask::MOVED_FROM) {
            EventKind::Modify(ModifyKind::Name(RenameMode::From))
        } else if mask.contains(EventMask::DELETE) {
            EventKind::Remove(if is_dir {
                RemoveKind::Folder
            } else {
                RemoveKind::File
            })
        } else if mask.contains(EventMask::CLOSE_WRITE) {
            EventKind::Access(AccessKind::Close(AccessMode::Write))
        } else if mask.contains(EventMask::DELETE_SELF) {
            EventKind::Remove(RemoveKind::Folder)
        } else if mask.contains(EventMask::MOVE_SELF) {
            EventKind::Modify(ModifyKind::Name(RenameMode::Any))
        } else {
            return;
        };
        let arrived = mask.intersects(EventMask::CREATE | EventMask::MOVED_TO);
        if is_dir && recursive && arrived && entered(&path) {
            // Gone again already, or out of watches: the loop's scans still see it.
            let _ = add_dir(&mut self.watches, &self.map, &path, true, 0, false);
        }
        if is_dir && mask.contains(EventMask::MOVED_FROM) {
            forget(&mut self.watches, &self.map, &path);
        }
        (self.handler)(Ok(Event::new(kind).add_path(path)));
    }
}
