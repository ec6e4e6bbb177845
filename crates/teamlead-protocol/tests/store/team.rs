//! Team files and the home: create, edit (one write, unknown keys kept), members, modes,
//! panes, deletion with its hook, listing, home resolution and the stale-lock scan.

use crate::store_common;

use std::path::Path;
use std::time::{Duration, SystemTime};

use teamlead_protocol::store::{Home, StoreError, scan};
use teamlead_protocol::{Member, PermissionMode, TeamFile};

use store_common::TempHome;

fn new_team(t: &TempHome, name: &str) {
    let cwd = t.home.root.to_string_lossy().into_owned();
    teamlead_protocol::store::create_team(&t.home, &TeamFile::new(name, Some("d"), &cwd)).unwrap();
}

/// The lead's mark before a delivery writes `isActive: true` only over an idle member's
/// `false`: an active member, or one with no `isActive` yet, is left byte for byte.
#[test]
fn marked_active_only_when_idle() {
    use teamlead_protocol::store::{mark_active_before_turn, set_active};
    let t = TempHome::new();
    new_team(&t, "alpha");
    teamlead_protocol::store::add_member(&t.home, "alpha", Member::new("w", "alpha", "/w"))
        .unwrap();
    let config = t.home.config_path("alpha").unwrap();
    let bytes = || std::fs::read(&config).unwrap();
    let before = bytes();
    assert!(
        !mark_active_before_turn(&t.home, "alpha", "w").unwrap(),
        "no isActive yet"
    );
    assert_eq!(bytes(), before);
    set_active(&t.home, "alpha", "w", true).unwrap();
    let active = bytes();
    assert!(
        !mark_active_before_turn(&t.home, "alpha", "w").unwrap(),
        "already active"
    );
    assert_eq!(bytes(), active);
    set_active(&t.home, "alpha", "w", false).unwrap();
    assert!(
        mark_active_before_turn(&t.home, "alpha", "w").unwrap(),
        "idle: marked"
    );
    let team = teamlead_protocol::store::read_team(&t.home, "alpha").unwrap();
    assert_eq!(team.member("w").unwrap().is_active, Some(true));
    assert!(mark_active_before_turn(&t.home, "alpha", "nobody").is_err());
}

#[test]
fn create_read_and_edit_members() {
    let t = TempHome::new();
    new_team(&t, "alpha");
    assert!(t.home.inboxes_dir("alpha").unwrap().is_dir());
    let err = teamlead_protocol::store::create_team(&t.home, &TeamFile::new("alpha", None, "/"))
        .unwrap_err();
    assert!(matches!(err, StoreError::AlreadyExists { .. }), "{err}");

    teamlead_protocol::store::add_member(&t.home, "alpha", Member::new("builder", "alpha", "/w"))
        .unwrap();
    teamlead_protocol::store::add_member(&t.home, "alpha", Member::new("tester", "alpha", "/w"))
        .unwrap();
    assert!(
        teamlead_protocol::store::add_member(
            &t.home,
            "alpha",
            Member::new("tester", "alpha", "/w")
        )
        .is_err()
    );
    teamlead_protocol::store::set_modes(
        &t.home,
        "alpha",
        &[
            ("builder", PermissionMode::Plan),
            ("tester", PermissionMode::AcceptEdits),
        ],
    )
    .unwrap();
    teamlead_protocol::store::set_pane(&t.home, "alpha", "builder", "%3", Some("tmux")).unwrap();
    teamlead_protocol::store::set_active(&t.home, "alpha", "tester", false).unwrap();
    let team = teamlead_protocol::store::read_team(&t.home, "alpha").unwrap();
    let builder = team.member("builder").unwrap();
    assert_eq!(builder.permission_mode(), PermissionMode::Plan);
    assert_eq!(builder.tmux_pane_id, "%3");
    assert_eq!(builder.backend_type.as_deref(), Some("tmux"));
    assert!(!team.member("tester").unwrap().active());

    // A mode change for a missing member writes nothing.
    let before = std::fs::read(t.home.config_path("alpha").unwrap()).unwrap();
    let err = teamlead_protocol::store::set_modes(
        &t.home,
        "alpha",
        &[
            ("builder", PermissionMode::Default),
            ("ghost", PermissionMode::Default),
        ],
    )
    .unwrap_err();
    assert!(err.to_string().contains("ghost"), "{err}");
    assert_eq!(
        std::fs::read(t.home.config_path("alpha").unwrap()).unwrap(),
        before
    );

    let removed = teamlead_protocol::store::remove_member(&t.home, "alpha", "tester").unwrap();
    assert_eq!(removed.name, "tester");
    assert!(teamlead_protocol::store::remove_member(&t.home, "alpha", "tester").is_err());
    // edit_team returns what the closure returns.
    let n = teamlead_protocol::store::edit_team(&t.home, "alpha", |f| Ok(f.members.len())).unwrap();
    assert_eq!(n, 2);
    assert!(matches!(
        teamlead_protocol::store::read_team(&t.home, "nope"),
        Err(StoreError::NotFound { .. })
    ));
}

