//! Approvals are answered only on purpose: key-level tests of the policy in
//! `teamlead::ui::modal::guard`, on a scripted clock. A request that arrives while the person
//! types waits (banner) and what they type stays in the composer; a dialog ignores keys during
//! its grace period; Enter alone never approves; "always" is two steps and shows the exact
//! rule (never a malformed one); a teammate that requires plan mode leaves it only after a
//! confirmation. Snapshots of the banner, the "always" confirmation and the plan-mode
//! confirmation at widths 80 and 40.

use crate::ui_common;

use crossterm::event::KeyCode;
use serde_json::json;

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PermissionDecision, PlanDecision, ViewTarget,
};
use teamlead::protocol::PermissionMode;
use teamlead::protocol::permission::{PermissionRule, PermissionUpdate};
use teamlead::ui::AppState;
use teamlead::ui::modal::Modal;
use teamlead::ui::modal::guard::{GRACE_MS, TYPING_PAUSE_MS};
use ui_common::*;

const WIDTHS: [u16; 2] = [80, 40];

fn alpha_team() -> LeadEvent {
    let mut alpha = teammate(
        "alpha",
        "blue",
        teamlead::lead::contract::TeammateStatus::Working,
        "in-process",
    );
    alpha.plan_mode_required = true;
    alpha.mode = PermissionMode::Plan;
    let builder = teammate(
        "builder",
        "green",
        teamlead::lead::contract::TeammateStatus::Working,
        "tmux",
    );
    LeadEvent::Team(vec![alpha, builder])
}

/// The request of the report: alpha wants `rm -rf ~/important`, with no suggestion.
fn rm_request(key: u64) -> PendingPermission {
    let mut r = bash_request(key, "alpha", "blue", "rm -rf ~/important");
    r.suggestions = Vec::new();
    r
}

fn rule(tool: &str, content: Option<&str>) -> PermissionUpdate {
    PermissionUpdate::allow_session(PermissionRule {
        tool_name: tool.to_string(),
        rule_content: content.map(str::to_string),
    })
}

fn dialog_open(state: &AppState) -> bool {
    state.modals.iter().any(Modal::is_approval)
}

fn answers(commands: &[LeadCommand]) -> usize {
    commands
        .iter()
        .filter(|c| {
            matches!(
                c,
                LeadCommand::AnswerPermission { .. } | LeadCommand::AnswerPlan { .. }
            )
        })
        .count()
}

fn text(state: &mut AppState, width: u16) -> String {
    rows(&screen(state, width, 24)).join("\n")
}

/// A state whose person typed `typed` just now (keys at the state's clock).
fn typing(typed: &str) -> AppState {
    let mut state = state_with(vec![alpha_team()]);
    type_text(&mut state, typed);
    state
}

#[test]
fn text_typed_before_and_while_a_request_arrives_is_sent_as_the_message() {
    let mut state = typing("@alpha hel");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    assert!(!dialog_open(&state), "arrives unfocused while typing");
    type_text(&mut state, "lo");
    let screen = text(&mut state, 80);
    assert!(
        screen.contains("1 approval waiting · @alpha asks for Bash — ctrl+p to answer"),
        "{screen}"
    );
    let commands = press(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(
        commands,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "@alpha hello".to_string()
        }]
    );
    assert_eq!(state.permissions.len(), 1, "the request still waits");
}

#[test]
fn any_ideas_stays_in_the_composer_and_grants_nothing() {
    let mut state = typing("a");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    type_text(&mut state, "ny ideas?");
    assert_eq!(state.composer.text(), "any ideas?");
    assert_eq!(state.take_commands(), vec![]);
    // Even a long pause does not take the keyboard from a composer holding text.
    wait_ms(&mut state, 10 * TYPING_PAUSE_MS);
    assert!(!dialog_open(&state));
    assert_eq!(state.permissions.len(), 1);
}

