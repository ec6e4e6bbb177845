//! The session record's writes: a burst of changes (a hundred spawns) writes it a few times,
//! not once per change, and the last write holds the last change.

use crate::store::TeammateRecord;
use teamlead_test_support::renames::RenameWatch;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_record_changes_in_a_row_are_written_twice_and_the_last_write_holds_them_all() {
    let super::test_events::Created {
        mut controller,
        home,
        // Kept alive while the controller works (it sends on them).
        channels: _channels,
        commands: _commands,
        events: _events,
        dirs: _dirs,
    } = super::test_events::create("burst", |_| {});
    // The new team's record written, ten changes in a row.
    controller.settle_store().await;
    let mut renames = RenameWatch::new(&home.teamlead_dir("burst").unwrap());
    for i in 0..10 {
        controller
            .record
            .started(&format!("mate-{i}"), TeammateRecord::default());
        controller.save_record();
    }
    controller.settle_store().await;
    assert_eq!(
        renames.count("session.json"),
        2,
        "the first change's write, then one with everything asked for meanwhile"
    );
    let written = crate::store::session_record::SessionRecord::read(&home, "burst").unwrap();
    assert_eq!(written.teammates.len(), 10);
}
