//! The fast test binary: everything that runs in this process or spawns the real binary on
//! temporary homes, without a terminal multiplexer, pseudo-terminal or real client (stores,
//! command-line tools, the UI on a test backend, agents and LLM engines against local model
//! servers, the in-process lead). One binary (instead of one per file) so the suite links
//! once; each former file is a module. Run: `cargo test --test fast`.

// Shared helpers, each compiled once.
#[path = "../support/agent_common/mod.rs"]
mod agent_common;
#[path = "../support/cli_common/mod.rs"]
mod cli_common;
#[path = "../support/lead_common/mod.rs"]
mod lead_common;
#[path = "../support/llm_common/mod.rs"]
mod llm_common;
#[path = "../support/programs/mod.rs"]
mod programs;
#[path = "../support/store_killers.rs"]
mod store_killers;
use teamlead_test_support::store as store_common;
#[path = "../support/ui_common/mod.rs"]
mod ui_common;
#[path = "../support/web_common/mod.rs"]
mod web_common;

// One module per former test binary.
mod agent_control;
mod agent_scale;
mod agent_shell;
mod assets;
mod ci_programs;
mod cli_clean_worktrees;
mod cli_config;
mod cli_hosts;
mod cli_inspect;
mod cli_man;
mod cli_relay;
mod cli_task;
mod iterm2_backend;
mod layers;
mod lead_budget;
mod lead_model;
mod lead_permissions;
mod lead_retire;
mod lead_review;
mod lead_review_checkout;
mod lead_review_merged;
mod lead_review_queue;
mod lead_review_shell;
mod lead_spawn;
mod lead_task_hold;
mod lead_tasks;
mod lead_team;
mod llm_cli;
mod llm_teammate;
mod llm_tools;
mod llm_turns;
mod llm_wire;
mod shell_rules;
mod store_concurrency;
mod store_dead_writers;
mod store_interop;
mod ui_app_loop;
mod ui_approvals;
mod ui_client_prompt;
mod ui_config;
mod ui_confirm;
mod ui_habits;
mod ui_in_part;
mod ui_keys;
mod ui_remote_teammate;
mod ui_snapshots;
mod ui_stopped;
mod ui_usage;
mod watch_events;
mod web_api;

/// A child process of a store test (`store_common::child_command`) runs this test only.
#[test]
fn child_process_entry() {
    store_common::child_entry();
}