#[test]
fn slash_commands_typed_as_requests_arrive_are_commands_not_answers() {
    let mut state = typing("/qu");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    type_text(&mut state, "it");
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
    type_text(&mut state, "/task assig");
    state.apply(LeadEvent::Plans(vec![plan_request("p1", "alpha", "blue")]));
    type_text(&mut state, "n 1 builder");
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/task assign 1 builder".to_string()
        }]
    );
    assert_eq!(state.permissions.len(), 1);
    assert_eq!(state.plans.len(), 1);
}

#[test]
fn a_waiting_request_takes_the_keyboard_after_a_typing_pause_with_an_empty_composer() {
    let mut state = typing("hello");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    press(&mut state, &[key(KeyCode::Enter)]);
    wait_ms(&mut state, TYPING_PAUSE_MS - 1);
    assert!(!dialog_open(&state), "not before the pause is complete");
    wait_ms(&mut state, 1);
    assert!(dialog_open(&state), "typing stopped, composer empty");
    assert!(!state.approvals_waiting);
    assert!(!text(&mut state, 80).contains("approval waiting"));
}

/// Issue 27, item 3: in the demo, a `y` pressed at a permission dialog that had just taken the
/// keyboard went to the composer, and the `/quit` typed next became the message `y/quit`. A
/// key of the dialog pressed in its grace period is no answer and no text: it is dropped, and
/// the dialog says so where its hints were; text it has no use for still goes to the composer.
#[test]
fn a_key_at_a_dialog_that_just_appeared_is_dropped_with_a_note_not_typed() {
    // Nobody typed: the request takes the keyboard at once, with a grace period.
    let mut state = state_with(vec![alpha_team()]);
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    assert!(dialog_open(&state));
    wait_ms(&mut state, GRACE_MS - 1);
    assert_eq!(press(&mut state, &[ch('y')]), vec![], "no answer");
    assert!(dialog_open(&state), "the dialog stays");
    assert!(state.composer.is_empty(), "the y is no message text");
    let screen = text(&mut state, 80);
    assert!(
        screen.contains("y ignored: this request just appeared — press again"),
        "{screen}"
    );
    // The command typed next is a command, not `y/quit`.
    type_text(&mut state, "/quit");
    assert!(!dialog_open(&state), "the dialog stepped back");
    assert!(state.approvals_waiting);
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
    // Every key of the dialog is dropped alike (Enter, a, n), each saying so.
    let mut state = state_with(vec![alpha_team()]);
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    for (k, label) in [
        (key(KeyCode::Enter), "enter"),
        (ch('a'), "a"),
        (ch('n'), "n"),
    ] {
        assert_eq!(press(&mut state, &[k]), vec![]);
        let screen = text(&mut state, 80);
        assert!(
            screen.contains(&format!("{label} ignored: this request")),
            "{screen}"
        );
    }
    assert!(state.composer.is_empty());
    // Pressed again once the dialog has been seen, `y` answers; the note is gone.
    assert_eq!(answers(&press_slowly(&mut state, &[ch('y')])), 1);
    assert!(!text(&mut state, 80).contains("ignored"));
    // A paste is text, never an answer: it goes to the composer.
    let mut state = state_with(vec![alpha_team()]);
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    state.paste("y\n");
    assert!(!dialog_open(&state));
    assert_eq!(state.composer.text(), "y\n");
    assert_eq!(state.take_commands(), vec![]);
}

/// Text being typed as a request arrives stays the person's: the request waits behind the
/// banner, and even opened on purpose right then (Ctrl+P), text it has no use for goes back
/// to the composer after what was typed.
#[test]
fn text_typed_when_a_dialog_appears_goes_back_to_the_composer() {
    let mut state = typing("@alpha hel");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    assert!(!dialog_open(&state));
    press(&mut state, &[ctrl('p')]);
    assert!(dialog_open(&state));
    type_text(&mut state, "lo there");
    assert!(!dialog_open(&state), "the dialog stepped back");
    assert_eq!(state.composer.text(), "@alpha hello there");
    assert_eq!(state.take_commands(), vec![]);
    assert_eq!(state.permissions.len(), 1);
}

