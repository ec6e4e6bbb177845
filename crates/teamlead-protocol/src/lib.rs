//! # teamlead-protocol
//!
//! The Claude Code agent-teams file protocol as Rust types, and a store that reads and writes
//! those files safely beside a running Claude Code. This crate is the bottom of teamlead (the
//! terminal lead for teams of coding agents) and has no tokio, no terminal UI and no HTTP, so a
//! tool of your own for Claude Code teams (a monitor, a bot that answers permission requests, a
//! dashboard) can start from it alone.
//!
//! ## The files
//!
//! A team lives under a home directory (`~/.claude`, or whatever [`store::Home`] is given):
//!
//! * `teams/<team>/config.json`, the team file: its members ([`TeamFile`], [`Member`]), their
//!   modes ([`PermissionMode`]), panes and colors ([`Color`]).
//! * `teams/<team>/inboxes/<name>.json`, one inbox per member: a JSON array of
//!   [`InboxEntry`]s. An entry's text is either plain words or one structured [`Frame`]
//!   (permission requests and answers, idle notifications, shutdown, plan approval, mode changes).
//! * `tasks/<team>/<id>.json`, one file per [`Task`], with its status ([`TaskStatus`]), owner and
//!   dependencies.
//! * mkdir lock directories beside each of them, compatible with the `proper-lockfile` package
//!   that Claude Code uses.
//!
//! ## Reading and writing
//!
//! Never write these files with `std::fs::write`: Claude Code rewrites them in place and reads
//! them at any instant. The [`store`] does what a well-behaved writer must: it takes the lock
//! ([`store::lock`]), writes a temporary file and renames it over the old one
//! ([`store::atomic`]), retries a torn read, checks every name that becomes part of a path
//! ([`names`]) and sets aside ("quarantines") a file it cannot read instead of failing on it
//! ([`store::quarantine`]).
//!
//! ```no_run
//! use teamlead_protocol::store::{self, Home, inbox};
//! use teamlead_protocol::{Frame, InboxEntry};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let home = Home::new("/tmp/my-claude-home");
//! // Every member of a team.
//! let team = store::read_team(&home, "my-team")?;
//! for member in &team.members {
//!     println!("{} ({})", member.name, member.agent_type);
//! }
//! // What waits in the lead's inbox: plain words, or a structured frame.
//! for entry in inbox::read(&home, "my-team", "team-lead")?.unread() {
//!     match entry.parse_frame() {
//!         Some(frame) => println!("{}: {frame:?}", entry.from),
//!         None => println!("{}: {}", entry.from, entry.text),
//!     }
//! }
//! // A message to a teammate, appended under its inbox's lock.
//! inbox::append(&home, "my-team", "alice", &InboxEntry::new("team-lead", "Run the tests."))?;
//! # let _: Option<Frame> = None;
//! # Ok(())
//! # }
//! ```
//!
//! ## What is here
//!
//! * The types of the files and frames (this module's items; the modules below for detail).
//! * [`permission`]: permission updates and rules, and the one reading of a Bash command that
//!   decides whether a rule allows it ([`permission::bash`]).
//! * [`pricing`]: what the tokens of a Claude Code transcript cost, per model and kind of token.
//! * [`store`]: the home layout, locks, atomic writes, inboxes, the team file, the task list,
//!   the lead's liveness lock, Claude Code's transcripts and its usage-limit notes.
//!
//! Production code here never unwraps, expects or panics: a broken file is an error the caller
//! gets, never a panic.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod backend_kind;
pub mod backend_request;
pub mod color;
pub mod display;
pub mod fence;
pub mod frames;
pub mod inbox;
pub mod json;
pub mod mode;
pub mod names;
pub mod permission;
pub mod pricing;
pub mod render;
pub mod store;
pub mod task;
pub mod team;
pub mod time;

pub use backend_kind::BackendKind;
pub use backend_request::BackendRequest;
pub use color::Color;
pub use frames::Frame;
pub use inbox::InboxEntry;
pub use mode::PermissionMode;
pub use names::{AgentId, LEAD_NAME};
pub use permission::PermissionUpdate;
pub use task::{Task, TaskStatus};
pub use team::{HOST_KEY, Member, TeamFile};
