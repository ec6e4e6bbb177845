//! The link's tests: the wire and the handshake, the reliable session (resend after a
//! reconnect, liveness on a clock the test moves), exactly-once inbox forwarding under link
//! drops and restarts with writers on real inbox files in two temporary homes (two hosts), and
//! the blocking driver over pipes.

mod chaos;
mod driver;
mod fixtures;
mod handshake;
mod prices;
mod session;
mod state;
mod support;
mod tasks;