#[test]
fn enter_a_y_n_in_the_grace_of_a_dialog_opened_on_purpose_are_dropped() {
    let mut state = typing("x");
    state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
    press(&mut state, &[key(KeyCode::Backspace)]);
    assert_eq!(press(&mut state, &[ctrl('p')]), vec![]);
    assert!(dialog_open(&state));
    let keys = [key(KeyCode::Enter), ch('a'), ch('y'), ch('n')];
    assert_eq!(press(&mut state, &keys), vec![]);
    assert!(state.composer.is_empty(), "nothing went to the composer");
    assert!(dialog_open(&state));
    wait_ms(&mut state, GRACE_MS - 1);
    assert_eq!(press(&mut state, &[ch('y')]), vec![]);
    wait_ms(&mut state, 1);
    assert_eq!(
        press(&mut state, &[ch('y')]),
        vec![LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::AllowOnce
        }]
    );
}

#[test]
fn enter_alone_never_approves_a_bash_write_or_edit() {
    let mut write = bash_request(3, "alpha", "blue", "");
    write.tool_name = "Write".to_string();
    write.input = json!({"file_path": "a.txt", "content": "hi"});
    write.suggestions = Vec::new();
    let mut state = state_with(vec![
        alpha_team(),
        LeadEvent::Permissions(vec![rm_request(1), edit_request(2, "alpha", "blue"), write]),
    ]);
    let enter = key(KeyCode::Enter);
    assert_eq!(press_slowly(&mut state, &[enter, enter, enter]), vec![]);
    assert_eq!(state.permissions.len(), 3);
    // y approves; each next request has its own grace period.
    let commands = press(&mut state, &[ch('y'), ch('y')]);
    assert_eq!(answers(&commands), 1, "{commands:?}");
    assert_eq!(press_slowly(&mut state, &[enter]), vec![], "Edit");
    assert_eq!(answers(&press_slowly(&mut state, &[ch('y')])), 1);
    assert_eq!(press_slowly(&mut state, &[enter]), vec![], "Write");
    assert!(text(&mut state, 80).contains("y yes"), "the hint says y");
}

#[test]
fn always_is_two_steps_and_shows_the_exact_rule() {
    let mut state = state_with(vec![
        alpha_team(),
        LeadEvent::Permissions(vec![rm_request(1)]),
    ]);
    assert_eq!(press_slowly(&mut state, &[ch('a')]), vec![]);
    let screen = text(&mut state, 80);
    assert!(
        screen.contains("Always? allow Bash(rm -rf ~/important) for @alpha this session"),
        "{screen}"
    );
    // A tilde reaches outside the working directory: the exact command, said in words.
    assert!(
        screen.contains("allows exactly: rm -rf ~/important"),
        "{screen}"
    );
    assert!(screen.contains("a/enter confirm · esc/← back"), "{screen}");
    // The confirmation is new content: a second `a` at once is not a confirmation.
    assert_eq!(press(&mut state, &[ch('a'), key(KeyCode::Enter)]), vec![]);
    // Esc goes back to the options without answering.
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Esc)]), vec![]);
    assert!(dialog_open(&state));
    assert!(!text(&mut state, 80).contains("Always?"));
    assert_eq!(
        press_slowly(&mut state, &[ch('a'), ch('a')]),
        vec![LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::AllowAlways(vec![rule(
                "Bash",
                Some("rm -rf ~/important")
            )])
        }]
    );
}

