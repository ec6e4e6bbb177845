//! Snapshots of a teammate on another host, at widths 80 and 40: the teams dialog's row and
//! detail show it as `name · host`, and while its host's link is down it is `unreachable`
//! (not gone, not idle); the footer counts it as unreachable.

use crate::ui_common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::lead::contract::{LeadEvent, TeammateStatus, TeammateView};
use teamlead::ui::footer;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn team() -> Vec<TeammateView> {
    let mut remote = teammate(
        "r1",
        "green",
        TeammateStatus::Unreachable {
            host: "gpu-box".into(),
            since_ms: NOW - 12_000,
        },
        "tmux",
    );
    remote.host = Some("gpu-box".into());
    remote.current_task = None;
    vec![remote]
}

#[test]
fn the_teams_dialog_shows_the_host_and_that_it_is_unreachable() {
    for w in WIDTHS {
        let mut state = state_with(vec![LeadEvent::Team(team()), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        let t = screen(&mut state, w, 12);
        if w == 80 {
            let text = rows(&t).join("\n");
            assert!(text.contains("r1 · gpu-box"), "{text}");
            assert!(text.contains("unreachable (12s)"), "{text}");
        }
        insta::assert_snapshot!(format!("teams_list_remote_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 20);
        insta::assert_snapshot!(format!("teams_detail_remote_{w}"), t.backend());
    }
}

#[test]
fn the_footer_counts_it_as_unreachable() {
    let state = state_with(vec![LeadEvent::Team(team())]);
    let w = 80;
    let height = footer::height(&state, w);
    let mut t = Terminal::new(TestBackend::new(w, height)).expect("terminal");
    t.draw(|frame| footer::render(frame.area(), frame.buffer_mut(), &state))
        .expect("draw");
    let text = rows(&t).join("\n");
    assert!(text.contains("1 unreachable"), "{text}");
}