#[test]
fn delete_runs_the_hook_and_removes_both_directories() {
    let t = TempHome::new();
    new_team(&t, "alpha");
    new_team(&t, "beta");
    let list = teamlead_protocol::store::TaskList::new(&t.home, "alpha").unwrap();
    list.create("x", "", vec![], None).unwrap();
    let mut seen = None;
    teamlead_protocol::store::delete_team_with(&t.home, "alpha", |f| seen = Some(f.name.clone()))
        .unwrap();
    assert_eq!(seen.as_deref(), Some("alpha"));
    assert!(!t.home.team_dir("alpha").unwrap().exists());
    assert!(!t.home.tasks_dir("alpha").unwrap().exists());
    assert_eq!(t.home.list_teams().unwrap(), vec!["beta"]);
    assert!(matches!(
        teamlead_protocol::store::delete_team(&t.home, "alpha"),
        Err(StoreError::NotFound { .. })
    ));
    // A half-deleted team (crash after the rename) is not listed.
    std::fs::create_dir_all(t.home.teams_dir().join("gamma.deleted-0011aabb")).unwrap();
    assert_eq!(t.home.list_teams().unwrap(), vec!["beta"]);
    // Deleting never follows a symlinked tasks directory.
    let outside_file = t.outside.join("keep");
    std::fs::write(&outside_file, b"x").unwrap();
    std::fs::create_dir_all(t.home.tasks_root()).unwrap();
    std::os::unix::fs::symlink(&t.outside, t.home.tasks_dir("beta").unwrap()).unwrap();
    teamlead_protocol::store::delete_team(&t.home, "beta").unwrap();
    assert!(outside_file.exists());
}

#[test]
fn home_resolution_order() {
    // Only the flag is checked here: environment variables are process-wide and tests run
    // in parallel; the variable order is covered by the CLI tests through real processes.
    let flag = Home::resolve(Some(Path::new("/x/home"))).unwrap();
    assert_eq!(flag.root, Path::new("/x/home"));
    let h = Home::new("/h");
    assert_eq!(
        h.config_path("t").unwrap(),
        Path::new("/h/teams/t/config.json")
    );
    assert_eq!(
        h.teamlead_dir("t").unwrap(),
        Path::new("/h/teams/t/.teamlead")
    );
    assert_eq!(h.quarantine_dir(), Path::new("/h/quarantine"));
}

#[test]
fn stale_lock_scan_finds_old_lock_directories_only() {
    let t = TempHome::new();
    new_team(&t, "alpha");
    let inbox = t.home.inbox_path("alpha", "worker").unwrap();
    let old = teamlead_protocol::store::lock::lock_dir_of(&inbox);
    std::fs::create_dir(&old).unwrap();
    std::fs::File::open(&old)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(30))
        .unwrap();
    let tasks = t.home.tasks_dir("alpha").unwrap();
    std::fs::create_dir_all(tasks.join(".lock.lock")).unwrap();
    std::fs::File::open(tasks.join(".lock.lock"))
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(30))
        .unwrap();
    std::fs::create_dir(tasks.join("1.json.lock")).unwrap(); // fresh: not stale
    let found = scan::stale_locks(&t.home, "alpha");
    assert_eq!(found, vec![tasks.join(".lock.lock"), old]);
    assert_eq!(
        scan::inbox_names(&t.home, "alpha").unwrap(),
        Vec::<String>::new()
    );
    teamlead_protocol::store::inbox::append(
        &t.home,
        "alpha",
        "worker",
        &teamlead_protocol::InboxEntry::new("a", "b"),
    )
    .unwrap();
    assert_eq!(scan::inbox_names(&t.home, "alpha").unwrap(), vec!["worker"]);
}
