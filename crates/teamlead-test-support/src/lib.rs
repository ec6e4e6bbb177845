//! What teamlead's tests share, as a crate (instead of files pulled into each test binary with
//! `#[path]`): [`store`] has temporary homes seeded from the real fixtures of `tests/fixtures`,
//! child writer processes (the test executable re-run as a child), and the hostile files and
//! operations of the store's safety tests; [`renames`] counts the files renamed into a folder;
//! [`git`] runs git with a test identity; [`wait`] is
//! the one poll with a deadline; [`pty`] is the pseudo-terminal harness (the real lead in a
//! PTY, typed into by a [`keys::Keyboard`]); [`tmux`] is a private tmux server per test.
//! Tests only: it unwraps and panics freely.

pub mod git;
pub mod keys;
pub mod pty;
pub mod renames;
pub mod store;
pub mod tmux;
pub mod wait;
