//! The lead's screen: keys, dialogs, snapshots of what it draws, and the real binary in a pseudo-terminal.

mod app_loop;
mod approvals;
mod client_prompt;
mod config;
mod confirm;
mod habits;
mod in_part;
mod keys;
mod remote_teammate;
mod screens;
mod stopped;
mod usage;
