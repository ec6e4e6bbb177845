//! Helpers for the UI tests: a fixed clock, teammates, permission and plan requests, key
//! events, and rendering an `AppState` into a `TestBackend`.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PendingPlan, PermissionSource, TaskView,
    TeammateStatus, TeammateView, TranscriptItem,
};
use teamlead::protocol::PermissionMode;
use teamlead::protocol::PermissionUpdate;
use teamlead::protocol::permission::PermissionRule;
use teamlead::ui::AppState;
use teamlead::ui::render;

/// The fixed "now" of every UI test (epoch ms).
pub const NOW: u64 = 1_767_225_600_000;

pub fn clock() -> u64 {
    NOW
}

/// A teammate with the given status and backend; the rest filled in plausibly.
pub fn teammate(name: &str, color: &str, status: TeammateStatus, backend: &str) -> TeammateView {
    TeammateView {
        name: name.to_string(),
        agent_id: format!("{name}@demo"),
        color: Some(color.to_string()),
        status,
        mode: PermissionMode::Default,
        backend: teamlead::backend::BackendKind::parse(backend),
        pane_id: if backend == "tmux" {
            "%3".to_string()
        } else {
            String::new()
        },
        host: None,
        hidden: false,
        model: Some("claude-sonnet-4-5".to_string()),
        cwd: "/home/lead/project".to_string(),
        worktree: None,
        prompt: Some(format!(
            "You are {name}. Build and test the parser.\nRun cargo test before you report."
        )),
        plan_mode_required: false,
        current_task: None,
        owned_tasks: Vec::new(),
        recent_messages: Vec::new(),
        usage: None,
        mode_requested: None,
        rate_limited_until: None,
        parked: None,
        messages: Vec::new(),
        unread_since: None,
        over_budget: None,
        budget_micros: None,
        costs_nothing: false,
    }
}

/// builder (working, in-process, blue, on task #1), tester (waiting, tmux, green),
/// docs (idle 42 s, tmux, yellow, acceptEdits), scout (idle 5 m, iterm2, purple, hidden).
pub fn mixed_team() -> Vec<TeammateView> {
    let mut builder = teammate("builder", "blue", TeammateStatus::Working, "in-process");
    builder.current_task = Some(("1".to_string(), "Write the parser".to_string()));
    builder.owned_tasks = vec![
        (
            "1".to_string(),
            "Write the parser".to_string(),
            "in_progress".to_string(),
        ),
        (
            "4".to_string(),
            "Fuzz the parser".to_string(),
            "pending".to_string(),
        ),
    ];
    builder.recent_messages = vec![
        "parser skeleton compiles".to_string(),
        "asked for cargo test".to_string(),
    ];
    let mut tester = teammate(
        "tester",
        "green",
        TeammateStatus::WaitingForApproval,
        "tmux",
    );
    tester.current_task = Some(("2".to_string(), "Test the lexer".to_string()));
    let mut docs = teammate(
        "docs",
        "yellow",
        TeammateStatus::Idle {
            since_ms: NOW - 42_000,
        },
        "tmux",
    );
    docs.mode = PermissionMode::AcceptEdits;
    docs.pane_id = "%4".to_string();
    let mut scout = teammate(
        "scout",
        "purple",
        TeammateStatus::Idle {
            since_ms: NOW - 300_000,
        },
        "iterm2",
    );
    scout.hidden = true;
    vec![builder, tester, docs, scout]
}

/// For pruning: [`mixed_team`] where docs (idle) finished its task #3, scout (idle) still
/// owns the pending #6, and lint exited (stopped) and old (gone) shut down earlier.
pub fn prune_team() -> Vec<TeammateView> {
    let mut team = mixed_team();
    team[2].owned_tasks = vec![(
        "3".to_string(),
        "Outline the docs".to_string(),
        "completed".to_string(),
    )];
    team[3].owned_tasks = vec![(
        "6".to_string(),
        "Map the modules".to_string(),
        "pending".to_string(),
    )];
    team.push(teammate(
        "lint",
        "cyan",
        TeammateStatus::Stopped {
            how: "exited (127: claude not found)".to_string(),
        },
        "tmux",
    ));
    team.push(teammate("old", "red", TeammateStatus::Gone, "in-process"));
    team
}

pub fn tasks() -> Vec<TaskView> {
    let task = |id: &str, subject: &str, status: &str, owner: Option<&str>| TaskView {
        id: id.to_string(),
        subject: subject.to_string(),
        status: status.to_string(),
        owner: owner.map(str::to_string),
        blocked_by: Vec::new(),
        internal: false,
    };
    let mut fuzz = task("4", "Fuzz the parser", "pending", Some("builder"));
    fuzz.blocked_by = vec!["1".to_string()];
    let mut internal = task("5", "builder", "in_progress", Some("builder"));
    internal.internal = true;
    vec![
        task("1", "Write the parser", "in_progress", Some("builder")),
        task("2", "Test the lexer", "in_progress", Some("tester")),
        task("3", "Outline the docs", "completed", Some("docs")),
        fuzz,
        internal,
    ]
}