#[test]
fn malformed_suggestions_are_never_offered() {
    // A suggestion like `Bash({:*)` is dropped; the rule is built from the command instead.
    let mut bad = bash_request(1, "alpha", "blue", "cargo test -p parser");
    bad.suggestions = vec![
        rule("Bash", Some("{:*")),
        rule("Bash", Some(":*")),
        PermissionUpdate::SetMode {
            mode: PermissionMode::BypassPermissions,
            destination: teamlead::protocol::permission::Destination::Session,
        },
    ];
    // A group command with no suggestion: the exact command, not `Bash({:*)`.
    let mut group = bash_request(2, "alpha", "blue", "{ make; make install; }");
    group.suggestions = Vec::new();
    // Nothing well-formed can be built from a multi-line command: no "always" at all.
    let mut multi = bash_request(3, "alpha", "blue", "echo $(date)\nrm -rf ~/important");
    multi.suggestions = Vec::new();
    let mut state = state_with(vec![
        alpha_team(),
        LeadEvent::Permissions(vec![bad, group, multi]),
    ]);
    let screen = text(&mut state, 80);
    assert!(
        screen.contains("allow Bash(cargo test:*) for @alpha"),
        "{screen}"
    );
    assert!(!screen.contains("{:*"), "{screen}");
    assert!(!screen.contains("bypassPermissions"), "{screen}");
    let commands = press_slowly(&mut state, &[ch('a'), ch('a')]);
    assert_eq!(
        commands,
        vec![LeadCommand::AnswerPermission {
            key: 1,
            decision: PermissionDecision::AllowAlways(vec![rule("Bash", Some("cargo test:*"))])
        }]
    );
    let commands = press_slowly(&mut state, &[ch('a'), ch('a')]);
    assert_eq!(
        commands,
        vec![LeadCommand::AnswerPermission {
            key: 2,
            decision: PermissionDecision::AllowAlways(vec![rule(
                "Bash",
                Some("{ make; make install; }")
            )])
        }]
    );
    let screen = text(&mut state, 80);
    assert!(!screen.contains("Yes, and"), "{screen}");
    assert_eq!(press_slowly(&mut state, &[ch('a'), ch('a')]), vec![]);
    assert_eq!(state.permissions.len(), 1);
}

#[test]
fn plan_dialog_has_the_same_protections() {
    // Typing when the plan arrives: it waits.
    let mut state = typing("/task assign 1 builder");
    state.apply(LeadEvent::Plans(vec![plan_request("p1", "alpha", "blue")]));
    assert!(!dialog_open(&state));
    assert!(text(&mut state, 80).contains("@alpha has a plan"));
    press(&mut state, &[key(KeyCode::Enter)]);
    wait_ms(&mut state, TYPING_PAUSE_MS);
    assert!(dialog_open(&state));
    // n in the grace of a dialog that came by itself is dropped, and said so.
    press(&mut state, &[ch('n')]);
    assert!(dialog_open(&state));
    assert!(state.composer.is_empty());
    assert!(text(&mut state, 80).contains("n ignored: this request just appeared"));
    // Ctrl+P: Enter, y and n in the grace are dropped; Enter never approves.
    press(&mut state, &[ctrl('p')]);
    let keys = [key(KeyCode::Enter), ch('y'), ch('n')];
    assert_eq!(press(&mut state, &keys), vec![]);
    assert_eq!(press_slowly(&mut state, &[key(KeyCode::Enter)]), vec![]);
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::AnswerPlan {
            request_id: "p1".to_string(),
            decision: PlanDecision::Approve {
                mode: PermissionMode::Default
            }
        }]
    );
}

#[test]
fn a_plan_that_arrived_behind_a_permission_dialog_waits_its_turn() {
    let mut state = state_with(vec![
        alpha_team(),
        LeadEvent::Permissions(vec![rm_request(1)]),
    ]);
    assert!(dialog_open(&state));
    state.apply(LeadEvent::Plans(vec![plan_request("p1", "alpha", "blue")]));
    assert!(state.approvals_waiting, "the plan is not shown yet");
    assert_eq!(answers(&press_slowly(&mut state, &[ch('y')])), 1);
    assert!(!dialog_open(&state));
    assert!(text(&mut state, 80).contains("1 approval waiting · @alpha has a plan"));
    wait_ms(&mut state, TYPING_PAUSE_MS);
    assert!(state.modals.iter().any(|m| matches!(m, Modal::Plan(_))));
    // Esc leaves it queued and closed: it does not come back by itself.
    press_slowly(&mut state, &[key(KeyCode::Esc)]);
    wait_ms(&mut state, 10 * TYPING_PAUSE_MS);
    assert!(!dialog_open(&state));
    assert_eq!(state.plans.len(), 1);
}

