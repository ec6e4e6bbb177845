//! Snapshots of a `claude` teammate that waits on its client's own prompt (the
//! bypass-permissions warning), at widths 80 and 40: the teams dialog's row and detail say it
//! waits in its pane and on what, the footer counts it as waiting (not working), the
//! transcript's note says what to do, and a claude teammate's completed task is said in the
//! words teamlead's own teammates use.

use crate::ui_common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::lead::client_prompt::{ClientPrompt, prompt_note};
use teamlead::lead::contract::{LeadEvent, TeammateStatus, TeammateView, TranscriptItem};
use teamlead::protocol::Task;
use teamlead::ui::footer;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn prompt() -> ClientPrompt {
    ClientPrompt {
        title: "WARNING: Claude Code running in Bypass Permissions mode".into(),
        choices: vec!["No, exit".into(), "Yes, I accept".into()],
    }
}

fn team() -> Vec<TeammateView> {
    let p = prompt();
    let mut stuck = teammate(
        "s1",
        "red",
        TeammateStatus::OnClientPrompt {
            title: p.title,
            choices: p.choices,
        },
        "tmux",
    );
    stuck.current_task = None;
    vec![stuck]
}

#[test]
fn the_teams_dialog_says_where_it_waits() {
    for w in WIDTHS {
        let mut state = state_with(vec![LeadEvent::Team(team()), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        let t = screen(&mut state, w, 12);
        if w == 80 {
            let text = rows(&t).join("\n");
            assert!(text.contains("waiting in its pane: WARNING"), "{text}");
            assert!(!text.contains("working"), "{text}");
        }
        insta::assert_snapshot!(format!("teams_list_client_prompt_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 20);
        insta::assert_snapshot!(format!("teams_detail_client_prompt_{w}"), t.backend());
    }
}

#[test]
fn the_footer_counts_it_as_waiting() {
    let state = state_with(vec![LeadEvent::Team(team())]);
    for w in WIDTHS {
        let height = footer::height(&state, w);
        let mut t = Terminal::new(TestBackend::new(w, height)).expect("terminal");
        t.draw(|frame| footer::render(frame.area(), frame.buffer_mut(), &state))
            .expect("draw");
        if w == 80 {
            let row = rows(&t)[0].clone();
            assert!(row.contains("● 1 waiting"), "{row}");
            assert!(!row.contains("working"), "{row}");
        }
        insta::assert_snapshot!(format!("footer_client_prompt_{w}"), t.backend());
    }
}

#[test]
fn the_transcript_says_what_to_do_and_what_was_done() {
    let task = Task::new("1", "build the thing", "");
    let events = vec![
        LeadEvent::Team(team()),
        LeadEvent::Transcript(TranscriptItem::System {
            text: prompt_note("s1", &prompt()),
        }),
        LeadEvent::Transcript(TranscriptItem::Frame {
            from: "s1".into(),
            color: Some("red".into()),
            line: task.done_line(),
        }),
    ];
    for w in WIDTHS {
        let mut state = state_with(events.clone());
        let t = screen(&mut state, w, 20);
        if w == 80 {
            let text = rows(&t).join("\n");
            assert!(
                text.contains("●s1 task #1 \"build the thing\" done."),
                "{text}"
            );
        }
        insta::assert_snapshot!(format!("transcript_client_prompt_{w}"), t.backend());
    }
}
