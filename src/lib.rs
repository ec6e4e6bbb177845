//! teamlead: a terminal lead application for teams of coding agents that speak the Claude Code
//! agent-teams file protocol. Layers (see docs/DESIGN.md; `tests/fast/layers.rs` checks the import
//! graph): `protocol` → `store` → `config` → `watch` → `backend` → `agent` → `lead` →
//! `server` → `web` → `ui` → `cli`; each uses only the ones before it.
//!
//! Production code never unwraps, expects or panics: a broken file, a dead process or a full
//! disk is an error the person reads, never a backtrace. (Tests may; `Cargo.toml` `[lints]`
//! holds the lints that hold everywhere.)
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod agent;
pub mod backend;
pub mod cli;
pub mod config;
pub mod lead;
pub mod protocol;
pub mod server;
pub mod store;
pub mod ui;
pub mod watch;
pub mod web;
