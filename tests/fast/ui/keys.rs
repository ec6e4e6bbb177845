//! Key-driven tests of the UI state: the commands each key sequence sends, and what the
//! dialogs do with the queues (FIFO, one decision per key, Esc keeps everything queued).

use crate::ui_common;

use crossterm::event::{KeyCode, KeyModifiers};

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PermissionDecision, PlanDecision, TranscriptItem, ViewTarget,
};
use teamlead::protocol::PermissionMode;
use teamlead::protocol::PermissionUpdate;
use teamlead::protocol::permission::PermissionRule;
use teamlead::ui::AppState;
use teamlead::ui::modal::Modal;
use teamlead::ui::state::Focus;
use ui_common::*;

fn with_requests(keys: &[u64]) -> AppState {
    let queue = keys
        .iter()
        .map(|k| bash_request(*k, "tester", "green", &format!("cargo test #{k}")))
        .collect();
    state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Permissions(queue),
    ])
}

fn answered_keys(commands: &[LeadCommand]) -> Vec<u64> {
    commands
        .iter()
        .filter_map(|c| match c {
            LeadCommand::AnswerPermission { key, .. } => Some(*key),
            _ => None,
        })
        .collect()
}

fn permission_open(state: &AppState) -> bool {
    state
        .modals
        .iter()
        .any(|m| matches!(m, Modal::Permission(_)))
}

fn screen_text(state: &mut AppState) -> String {
    rows(&screen(state, 80, 24)).join("\n")
}

#[test]
fn permission_queue_is_answered_in_arrival_order() {
    let mut state = with_requests(&[11, 5, 42]);
    assert!(permission_open(&state), "the dialog opens on arrival");
    let commands = press_slowly(&mut state, &[ch('y'), ch('y'), ch('y')]);
    assert_eq!(answered_keys(&commands), vec![11, 5, 42]);
    assert!(!permission_open(&state), "closed when the queue is empty");
}

#[test]
fn each_key_makes_exactly_one_decision() {
    let mut state = with_requests(&[1]);
    let commands = press_slowly(&mut state, &[ch('y'), ch('y')]);
    assert_eq!(
        commands,
        vec![LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::AllowOnce
        }]
    );
    // A snapshot sent before the controller saw the answer still holds request 1: it must
    // not come back, and a key press must not answer it again.
    state.apply(LeadEvent::Permissions(vec![bash_request(
        1,
        "tester",
        "green",
        "cargo test",
    )]));
    assert!(!permission_open(&state));
    assert_eq!(press_slowly(&mut state, &[ctrl('p'), ch('y')]), vec![]);
    assert!(
        screen_text(&mut state).contains("> "),
        "back to the composer"
    );
}

#[test]
fn esc_keeps_every_request_queued() {
    let mut state = with_requests(&[1, 2, 3]);
    assert!(screen_text(&mut state).contains("1 of 3"));
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Esc)]), vec![]);
    assert!(!permission_open(&state));
    assert_eq!(state.permissions.len(), 3);
    assert!(screen_text(&mut state).contains("3 approvals (ctrl+p)"));
    // Reopen with Ctrl+P: still the same head, 1 of 3.
    assert_eq!(press_slowly(&mut state, &[ctrl('p')]), vec![]);
    let text = screen_text(&mut state);
    assert!(text.contains("1 of 3"), "{text}");
    assert!(text.contains("cargo test #1"), "{text}");
    // Closed again, a NEW request reopens the dialog by itself, once typing has paused.
    press_slowly(&mut state, &[key(KeyCode::Esc)]);
    let mut queue: Vec<_> = [1, 2, 3, 4]
        .iter()
        .map(|k| bash_request(*k, "tester", "green", &format!("cargo test #{k}")))
        .collect();
    state.apply(LeadEvent::Permissions(queue.clone()));
    assert!(!permission_open(&state), "a key was pressed just now");
    assert!(screen_text(&mut state).contains("4 approvals waiting"));
    wait_ms(&mut state, 1_000);
    assert!(permission_open(&state));
    assert!(screen_text(&mut state).contains("1 of 4"));
    // The same requests again are not news: closed stays closed.
    press_slowly(&mut state, &[key(KeyCode::Esc)]);
    queue.truncate(4);
    state.apply(LeadEvent::Permissions(queue));
    assert!(!permission_open(&state));
}