#[test]
fn confirm_dialogs_ignore_keys_in_their_grace() {
    let mut state = state_with(vec![alpha_team()]);
    press(&mut state, &[key(KeyCode::Down), key(KeyCode::Enter)]);
    after_grace(&mut state);
    assert_eq!(
        press(&mut state, &[key(KeyCode::Down), ch('x'), ch('y')]),
        vec![]
    );
    assert!(text(&mut state, 80).contains("Kill @builder?"));
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::Kill {
            name: "builder".to_string()
        }]
    );
}

#[test]
fn a_teammate_that_requires_plan_mode_leaves_it_only_after_a_confirmation() {
    let mut state = state_with(vec![alpha_team()]);
    // Teams dialog → alpha's detail → Shift+Tab: a confirmation, no command.
    let keys = [key(KeyCode::Down), key(KeyCode::Enter), key(KeyCode::Enter)];
    assert_eq!(press_slowly(&mut state, &keys), vec![]);
    assert_eq!(press_slowly(&mut state, &[shift_tab()]), vec![]);
    let screen = text(&mut state, 80);
    assert!(screen.contains("@alpha requires plan mode"), "{screen}");
    assert!(screen.contains("bypassPermissions"), "{screen}");
    assert_eq!(press(&mut state, &[ch('y')]), vec![], "grace");
    assert_eq!(
        press_slowly(&mut state, &[ch('y')]),
        vec![LeadCommand::CycleTeammateMode {
            name: "alpha".to_string()
        }]
    );
    // The list's "cycle all" asks too, naming alpha; n sends nothing.
    press_slowly(&mut state, &[key(KeyCode::Left)]);
    assert_eq!(press_slowly(&mut state, &[shift_tab()]), vec![]);
    assert!(text(&mut state, 80).contains("@alpha requires plan mode"));
    assert_eq!(press_slowly(&mut state, &[ch('n')]), vec![]);
    // Shift+Tab in alpha's inline view asks as well.
    press_slowly(&mut state, &[key(KeyCode::Esc)]);
    assert!(state.modals.is_empty());
    let shift_down = key_mod(KeyCode::Down, crossterm::event::KeyModifiers::SHIFT);
    assert_eq!(press_slowly(&mut state, &[shift_down, shift_tab()]), vec![]);
    assert!(text(&mut state, 80).contains("@alpha requires plan mode"));
    // A teammate out of plan mode (or not requiring it) cycles at once.
    let mut team = state.team.clone();
    team[0].mode = PermissionMode::Default;
    state.apply(LeadEvent::Team(team));
    press_slowly(&mut state, &[key(KeyCode::Esc)]);
    assert_eq!(
        press_slowly(&mut state, &[shift_tab()]),
        vec![LeadCommand::CycleTeammateMode {
            name: "alpha".to_string()
        }]
    );
}

#[test]
fn snapshot_the_unfocused_banner() {
    for w in WIDTHS {
        let mut state = typing("@alpha hello");
        state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
        let t = screen(&mut state, w, 14);
        insta::assert_snapshot!(format!("approvals_banner_{w}"), t.backend());
    }
}

#[test]
fn snapshot_the_always_confirmation() {
    for w in WIDTHS {
        let mut state = state_with(vec![
            alpha_team(),
            LeadEvent::Permissions(vec![bash_request(
                1,
                "alpha",
                "blue",
                "cargo test -p parser",
            )]),
        ]);
        press_slowly(&mut state, &[ch('a')]);
        let t = screen(&mut state, w, 18);
        insta::assert_snapshot!(format!("approvals_always_confirm_{w}"), t.backend());
    }
}

