//! The lead controller: team lifecycle, spawning, the inbox poller, the permission queue and the
//! in-memory leader permission bridge, plan approvals, shutdown and cleanup. It never renders: it
//! takes [`contract::LeadCommand`]s and emits [`contract::LeadEvent`]s.

pub mod approval_text;
pub mod bridge;
pub mod client_prompt;
pub mod commands;
pub mod contract;
pub mod controller;
pub mod demo;
pub mod emergency;
pub mod ledger;
pub mod limit_dialog;
pub mod mode_drive;
pub mod model;
pub mod park;
pub mod permission_queue;
pub mod plan_queue;
pub mod poller;
pub mod review;
pub mod runtime;
pub mod shown;
pub mod tracking;
pub mod turns;
pub mod view_builder;
pub mod wave;

pub use commands::slash_commands;
pub use controller::{Lead, LeadError, LeadHandle, LeadOptions};
pub use demo::{DemoPlan, setup_demo};
