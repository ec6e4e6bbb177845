//! Wakes the driver when an inbox of the link's team changes, so a new local entry goes to the
//! peer at once instead of at the next poll (the poll stays, for liveness and as the safety
//! net for an event the kernel dropped). One notify watcher (inotify on Linux) on the
//! directories the link reads ([`crate::Link::watched_dirs`]), never on files (writers replace
//! inbox files by rename). A burst of events costs one wake: the handler sends a wake only
//! when none is pending, and the driver re-arms before it looks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

/// The watcher and what it watches. Without inotify (no instance or watch left) it does
/// nothing and the driver polls.
pub struct Wake {
    watcher: Option<RecommendedWatcher>,
    watching: Vec<PathBuf>,
    pending: Arc<AtomicBool>,
}

impl Wake {
    /// A watcher that calls `on_change` when a `.json` file in a watched directory is
    /// created, written, renamed or removed, once per [`Wake::rearm`].
    pub fn new(on_change: impl Fn() + Send + 'static) -> Wake {
        let pending = Arc::new(AtomicBool::new(false));
        let flag = pending.clone();
        let watcher = RecommendedWatcher::new(
            move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_) | EventKind::Other) {
                    return;
                }
                if !event.paths.iter().any(|p| is_json(p)) {
                    return;
                }
                if !flag.swap(true, Ordering::AcqRel) {
                    on_change();
                }
            },
            notify::Config::default().with_follow_symlinks(false),
        );
        let watcher = match watcher {
            Ok(w) => Some(w),
            Err(e) => {
                tracing::info!("no file events for the link ({e}): it polls");
                None
            }
        };
        Wake {
            watcher,
            watching: Vec::new(),
            pending,
        }
    }

    /// Watches each of `dirs` that exists and is not watched yet (a directory made later is
    /// watched at a later call; the driver calls this after every step).
    pub fn ensure(&mut self, dirs: &[PathBuf]) {
        let Some(watcher) = self.watcher.as_mut() else {
            return;
        };
        for dir in dirs {
            if self.watching.contains(dir) || !dir.is_dir() {
                continue;
            }
            match watcher.watch(dir, RecursiveMode::NonRecursive) {
                Ok(()) => self.watching.push(dir.clone()),
                Err(e) => {
                    tracing::info!("{}: no file events ({e}); polled", dir.display());
                    // Not tried again at every step: the poll covers it.
                    self.watching.push(dir.clone());
                }
            }
        }
    }

    /// The wake was seen: the next change wakes the driver again.
    pub fn rearm(&self) {
        self.pending.store(false, Ordering::Release);
    }

    /// Whether a change came since the last [`Wake::rearm`] (its wake is on its way).
    pub fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Whether file events are in use.
    pub fn is_active(&self) -> bool {
        self.watcher.is_some()
    }
}

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}
