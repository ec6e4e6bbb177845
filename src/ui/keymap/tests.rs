//! Tests of the keymap: matching, the default table's hints, and overrides.

use super::*;
use crossterm::event::{KeyCode, KeyEventKind, KeyModifiers};

fn ev(code: KeyCode, mods: KeyModifiers) -> KeyEvent {
    KeyEvent {
        code,
        modifiers: mods,
        kind: KeyEventKind::Press,
        state: crossterm::event::KeyEventState::NONE,
    }
}

#[test]
fn shift_tab_matches_however_reported() {
    let map = Keymap::default();
    let a = ev(KeyCode::BackTab, KeyModifiers::SHIFT);
    let b = ev(KeyCode::BackTab, KeyModifiers::NONE);
    assert_eq!(map.lookup(Context::Composer, &a), Some(Action::CycleMode));
    assert_eq!(map.lookup(Context::Composer, &b), Some(Action::CycleMode));
}

#[test]
fn plain_enter_submits_and_modified_enter_breaks_the_line() {
    let map = Keymap::default();
    let enter = ev(KeyCode::Enter, KeyModifiers::NONE);
    let alt_enter = ev(KeyCode::Enter, KeyModifiers::ALT);
    let shift_enter = ev(KeyCode::Enter, KeyModifiers::SHIFT);
    assert_eq!(map.lookup(Context::Composer, &enter), Some(Action::Submit));
    assert_eq!(
        map.lookup(Context::Composer, &alt_enter),
        Some(Action::Newline)
    );
    assert_eq!(
        map.lookup(Context::Composer, &shift_enter),
        Some(Action::Newline)
    );
}

#[test]
fn characters_ignore_shift_but_not_ctrl() {
    let map = Keymap::default();
    let y = ev(KeyCode::Char('y'), KeyModifiers::NONE);
    let ctrl_y = ev(KeyCode::Char('y'), KeyModifiers::CONTROL);
    assert_eq!(map.lookup(Context::Permission, &y), Some(Action::Allow));
    assert_eq!(map.lookup(Context::Permission, &ctrl_y), None);
    let question = ev(KeyCode::Char('?'), KeyModifiers::SHIFT);
    assert_eq!(map.lookup(Context::Composer, &question), Some(Action::Help));
}

#[test]
fn hints_come_from_the_table() {
    let map = Keymap::default();
    assert_eq!(
        map.hints(Context::Permission),
        "y yes · a always… · n no · → select · o open its view · esc later"
    );
    assert_eq!(
        map.hints_with_every_key(Context::AlwaysConfirm),
        "a/enter confirm · esc/← back"
    );
    assert_eq!(
        map.key_label(Context::Global, Action::OpenApprovals),
        "ctrl+p"
    );
    let help = map.help_sections();
    assert!(help.iter().any(|(title, rows)| *title == "Teams dialog"
        && rows.iter().any(|(k, w)| k == "x" && *w == "kill")));
}

#[test]
fn motions_never_kill() {
    let map = Keymap::default();
    for ctx in [Context::TeamsList, Context::TeamsDetail] {
        for c in ['j', 'k'] {
            let key = ev(KeyCode::Char(c), KeyModifiers::NONE);
            assert_ne!(map.lookup(ctx, &key), Some(Action::Kill), "{c}");
        }
    }
    let k = ev(KeyCode::Char('k'), KeyModifiers::NONE);
    assert_eq!(map.lookup(Context::TeamsList, &k), Some(Action::Up));
}

#[test]
fn the_default_table_has_no_conflicts_and_unique_names() {
    assert_eq!(Keymap::default().conflicts(), None);
    for ctx in Context::ALL {
        let names: Vec<_> = KEYMAP
            .iter()
            .filter(|b| b.context == ctx)
            .map(|b| b.action.name())
            .collect();
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(names.len(), unique.len(), "{}", ctx.name());
    }
}

fn over(context: &str, action: &str, keys: &[&str]) -> KeyOverride {
    KeyOverride {
        context: context.to_string(),
        action: action.to_string(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
    }
}

#[test]
fn overrides_replace_keys_and_hints_follow() {
    let map = Keymap::default()
        .with_overrides(&[
            over("teams", "kill", &["K"]),
            over("global", "open-approvals", &["ctrl+o"]),
        ])
        .unwrap();
    let shift_k = ev(KeyCode::Char('K'), KeyModifiers::SHIFT);
    assert_eq!(map.lookup(Context::TeamsList, &shift_k), Some(Action::Kill));
    let x = ev(KeyCode::Char('x'), KeyModifiers::NONE);
    assert_eq!(map.lookup(Context::TeamsList, &x), None);
    assert!(map.hints(Context::TeamsList).contains("K kill"));
    assert_eq!(
        map.key_label(Context::Global, Action::OpenApprovals),
        "ctrl+o"
    );
}

#[test]
fn bad_overrides_name_the_entry() {
    let base = Keymap::default();
    let err = |o: &[KeyOverride]| base.clone().with_overrides(o).unwrap_err();
    assert_eq!(err(&[over("teams", "kil", &["x"])]).0, 0);
    assert!(err(&[over("teams", "kil", &["x"])]).1.contains("kill"));
    assert!(err(&[over("team", "kill", &["x"])]).1.contains("teams"));
    assert!(
        err(&[over("teams", "kill", &["ctrl+nope"])])
            .1
            .contains("not a key")
    );
    assert!(
        err(&[over("teams", "kill", &[])])
            .1
            .contains("at least one key")
    );
    let (at, why) = err(&[over("help", "close", &["q"]), over("teams", "kill", &["j"])]);
    assert_eq!(at, 1);
    assert!(why.contains("`j`") && why.contains("down"), "{why}");
    let (_, why) = err(&[over("global", "next-waiting", &["n"])]);
    assert!(why.contains("ctrl"), "{why}");
    // Swapping two keys in one go is fine.
    base.clone()
        .with_overrides(&[
            over("teams", "kill", &["k"]),
            over("teams", "up", &["↑", "x"]),
        ])
        .unwrap();
}

#[test]
fn hints_can_leave_out_what_does_nothing_for_the_selection() {
    let map = Keymap::default();
    let all = map.hints(Context::TeamsDetail);
    assert!(all.contains("h hide/show"), "{all}");
    let without = map.hints_without(Context::TeamsDetail, &[Action::ToggleHidden]);
    assert!(!without.contains("hide/show"), "{without}");
    assert_eq!(
        without,
        all.replace(" · h hide/show", ""),
        "only that hint goes"
    );
}