#[test]
fn snapshot_the_plan_mode_confirmation() {
    for w in WIDTHS {
        let mut state = state_with(vec![alpha_team()]);
        let keys = [
            key(KeyCode::Down),
            key(KeyCode::Enter),
            key(KeyCode::Enter),
            shift_tab(),
        ];
        press_slowly(&mut state, &keys);
        let t = screen(&mut state, w, 24);
        insta::assert_snapshot!(format!("approvals_plan_mode_confirm_{w}"), t.backend());
    }
}

/// Issue 18, part 4: a command that hides its tail with the "conceal" attribute. The dialog
/// shows every control character as a visible escape (the whole command readable) and a
/// warning line says the request carried control sequences.
fn concealed_request() -> PendingPermission {
    let mut r = bash_request(1, "alpha", "blue", "ls\u{1b}[8m; rm -rf ~\u{1b}[0m");
    r.suggestions = Vec::new();
    r
}

#[test]
fn a_request_with_control_sequences_shows_them_and_says_so() {
    for w in WIDTHS {
        let mut state = state_with(vec![
            alpha_team(),
            LeadEvent::Permissions(vec![concealed_request()]),
        ]);
        let t = screen(&mut state, w, 18);
        let shown = rows(&t).join("\n");
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        assert!(shown.contains("⚠ This request carried control"), "{shown}");
        let flat: String = rows(&t)
            .iter()
            .map(|r| r.trim_matches(|c| c == '│' || c == ' '))
            .collect();
        assert!(flat.contains(r"ls\e[8m; rm -rf ~\e[0m"), "{shown}");
        insta::assert_snapshot!(format!("approvals_control_sequences_{w}"), t.backend());
    }
    // A tool name carrying an OSC title sequence: no raw escape reaches the title.
    let mut osc = concealed_request();
    osc.tool_name = "Bash\u{1b}]0;owned\u{7}".to_string();
    let mut state = state_with(vec![alpha_team(), LeadEvent::Permissions(vec![osc])]);
    let shown = text(&mut state, 80);
    assert!(
        !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
        "{shown}"
    );
    assert!(shown.contains(r"Bash\e]0;owned\x07"), "{shown}");
    assert!(shown.contains("control sequences"), "{shown}");
    // A plain request says nothing of the kind.
    let mut state = state_with(vec![
        alpha_team(),
        LeadEvent::Permissions(vec![rm_request(1)]),
    ]);
    assert!(!text(&mut state, 80).contains("control sequences"));
}

/// Esc, then `/quit` and Enter a moment later, with a plan waiting behind the banner: the plan
/// dialog that took the keyboard in the pause does not swallow the text. Printable text a
/// dialog does not use hands the keyboard back to the composer, with that text; the plan
/// waits behind the banner again.
#[test]
fn text_a_dialog_does_not_use_goes_back_to_the_composer() {
    let mut state = typing("half a thought");
    state.apply(LeadEvent::Plans(vec![plan_request(
        "plan_approval-1@alpha@demo",
        "alpha",
        "blue",
    )]));
    assert!(!dialog_open(&state), "waits while the person types");
    // Ctrl+U clears the line: that is typing too.
    press(
        &mut state,
        &[key_mod(
            KeyCode::Char('u'),
            crossterm::event::KeyModifiers::CONTROL,
        )],
    );
    press(&mut state, &[key(KeyCode::Esc)]);
    wait_ms(&mut state, TYPING_PAUSE_MS / 2);
    assert!(!dialog_open(&state), "Esc and Ctrl+U are typing");
    wait_ms(&mut state, TYPING_PAUSE_MS);
    assert!(dialog_open(&state), "the pause gives the plan the keyboard");
    wait_ms(&mut state, GRACE_MS + 100);
    type_text(&mut state, "/quit");
    assert!(!dialog_open(&state), "the dialog stepped back");
    let commands = press(&mut state, &[key(KeyCode::Enter)]);
    assert_eq!(
        commands,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/quit".to_string()
        }]
    );
    assert_eq!(state.plans.len(), 1, "the plan still waits");
    assert!(text(&mut state, 80).contains("1 approval waiting"));
}

