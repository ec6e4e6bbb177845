//! What the writing commands (`send`, `task add|claim|done|delete`) do with what the store's
//! audit found at the files they are about to change: refuse before touching anything, with
//! one error naming the file and the problem; warnings for problems that do not stop them go
//! to stderr as `warning: <path>: <detail>`, escaped.

use std::io::Write;
use std::path::Path;

use color_eyre::eyre::{Result, bail};

use crate::protocol::display::visible_line;
use crate::store::Home;
use crate::store::audit::Problem;

/// A path shown relative to the home, escaped.
pub fn shown_path(home: &Home, path: &Path) -> String {
    let rel = path.strip_prefix(&home.root).unwrap_or(path);
    visible_line(&rel.display().to_string()).into_owned()
}

/// `<path>: <detail>`, escaped.
pub fn problem_line(home: &Home, p: &Problem) -> String {
    format!("{}: {}", shown_path(home, &p.path), visible_line(&p.detail))
}

/// Fails with the first problem that stops a writer (the rest are warnings first).
pub fn refuse_if_any(home: &Home, problems: &[Problem], doing: &str) -> Result<()> {
    let mut blocking = problems.iter().filter(|p| p.kind.blocks_writers());
    let Some(first) = blocking.next() else {
        return Ok(());
    };
    for other in blocking {
        warn(home, other);
    }
    bail!(
        "refusing to {doing}, nothing was changed: {}",
        problem_line(home, first)
    )
}

/// One `warning: …` line on stderr (a closed stderr is ignored).
pub fn warn(home: &Home, p: &Problem) {
    let _ = writeln!(std::io::stderr(), "warning: {}", problem_line(home, p));
}

/// Says on stderr that the lock directory of `target` is stale and will be taken over (the
/// protocol removes a lock untouched for 10 s), so the removal is never silent.
pub fn note_stale_lock(home: &Home, target: &Path) {
    let lock = crate::store::lock::lock_dir_of(target);
    let age = std::fs::symlink_metadata(&lock)
        .ok()
        .filter(|m| m.is_dir())
        .and_then(|m| m.modified().ok())
        .and_then(|m| std::time::SystemTime::now().duration_since(m).ok());
    if let Some(age) = age.filter(|a| *a > crate::store::lock::STALE_AFTER) {
        let _ = writeln!(
            std::io::stderr(),
            "note: {}: stale lock directory (untouched for {} s) taken over and removed",
            shown_path(home, &lock),
            age.as_secs()
        );
    }
}
