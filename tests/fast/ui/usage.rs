//! What the UI shows of the models' usage and of the lead model's turn, at widths 80 and 40:
//! tokens per teammate in the teams list, the usage line of the detail, the session's sum in
//! the footer (teammates plus the lead model), the spinner while the lead model thinks; and
//! the bounds on how much transcript the UI keeps.

use crate::ui_common;

use crossterm::event::KeyCode;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use teamlead::lead::contract::{LeadCommand, LeadEvent, TranscriptItem, UsageView, ViewTarget};
use teamlead::ui::footer;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use teamlead::ui::state::{MAIN_TRANSCRIPT_ENTRIES, TEAMMATE_TRANSCRIPT_ENTRIES};
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn usage(input: u64, output: u64, tool_uses: u64, turns: u64) -> UsageView {
    UsageView {
        input_tokens: input,
        output_tokens: output,
        tool_uses,
        turns,
        ..UsageView::default()
    }
}

/// The mixed team, with builder (in-process, llm) at 12.3k tokens and tester at 950; docs and
/// scout used nothing (shell or pane teammates).
fn team_with_usage() -> Vec<teamlead::lead::contract::TeammateView> {
    let mut team = mixed_team();
    team[0].usage = Some(usage(12_000, 310, 14, 3));
    team[1].usage = Some(usage(900, 50, 1, 1));
    team
}

fn footer_line(state: &teamlead::ui::AppState, width: u16) -> Terminal<TestBackend> {
    let height = footer::height(state, width);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| footer::render(frame.area(), frame.buffer_mut(), state))
        .expect("draw");
    terminal
}

#[test]
fn footer_sums_teammates_and_the_lead_model_and_spins_while_it_thinks() {
    let state = state_with(vec![
        LeadEvent::Team(team_with_usage()),
        LeadEvent::Tasks(tasks()),
        LeadEvent::LeadUsage(usage(4_000, 200, 2, 1)),
        LeadEvent::Busy(true),
    ]);
    // 12,310 + 950 + 4,200 tokens.
    let row = rows(&footer_line(&state, 80)).join("\n");
    assert!(row.contains("17.5k tok"), "{row}");
    // A crowded footer keeps the spinner and drops the words.
    assert!(row.starts_with("✻ "), "{row}");
    let alone = state_with(vec![LeadEvent::Busy(true)]);
    let row = rows(&footer_line(&alone, 80)).join("\n");
    assert!(row.contains("✻ thinking… (esc to interrupt)"), "{row}");
    for w in WIDTHS {
        insta::assert_snapshot!(
            format!("footer_usage_busy_{w}"),
            footer_line(&state, w).backend()
        );
    }
}

#[test]
fn footer_of_a_small_team_has_room_for_the_tokens_at_both_widths() {
    let mut builder = team_with_usage().remove(0);
    builder.current_task = None;
    let state = state_with(vec![
        LeadEvent::Team(vec![builder]),
        LeadEvent::LeadUsage(usage(4_000, 200, 2, 1)),
    ]);
    for w in WIDTHS {
        let t = footer_line(&state, w);
        let text = rows(&t).join("\n");
        assert!(text.contains("● 1 working   16.5k tok"), "{text}");
        insta::assert_snapshot!(format!("footer_usage_small_team_{w}"), t.backend());
    }
}

#[test]
fn footer_shows_no_tokens_while_nothing_was_used() {
    let state = state_with(vec![LeadEvent::Team(mixed_team()), LeadEvent::Busy(false)]);
    let text = rows(&footer_line(&state, 80)).join("\n");
    assert!(!text.contains("tok"), "{text}");
    assert!(!text.contains("thinking"), "{text}");
}

#[test]
fn the_spinner_moves_with_the_clock() {
    let mut state = state_with(vec![LeadEvent::Busy(true)]);
    let first = rows(&footer_line(&state, 80))[0].clone();
    state.dirty = false;
    state.tick(NOW + 1_000);
    assert!(state.dirty, "a busy lead redraws every tick");
    let second = rows(&footer_line(&state, 80))[0].clone();
    assert_ne!(first, second);
    assert_eq!(first.replace('✻', "✶"), second);
}

