//! The store's integration tests: real files in temporary homes, real child processes that
//! write beside the test (this executable re-run on `child_process_entry`), hostile files and
//! names. Run: `cargo test -p teamlead-protocol`. (The tests that need teamlead's binary or
//! Node.js stay with the app: `tests/fast/store_*`.)

use teamlead_test_support::store as store_common;

mod bad_input;
mod drain;
mod fixtures;
mod hostile;
mod ids_modes;
mod liveness;
mod lock_release;
mod tasks;
mod team;
mod team_guard;

/// A child process of a store test (`store_common::child_command`) runs this test only.
#[test]
fn child_process_entry() {
    store_common::child_entry();
}
