//! Snapshots of what the UI draws, at widths 80 and 40: the footer (no teammates, a mixed
//! team), the teams dialog (list and detail), the permission dialog (Bash and Edit, 1 and 3
//! queued), the plan dialog and a transcript with teammate turns and frames.

use crate::ui_common;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;

use teamlead::lead::contract::{LeadEvent, TranscriptItem};
use teamlead::protocol::PermissionMode;
use teamlead::ui::footer;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::teams::TeamsDialog;
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn footer_line(state: &teamlead::ui::AppState, width: u16) -> Terminal<TestBackend> {
    let height = footer::height(state, width);
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("terminal");
    terminal
        .draw(|frame| footer::render(frame.area(), frame.buffer_mut(), state))
        .expect("draw");
    terminal
}

/// With no teammates the badge is there all the same and says how to start one; ↓ selects
/// it and Enter opens the teams dialog.
#[test]
fn footer_without_teammates_has_a_badge_that_says_how_to_start_one() {
    for w in WIDTHS {
        let mut state = state_with(vec![]);
        let t = footer_line(&state, w);
        let text = rows(&t).join("\n");
        assert!(text.contains("no teammates"), "{text}");
        insta::assert_snapshot!(format!("footer_empty_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Down));
        assert_eq!(state.focus, teamlead::ui::state::Focus::Badge);
        let t = footer_line(&state, w);
        insta::assert_snapshot!(format!("footer_empty_selected_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        assert!(matches!(state.modals.last(), Some(Modal::Teams(_))));
    }
}

#[test]
fn footer_with_a_mixed_team_shows_counts_approvals_and_tasks() {
    let state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Permissions(vec![
            bash_request(1, "tester", "green", "cargo test -p parser"),
            edit_request(2, "builder", "blue"),
        ]),
        LeadEvent::Plans(vec![plan_request(
            "plan_approval-1@docs@demo",
            "docs",
            "yellow",
        )]),
        LeadEvent::Tasks(tasks()),
        LeadEvent::LeadMode(teamlead::protocol::PermissionMode::Plan),
    ]);
    let t = footer_line(&state, 80);
    let row = &rows(&t)[0];
    assert!(row.contains("● 1 working · 1 waiting · 2 idle"), "{row}");
    assert!(row.contains("3 approvals"), "{row}");
    assert!(row.contains("tasks 1/4"), "{row}");
    for w in WIDTHS {
        insta::assert_snapshot!(
            format!("footer_mixed_team_{w}"),
            footer_line(&state, w).backend()
        );
    }
}

fn teams_state() -> teamlead::ui::AppState {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Tasks(tasks()),
    ]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    state
}

#[test]
fn teams_dialog_list() {
    for w in WIDTHS {
        let mut state = teams_state();
        // Select the second row.
        state.handle_key(key(crossterm::event::KeyCode::Down));
        let t = screen(&mut state, w, 16);
        insta::assert_snapshot!(format!("teams_list_{w}"), t.backend());
    }
}

#[test]
fn teams_dialog_detail() {
    for w in WIDTHS {
        let mut state = teams_state();
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 20);
        let text = rows(&t).join("\n");
        assert!(text.contains("builder@demo"), "{text}");
        insta::assert_snapshot!(format!("teams_detail_{w}"), t.backend());
    }
}

/// Whether `needle` is on a row inside a dialog's box.
fn in_dialog(text: &str, needle: &str) -> bool {
    text.lines()
        .any(|l| l.starts_with('│') && l.contains(needle))
}

