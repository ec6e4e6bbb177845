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

// The tests, a folder per topic: a feature's tests sit beside each other.
mod agent;
mod backends;
mod cli;
mod lead;
mod project;
mod server;
mod store;
mod ui;

/// A child process of a store test (`store_common::child_command`) runs this test only.
#[test]
fn child_process_entry() {
    store_common::child_entry();
}
