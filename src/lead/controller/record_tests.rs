//! The session record's writes: a burst of changes (a hundred spawns) writes it a few times,
//! not once per change, and the last write holds the last change.

use teamlead_test_support::renames::RenameWatch;
use tokio::sync::mpsc;

use crate::store::TeammateRecord;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_record_changes_in_a_row_are_written_twice_and_the_last_write_holds_them_all() {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = crate::store::Home::new(home_dir.path());
    let opts = super::LeadOptions::new(home.clone(), cwd.path()).with_team("burst");
    let (_commands, commands_rx) = mpsc::channel(16);
    let (events_tx, _events) = mpsc::channel(4096);
    let (bridge, bridge_rx) = crate::lead::bridge::LeaderBridge::new();
    let (mut controller, _channels) =
        super::state::Controller::create(opts, bridge, bridge_rx, commands_rx, events_tx)
            .expect("lead");
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