/// The teams dialog covers the transcript: what the lead says about the dialog's last action
/// (`h` on a teammate, a jump) shows in the dialog itself, until the next key.
#[test]
fn teams_dialog_shows_the_leads_answer_to_its_last_action() {
    for w in WIDTHS {
        let mut state = teams_state();
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let commands = press(&mut state, &[ch('h')]);
        assert_eq!(
            commands,
            vec![teamlead::lead::contract::LeadCommand::ToggleHidden {
                name: "builder".to_string()
            }]
        );
        state.apply(LeadEvent::Transcript(TranscriptItem::System {
            text: "builder is in-process: it has no pane to hide or show.".to_string(),
        }));
        let t = screen(&mut state, w, 20);
        let text = rows(&t).join("\n");
        assert!(text.contains("builder is in-process"), "{text}");
        insta::assert_snapshot!(format!("teams_detail_notice_{w}"), t.backend());
        assert!(in_dialog(&text, "builder is in-process"), "{text}");
        // The next key clears it from the dialog (the transcript keeps it).
        press(&mut state, &[key(crossterm::event::KeyCode::Down)]);
        let text = rows(&screen(&mut state, w, 20)).join("\n");
        assert!(!in_dialog(&text, "builder is in-process"), "{text}");
    }
}

/// A claude teammate asked for a stricter mode it has not confirmed yet: the list and the
/// detail show the mode in force, with the one requested beside it.
#[test]
fn teams_dialog_shows_a_requested_mode_beside_the_one_in_force() {
    for w in WIDTHS {
        let mut team = mixed_team();
        team[0].mode = PermissionMode::AcceptEdits;
        team[0].mode_requested = Some(PermissionMode::Default);
        let mut state = state_with(vec![LeadEvent::Team(team), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        let t = screen(&mut state, w, 16);
        if w >= 80 {
            let text = rows(&t).join("\n");
            assert!(text.contains("acceptEdits (default requested)"), "{text}");
        }
        insta::assert_snapshot!(format!("teams_list_mode_requested_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 20);
        let text = rows(&t).join("\n");
        assert!(
            text.contains("acceptEdits (default") && text.contains("requested)"),
            "{text}"
        );
        insta::assert_snapshot!(format!("teams_detail_mode_requested_{w}"), t.backend());
    }
}

#[test]
fn permission_dialog_for_bash() {
    for (queued, name) in [(1, "one"), (3, "three")] {
        for w in WIDTHS {
            let mut queue = vec![bash_request(1, "tester", "green", "cargo test -p parser")];
            if queued == 3 {
                queue.push(edit_request(2, "builder", "blue"));
                queue.push(bash_request(3, "docs", "yellow", "mdbook build"));
            }
            let mut state = state_with(vec![
                LeadEvent::Team(mixed_team()),
                LeadEvent::Permissions(queue),
            ]);
            let t = screen(&mut state, w, 20);
            let text = rows(&t).join("\n");
            assert!(text.contains(&format!("1 of {queued}")), "{text}");
            assert!(text.contains("cargo test -p parser"), "{text}");
            insta::assert_snapshot!(format!("permission_bash_{name}_{w}"), t.backend());
        }
    }
}

/// One count of what waits: with a request and a plan queued, the dialog's `1 of N`, the
/// banner and the footer all say 2.
#[test]
fn permission_dialog_counts_a_waiting_plan_like_the_footer() {
    for w in WIDTHS {
        let mut state = state_with(vec![
            LeadEvent::Team(mixed_team()),
            LeadEvent::Permissions(vec![bash_request(1, "tester", "green", "cargo test")]),
            LeadEvent::Plans(vec![plan_request(
                "plan_approval-1@builder@demo",
                "builder",
                "blue",
            )]),
        ]);
        let t = screen(&mut state, w, 20);
        let text = rows(&t).join("\n");
        assert!(text.contains("1 of 2"), "{text}");
        assert!(!text.contains("1 of 1"), "{text}");
        insta::assert_snapshot!(format!("permission_and_plan_{w}"), t.backend());
    }
}

#[test]
fn permission_dialog_for_edit_shows_a_diff() {
    for (queued, name) in [(1, "one"), (3, "three")] {
        for w in WIDTHS {
            let mut queue = vec![edit_request(7, "builder", "blue")];
            if queued == 3 {
                queue.push(bash_request(8, "tester", "green", "cargo test"));
                queue.push(bash_request(9, "docs", "yellow", "mdbook build"));
            }
            let mut state = state_with(vec![
                LeadEvent::Team(mixed_team()),
                LeadEvent::Permissions(queue),
            ]);
            let t = screen(&mut state, w, 24);
            let text = rows(&t).join("\n");
            assert!(text.contains("-     todo!()"), "{text}");
            assert!(text.contains("+     Parser::new(input).parse()"), "{text}");
            insta::assert_snapshot!(format!("permission_edit_{name}_{w}"), t.backend());
        }
    }
}

#[test]
fn permission_badge_is_in_the_workers_color() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Permissions(vec![bash_request(1, "tester", "green", "cargo test")]),
    ]);
    let t = screen(&mut state, 80, 20);
    let buf = t.backend().buffer();
    let (x, y) = (0..buf.area.height)
        .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
        .find(|&(x, y)| buf[(x, y)].symbol() == "@" && buf[(x + 1, y)].symbol() == "t")
        .expect("badge on screen");
    assert_eq!(buf[(x, y)].bg, Color::Green);
}

#[test]
fn plan_dialog() {
    for w in WIDTHS {
        let mut state = state_with(vec![
            LeadEvent::Team(mixed_team()),
            LeadEvent::Plans(vec![plan_request(
                "plan_approval-1@builder@demo",
                "builder",
                "blue",
            )]),
        ]);
        let t = screen(&mut state, w, 22);
        let text = rows(&t).join("\n");
        let title = if w == 80 {
            "wants to proceed with this plan"
        } else {
            "@builder  plan"
        };
        assert!(text.contains(title), "{text}");
        assert!(text.contains("◂ default ▸"), "{text}");
        insta::assert_snapshot!(format!("plan_{w}"), t.backend());
    }
}

fn conversation() -> Vec<LeadEvent> {
    vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Transcript(TranscriptItem::User {
            text: "/spawn builder \"build and test the parser\"".to_string(),
        }),
        LeadEvent::Transcript(TranscriptItem::System {
            text: "builder joined the team (in-process, blue).".to_string(),
        }),
        frame_item("builder", "blue", "claimed task #1 Write the parser"),
        teammate_turn(
            "builder",
            "blue",
            Some("parser skeleton compiles"),
            "The tokenizer and the parser skeleton compile. Next I will write the tests for every grammar rule and run cargo test.",
        ),
        LeadEvent::Transcript(TranscriptItem::ToTeammate {
            to: "tester".to_string(),
            text: "please test the lexer too".to_string(),
            receipt: None,
        }),
        frame_item("tester", "green", "is idle (available)"),
        frame_item("tester", "green", "asked to run Bash: cargo test -p lexer"),
        teammate_turn(
            "docs",
            "yellow",
            None,
            "Outline is done:\n- usage\n- grammar",
        ),
        LeadEvent::Transcript(TranscriptItem::Lead {
            text: "Two teammates are working; docs is idle.".to_string(),
        }),
    ]
}

