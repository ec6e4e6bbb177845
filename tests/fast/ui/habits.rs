//! Keys as terminal users expect them: j/k and the arrows move in the teams dialog and never
//! kill (kill is `x`, after a confirmation), Ctrl+U clears the composer line, Ctrl+N goes to
//! the next teammate waiting on you; and colours: the 16-colour and no-colour modes.

use crate::ui_common;

use crossterm::event::KeyCode;
use ratatui::style::{Color, Modifier};

use teamlead::lead::contract::{LeadCommand, LeadEvent, TranscriptItem, ViewTarget};
use teamlead::ui::AppState;
use teamlead::ui::colors::ColorMode;
use teamlead::ui::modal::Modal;
use teamlead::ui::state::Focus;
use ui_common::*;

fn open_teams(state: &mut AppState) {
    press_slowly(state, &[key(KeyCode::Down)]);
    assert_eq!(state.focus, Focus::Badge);
    press_slowly(state, &[key(KeyCode::Enter)]);
    assert!(state.modals.iter().any(|m| matches!(m, Modal::Teams(_))));
}

fn selected_row(state: &mut AppState) -> String {
    rows(&screen(state, 80, 24))
        .into_iter()
        .find(|r| r.contains('❯'))
        .unwrap_or_default()
}

#[test]
fn j_and_k_move_in_the_teams_dialog_and_never_kill() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    assert!(selected_row(&mut state).contains("builder"));
    let mut commands = press_slowly(&mut state, &[ch('j'), ch('j')]);
    assert!(selected_row(&mut state).contains("docs"));
    commands.extend(press_slowly(&mut state, &[ch('k')]));
    assert!(selected_row(&mut state).contains("tester"));
    commands.extend(press_slowly(
        &mut state,
        &[
            key(KeyCode::Down),
            key(KeyCode::Up),
            ch('k'),
            ch('k'),
            ch('k'),
        ],
    ));
    assert!(
        selected_row(&mut state).contains("builder"),
        "stops at the top"
    );
    commands.extend(press_slowly(&mut state, &[ch('j'); 6]));
    assert!(
        selected_row(&mut state).contains("scout"),
        "stops at the bottom"
    );
    assert_eq!(commands, vec![], "moving sends nothing");
    assert!(
        !state.modals.iter().any(|m| matches!(m, Modal::Confirm(_))),
        "no kill confirmation"
    );
    // In the detail too, k is no kill.
    press_slowly(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(press_slowly(&mut state, &[ch('k'), ch('j')]), vec![]);
    assert!(!state.modals.iter().any(|m| matches!(m, Modal::Confirm(_))));
    // x kills, after a yes.
    assert_eq!(
        press_slowly(&mut state, &[ch('x'), ch('y')]),
        vec![LeadCommand::Kill {
            name: "scout".to_string()
        }]
    );
}

#[test]
fn ctrl_u_clears_the_line_as_in_shells() {
    let mut state = state_with(vec![]);
    type_text(&mut state, "first line");
    press(
        &mut state,
        &[key_mod(KeyCode::Enter, crossterm::event::KeyModifiers::ALT)],
    );
    type_text(&mut state, "second");
    assert_eq!(press(&mut state, &[ctrl('u')]), vec![]);
    assert_eq!(state.composer.text(), "first line\n");
    press(&mut state, &[key(KeyCode::Backspace)]);
    press(&mut state, &[ctrl('u')]);
    assert!(state.composer.is_empty());
}

fn message_from(name: &str) -> LeadEvent {
    LeadEvent::Transcript(TranscriptItem::Teammate {
        from: name.to_string(),
        color: None,
        summary: None,
        text: "done, what next?".to_string(),
    })
}

