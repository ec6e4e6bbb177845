//! teamlead: a terminal lead application for teams of coding agents that speak the Claude Code
//! agent-teams file protocol. Layers (see docs/DESIGN.md; the first two are the crate
//! `teamlead-protocol`, so Cargo holds them; `tests/fast/project/layers.rs` checks the import graph of
//! the rest): `protocol` → `store` → `config` → `watch` → `backend` → `agent` → `lead` →
//! `server` → `web` → `ui` → `cli`; each uses only the ones before it.
//!
//! Production code never unwraps, expects or panics: a broken file, a dead process or a full
//! disk is an error the person reads, never a backtrace. (Tests may; `Cargo.toml` `[lints]`
//! holds the lints that hold everywhere.)
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

// The bottom layers live in their own crate (`crates/teamlead-protocol`); these two names keep
// `crate::protocol::…` and `crate::store::…` paths working while files move to naming it.
pub use teamlead_protocol as protocol;
pub use teamlead_protocol::store;

pub mod agent;
pub mod backend;
pub mod cli;
pub mod config;
pub mod lead;
pub mod server;
pub mod ui;
pub mod watch;
pub mod web;
