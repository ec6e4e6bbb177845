//! Other machines teammates run on (DESIGN.md "Hosts"), reached with the user's own OpenSSH:
//! one persistent ControlMaster per host under teamlead's runtime directory
//! ([`connection`]), every call under a deadline ([`run`]), ssh's complaints read into typed
//! causes ([`HostError`]), and what a host has ([`probe`]: system, teamlead, tmux), read
//! without writing anything there.

pub mod adopt;
pub mod connection;
pub mod error;
pub mod executor;
pub mod link;
pub mod model_forward;
pub mod on_host;
pub mod panes;
pub mod probe;
pub mod remote;
pub mod remote_claude;
pub mod run;
pub mod worktree;

pub use connection::{Connection, Connector, Deadlines};
pub use error::HostError;
pub use probe::{Probe, install, probe, remote_teamlead};
