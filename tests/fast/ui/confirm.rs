//! Every confirmation box has the protection of the approval dialogs (issue 33, item 1), with
//! key streams on a scripted clock: a key pressed in its grace period answers nothing and is
//! no text either (dropped, and the box says so); text it has no use for goes back to the
//! composer (a box at the composer steps back behind the banner; one opened from the teams
//! dialog keeps the keyboard and ignores it); the offer to retire a merged worktree arrives
//! without taking the keyboard from someone typing, so `/merge carol --squash --dry-run` typed
//! right after `/merge bob --squash` retires nothing and stays the person's text; answering on
//! purpose still works. Kill, prune, cycle all (teams dialog), leaving plan mode (a teammate's
//! view) and retiring, each. Snapshots of the note and of the waiting question.

use crate::ui_common::*;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use teamlead::lead::contract::{LeadCommand, LeadEvent, ViewTarget};
use teamlead::lead::review::{MergeHow, Merged};
use teamlead::protocol::PermissionMode;
use teamlead::ui::AppState;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::guard::{GRACE_MS, TYPING_PAUSE_MS};

fn confirm_open(state: &AppState) -> bool {
    matches!(state.modals.last(), Some(Modal::Confirm(_)))
}

fn text(state: &mut AppState, width: u16) -> String {
    rows(&screen(state, width, 24)).join("\n")
}

/// [`prune_team`] where builder (in-process) requires plan mode and is in it.
fn plan_team() -> Vec<teamlead::lead::contract::TeammateView> {
    let mut team = prune_team();
    team[0].plan_mode_required = true;
    team[0].mode = PermissionMode::Plan;
    team
}

fn open_teams(state: &mut AppState) {
    press_slowly(state, &[key(KeyCode::Down), key(KeyCode::Enter)]);
    assert!(matches!(state.modals.last(), Some(Modal::Teams(_))));
}

/// A box opened by `open` (from a fresh state): `answer` in its grace period sends nothing,
/// types nothing and says so, and pressed again once the box has been seen sends
/// `expected`. Opened again, text typed into it (in its grace period or after: `/quit says
/// nothing` holds a `y`, an `a`, an `n`) answers nothing and reaches nothing behind it: the
/// box and the dialog it came from close, nothing is done and the transcript says so, and the
/// text is in the composer.
fn guarded(open: impl Fn() -> AppState, answer: KeyEvent, expected: LeadCommand, title: &str) {
    let mut state = open();
    assert!(confirm_open(&state), "{}", text(&mut state, 80));
    assert_eq!(
        press(&mut state, &[answer]),
        vec![],
        "no answer in the grace period"
    );
    assert!(confirm_open(&state));
    let label = match answer.code {
        KeyCode::Char(c) => c.to_string(),
        _ => unreachable!(),
    };
    let screen = text(&mut state, 80);
    assert!(
        screen.contains(&format!(
            "{label} ignored: this question just appeared — press again"
        )),
        "{screen}"
    );
    assert!(state.composer.is_empty());
    assert_eq!(press_slowly(&mut state, &[answer]), vec![expected]);
    assert!(!confirm_open(&state));
    assert!(!text(&mut state, 80).contains("ignored"));
    for wait in [0, GRACE_MS] {
        let mut state = open();
        wait_ms(&mut state, wait);
        type_text(&mut state, "/quit says nothing");
        assert_eq!(state.take_commands(), vec![], "waited {wait}");
        assert!(state.modals.is_empty(), "waited {wait}");
        assert_eq!(state.composer.text(), "/quit says nothing");
        let screen = text(&mut state, 160);
        assert!(
            screen.contains(&format!(
                "Not done: {title} (what you typed went to the composer)."
            )),
            "{screen}"
        );
    }
}