/// The command a person types right after answering one request: the next request shows,
/// in its grace period, as the command's first keys arrive. Its keys are no answers, and the
/// text is no loss: it goes to the composer (before, every key in that window was dropped,
/// and the command vanished without a trace).
#[test]
fn a_command_typed_right_after_an_answer_reaches_the_composer_in_the_next_requests_grace() {
    let mut state = typing("x");
    state.apply(LeadEvent::Permissions(vec![rm_request(1), rm_request(2)]));
    press(&mut state, &[key(KeyCode::Backspace), ctrl('p')]);
    after_grace(&mut state);
    let answered = press(&mut state, &[ch('y')]);
    assert_eq!(answers(&answered), 1);
    state.apply(LeadEvent::Permissions(vec![rm_request(2)]));
    assert!(dialog_open(&state), "the next request shows");
    // Still in its grace: a key of the dialog is no answer, text goes to the composer.
    assert_eq!(press(&mut state, &[ch('n')]), vec![]);
    type_text(&mut state, "/task add s-3");
    assert!(!dialog_open(&state), "the dialog stepped back");
    assert_eq!(state.composer.text(), "/task add s-3");
    assert_eq!(
        press(&mut state, &[key(KeyCode::Enter)]),
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: "/task add s-3".to_string()
        }]
    );
    assert_eq!(state.permissions.len(), 1, "request 2 still waits");
    assert!(state.approvals_waiting);
}

/// Text a dialog has no use for goes to the composer in the "always" confirmation too.
#[test]
fn text_typed_in_the_always_confirmation_reaches_the_composer() {
    let mut state = state_with(vec![alpha_team()]);
    let mut request = bash_request(1, "alpha", "blue", "cargo test");
    request.suggestions = vec![rule("Bash", Some("cargo test:*"))];
    state.apply(LeadEvent::Permissions(vec![request]));
    press_slowly(&mut state, &[ch('a')]);
    assert!(text(&mut state, 80).contains("Always?"));
    after_grace(&mut state);
    type_text(&mut state, "/quit");
    assert!(!dialog_open(&state));
    assert_eq!(state.composer.text(), "/quit");
    assert_eq!(state.take_commands(), vec![]);
}

/// Pasted text goes to a dialog's feedback line, else to the composer (before, a paste into
/// an approval dialog with no input was ignored, and dropped in its grace period).
#[test]
fn a_paste_reaches_the_feedback_line_or_the_composer() {
    for grace in [true, false] {
        let mut state = typing("x");
        state.apply(LeadEvent::Permissions(vec![rm_request(1)]));
        press(&mut state, &[key(KeyCode::Backspace), ctrl('p')]);
        if !grace {
            after_grace(&mut state);
        }
        state.paste("/task add pasted");
        assert!(!dialog_open(&state), "grace {grace}");
        assert_eq!(state.composer.text(), "/task add pasted", "grace {grace}");
        assert!(state.approvals_waiting);
        assert_eq!(state.take_commands(), vec![]);
    }
    let mut state = typing("x");
    state.apply(LeadEvent::Plans(vec![plan_request(
        "plan_approval-1@alpha@demo",
        "alpha",
        "blue",
    )]));
    press(&mut state, &[key(KeyCode::Backspace), ctrl('p')]);
    press_slowly(&mut state, &[ch('n')]);
    state.paste("use the parser");
    assert!(dialog_open(&state));
    assert!(state.composer.is_empty());
    assert!(
        text(&mut state, 80).contains("use the parser"),
        "in the feedback line"
    );
}

/// A request from a teammate on another host says the host in the dialog's title
/// (`@alpha · box`), as the teammate list shows it.
#[test]
fn snapshot_a_request_from_a_teammate_on_another_host() {
    for w in [60u16, 100] {
        let mut request = bash_request(1, "alpha", "blue", "cargo test -p parser");
        request.host = Some("box".to_string());
        let mut state = state_with(vec![alpha_team(), LeadEvent::Permissions(vec![request])]);
        let t = screen(&mut state, w, 16);
        insta::assert_snapshot!(format!("approvals_remote_teammate_{w}"), t.backend());
    }
}