#[test]
fn always_uses_the_suggestion_or_a_session_rule_for_the_tool() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Permissions(vec![
            bash_request(1, "tester", "green", "cargo test"),
            edit_request(2, "builder", "blue"),
        ]),
    ]);
    // "Always" is two steps: `a` shows the exact rule, a second `a` confirms it.
    assert_eq!(press_slowly(&mut state, &[ch('a')]), vec![]);
    let text = screen_text(&mut state);
    assert!(
        text.contains("allow Bash(cargo test:*) for @tester this session"),
        "{text}"
    );
    let mut commands = press_slowly(&mut state, &[ch('a')]);
    commands.extend(press_slowly(&mut state, &[ch('a'), ch('a')]));
    let bash_rule = PermissionUpdate::allow_session(PermissionRule {
        tool_name: "Bash".to_string(),
        rule_content: Some("cargo test:*".to_string()),
    });
    let edit_rule = PermissionUpdate::allow_session(PermissionRule {
        tool_name: "Edit".to_string(),
        rule_content: None,
    });
    assert_eq!(
        commands,
        vec![
            LeadCommand::AnswerPermission {
                key: 1,
                decision: PermissionDecision::AllowAlways(vec![bash_rule]),
            },
            LeadCommand::AnswerPermission {
                key: 2,
                decision: PermissionDecision::AllowAlways(vec![edit_rule]),
            },
        ]
    );
}

#[test]
fn no_asks_why_and_sends_the_feedback() {
    let mut state = with_requests(&[1, 2]);
    assert_eq!(press_slowly(&mut state, &[ch('n')]), vec![]);
    assert!(screen_text(&mut state).contains("tell @tester why"));
    // In the feedback line, y and n are text, not decisions.
    type_text(&mut state, "try nextest, y not");
    let commands = press_slowly(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(
        commands,
        vec![LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::Deny {
                feedback: Some("try nextest, y not".to_string())
            },
        }]
    );
    // Empty feedback: a plain no. Esc in the feedback line goes back to the options.
    assert_eq!(
        press_slowly(&mut state, &[ch('n'), key(KeyCode::Esc)]),
        vec![]
    );
    assert!(permission_open(&state));
    let commands = press_slowly(&mut state, &[ch('n'), key(KeyCode::Enter)]);
    assert_eq!(
        commands,
        vec![LeadCommand::AnswerPermission {
            key: 2,
            decision: PermissionDecision::Deny { feedback: None },
        }]
    );
}

#[test]
fn arrows_and_enter_choose_an_option() {
    let mut state = with_requests(&[1, 2]);
    // Enter on the default selection chooses nothing.
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Enter)]), vec![]);
    assert_eq!(state.permissions.len(), 2);
    // → selects Yes, → again the "always" option; Enter on it asks to confirm the rule.
    let commands = press_slowly(
        &mut state,
        &[
            key(KeyCode::Right),
            key(KeyCode::Right),
            key(KeyCode::Enter),
        ],
    );
    assert_eq!(commands, vec![]);
    assert!(screen_text(&mut state).contains("Always? allow Bash(cargo test:*)"));
    let commands = press_slowly(&mut state, &[key(KeyCode::Enter)]);
    assert!(matches!(
        commands.as_slice(),
        [LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::AllowAlways(_)
        }]
    ));
    // The selection resets for the next request; ← from nothing selects No.
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Left), key(KeyCode::Enter)]),
        vec![]
    );
    assert!(screen_text(&mut state).contains("tell @tester why"));
}

