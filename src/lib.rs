//! teamlead: a terminal lead application for teams of coding agents that speak the Claude Code
//! agent-teams file protocol. Layers (see docs/DESIGN.md): `protocol` → `store` → `watch` →
//! `backend` → `agent` → `lead` → `ui` → `cli`; each depends only on the ones before it.

pub mod protocol;
pub mod backend;
pub mod store;
pub mod agent;
pub mod lead;
pub mod watch;
pub mod cli;
pub mod ui;
