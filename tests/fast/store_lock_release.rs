//! `release_all_held` removes every lock directory this process holds, and a guard dropped
//! afterwards never removes a lock someone else has taken since. Run in a child process of
//! its own (`store_common::ChildJob::ReleaseAll`), because it releases every lock of the
//! process and the other tests of this binary hold locks meanwhile.

use std::path::Path;
use std::time::Duration;

use teamlead::store::lock::{self, lock_dir_of};

use crate::store_common::{ChildJob, child_command};

#[test]
fn release_all_held_removes_every_lock_of_this_process() {
    let t = tempfile::tempdir().unwrap();
    let out = child_command(ChildJob::ReleaseAll { dir: t.path() })
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the child's checks failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        lock_dir_of(&t.path().join("a.json")).exists(),
        "the other taker keeps its lock"
    );
    assert!(!lock_dir_of(&t.path().join("b.json")).exists());
}

/// The child's side: takes two locks in `dir`, releases all, lets someone else take one,
/// drops the stale guards. Panics (a failed child) when a check fails.
pub fn release_all_in_this_process(dir: &Path) {
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
