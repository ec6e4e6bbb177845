//! `release_all_held` removes every lock directory this process holds, and a guard dropped
//! afterwards never removes a lock someone else has taken since. Run in a child process of
//! its own (`ChildJob::ReleaseAll`; the child's side is `release_all_in_this_process` in the test support), because it releases every lock of the
//! process and the other tests of this binary hold locks meanwhile.

use teamlead_protocol::store::lock::lock_dir_of;

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
