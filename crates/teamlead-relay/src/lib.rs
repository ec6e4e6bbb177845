//! # teamlead-relay
//!
//! teamlead's own link between a lead and a remote host: the lead's host runs the lead server,
//! each remote host runs the same binary as `teamlead relay --stdio`, started over the user's
//! ssh, and the two talk over the relay's standard input and output. Each host keeps an
//! ordinary team directory in the agent-teams layout under its own home; the link carries
//! inbox entries between them.
//!
//! ## Where it sits
//!
//! Above `teamlead-protocol` (the files and the safe store), below the app: no tokio, no
//! terminal UI, no HTTP. The link is a state machine ([`Link`]) fed with the peer's lines and
//! with the time (a clock the caller passes in), returning the lines to write and what
//! happened; [`drive`] runs it over any blocking `Read`/`Write` pair and [`run_stdio`] is the
//! relay's side.
//!
//! ## The wire ([`wire`], [`hello`])
//!
//! One JSON object per line, at most 1 MiB; `"t"` names its type: `hello`, `refused`, `data`,
//! `ack`, `ping`, `pong`. The lead says hello first (protocol, version, capabilities, role, link
//! id, team, how far it got: `recv`, and what the other acknowledged: `acked`); the relay
//! answers with its own. A peer with another protocol, without a capability this side needs, or
//! in the same role is refused with `why` and `fix`. A line that is too long or not a frame ends
//! the connection, never the process.
//!
//! ## What the link guarantees
//!
//! * **Nothing lost.** Each direction numbers its `data` from 1 (`seq`, never reused). The
//!   sender appends a `data` to its outbox on disk (synced) before writing it, and drops it
//!   only when the peer acknowledges it (`ack` is cumulative). After a reconnect each side
//!   says the highest seq it applied (`recv` in its hello) and the other sends everything above
//!   it again, in order. A killed lead server or relay resumes from its files; a side whose
//!   files were removed learns from the other's hello where to go on.
//! * **Nothing twice.** The receiver applies `data` in seq order only: a repeat (seq ≤ its
//!   `recv`) is acknowledged again and not applied. An inbox entry carries a relay id, kept in
//!   the appended entry as `relayId`. The lines that arrived together are one batch: each
//!   inbox's entries are appended in one swap under its lock, leaving out those whose relay id
//!   the inbox already holds; then `recv` is synced; then one ack. A crash between the append
//!   and `recv` resends the entries and finds them there.
//! * **Each entry forwarded once.** New entries that local writers (a `claude` teammate on the
//!   remote host writing to `team-lead`, the lead writing to a remote teammate) put in an inbox
//!   that belongs to the other side are picked up by polling those inboxes; each entry's key is
//!   persisted with its outbox line, so a restart does not forward it again, and its relay id
//!   is derived from the team and the key, so even a side that lost its files sends the same id.
//! * **Liveness by traffic.** The lead pings every 1 s; no frame for 4 s ends the connection.
//!
//! ## The task list and the member fields ([`tasks_lead`], [`tasks_mirror`], [`members`])
//!
//! The lead's host owns the task list and the team file. The lead sends its task list to the
//! relay's mirror (`tasks`: all of it after each handshake, then what changed); the relay sends
//! the changes made to the mirror on its host (`task_update`: claims, completions, edits), which
//! the lead applies under its own locks with a local claim's rules and answers with the task;
//! a losing claim is set back on the host and its claimant told. The fields a remote member
//! owns (`isActive`, `mode`) come back as `member` bodies.
//!
//! * **The lead's presence.** While a relay is bound, it holds the team's liveness lock on its
//!   host and beats a record of when the lead was last there ([`presence`]): the host's
//!   teammates wait their grace period for a lead that is gone, as they would locally.
//!
//! The state of a link lives in `teams/<team>/.teamlead/link/<link id>/` on each host
//! ([`link_dir`]), private to the user.
#![cfg_attr(
    not(test),
    deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)
)]

pub mod driver;
pub mod forward;
pub mod hello;
pub mod link_dir;
pub mod members;
pub mod presence;
pub mod prices;
pub mod reads;
pub mod session;
pub mod start;
pub mod task_fields;
pub mod tasks_lead;
pub mod tasks_mirror;
pub mod transcripts;
pub mod wake;
pub mod wire;

pub use driver::{DriveError, DriverOptions, Ended, RelayOptions, drive, drive_with, run_stdio};
pub use hello::{Hello, Identity, Refusal, Role};
pub use session::{End, Event, Link, LinkError, Step};
pub use wire::{Body, Frame, WireError};