#[test]
fn o_opens_the_requesters_view_and_keeps_the_queue() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Permissions(vec![
            edit_request(1, "builder", "blue"),
            bash_request(2, "tester", "green", "cargo test"),
        ]),
    ]);
    // builder runs in-process: its inline view opens, nothing is sent, the dialog stays.
    assert_eq!(press_slowly(&mut state, &[ch('o')]), vec![]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    assert!(permission_open(&state));
    assert_eq!(state.permissions.len(), 2);
    // tester is in a tmux pane: the controller is asked to jump there.
    press_slowly(&mut state, &[ch('y')]);
    assert_eq!(
        press_slowly(&mut state, &[ch('o')]),
        vec![LeadCommand::Jump {
            name: "tester".to_string()
        }]
    );
}

#[test]
fn plan_approval_with_a_mode_or_rejection_with_feedback() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Plans(vec![
            plan_request("p1", "builder", "blue"),
            plan_request("p2", "docs", "yellow"),
            plan_request("p3", "tester", "green"),
        ]),
    ]);
    assert!(state.modals.iter().any(|m| matches!(m, Modal::Plan(_))));
    let commands = press_slowly(&mut state, &[ch('y'), key(KeyCode::Right), ch('y')]);
    assert_eq!(
        commands,
        vec![
            LeadCommand::AnswerPlan {
                request_id: "p1".to_string(),
                decision: PlanDecision::Approve {
                    mode: PermissionMode::Default
                },
            },
            LeadCommand::AnswerPlan {
                request_id: "p2".to_string(),
                decision: PlanDecision::Approve {
                    mode: PermissionMode::AcceptEdits
                },
            },
        ]
    );
    // Rejecting needs a reason: Enter on an empty line sends nothing.
    assert_eq!(
        press_slowly(&mut state, &[ch('n'), key(KeyCode::Enter)]),
        vec![]
    );
    type_text(&mut state, "split step 2");
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::AnswerPlan {
            request_id: "p3".to_string(),
            decision: PlanDecision::Reject {
                feedback: "split step 2".to_string()
            },
        }]
    );
    assert!(state.modals.is_empty());
}

#[test]
fn plan_mode_choice_starts_at_the_leads_mode_for_teammates() {
    let mut state = state_with(vec![
        LeadEvent::LeadMode(PermissionMode::BypassPermissions),
        LeadEvent::Plans(vec![plan_request("p1", "builder", "blue")]),
    ]);
    // Enter does not approve a plan; y does.
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Enter)]), vec![]);
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::AnswerPlan {
            request_id: "p1".to_string(),
            decision: PlanDecision::Approve {
                mode: PermissionMode::BypassPermissions
            },
        }]
    );
}

fn open_teams(state: &mut AppState) {
    assert_eq!(press_slowly(state, &[key(KeyCode::Down)]), vec![]);
    assert_eq!(state.focus, Focus::Badge);
    assert_eq!(press_slowly(state, &[key(KeyCode::Enter)]), vec![]);
    assert!(state.modals.iter().any(|m| matches!(m, Modal::Teams(_))));
}

#[test]
fn badge_is_selected_from_an_empty_composer_and_opens_the_teams_dialog() {
    let mut state = state_with(vec![]);
    // No teammates: the badge says so all the same, ↓ selects it, ↑ goes back.
    press_slowly(&mut state, &[key(KeyCode::Down)]);
    assert_eq!(state.focus, Focus::Badge);
    press_slowly(&mut state, &[key(KeyCode::Up)]);
    assert_eq!(state.focus, Focus::Composer);
    state.apply(LeadEvent::Team(mixed_team()));
    // Text in the composer: ↓ is the composer's.
    type_text(&mut state, "hi");
    press_slowly(&mut state, &[key(KeyCode::Down)]);
    assert_eq!(state.focus, Focus::Composer);
    state.composer.clear();
    press_slowly(&mut state, &[key(KeyCode::Down)]);
    assert_eq!(state.focus, Focus::Badge);
    assert!(screen_text(&mut state).contains("enter open the teams dialog"));
    press_slowly(&mut state, &[key(KeyCode::Up)]);
    assert_eq!(state.focus, Focus::Composer);
    open_teams(&mut state);
    assert!(screen_text(&mut state).contains("Team demo · 4 teammates"));
}

#[test]
fn shift_tab_in_the_teams_list_cycles_all_modes_once() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    assert_eq!(
        press_slowly(&mut state, &[shift_tab()]),
        vec![LeadCommand::CycleAllModes]
    );
}