fn teams_state() -> teamlead::ui::AppState {
    let mut state = state_with(vec![
        LeadEvent::Team(team_with_usage()),
        LeadEvent::Tasks(tasks()),
    ]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    state
}

#[test]
fn teams_list_shows_tokens_per_teammate() {
    for w in WIDTHS {
        let mut state = teams_state();
        let t = screen(&mut state, w, 16);
        let text = rows(&t).join("\n");
        if w == 80 {
            let builder = rows(&t)
                .into_iter()
                .find(|r| r.contains("builder"))
                .expect("builder's row");
            assert!(builder.contains("12.3k tok"), "{builder}");
            assert!(text.contains("950 tok"), "{text}");
        }
        insta::assert_snapshot!(format!("teams_list_usage_{w}"), t.backend());
    }
}

#[test]
fn teams_detail_has_a_usage_line_only_when_there_is_usage() {
    for w in WIDTHS {
        let mut state = teams_state();
        state.handle_key(key(KeyCode::Enter));
        let t = screen(&mut state, w, 22);
        let text = rows(&t).join("\n");
        assert!(text.contains("usage"), "{text}");
        if w == 80 {
            assert!(
                text.contains("12.3k tokens (12.0k in · 310 out) · 14 tool uses · 3 turns"),
                "{text}"
            );
        }
        insta::assert_snapshot!(format!("teams_detail_usage_{w}"), t.backend());
    }
    // docs (a pane teammate) used nothing: no usage line.
    let mut state = teams_state();
    for _ in 0..2 {
        state.handle_key(key(KeyCode::Down));
    }
    state.handle_key(key(KeyCode::Enter));
    let text = rows(&screen(&mut state, 80, 22)).join("\n");
    assert!(text.contains("docs@demo"), "{text}");
    assert!(!text.contains("usage"), "{text}");
}

#[test]
fn esc_in_the_lead_view_interrupts_the_lead_model_only_while_it_thinks() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    assert!(press(&mut state, &[key(KeyCode::Esc)]).is_empty());
    state.apply(LeadEvent::Busy(true));
    assert_eq!(
        press(&mut state, &[key(KeyCode::Esc)]),
        vec![LeadCommand::InterruptLead]
    );
    state.apply(LeadEvent::Busy(false));
    assert!(!state.busy);
}

#[test]
fn transcripts_keep_only_their_newest_entries() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    for i in 0..MAIN_TRANSCRIPT_ENTRIES + 5 {
        state.apply(LeadEvent::Transcript(TranscriptItem::System {
            text: format!("note {i}"),
        }));
    }
    assert_eq!(state.transcript.len(), MAIN_TRANSCRIPT_ENTRIES);
    for i in 0..TEAMMATE_TRANSCRIPT_ENTRIES + 5 {
        state.apply(LeadEvent::TeammateTranscript {
            name: "builder".to_string(),
            item: TranscriptItem::System {
                text: format!("line {i}"),
            },
        });
    }
    assert_eq!(
        state.inline.get("builder").map(|t| t.len()),
        Some(TEAMMATE_TRANSCRIPT_ENTRIES)
    );
    // The newest line is what the view shows.
    state.view = ViewTarget::Teammate("builder".to_string());
    let text = rows(&screen(&mut state, 80, 12)).join("\n");
    assert!(
        text.contains(&format!("line {}", TEAMMATE_TRANSCRIPT_ENTRIES + 4)),
        "{text}"
    );
}

/// builder priced ($1.23, with cache reads and 5-minute and 1-hour writes), tester's model
/// (fable-5-2) without a price.
fn priced_teams_state() -> teamlead::ui::AppState {
    let mut team = team_with_usage();
    if let Some(u) = team[0].usage.as_mut() {
        u.cost_micros = Some(1_234_567);
        u.cache_read_tokens = 8_000;
        u.cache_write_5m_tokens = 1_500;
        u.cache_write_1h_tokens = 2_000;
    }
    if let Some(u) = team[1].usage.as_mut() {
        u.unpriced_models = vec!["fable-5-2".to_string()];
    }
    let mut state = state_with(vec![
        LeadEvent::Team(team),
        LeadEvent::Tasks(tasks()),
        LeadEvent::LeadUsage(UsageView {
            cost_micros: Some(20_000),
            ..usage(4_000, 200, 2, 1)
        }),
    ]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    state
}

#[test]
fn cost_shows_in_the_teams_list_the_detail_and_the_footer() {
    for w in WIDTHS {
        let mut state = priced_teams_state();
        let t = screen(&mut state, w, 16);
        if w == 80 {
            let row = |name: &str| {
                rows(&t)
                    .into_iter()
                    .find(|r| r.contains(name))
                    .unwrap_or_else(|| panic!("{name}'s row"))
            };
            assert!(
                row("builder").contains("12.3k tok · $1.23"),
                "{}",
                row("builder")
            );
            // No price, no cost: said so.
            assert!(
                row("tester").contains("950 tok · not priced"),
                "{}",
                row("tester")
            );
            assert!(!row("tester").contains('$'), "{}", row("tester"));
        }
        insta::assert_snapshot!(format!("teams_list_cost_{w}"), t.backend());

        state.handle_key(key(KeyCode::Enter));
        let t = screen(&mut state, w, 22);
        let text = rows(&t).join("\n");
        if w == 80 {
            assert!(text.contains("14 tool uses · 3 turns · $1.23"), "{text}");
            assert!(
                text.contains("8.0k read · 1.5k written 5 min · 2.0k written 1 h"),
                "{text}"
            );
        }
        insta::assert_snapshot!(format!("teams_detail_cost_{w}"), t.backend());
    }
    // The footer: every priced teammate's and the lead model's cost, $1.23 + $0.02, and what
    // it leaves out.
    let mut state = priced_teams_state();
    state.modals.clear();
    let text = rows(&footer_line(&state, 80)).join("\n");
    assert!(text.contains("17.5k tok · ≥$1.25"), "{text}");
    // The tester's detail says its model is not priced.
    let mut state = priced_teams_state();
    state.handle_key(key(KeyCode::Down));
    state.handle_key(key(KeyCode::Enter));
    let text = rows(&screen(&mut state, 100, 24)).join("\n");
    assert!(text.contains("model fable-5-2 not priced"), "{text}");
}
