//! Snapshots of teammates that stopped without shutting down (a missing binary, a crash, a
//! closed pane), at widths 80 and 40: the teams dialog's list and detail say what happened,
//! and the footer badge counts them as stopped.

use crate::ui_common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::lead::contract::{LeadEvent, TeammateStatus, TeammateView};
use teamlead::ui::footer;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn stopped(how: &str) -> TeammateStatus {
    TeammateStatus::Stopped {
        how: how.to_string(),
    }
}

fn team() -> Vec<TeammateView> {
    let mut ghost = teammate(
        "ghost",
        "red",
        stopped("exited (127: claude not found)"),
        "tmux",
    );
    ghost.current_task = None;
    let worker = teammate(
        "worker",
        "blue",
        stopped("crashed (killed by signal 9)"),
        "tmux",
    );
    let closer = teammate("closer", "green", stopped("closed"), "tmux");
    let alive = teammate("tester", "yellow", TeammateStatus::Working, "in-process");
    vec![ghost, worker, closer, alive]
}

fn state() -> teamlead::ui::AppState {
    let mut state = state_with(vec![LeadEvent::Team(team()), LeadEvent::Tasks(tasks())]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    state
}

#[test]
fn the_teams_dialog_says_how_each_teammate_stopped() {
    for w in WIDTHS {
        let mut state = state();
        let t = screen(&mut state, w, 16);
        if w == 80 {
            let text = rows(&t).join("\n");
            assert!(text.contains("exited (127: claude not found)"), "{text}");
            assert!(text.contains("crashed (killed by signal 9)"), "{text}");
            assert!(text.contains("closed"), "{text}");
        }
        insta::assert_snapshot!(format!("teams_list_stopped_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 20);
        insta::assert_snapshot!(format!("teams_detail_stopped_{w}"), t.backend());
    }
}

#[test]
fn the_footer_counts_stopped_teammates() {
    let state = state_with(vec![LeadEvent::Team(team())]);
    for w in WIDTHS {
        let height = footer::height(&state, w);
        let mut t = Terminal::new(TestBackend::new(w, height)).expect("terminal");
        t.draw(|frame| footer::render(frame.area(), frame.buffer_mut(), &state))
            .expect("draw");
        if w == 80 {
            let row = rows(&t)[0].clone();
            assert!(row.contains("● 1 working · 3 stopped"), "{row}");
        }
        insta::assert_snapshot!(format!("footer_stopped_{w}"), t.backend());
    }
}