#[test]
fn kill_asks_for_confirmation_first() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    press_slowly(&mut state, &[key(KeyCode::Down)]);
    assert_eq!(
        press_slowly(&mut state, &[ch('x')]),
        vec![],
        "no kill without a yes"
    );
    let text = screen_text(&mut state);
    assert!(text.contains("Kill @tester?"), "{text}");
    assert_eq!(press_slowly(&mut state, &[ch('n')]), vec![]);
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Esc)]),
        vec![],
        "esc closes the teams dialog"
    );
    assert!(state.modals.is_empty());
    assert_eq!(
        state.focus,
        Focus::Composer,
        "the composer has the keyboard again"
    );
    open_teams(&mut state);
    press_slowly(&mut state, &[key(KeyCode::Down)]);
    assert_eq!(
        press_slowly(&mut state, &[ch('x'), ch('y')]),
        vec![LeadCommand::Kill {
            name: "tester".to_string()
        }]
    );
    assert!(
        state.modals.iter().any(|m| matches!(m, Modal::Teams(_))),
        "the teams dialog stays open under the confirmation"
    );
}

#[test]
fn teams_list_actions_target_the_selected_teammate() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    let commands = press(
        &mut state,
        &[
            ch('j'),
            ch('j'),
            ch('s'),
            ch('h'),
            key(KeyCode::Up),
            ch('s'),
        ],
    );
    assert_eq!(
        commands,
        vec![
            LeadCommand::Shutdown {
                name: "docs".to_string()
            },
            LeadCommand::ToggleHidden {
                name: "docs".to_string()
            },
            LeadCommand::Shutdown {
                name: "tester".to_string()
            },
        ]
    );
}

#[test]
fn teams_selection_follows_the_teammate_across_snapshots() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    press_slowly(&mut state, &[key(KeyCode::Down), key(KeyCode::Down)]);
    // builder leaves: docs is still the selected teammate.
    let team: Vec<_> = mixed_team().into_iter().skip(1).collect();
    state.apply(LeadEvent::Team(team));
    assert!(screen_text(&mut state).contains("❯ ● docs"));
    assert_eq!(
        press_slowly(&mut state, &[ch('s')]),
        vec![LeadCommand::Shutdown {
            name: "docs".to_string()
        }]
    );
}

#[test]
fn detail_cycles_its_mode_and_jumps() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    press_slowly(&mut state, &[key(KeyCode::Down), key(KeyCode::Enter)]);
    assert!(screen_text(&mut state).contains("tester@demo"));
    let commands = press_slowly(&mut state, &[shift_tab(), key(KeyCode::Enter), ch('e')]);
    assert_eq!(
        commands,
        vec![
            LeadCommand::CycleTeammateMode {
                name: "tester".to_string()
            },
            LeadCommand::Jump {
                name: "tester".to_string()
            },
        ]
    );
    // ← back to the list, up to builder (in-process): v opens its inline view and closes.
    press(
        &mut state,
        &[key(KeyCode::Left), key(KeyCode::Up), key(KeyCode::Enter)],
    );
    assert_eq!(press_slowly(&mut state, &[ch('v')]), vec![]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    assert!(state.modals.is_empty());
}

#[test]
fn composer_submits_to_the_current_view() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    type_text(&mut state, "hello team");
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "hello team".to_string()
        }]
    );
    assert!(state.composer.is_empty());
    // Empty text is not sent.
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Enter)]), vec![]);
    // Alt+Enter and Shift+Enter break the line.
    type_text(&mut state, "one");
    press_slowly(&mut state, &[key_mod(KeyCode::Enter, KeyModifiers::ALT)]);
    type_text(&mut state, "two");
    press_slowly(&mut state, &[key_mod(KeyCode::Enter, KeyModifiers::SHIFT)]);
    type_text(&mut state, "three");
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "one\ntwo\nthree".to_string()
        }]
    );
    // Shift+Tab cycles the lead's mode.
    assert_eq!(
        press_slowly(&mut state, &[shift_tab()]),
        vec![LeadCommand::CycleLeadMode]
    );
}

