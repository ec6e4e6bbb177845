//! The lead's guard on its team file (`store::team_guard`) against writers that skip
//! `config.json.lock/` and rewrite the file in place, as Claude Code 2.1.45 teammates do when
//! they flip `isActive`: a stale copy written back loses a member the lead added, and a writer
//! that dies between truncating and writing leaves an empty file. The guarded lead repairs
//! both under the lock; an unguarded process (any other command) never rewrites such a file.

use teamlead_protocol::store::team_guard::{self, Repair};
use teamlead_protocol::store::{self, Home, StoreError};
use teamlead_protocol::{Member, TeamFile};

fn team(name: &str) -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::new(dir.path());
    store::create_team(&home, &TeamFile::new(name, None, "/w")).unwrap();
    (dir, home)
}

fn config(home: &Home, team: &str) -> std::path::PathBuf {
    home.config_path(team).unwrap()
}

/// What a 2.1.45 teammate does: write the text in place (truncate, then write), no lock.
fn write_in_place(home: &Home, team: &str, text: &[u8]) {
    std::fs::write(config(home, team), text).unwrap();
}

#[test]
fn a_member_lost_to_a_stale_in_place_write_is_added_back() {
    let (_dir, home) = team("guard-stale");
    team_guard::guard(&home, "guard-stale").unwrap();
    store::add_member(
        &home,
        "guard-stale",
        Member::new("one", "guard-stale", "/w"),
    )
    .unwrap();
    // `one` read the file before `two` joined and flips its isActive from that copy.
    let mut stale = store::read_team(&home, "guard-stale").unwrap();
    store::add_member(
        &home,
        "guard-stale",
        Member::new("two", "guard-stale", "/w"),
    )
    .unwrap();
    stale.member_mut("one").unwrap().is_active = Some(false);
    write_in_place(&home, "guard-stale", stale.to_text().as_bytes());

    let (file, repair) = team_guard::read_guarded(&home, "guard-stale").unwrap();
    assert_eq!(
        repair,
        Some(Repair::Members {
            added_back: vec!["two".into()],
            removed_again: Vec::new(),
        })
    );
    assert!(file.member("two").is_some());
    let on_disk = store::read_team(&home, "guard-stale").unwrap();
    assert!(
        on_disk.member("two").is_some(),
        "the repair was not written"
    );
    // The teammate's own change survives the repair.
    assert_eq!(on_disk.member("one").unwrap().is_active, Some(false));
    // Nothing more to repair afterwards.
    assert_eq!(
        team_guard::read_guarded(&home, "guard-stale").unwrap().1,
        None
    );
}

#[test]
fn an_emptied_team_file_is_restored_from_the_last_good_copy() {
    let (_dir, home) = team("guard-empty");
    team_guard::guard(&home, "guard-empty").unwrap();
    store::add_member(
        &home,
        "guard-empty",
        Member::new("one", "guard-empty", "/w"),
    )
    .unwrap();
    write_in_place(&home, "guard-empty", b"");

    let (file, repair) = team_guard::read_guarded(&home, "guard-empty").unwrap();
    assert!(
        matches!(repair, Some(Repair::Restored { .. })),
        "{repair:?}"
    );
    assert!(file.member("one").is_some());
    assert!(
        store::read_team(&home, "guard-empty")
            .unwrap()
            .member("one")
            .is_some()
    );

    // A truncated file is repaired by the lead's next edit as well.
    let text = std::fs::read(config(&home, "guard-empty")).unwrap();
    write_in_place(&home, "guard-empty", &text[..text.len() / 2]);
    store::set_active(&home, "guard-empty", "one", true).unwrap();
    let after = store::read_team(&home, "guard-empty").unwrap();
    assert_eq!(after.member("one").unwrap().is_active, Some(true));
}

#[test]
fn members_the_lead_removed_and_a_stale_write_brought_back_are_removed_again() {
    let (_dir, home) = team("guard-removed");
    team_guard::guard(&home, "guard-removed").unwrap();
    store::add_member(
        &home,
        "guard-removed",
        Member::new("gone", "guard-removed", "/w"),
    )
    .unwrap();
    // `gone` read the file before the lead removed it (after its shutdown) and writes it back.
    let stale = store::read_team(&home, "guard-removed").unwrap();
    store::remove_member(&home, "guard-removed", "gone").unwrap();
    let (file, repair) = team_guard::read_guarded(&home, "guard-removed").unwrap();
    assert_eq!(repair, None);
    assert!(file.member("gone").is_none());
    write_in_place(&home, "guard-removed", stale.to_text().as_bytes());
    let (file, repair) = team_guard::read_guarded(&home, "guard-removed").unwrap();
    assert_eq!(
        repair,
        Some(Repair::Members {
            added_back: Vec::new(),
            removed_again: vec!["gone".into()],
        })
    );
    assert!(file.member("gone").is_none());
    assert!(
        store::read_team(&home, "guard-removed")
            .unwrap()
            .member("gone")
            .is_none()
    );
    // Added again later, it stays.
    store::add_member(
        &home,
        "guard-removed",
        Member::new("gone", "guard-removed", "/w"),
    )
    .unwrap();
    assert_eq!(
        team_guard::read_guarded(&home, "guard-removed").unwrap().1,
        None
    );
}

#[test]
fn an_unguarded_process_never_rewrites_an_empty_team_file() {
    let (_dir, home) = team("guard-none");
    write_in_place(&home, "guard-none", b"");
    assert!(matches!(
        team_guard::read_guarded(&home, "guard-none"),
        Err(StoreError::Parse { .. })
    ));
    assert!(store::set_active(&home, "guard-none", "team-lead", true).is_err());
    assert!(
        std::fs::read(config(&home, "guard-none"))
            .unwrap()
            .is_empty()
    );
}
