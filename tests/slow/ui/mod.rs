//! The lead's screen: keys, dialogs, snapshots of what it draws, and the real binary in a pseudo-terminal.

mod approvals_pty;
mod colors_pty;
mod confirm_pty;
mod pty;
mod typing;
