//! The event-driven watcher: one kernel watcher on directories (on Linux the narrowed inotify
//! watch of [`super::narrow`], `notify`'s elsewhere), never on files (atomic writers replace
//! files, which would orphan a file watch). Each root of the
//! scope is watched recursively once it exists; until then (and always, to see it vanish) its
//! nearest existing parent is watched non-recursively. A thread turns raw notify events into
//! [`ChangeEvent`]s, using a snapshot of what it has seen to tell a new file from a replaced
//! one, scans directories as they appear (files made before the kernel watch existed are not
//! lost), collapses bursts, and re-scans now and then as a safety net.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

#[cfg(not(target_os = "linux"))]
use notify::Watcher as _;
use notify::event::{AccessKind, AccessMode, CreateKind, ModifyKind, RemoveKind, RenameMode};
use notify::{EventKind, RecursiveMode};

use super::WatchOptions;
use super::coalesce::coalesce;
use super::event::{ChangeEvent, ChangeKind, appeared_kind, is_lock_dir_path, vanished_kind};
use super::scope::{Meta, Snapshot, WatchScope, diff};
use super::sink::Sink;

/// How long to wait after a directory appeared before scanning it once more (the kernel
/// watch on a new directory is added only after its creation event was delivered).
const NEW_DIR_RESCAN: Duration = Duration::from_millis(150);
/// The longest a burst is collected before it is sent.
const MAX_BURST: Duration = Duration::from_millis(200);
/// How often the loop looks at its stop flag when nothing happens (a stopped watcher's thread
/// lingers at most this long, sending nothing; an idle lead should not wake for it often).
const IDLE_TICK: Duration = Duration::from_secs(5);

type RawEvent = notify::Result<notify::Event>;

/// The kernel watch: inotify narrowed to the events that change what is there on Linux
/// ([`super::narrow`]), `notify`'s own watcher elsewhere.
#[cfg(target_os = "linux")]
type DirWatcher = super::narrow::NarrowWatcher;
#[cfg(not(target_os = "linux"))]
type DirWatcher = notify::RecommendedWatcher;

#[cfg(target_os = "linux")]
fn dir_watcher(handler: impl Fn(RawEvent) + Send + 'static) -> Result<DirWatcher, String> {
    DirWatcher::new(handler).map_err(|e| e.to_string())
}

#[cfg(not(target_os = "linux"))]
fn dir_watcher(handler: impl Fn(RawEvent) + Send + 'static) -> Result<DirWatcher, String> {
    // Never follow a symbolic link into the tree: a link to `/` would watch the machine.
    DirWatcher::new(
        handler,
        notify::Config::default().with_follow_symlinks(false),
    )
    .map_err(|e| e.to_string())
}