/// Ctrl+S sends `@name text` as `/steer` (the teammate's turn stops and the message goes in
/// at once); in a teammate's view, the text is for it. Text for nobody stays, with a note.
#[test]
fn ctrl_s_steers_the_named_teammate() {
    let ctrl_s = key_mod(KeyCode::Char('s'), KeyModifiers::CONTROL);
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    type_text(&mut state, "@builder stop and fix the failing test");
    assert_eq!(
        press_slowly(&mut state, &[ctrl_s]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/steer @builder stop and fix the failing test".to_string()
        }]
    );
    assert!(state.composer.is_empty());
    // No teammate named: nothing is sent, the text stays, and a note says how.
    type_text(&mut state, "everyone stop");
    assert_eq!(press_slowly(&mut state, &[ctrl_s]), vec![]);
    assert_eq!(state.composer.text(), "everyone stop");
    assert!(screen_text(&mut state).contains("To steer a teammate, start the line with @name"));
    state.composer.clear();
    // In builder's view, the text is for builder.
    press_slowly(&mut state, &[key_mod(KeyCode::Down, KeyModifiers::SHIFT)]);
    type_text(&mut state, "use a Pratt parser");
    assert_eq!(
        press_slowly(&mut state, &[ctrl_s]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/steer @builder use a Pratt parser".to_string()
        }]
    );
}

#[test]
fn inline_views_cycle_through_in_process_teammates() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    let shift_down = key_mod(KeyCode::Down, KeyModifiers::SHIFT);
    let shift_up = key_mod(KeyCode::Up, KeyModifiers::SHIFT);
    press_slowly(&mut state, &[shift_down]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    type_text(&mut state, "use a Pratt parser");
    let commands = press(
        &mut state,
        &[key(KeyCode::Enter), key(KeyCode::Esc), shift_tab()],
    );
    assert_eq!(
        commands,
        vec![
            LeadCommand::Submit {
                target: ViewTarget::Teammate("builder".to_string()),
                text: "use a Pratt parser".to_string()
            },
            LeadCommand::InterruptTeammate {
                name: "builder".to_string()
            },
            LeadCommand::CycleTeammateMode {
                name: "builder".to_string()
            },
        ]
    );
    // Only builder runs in-process: the cycle is lead → builder → lead.
    press_slowly(&mut state, &[shift_down]);
    assert_eq!(state.view, ViewTarget::Lead);
    press_slowly(&mut state, &[shift_up]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    // Esc in the lead's view interrupts nothing.
    press_slowly(&mut state, &[shift_up]);
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Esc)]), vec![]);
    // A teammate that leaves takes its view with it.
    state.apply(LeadEvent::Team(mixed_team()));
    press_slowly(&mut state, &[shift_down]);
    state.apply(LeadEvent::Team(vec![]));
    assert_eq!(state.view, ViewTarget::Lead);
}