#[test]
fn kill_prune_cycle_all_and_leaving_plan_mode_are_answered_only_on_purpose() {
    let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let in_teams = |keys: Vec<KeyEvent>| {
        move || {
            let mut state = state_with(vec![LeadEvent::Team(plan_team())]);
            open_teams(&mut state);
            press_slowly(&mut state, &keys);
            state
        }
    };
    // x: kill the selected teammate (tester).
    guarded(
        in_teams(vec![key(KeyCode::Down), ch('x')]),
        ch('y'),
        LeadCommand::Kill {
            name: "tester".into(),
        },
        "kill @tester",
    );
    // p: prune; `a` includes the idle teammate that holds a task.
    guarded(
        in_teams(vec![ch('p')]),
        ch('a'),
        LeadCommand::Prune {
            shut_down: names(&["docs", "scout"]),
            remove: names(&["lint", "old"]),
        },
        "prune the team",
    );
    // Shift+Tab: cycle all, which takes builder out of plan mode.
    guarded(
        in_teams(vec![shift_tab()]),
        ch('y'),
        LeadCommand::CycleAllModes,
        "move every teammate out of plan mode",
    );
    // Enter, then Shift+Tab in builder's detail: leaving plan mode.
    guarded(
        in_teams(vec![key(KeyCode::Enter), shift_tab()]),
        ch('y'),
        LeadCommand::CycleTeammateMode {
            name: "builder".into(),
        },
        "move @builder out of plan mode",
    );
    // Shift+Tab in builder's inline view: the box right above the composer.
    guarded(
        || {
            let mut state = state_with(vec![LeadEvent::Team(plan_team())]);
            let shift_down = key_mod(KeyCode::Down, KeyModifiers::SHIFT);
            press_slowly(&mut state, &[shift_down, shift_tab()]);
            assert_eq!(state.view, ViewTarget::Teammate("builder".into()));
            state
        },
        ch('y'),
        LeadCommand::CycleTeammateMode {
            name: "builder".into(),
        },
        "move @builder out of plan mode",
    );
}

fn merged(name: &str) -> LeadEvent {
    LeadEvent::Merged(Merged {
        name: name.into(),
        branch: format!("teamlead/demo/{name}"),
        how: MergeHow::Squash,
        worktree: format!("/home/me/repo-worktrees/demo-{name}"),
        retired: false,
        running: true,
    })
}

/// The report: `/merge carol --squash --dry-run` typed a few seconds after `/merge bob
/// --squash` retired bob (its `y` answered the box that had opened meanwhile).
#[test]
fn a_command_typed_after_a_merge_retires_nothing_and_stays_in_the_composer() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    type_text(&mut state, "/merge bob --squash");
    press(&mut state, &[key(KeyCode::Enter)]);
    wait_ms(&mut state, 300);
    type_text(&mut state, "/merge carol");
    state.apply(merged("bob"));
    assert!(
        !confirm_open(&state),
        "the offer waits while the person types"
    );
    type_text(&mut state, " --squash --dry-run");
    assert_eq!(state.composer.text(), "/merge carol --squash --dry-run");
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/merge carol --squash --dry-run".into()
        }],
        "no RetireWorktree"
    );
    // Even typed the moment the box took the keyboard (typing had stopped), a command is a
    // command: its `y` answers nothing, and it stays whole in the composer.
    wait_ms(&mut state, TYPING_PAUSE_MS);
    assert!(confirm_open(&state));
    type_text(&mut state, "/merge carol --squash --dry-run");
    assert!(!confirm_open(&state));
    assert_eq!(state.composer.text(), "/merge carol --squash --dry-run");
    assert_eq!(state.take_commands(), vec![]);
    // A `y` pressed as the box shows up is dropped, and said so.
    state.composer.clear();
    wait_ms(&mut state, TYPING_PAUSE_MS);
    assert!(confirm_open(&state));
    assert_eq!(press(&mut state, &[ch('y')]), vec![]);
    assert!(state.composer.is_empty());
    assert!(confirm_open(&state));
    // On purpose, it still answers.
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::RetireWorktree { name: "bob".into() }]
    );
}

#[test]
fn snapshot_the_waiting_question_and_the_ignored_key() {
    for w in [80, 40] {
        let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
        type_text(&mut state, "/merge bob --squash");
        press(&mut state, &[key(KeyCode::Enter)]);
        type_text(&mut state, "/merge carol");
        state.apply(merged("bob"));
        let t = screen(&mut state, w, 24);
        insta::assert_snapshot!(format!("confirm_retire_waiting_{w}"), t.backend());
        state.composer.clear();
        wait_ms(&mut state, TYPING_PAUSE_MS);
        press(&mut state, &[ch('y')]);
        let t = screen(&mut state, w, 24);
        insta::assert_snapshot!(format!("confirm_retire_y_ignored_{w}"), t.backend());
    }
    // The permission dialog's note, in place of its hints.
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    state.apply(LeadEvent::Permissions(vec![bash_request(
        1,
        "builder",
        "blue",
        "cargo test",
    )]));
    press(&mut state, &[ch('y')]);
    let t = screen(&mut state, 80, 24);
    insta::assert_snapshot!("permission_y_ignored_80", t.backend());
}