/// Whether `event` finishes a write of one of the protocol's files: a `.json` file renamed into
/// place (an atomic writer's last step) or closed after writing (an in-place writer's). A lock
/// directory or a temp file never does.
fn completes_a_write(event: &RawEvent) -> bool {
    let Ok(event) = event else {
        return false;
    };
    let finishing = matches!(
        event.kind,
        EventKind::Modify(ModifyKind::Name(RenameMode::To))
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    finishing
        && event
            .paths
            .iter()
            .any(|p| p.extension().is_some_and(|e| e == "json") && !is_lock_dir_path(p))
}

/// Why the notify watcher did not start.
pub(crate) enum StartError {
    /// No watcher or watch could be made (inotify limits, …): poll instead, with this sink.
    Unavailable(String, Sink),
    /// The thread could not be started.
    Thread(std::io::Error),
}

/// Starts the notify watcher and its thread. When no watcher can be made (no inotify instance
/// left, no watch left, …) the sink is handed back so the caller can poll instead.
pub(crate) fn spawn(
    scope: WatchScope,
    options: &WatchOptions,
    sink: Sink,
    stop: Arc<AtomicBool>,
) -> Result<(), StartError> {
    let (raw_tx, raw_rx) = std::sync::mpsc::channel::<RawEvent>();
    let watcher = match dir_watcher(move |event: RawEvent| {
        let _ = raw_tx.send(event);
    }) {
        Ok(w) => w,
        Err(e) => return Err(StartError::Unavailable(e, sink)),
    };
    let mut state = NotifyLoop {
        scope,
        watcher,
        watched: HashMap::new(),
        known: Snapshot::default(),
        include_locks: options.include_locks,
        coalesce_window: options.coalesce,
        rescan_every: options.safety_rescan,
        poll_interval: options.poll_interval,
        next_rescan: options.safety_rescan.map(|d| Instant::now() + d),
        soon: Vec::new(),
        needs_watch: false,
        sink,
        stop,
    };
    if let Err(e) = state.add_watches() {
        return Err(StartError::Unavailable(e.to_string(), state.sink));
    }
    state.known = Snapshot::scan(&state.scope);
    let spawned = std::thread::Builder::new()
        .name("teamlead-watch".into())
        .spawn(move || state.run(raw_rx));
    spawned.map(|_| ()).map_err(StartError::Thread)
}

/// How long the loop waits for raw events at `now`: until the next due re-scan, and never
/// longer than [`IDLE_TICK`] (the stop flag is looked at between waits).
fn wait_before(next_deadline: Option<Instant>, now: Instant) -> Duration {
    next_deadline.map_or(IDLE_TICK, |d| {
        d.saturating_duration_since(now).min(IDLE_TICK)
    })
}

struct NotifyLoop {
    scope: WatchScope,
    watcher: DirWatcher,
    watched: HashMap<PathBuf, RecursiveMode>,
    known: Snapshot,
    include_locks: bool,
    coalesce_window: Duration,
    rescan_every: Option<Duration>,
    poll_interval: Duration,
    next_rescan: Option<Instant>,
    /// Directories to scan once more shortly after they appeared.
    soon: Vec<(Instant, PathBuf)>,
    /// A root or one of its parents appeared or vanished: the watches must be redone.
    needs_watch: bool,
    sink: Sink,
    stop: Arc<AtomicBool>,
}

impl NotifyLoop {
    fn run(mut self, raw: Receiver<RawEvent>) {
        loop {
            if self.stop.load(Ordering::Relaxed) || self.sink.is_closed() {
                return;
            }
            let timeout = wait_before(self.next_deadline(), Instant::now());
            let mut batch = Vec::new();
            match raw.recv_timeout(timeout) {
                Ok(first) => {
                    let mut done = completes_a_write(&first);
                    batch.push(first);
                    let end = Instant::now() + MAX_BURST;
                    // A write that is complete (a file renamed into place, or closed after an
                    // in-place write) ends the burst at once: what a reader waits for is there,
                    // and the quiet after it would only delay it (the lead's messages).
                    while !done && Instant::now() < end {
                        match raw.recv_timeout(self.coalesce_window) {
                            Ok(next) => {
                                done = completes_a_write(&next);
                                batch.push(next);
                            }
                            Err(_) => break,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            }
            let mut out = Vec::new();
            for raw_event in batch {
                match raw_event {
                    Ok(event) => self.handle(event, &mut out),
                    Err(e) => self.on_error(&e),
                }
            }
            self.after_batch(&mut out);
            let mut events = coalesce(out);
            if !self.include_locks {
                events.retain(|e| !e.kind.is_lock());
            }
            let any = !events.is_empty();
            if !self.sink.send_all(events) {
                return;
            }
            if any {
                tracing::trace!(target: "teamlead::probe", "watch.sent");
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.soon
            .iter()
            .map(|(t, _)| *t)
            .chain(self.next_rescan)
            .min()
    }

    /// Redone watches, due re-scans of new directories, the periodic safety re-scan.
    fn after_batch(&mut self, out: &mut Vec<ChangeEvent>) {
        if self.needs_watch {
            self.needs_watch = false;
            match self.add_watches() {
                Ok(new_roots) => {
                    for root in new_roots {
                        self.rescan_under(&root, out);
                    }
                }
                Err(e) => self.degrade(&format!("cannot watch a directory: {e}")),
            }
        }
        let now = Instant::now();
        let (due, later): (Vec<_>, Vec<_>) = self.soon.drain(..).partition(|(t, _)| *t <= now);
        self.soon = later;
        for (_, dir) in due {
            self.rescan_under(&dir, out);
        }
        if self.next_rescan.is_some_and(|t| t <= now) {
            self.next_rescan = self.rescan_every.map(|d| now + d);
            if let Ok(new_roots) = self.add_watches() {
                for root in new_roots {
                    self.rescan_under(&root, out);
                }
            }
            for root in self.scope.roots().to_vec() {
                self.rescan_under(&root, out);
            }
        }
    }

    /// Watches every existing root recursively and the nearest existing parent of each root
    /// non-recursively. Returns the roots that just got their recursive watch.
    fn add_watches(&mut self) -> notify::Result<Vec<PathBuf>> {
        let mut new_roots = Vec::new();
        for root in self.scope.roots().to_vec() {
            let is_dir = Meta::of(&root).is_some_and(|m| m.is_dir);
            if is_dir && self.watched.get(&root) != Some(&RecursiveMode::Recursive) {
                match self.watcher.watch(&root, RecursiveMode::Recursive) {
                    Ok(()) => {
                        self.watched.insert(root.clone(), RecursiveMode::Recursive);
                        new_roots.push(root.clone());
                    }
                    // Gone again between the check and the watch: its parent tells us.
                    Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {}
                    Err(e) => return Err(e),
                }
            }
            let parent = root.ancestors().skip(1).find(|a| a.is_dir());
            if let Some(parent) = parent
                && !self.watched.contains_key(parent)
            {
                match self.watcher.watch(parent, RecursiveMode::NonRecursive) {
                    Ok(()) => {
                        self.watched
                            .insert(parent.to_path_buf(), RecursiveMode::NonRecursive);
                    }
                    Err(e) if matches!(e.kind, notify::ErrorKind::PathNotFound) => {
                        self.needs_watch = true;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(new_roots)
    }

    /// Watching got worse (a notify error): re-scan at the polling interval from now on.
    fn degrade(&mut self, why: &str) {
        if self.rescan_every != Some(self.poll_interval) {
            tracing::warn!(
                "file watcher degraded ({why}); scanning every {} ms as well",
                self.poll_interval.as_millis()
            );
        }
        self.rescan_every = Some(self.poll_interval);
        self.next_rescan = Some(Instant::now() + self.poll_interval);
    }

    fn on_error(&mut self, error: &notify::Error) {
        match error.kind {
            notify::ErrorKind::MaxFilesWatch => self.degrade("the inotify watch limit is reached"),
            // On Linux the narrowed watch's reader ends with its error: nothing more comes.
            #[cfg(target_os = "linux")]
            notify::ErrorKind::Io(_) => self.degrade(&format!("the kernel watch ended: {error}")),
            _ => tracing::debug!("file watcher error: {error}"),
        }
    }

    fn handle(&mut self, event: notify::Event, out: &mut Vec<ChangeEvent>) {
        if event.need_rescan() {
            for root in self.scope.roots().to_vec() {
                self.rescan_under(&root, out);
            }
            return;
        }
        for path in &event.paths {
            match event.kind {
                EventKind::Create(kind) => {
                    self.appeared(path, false, kind == CreateKind::Folder, out)
                }
                EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                    self.vanished(path, false, out)
                }
                // teamlead makes its lock directories under a temp name and renames them
                // into place: a lock name renamed in is a lock taken, even if already gone.
                EventKind::Modify(ModifyKind::Name(RenameMode::To)) => {
                    self.appeared(path, true, is_lock_dir_path(path), out)
                }
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {}
                EventKind::Modify(ModifyKind::Name(_)) => {
                    if Meta::of(path).is_some() {
                        self.appeared(path, true, false, out)
                    } else {
                        self.vanished(path, false, out)
                    }
                }
                EventKind::Modify(ModifyKind::Metadata(_)) => {}
                EventKind::Modify(_) => self.written(path, out),
                EventKind::Access(AccessKind::Close(AccessMode::Write)) => self.written(path, out),
                EventKind::Access(_) => {}
                EventKind::Remove(kind) => self.vanished(path, kind == RemoveKind::Folder, out),
                EventKind::Any | EventKind::Other => {}
            }
        }
    }

    /// Does some root lie at or below `dir`?
    fn is_root_or_parent(&self, dir: &Path) -> bool {
        self.scope.roots().iter().any(|r| r.starts_with(dir))
    }

    /// `path` was created (`folder`: as a directory), or renamed into place
    /// (`replaced_is_modified`).
    fn appeared(
        &mut self,
        path: &Path,
        replaced_is_modified: bool,
        folder: bool,
        out: &mut Vec<ChangeEvent>,
    ) {
        let Some(meta) = Meta::of(path) else {
            // Gone again; its removal event follows. A lock directory lives that briefly:
            // report it from the event alone so lock churn is seen.
            if folder && is_lock_dir_path(path) && self.scope.contains(path) {
                out.push(ChangeEvent::new(path, ChangeKind::LockAcquired, true));
            }
            return;
        };
        if meta.is_dir && self.is_root_or_parent(path) {
            self.needs_watch = true;
        }
        if !self.scope.contains(path) {
            return;
        }
        match self.known.entries.insert(path.to_path_buf(), meta) {
            None => {
                out.push(ChangeEvent::new(
                    path,
                    appeared_kind(path, meta.is_dir),
                    meta.is_dir,
                ));
                if meta.is_dir {
                    self.rescan_under(path, out);
                    self.soon
                        .push((Instant::now() + NEW_DIR_RESCAN, path.to_path_buf()));
                }
            }
            Some(_) if replaced_is_modified && !meta.is_dir => {
                out.push(ChangeEvent::new(path, ChangeKind::Modified, false));
            }
            Some(_) => {}
        }
    }

    /// `path` was removed or renamed away (`folder`: a directory was removed): it and
    /// everything known below it are gone.
    fn vanished(&mut self, path: &Path, folder: bool, out: &mut Vec<ChangeEvent>) {
        if self.watched.remove(path).is_some() {
            let _ = self.watcher.unwatch(path);
            self.needs_watch = true;
        }
        if self.is_root_or_parent(path) {
            self.needs_watch = true;
        }
        if !self.scope.contains(path) {
            return;
        }
        let mut children = self.known.children_of(path);
        children.sort_by(|a, b| b.cmp(a));
        for child in children {
            if let Some(m) = self.known.entries.remove(&child) {
                out.push(ChangeEvent::new(
                    child.clone(),
                    vanished_kind(&child, m.is_dir),
                    m.is_dir,
                ));
            }
        }
        match self.known.entries.remove(path) {
            Some(m) => out.push(ChangeEvent::new(
                path,
                vanished_kind(path, m.is_dir),
                m.is_dir,
            )),
            // A lock directory that lived too briefly to be seen on disk.
            None if folder && is_lock_dir_path(path) => {
                out.push(ChangeEvent::new(path, ChangeKind::LockReleased, true))
            }
            None => {}
        }
    }

    /// A file's content was written.
    fn written(&mut self, path: &Path, out: &mut Vec<ChangeEvent>) {
        if !self.scope.contains(path) {
            return;
        }
        let Some(meta) = Meta::of(path) else {
            return;
        };
        if meta.is_dir {
            return;
        }
        let kind = match self.known.entries.insert(path.to_path_buf(), meta) {
            None => ChangeKind::Created,
            Some(_) => ChangeKind::Modified,
        };
        out.push(ChangeEvent::new(path, kind, false));
    }

    /// Compares what is under `dir` now with what was known and reports the difference.
    fn rescan_under(&mut self, dir: &Path, out: &mut Vec<ChangeEvent>) {
        let mut fresh = Snapshot::default();
        fresh.scan_into(&self.scope, dir);
        let mut old = Snapshot::default();
        let mut old_paths = self.known.children_of(dir);
        old_paths.push(dir.to_path_buf());
        for p in old_paths {
            if let Some(m) = self.known.entries.remove(&p) {
                old.entries.insert(p, m);
            }
        }
        out.extend(diff(&old, &fresh));
        self.known.entries.extend(fresh.entries);
    }
}

#[cfg(test)]
mod tests {
    //! The loop's waits, decided from a given time (it runs on its own thread, on the real
    //! clock, so its decision is tested without waiting).

    use super::*;

    #[test]
    fn the_wait_ends_at_the_next_rescan_and_never_exceeds_the_idle_tick() {
        let now = Instant::now();
        let secs = Duration::from_secs;
        assert_eq!(wait_before(None, now), IDLE_TICK);
        assert_eq!(wait_before(Some(now + secs(3)), now), secs(3));
        assert_eq!(wait_before(Some(now + secs(60)), now), IDLE_TICK);
        assert_eq!(wait_before(Some(now), now), Duration::ZERO);
        assert_eq!(wait_before(Some(now), now + secs(1)), Duration::ZERO);
    }
}