/// A slash command typed in a teammate's inline view is a command for the lead, never chat
/// for the teammate; the lead's view comes up so its outcome is seen.
#[test]
fn slash_commands_in_an_inline_view_run_as_lead_commands() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    press_slowly(&mut state, &[key_mod(KeyCode::Down, KeyModifiers::SHIFT)]);
    assert_eq!(state.view, ViewTarget::Teammate("builder".to_string()));
    type_text(&mut state, "/quit");
    let commands = press(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(
        commands,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
    assert_eq!(state.view, ViewTarget::Lead);
}

#[test]
fn slash_and_at_completion() {
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    type_text(&mut state, "/sp");
    let text = screen_text(&mut state);
    assert!(text.contains("/spawn"), "{text}");
    press_slowly(&mut state, &[key(KeyCode::Tab)]);
    assert_eq!(state.composer.text(), "/spawn ");
    type_text(&mut state, "helper \"ask @te");
    press_slowly(&mut state, &[key(KeyCode::Tab)]);
    assert_eq!(state.composer.text(), "/spawn helper \"ask @tester ");
    state.composer.clear();
    // Enter on a partial command completes it instead of sending it.
    type_text(&mut state, "/qu");
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Enter)]), vec![]);
    assert_eq!(state.composer.text(), "/quit ");
    assert_eq!(
        press_slowly(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
}

#[test]
fn ctrl_c_twice_quits() {
    let mut state = state_with(vec![]);
    type_text(&mut state, "draft");
    assert_eq!(press_slowly(&mut state, &[ctrl('c')]), vec![]);
    assert!(
        state.composer.is_empty(),
        "the first ctrl+c clears the composer"
    );
    assert!(screen_text(&mut state).contains("press ctrl+c again to quit"));
    // Another key disarms it.
    press_slowly(&mut state, &[ch('x'), ctrl('c')]);
    assert_eq!(press_slowly(&mut state, &[ch('y')]), vec![]);
    assert_eq!(
        press_slowly(&mut state, &[ctrl('c'), ctrl('c')]),
        vec![LeadCommand::Quit]
    );
    assert!(!state.exit, "waits for the controller to finish");
    press_slowly(&mut state, &[ctrl('c')]);
    assert!(state.exit, "a third ctrl+c forces the exit");
}

#[test]
fn help_and_task_list_toggle() {
    let mut state = state_with(vec![
        LeadEvent::Team(mixed_team()),
        LeadEvent::Tasks(tasks()),
    ]);
    press_slowly(&mut state, &[ch('?')]);
    let text = screen_text(&mut state);
    assert!(text.contains("Keys"), "{text}");
    assert!(text.contains("ctrl+c"), "{text}");
    press_slowly(&mut state, &[key(KeyCode::Esc), ctrl('t')]);
    let text = screen_text(&mut state);
    assert!(text.contains("Tasks 1/4"), "{text}");
    assert!(
        text.contains("◻ #4 Fuzz the parser @builder · blocked by #1"),
        "{text}"
    );
    assert!(!text.contains("#5"), "internal tasks stay hidden: {text}");
    press_slowly(&mut state, &[ctrl('t')]);
    assert!(!screen_text(&mut state).contains("Tasks 1/4"));
    // With text in the composer, ? is just a character.
    type_text(&mut state, "why?");
    assert_eq!(state.composer.text(), "why?");
}

#[test]
fn transcript_pages_up_and_back_down() {
    let mut state = state_with(vec![]);
    for i in 0..100 {
        state.apply(LeadEvent::Transcript(TranscriptItem::System {
            text: format!("note {i}"),
        }));
    }
    assert!(screen_text(&mut state).contains("note 99"));
    press_slowly(&mut state, &[key(KeyCode::PageUp)]);
    let text = screen_text(&mut state);
    assert!(!text.contains("note 99"), "{text}");
    assert!(text.contains("↓ more"), "{text}");
    press_slowly(&mut state, &[key(KeyCode::PageDown)]);
    assert!(screen_text(&mut state).contains("note 99"));
}

fn prune_dialog_open(state: &AppState) -> bool {
    state.modals.iter().any(|m| matches!(m, Modal::Confirm(_)))
}

/// Issue 18, part 7: `p` asks first; `n` or Esc shuts down nobody.
#[test]
fn prune_asks_first_and_no_shuts_down_nobody() {
    for no in [ch('n'), key(KeyCode::Esc)] {
        let mut state = state_with(vec![LeadEvent::Team(prune_team())]);
        open_teams(&mut state);
        assert_eq!(press_slowly(&mut state, &[ch('p')]), vec![]);
        assert!(prune_dialog_open(&state), "p asks first");
        assert_eq!(press_slowly(&mut state, &[no]), vec![]);
        assert!(!prune_dialog_open(&state));
        assert!(
            state.modals.iter().any(|m| matches!(m, Modal::Teams(_))),
            "the teams dialog stays"
        );
    }
    // A `y` in the confirmation's grace period is no answer either.
    let mut state = state_with(vec![LeadEvent::Team(prune_team())]);
    open_teams(&mut state);
    assert_eq!(press(&mut state, &[ch('p'), ch('y')]), vec![]);
}

/// Issue 18, part 7: `y` shuts down exactly the idle teammates without unfinished work and
/// removes the exited ones; the second key includes the idle one holding a task.
#[test]
fn prune_confirmed_shuts_down_exactly_the_named_ones() {
    let names = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
    let mut state = state_with(vec![LeadEvent::Team(prune_team())]);
    open_teams(&mut state);
    press_slowly(&mut state, &[ch('p')]);
    let shown = rows(&screen(&mut state, 80, 24)).join(" ");
    for named in ["@docs", "@lint", "@old", "@scout (#6)"] {
        assert!(shown.contains(named), "{named} in {shown}");
    }
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::Prune {
            shut_down: names(&["docs"]),
            remove: names(&["lint", "old"]),
        }]
    );
    assert_eq!(
        press_slowly(&mut state, &[ch('p'), ch('a')]),
        vec![LeadCommand::Prune {
            shut_down: names(&["docs", "scout"]),
            remove: names(&["lint", "old"]),
        }]
    );
    // Without anyone holding work, `a` is no answer.
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    open_teams(&mut state);
    assert_eq!(press_slowly(&mut state, &[ch('p'), ch('a')]), vec![]);
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::Prune {
            shut_down: names(&["docs", "scout"]),
            remove: Vec::new(),
        }]
    );
}