#[test]
fn transcript_with_teammate_turns_and_frames() {
    for w in WIDTHS {
        let mut state = state_with(conversation());
        let t = screen(&mut state, w, 24);
        insta::assert_snapshot!(format!("transcript_{w}"), t.backend());
    }
    // The sender's name is drawn in its color.
    let mut state = state_with(conversation());
    let t = screen(&mut state, 80, 24);
    let buf = t.backend().buffer();
    let y = rows(&t)
        .iter()
        .position(|r| r.starts_with("●builder parser skeleton"))
        .expect("teammate turn on screen") as u16;
    assert_eq!(buf[(1, y)].fg, Color::Blue);
    let frame_row = rows(&t)
        .iter()
        .position(|r| r.contains("●tester is idle"))
        .expect("frame on screen") as u16;
    assert_eq!(buf[(3, frame_row)].fg, Color::Green);
}

#[test]
fn teammate_inline_view_has_a_colored_header() {
    for w in WIDTHS {
        let mut state = state_with(vec![
            LeadEvent::Team(mixed_team()),
            LeadEvent::TeammateTranscript {
                name: "builder".to_string(),
                item: TranscriptItem::User {
                    text: "use a Pratt parser for expressions".to_string(),
                },
            },
            LeadEvent::TeammateTranscript {
                name: "builder".to_string(),
                item: TranscriptItem::Lead {
                    text: "Switching the expression parser to Pratt parsing.".to_string(),
                },
            },
        ]);
        state.handle_key(key_mod(
            crossterm::event::KeyCode::Down,
            crossterm::event::KeyModifiers::SHIFT,
        ));
        let t = screen(&mut state, w, 12);
        assert_eq!(t.backend().buffer()[(0, 0)].bg, Color::Blue);
        insta::assert_snapshot!(format!("inline_view_{w}"), t.backend());
    }
}

