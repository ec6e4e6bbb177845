//! `release_all_held` removes every lock directory this process holds, and a guard dropped
//! afterwards never removes a lock someone else has taken since. Alone in its own test
//! executable because it releases every lock of the process.

use std::time::Duration;

use teamlead::store::lock::{self, lock_dir_of};

#[test]
fn release_all_held_removes_every_lock_of_this_process() {
    let t = tempfile::tempdir().unwrap();
    let a = t.path().join("a.json");
    let b = t.path().join("b.json");
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