/// A Bash request with a `cargo test:*` suggestion.
pub fn bash_request(key: u64, worker: &str, color: &str, command: &str) -> PendingPermission {
    PendingPermission {
        key,
        request_id: format!("perm-1767225600000-abc{key:04}"),
        worker: worker.to_string(),
        color: Some(color.to_string()),
        tool_name: "Bash".to_string(),
        description: "Run the parser tests".to_string(),
        input: json!({"command": command, "description": "Run the parser tests"}),
        suggestions: vec![PermissionUpdate::allow_session(PermissionRule {
            tool_name: "Bash".to_string(),
            rule_content: Some("cargo test:*".to_string()),
        })],
        source: PermissionSource::Inbox,
        in_part: None,
        host: None,
    }
}

/// An Edit request without suggestions.
pub fn edit_request(key: u64, worker: &str, color: &str) -> PendingPermission {
    PendingPermission {
        key,
        request_id: format!("perm-1767225600000-edt{key:04}"),
        worker: worker.to_string(),
        color: Some(color.to_string()),
        tool_name: "Edit".to_string(),
        description: "Edit src/parser.rs".to_string(),
        input: json!({
            "file_path": "src/parser.rs",
            "old_string": "fn parse(input: &str) -> Ast {\n    todo!()\n}",
            "new_string": "fn parse(input: &str) -> Result<Ast, ParseError> {\n    Parser::new(input).parse()\n}",
        }),
        suggestions: Vec::new(),
        source: PermissionSource::Bridge,
        in_part: None,
        host: None,
    }
}

pub fn plan_request(id: &str, from: &str, color: &str) -> PendingPlan {
    PendingPlan {
        request_id: id.to_string(),
        from: from.to_string(),
        color: Some(color.to_string()),
        plan: "# Plan: parser\n\n1. Write a tokenizer for identifiers, numbers and strings.\n2. Write a recursive-descent parser producing the Ast.\n3. Add error recovery at statement boundaries.\n4. Test every rule with cargo test; fuzz the tokenizer.\n5. Report the coverage to the lead.".to_string(),
        in_part: None,
        host: None,
    }
}

/// A state after `Started` and the given events, clock fixed at [`NOW`].
pub fn state_with(events: Vec<LeadEvent>) -> AppState {
    let mut state = AppState::new();
    state.now_ms = NOW;
    state.apply(LeadEvent::Started {
        team: "demo".to_string(),
        backend: teamlead::backend::BackendKind::Tmux,
        lead_mode: PermissionMode::Default,
    });
    for event in events {
        state.apply(event);
    }
    state
}

/// Draws the whole screen at `width`×`height`.
pub fn screen(state: &mut AppState, width: u16, height: u16) -> Terminal<TestBackend> {
    let mut terminal = Terminal::new(TestBackend::new(width, height)).expect("test terminal");
    terminal
        .draw(|frame| render::render(frame, state))
        .expect("draw");
    terminal
}

/// The screen as plain text rows (trailing spaces trimmed).
pub fn rows(terminal: &Terminal<TestBackend>) -> Vec<String> {
    let buf = terminal.backend().buffer();
    (0..buf.area.height)
        .map(|y| {
            (0..buf.area.width)
                .map(|x| buf[(x, y)].symbol().to_string())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect()
}

pub fn key_mod(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent {
        code,
        modifiers,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    }
}

pub fn key(code: KeyCode) -> KeyEvent {
    key_mod(code, KeyModifiers::NONE)
}

pub fn ch(c: char) -> KeyEvent {
    key(KeyCode::Char(c))
}

pub fn ctrl(c: char) -> KeyEvent {
    key_mod(KeyCode::Char(c), KeyModifiers::CONTROL)
}

pub fn shift_tab() -> KeyEvent {
    key_mod(KeyCode::BackTab, KeyModifiers::SHIFT)
}

/// Types text into the state, one key per character.
pub fn type_text(state: &mut AppState, text: &str) {
    for c in text.chars() {
        state.handle_key(ch(c));
    }
}

/// Moves the state's clock on by `ms` (a tick of the app loop).
pub fn wait_ms(state: &mut AppState, ms: u64) {
    let now = state.now_ms + ms;
    state.tick(now);
}

/// Lets the top dialog's grace period end.
pub fn after_grace(state: &mut AppState) {
    wait_ms(state, teamlead::ui::modal::guard::GRACE_MS);
}

/// Presses keys as a person reading the screen does: each after the grace period of whatever
/// it shows. Returns the commands they produced.
pub fn press_slowly(state: &mut AppState, keys: &[KeyEvent]) -> Vec<LeadCommand> {
    for k in keys {
        after_grace(state);
        state.handle_key(*k);
    }
    state.take_commands()
}

/// Presses keys and returns the commands they produced.
pub fn press(state: &mut AppState, keys: &[KeyEvent]) -> Vec<LeadCommand> {
    for k in keys {
        state.handle_key(*k);
    }
    state.take_commands()
}

pub fn teammate_turn(from: &str, color: &str, summary: Option<&str>, text: &str) -> LeadEvent {
    LeadEvent::Transcript(TranscriptItem::Teammate {
        from: from.to_string(),
        color: Some(color.to_string()),
        summary: summary.map(str::to_string),
        text: text.to_string(),
    })
}

pub fn frame_item(from: &str, color: &str, line: &str) -> LeadEvent {
    LeadEvent::Transcript(TranscriptItem::Frame {
        from: from.to_string(),
        color: Some(color.to_string()),
        line: line.to_string(),
    })
}