/// A terminal sends Esc and the key typed right after it as one sequence, read as Alt+key:
/// `Esc` then `/quit` typed by a script (or a fast hand) arrived as Alt+/ and `quit`, and the
/// `/` was lost (the text went to the lead as chat). An Alt+character that nothing uses is
/// the two keys again; the composer's own Alt keys keep working.
#[test]
fn esc_and_a_key_read_as_one_alt_key_are_the_two_keys() {
    let alt = |c: char| key_mod(KeyCode::Char(c), KeyModifiers::ALT);
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    press(&mut state, &[alt('/')]);
    type_text(&mut state, "quit");
    assert_eq!(state.composer.text(), "/quit");
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
    // In a teammate's view, that Esc interrupts its turn, as Esc does.
    press(&mut state, &[key_mod(KeyCode::Down, KeyModifiers::SHIFT)]);
    let commands = press(&mut state, &[alt('@')]);
    assert!(
        matches!(&commands[..], [LeadCommand::InterruptTeammate { .. }]),
        "{commands:?}"
    );
    assert_eq!(state.composer.text(), "@");
    // With a dialog open, Esc closes it (later) and the key goes to the composer.
    let mut state = with_requests(&[1]);
    after_grace(&mut state);
    assert!(permission_open(&state));
    press(&mut state, &[alt('/')]);
    assert!(!permission_open(&state));
    assert_eq!(state.composer.text(), "/");
    // The composer's Alt keys (word moves, Alt+< and Alt+>) are left alone.
    let mut state = state_with(vec![LeadEvent::Team(mixed_team())]);
    type_text(&mut state, "one two");
    press(&mut state, &[alt('b'), alt('<'), alt('>')]);
    type_text(&mut state, "X");
    assert_eq!(state.composer.text(), "one Xtwo");
}

/// Issue 33, item 13: with nothing free to prune (the one idle teammate holds a task), the
/// box offers no `y`: `y` does nothing, and only the key that includes the busy one acts.
#[test]
fn prune_with_only_busy_teammates_offers_no_yes() {
    let mut team = prune_team();
    team.retain(|t| !["docs", "lint", "old"].contains(&t.name.as_str()));
    let mut state = state_with(vec![LeadEvent::Team(team)]);
    open_teams(&mut state);
    press_slowly(&mut state, &[ch('p')]);
    let shown = rows(&screen(&mut state, 80, 24)).join("\n");
    assert!(shown.contains("nothing is free to prune"), "{shown}");
    assert!(!shown.contains("y yes"), "no y offered:\n{shown}");
    assert_eq!(press_slowly(&mut state, &[ch('y')]), vec![]);
    assert!(prune_dialog_open(&state), "y leaves the box open");
    assert_eq!(
        press_slowly(&mut state, &[ch('a')]),
        vec![LeadCommand::Prune {
            shut_down: vec!["scout".to_string()],
            remove: Vec::new(),
        }]
    );
}
