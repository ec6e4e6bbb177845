//! A config file's `[keys]` change the keys, and everything generated from the keymap
//! follows: the footer's hints, the dialogs' hints and the `?` help (snapshots at 80 and 40).

use crate::ui_common;

use std::path::Path;

use crossterm::event::KeyCode;

use teamlead::config::Config;
use teamlead::lead::contract::{LeadCommand, LeadEvent};
use teamlead::ui::AppState;
use ui_common::*;

const CONFIG: &str = r#"
[keys.global]
open-approvals = "ctrl+o"

[keys.composer]
cycle-mode = "ctrl+y"
help = "f1"

[keys.teams]
kill = "K"
up = ["up", "i"]
"#;

fn remapped(events: Vec<LeadEvent>) -> AppState {
    let config = Config::parse(Path::new("/c/config.toml"), CONFIG.to_string()).expect("parse");
    let mut state = state_with(events);
    state.keymap = teamlead::cli::config::keymap(&config).expect("keymap");
    state
}

#[test]
fn remapped_keys_act_and_the_old_ones_do_not() {
    let mut state = remapped(vec![LeadEvent::Team(mixed_team())]);
    assert_eq!(
        press(&mut state, &[shift_tab()]),
        vec![],
        "shift+tab is free now"
    );
    state.composer.clear();
    assert_eq!(
        press(&mut state, &[ctrl('y')]),
        vec![LeadCommand::CycleLeadMode]
    );
    press(&mut state, &[ch('?')]);
    assert!(state.modals.is_empty(), "? types now");
    assert_eq!(state.composer.text(), "?");
    state.composer.clear();
    press(&mut state, &[key(KeyCode::F(1))]);
    assert!(!state.modals.is_empty(), "F1 opens the help");
}

#[test]
fn footer_hints_follow_the_config() {
    let mut state = remapped(vec![LeadEvent::Team(mixed_team())]);
    let text = rows(&screen(&mut state, 80, 12)).join("\n");
    assert!(text.contains("default mode · ctrl+y to cycle"), "{text}");
    for w in [80, 40] {
        let mut state = remapped(vec![
            LeadEvent::Team(mixed_team()),
            LeadEvent::Permissions(vec![bash_request(1, "tester", "green", "cargo test")]),
        ]);
        // Later: the request waits, and the footer says which key opens it.
        press_slowly(&mut state, &[key(KeyCode::Esc)]);
        let t = screen(&mut state, w, 12);
        let text = rows(&t).join("\n");
        assert!(text.contains("1 approval (ctrl+o)") || w < 80, "{text}");
        insta::assert_snapshot!(format!("config_footer_{w}"), t.backend());
    }
}

#[test]
fn help_and_dialog_hints_follow_the_config() {
    for w in [80, 40] {
        let mut state = remapped(vec![LeadEvent::Team(mixed_team())]);
        press_slowly(&mut state, &[key(KeyCode::Down), key(KeyCode::Enter)]);
        let t = screen(&mut state, w, 16);
        assert!(rows(&t).join("\n").contains("K kill"));
        insta::assert_snapshot!(format!("config_teams_{w}"), t.backend());
        press_slowly(&mut state, &[key(KeyCode::Esc), key(KeyCode::F(1))]);
        // At 40 columns each description goes below its keys (nothing is cut): a taller
        // screen shows as many bindings.
        let t = screen(&mut state, w, if w < 80 { 44 } else { 24 });
        let text = rows(&t).join("\n");
        assert!(text.contains("ctrl+y") && text.contains("f1"), "{text}");
        insta::assert_snapshot!(format!("config_help_{w}"), t.backend());
    }
}

/// The review and merge queue dialogs take their keys from the keymap too, and their hint
/// lines say the keys in force.
#[test]
fn review_keys_follow_the_config() {
    use teamlead::lead::contract::ViewTarget;
    use teamlead::lead::review::ReviewSummary;
    let config = Config::parse(
        Path::new("/c/config.toml"),
        "[keys.review]\ncomment = \"x\"\nclose = \"Q\"\n".to_string(),
    )
    .expect("parse");
    let mut state = state_with(Vec::new());
    state.keymap = teamlead::cli::config::keymap(&config).expect("keymap");
    state.send(LeadCommand::Submit {
        target: ViewTarget::Lead,
        text: "/review alpha".into(),
    });
    state.take_commands();
    state.apply(LeadEvent::Review(ReviewSummary::from_git(
        "alpha",
        "teamlead/t/alpha".into(),
        "1a2b3c4",
        Vec::new(),
        Vec::new(),
        0,
    )));
    let text = rows(&screen(&mut state, 120, 16)).join("\n");
    assert!(text.contains("x comment on line"), "{text}");
    assert!(text.contains("Q close"), "{text}");
    press_slowly(&mut state, &[ch('q')]);
    assert_eq!(state.modals.len(), 1, "q is free in the review now");
    press_slowly(&mut state, &[ch('Q')]);
    assert!(state.modals.is_empty(), "Q closes it");
}
