//! The slow test binary: everything that needs a pseudo-terminal, a private tmux server, a
//! real Zellij, kitty or Claude Code, or a lead server (the lead in a terminal, pane teammates,
//! faults under load, the conformance suite). One binary so the suite links once; each former
//! file is a module. Run: `cargo test --test slow` (or `cargo test --test slow claude_code`).

// Shared helpers, each compiled once.
#[path = "../support/browser_common/mod.rs"]
mod browser_common;
#[path = "../support/claude_code_common/mod.rs"]
mod claude_code_common;
#[path = "../support/cleanup_common/mod.rs"]
mod cleanup_common;
#[path = "../support/cli_common/mod.rs"]
mod cli_common;
#[path = "../support/foreign_common/mod.rs"]
mod foreign_common;
#[path = "../support/hostile_common/mod.rs"]
mod hostile_common;
#[path = "../support/hosts_common/mod.rs"]
mod hosts_common;
#[path = "../support/kitty_common/mod.rs"]
mod kitty_common;
#[path = "../support/lead_common/mod.rs"]
mod lead_common;
#[path = "../support/llm_common/mod.rs"]
mod llm_common;
#[path = "../support/model_server/mod.rs"]
mod model_server;
#[path = "../support/monitor_common/mod.rs"]
mod monitor_common;
#[path = "../support/panes_common/mod.rs"]
mod panes_common;
#[path = "../support/programs/mod.rs"]
mod programs;
#[path = "../support/pty_harness/mod.rs"]
mod pty_harness;
#[path = "../support/server_common/mod.rs"]
mod server_common;
#[path = "../support/ui_common/mod.rs"]
mod ui_common;
#[path = "../support/web_common/mod.rs"]
mod web_common;
#[path = "../support/zellij_common/mod.rs"]
mod zellij_common;

// The tests, a folder per topic: a feature's tests sit beside each other.
mod backends;
mod claude_code;
mod cli;
mod hosts;
mod lead;
mod server;
mod store;
mod ui;

/// A child process of a test (`teamlead_test_support::store::child_command`, e.g. a writer on
/// a test host running as the host's user) runs this test only.
#[test]
fn child_process_entry() {
    teamlead_test_support::store::child_entry();
}