/// Issue 18, part 7: the prune confirmation names whom it shuts down and removes, and lists
/// apart the idle teammate that still holds a task.
#[test]
fn teams_prune_confirmation() {
    for w in WIDTHS {
        let mut state = state_with(vec![LeadEvent::Team(prune_team())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        after_grace(&mut state);
        state.handle_key(ch('p'));
        let t = screen(&mut state, w, 20);
        insta::assert_snapshot!(format!("teams_prune_confirm_{w}"), t.backend());
    }
}

/// Issue 33, item 13: a prune with only busy idle teammates offers no `y`.
#[test]
fn teams_prune_with_nothing_free() {
    let mut team = prune_team();
    team.retain(|t| !["docs", "lint", "old"].contains(&t.name.as_str()));
    let mut state = state_with(vec![LeadEvent::Team(team)]);
    state.modals.push(Modal::Teams(TeamsDialog::new()));
    after_grace(&mut state);
    state.handle_key(ch('p'));
    after_grace(&mut state);
    let t = screen(&mut state, 80, 20);
    insta::assert_snapshot!("teams_prune_nothing_free_80", t.backend());
}

/// A claude teammate whose rate or usage limit holds: the list and the detail say until when
/// (local time; the snapshot shows it as HH:MM).
#[test]
fn teams_dialog_shows_until_when_a_teammate_is_rate_limited() {
    for w in WIDTHS {
        let mut team = mixed_team();
        team[2].rate_limited_until = Some(crate::ui_common::clock() + 25 * 60_000);
        let mut state = state_with(vec![LeadEvent::Team(team), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        state.handle_key(key(crossterm::event::KeyCode::Down));
        state.handle_key(key(crossterm::event::KeyCode::Down));
        let list = screen(&mut state, w, 16);
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let detail = screen(&mut state, w, 20);
        let text = rows(&detail).join("\n");
        assert!(text.contains("rate-limited"), "{text}");
        insta::with_settings!({filters => vec![(r"until \d\d:\d\d", "until HH:MM")]}, {
            insta::assert_snapshot!(format!("teams_list_rate_limited_{w}"), list.backend());
            insta::assert_snapshot!(format!("teams_detail_rate_limited_{w}"), detail.backend());
        });
    }
}

/// Teammates parked at a usage limit: the list says when each resumes and how much waits for
/// it, the detail adds a line with the way to `/limits`; a teammate past the cut-off says it
/// does not resume by itself (local times; the snapshot shows them as HH:MM:SS).
#[test]
fn teams_dialog_shows_parked_teammates() {
    use teamlead::lead::contract::ParkedView;
    for w in WIDTHS {
        let mut team = mixed_team();
        let reset = crate::ui_common::clock() + 3_000;
        team[0].parked = Some(ParkedView {
            reset_ms: reset,
            resume_at_ms: Some(reset + 5_000),
            held: 0,
        });
        team[1].parked = Some(ParkedView {
            reset_ms: reset,
            resume_at_ms: None,
            held: 0,
        });
        team[2].parked = Some(ParkedView {
            reset_ms: reset,
            resume_at_ms: Some(reset + 10_000),
            held: 2,
        });
        let mut state = state_with(vec![LeadEvent::Team(team), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        state.handle_key(key(crossterm::event::KeyCode::Down));
        state.handle_key(key(crossterm::event::KeyCode::Down));
        let list = screen(&mut state, w, 16);
        let text = rows(&list).join("\n");
        assert!(text.contains("parked"), "{text}");
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let detail = screen(&mut state, w, 20);
        let text = rows(&detail).join("\n");
        assert!(text.contains("limit") && text.contains("parked"), "{text}");
        // A time cut by a narrow column is a time too.
        insta::with_settings!({filters => vec![(r"\d\d:\d\d:\d(\d|…)", "HH:MM:SS")]}, {
            insta::assert_snapshot!(format!("teams_list_parked_{w}"), list.backend());
            insta::assert_snapshot!(format!("teams_detail_parked_{w}"), detail.backend());
        });
    }
}

/// The message ledger on screen: a message's receipt after it in the transcript, updated in
/// place as it gets further; the teams list flags a message left unread while busy; the
/// detail lists what was sent with how far each got and since when.
#[test]
fn receipts_of_messages_in_the_transcript_and_the_teams_dialog() {
    use teamlead::lead::contract::MessageReceipt;
    use teamlead::lead::ledger::Receipt;
    let now = crate::ui_common::clock();
    for w in WIDTHS {
        let mut team = mixed_team();
        team[0].unread_since = Some(now - 95_000);
        team[0].messages = vec![
            // A frame the lead answered is followed too, shown by what it is.
            MessageReceipt {
                id: 4,
                preview: "answer: permission granted".to_string(),
                state: Receipt::Read,
                sent_ms: now - 30_000,
                since_ms: now - 29_000,
            },
            MessageReceipt {
                id: 2,
                preview: "also fuzz the tokenizer".to_string(),
                state: Receipt::Queued,
                sent_ms: now - 95_000,
                since_ms: now - 95_000,
            },
            MessageReceipt {
                id: 1,
                preview: "use the new grammar".to_string(),
                state: Receipt::TurnStarted,
                sent_ms: now - 300_000,
                since_ms: now - 240_000,
            },
        ];
        let mut state = state_with(vec![
            LeadEvent::Team(team),
            LeadEvent::Tasks(tasks()),
            LeadEvent::Transcript(TranscriptItem::ToTeammate {
                to: "builder".to_string(),
                text: "use the new grammar".to_string(),
                receipt: Some(1),
            }),
            LeadEvent::Receipt {
                id: 1,
                to: "builder".to_string(),
                state: Receipt::Delivered,
                at_ms: now - 299_000,
            },
            LeadEvent::Transcript(TranscriptItem::ToTeammate {
                to: "tester".to_string(),
                text: "and the lexer".to_string(),
                receipt: Some(3),
            }),
        ]);
        let text = rows(&screen(&mut state, w, 12)).join("\n");
        assert!(text.contains("delivered"), "{text}");
        // Updated in place.
        state.apply(LeadEvent::Receipt {
            id: 1,
            to: "builder".to_string(),
            state: Receipt::Read,
            at_ms: now - 250_000,
        });
        state.apply(LeadEvent::Receipt {
            id: 1,
            to: "builder".to_string(),
            state: Receipt::TurnStarted,
            at_ms: now - 240_000,
        });
        state.apply(LeadEvent::Receipt {
            id: 3,
            to: "tester".to_string(),
            state: Receipt::Queued,
            at_ms: now - 1_000,
        });
        let t = screen(&mut state, w, 12);
        let text = rows(&t).join("\n");
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains("turn started") && !text.contains("delivered"),
            "{text}"
        );
        insta::assert_snapshot!(format!("receipts_transcript_{w}"), t.backend());
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        let t = screen(&mut state, w, 16);
        insta::assert_snapshot!(format!("receipts_teams_list_{w}"), t.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let t = screen(&mut state, w, 24);
        let text = rows(&t).join("\n");
        assert!(text.contains("sent"), "{text}");
        insta::assert_snapshot!(format!("receipts_teams_detail_{w}"), t.backend());
    }
}

/// A frame a claude teammate's client could not write to the lead's inbox (issue 27): the
/// lead says what it was, whose, and how to have it tried again, and the message that asked
/// for it turns from `turn started` to `not done`, in red.
#[test]
fn a_frame_that_never_reached_the_lead() {
    use teamlead::lead::ledger::Receipt;
    let now = crate::ui_common::clock();
    for w in WIDTHS {
        let mut state = state_with(vec![
            LeadEvent::Team(mixed_team()),
            LeadEvent::Transcript(TranscriptItem::ToTeammate {
                to: "builder".to_string(),
                text: "run the migration".to_string(),
                receipt: Some(7),
            }),
            LeadEvent::Receipt {
                id: 7,
                to: "builder".to_string(),
                state: Receipt::TurnStarted,
                at_ms: now - 2_000,
            },
            LeadEvent::Transcript(TranscriptItem::System {
                text: "builder's permission request for Bash (make migrate) never reached the \
                       lead: its client could not write it to the lead's inbox (\"The permission \
                       request could not be delivered to the team lead (mailbox write failed). \
                       Retry the tool call, or ask the lead directly.\"), so the call did not \
                       run. To have builder try again: /steer builder your permission request \
                       for Bash (make migrate) never reached me; make that call again"
                    .to_string(),
            }),
            LeadEvent::Receipt {
                id: 7,
                to: "builder".to_string(),
                state: Receipt::ReplyLost,
                at_ms: now - 1_000,
            },
        ]);
        let t = screen(&mut state, w, if w < 80 { 26 } else { 16 });
        let text = rows(&t).join("\n");
        assert!(
            text.contains("its reply was lost") && !text.contains("turn started"),
            "{text}"
        );
        insta::assert_snapshot!(format!("frame_never_reached_the_lead_{w}"), t.backend());
    }
}

/// A teammate paused by its budget: the list says so, the detail says why and how to raise it.
#[test]
fn teams_dialog_shows_a_teammate_paused_by_its_budget() {
    for w in WIDTHS {
        let mut team = mixed_team();
        team[1].over_budget = Some("over its budget ($5.02 of $5.00)".to_string());
        let mut state = state_with(vec![LeadEvent::Team(team), LeadEvent::Tasks(tasks())]);
        state.modals.push(Modal::Teams(TeamsDialog::new()));
        state.handle_key(key(crossterm::event::KeyCode::Down));
        let list = screen(&mut state, w, 16);
        assert!(rows(&list).join("\n").contains("paused: over budget"));
        insta::assert_snapshot!(format!("teams_list_over_budget_{w}"), list.backend());
        state.handle_key(key(crossterm::event::KeyCode::Enter));
        let detail = screen(&mut state, w, 20);
        insta::assert_snapshot!(format!("teams_detail_over_budget_{w}"), detail.backend());
    }
}

/// A command `teamlead ctl` sent shows as ctl's, not as if typed on this screen.
#[test]
fn a_ctl_command_shows_as_ctls_in_the_transcript() {
    let mut state = state_with(vec![
        LeadEvent::Transcript(TranscriptItem::User {
            text: "/task list".to_string(),
        }),
        LeadEvent::Transcript(TranscriptItem::Ctl {
            text: "/merge alpha --squash".to_string(),
        }),
        LeadEvent::Transcript(TranscriptItem::System {
            text: "Nothing left to merge: teamlead/t/alpha has no commit that main lacks."
                .to_string(),
        }),
    ]);
    let text = crate::ui_common::rows(&crate::ui_common::screen(&mut state, 60, 10)).join("\n");
    assert!(text.contains("ctl> /merge alpha --squash"), "{text}");
    insta::assert_snapshot!("ctl_command_in_transcript", text);
}