#[test]
fn ctrl_n_goes_to_whoever_waits_on_you() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    assert!(state.waiting_teammates().is_empty());
    press(&mut state, &[ctrl('n')]);
    assert!(
        rows(&screen(&mut state, 80, 24))
            .join("\n")
            .contains("Nobody is waiting on you")
    );

    // docs (a pane) asks for a permission; builder (in-process) and scout send messages.
    state.apply(message_from("builder"));
    state.apply(message_from("scout"));
    state.apply(LeadEvent::Permissions(vec![bash_request(
        1,
        "docs",
        "yellow",
        "cargo test",
    )]));
    assert_eq!(state.waiting_teammates(), vec!["docs", "builder", "scout"]);
    // Escape the request's dialog: it stays queued.
    press_slowly(&mut state, &[key(KeyCode::Esc)]);

    // docs first: a pane, so the lead is asked to jump to it.
    assert_eq!(
        press(&mut state, &[ctrl('n')]),
        vec![LeadCommand::Jump {
            name: "docs".to_string()
        }]
    );
    // builder next: its inline view opens, and its message counts as answered.
    assert_eq!(press(&mut state, &[ctrl('n')]), vec![]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    assert_eq!(state.waiting_teammates(), vec!["docs", "scout"]);
    // Answering scout with @scout takes it off the list.
    state.view = ViewTarget::Lead;
    type_text(&mut state, "@scout carry on");
    press(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(state.waiting_teammates(), vec!["docs"]);
    // docs still has its request queued: Ctrl+N keeps going back to it.
    assert_eq!(
        press(&mut state, &[ctrl('n')]),
        vec![LeadCommand::Jump {
            name: "docs".to_string()
        }]
    );
}

#[test]
fn no_colour_leaves_no_colour_in_any_dialog() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Tasks(tasks()),
        teammate_turn("builder", "blue", None, "the parser compiles"),
    ]);
    state.colors = ColorMode::None;
    let colourless = |state: &mut AppState, what: &str| {
        let t = screen(state, 80, 24);
        let buf = t.backend().buffer();
        for cell in &buf.content {
            assert_eq!(cell.fg, Color::Reset, "{what}: {cell:?}");
            assert_eq!(cell.bg, Color::Reset, "{what}: {cell:?}");
        }
        buf.content
            .iter()
            .any(|c| c.modifier.contains(Modifier::REVERSED))
    };
    colourless(&mut state, "main screen");
    open_teams(&mut state);
    assert!(
        colourless(&mut state, "teams dialog"),
        "the selection shows"
    );
    press_slowly(&mut state, &[key(KeyCode::Enter)]);
    colourless(&mut state, "teammate detail");
    press_slowly(&mut state, &[ch('x')]);
    colourless(&mut state, "confirmation");
    press_slowly(&mut state, &[ch('n'), key(KeyCode::Esc)]);
    press_slowly(&mut state, &[ch('?')]);
    colourless(&mut state, "help");
    press_slowly(&mut state, &[key(KeyCode::Esc), ctrl('t')]);
    colourless(&mut state, "task list");
    state.apply(LeadEvent::Permissions(vec![bash_request(
        1,
        "tester",
        "green",
        "cargo test",
    )]));
    colourless(&mut state, "permission dialog");
    state.apply(LeadEvent::Plans(vec![plan_request(
        "plan-1", "docs", "yellow",
    )]));
    colourless(&mut state, "plan dialog");
}

#[test]
fn sixteen_colours_replace_the_palette_colours() {
    let mut team = mixed_team();
    team[0].color = Some("orange".to_string());
    team[1].color = Some("pink".to_string());
    let mut state = state_with(vec![LeadEvent::Team(team)]);
    state.colors = ColorMode::Basic;
    open_teams(&mut state);
    let t = screen(&mut state, 80, 24);
    for cell in &t.backend().buffer().content {
        for c in [cell.fg, cell.bg] {
            assert!(
                !matches!(c, Color::Indexed(_) | Color::Rgb(..)),
                "only the 16 named colours: {cell:?}"
            );
        }
    }
}
