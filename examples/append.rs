//! Appends messages to an inbox with the store layer, one locked read-modify-write per
//! message: a stand-in writer for trying lock contention by hand.
//!
//! Usage: `cargo run --example append -- HOME TEAM TO FROM COUNT PREFIX`
//! (the messages' text is `PREFIX-0` … `PREFIX-<COUNT-1>`).

use std::path::PathBuf;
use std::process::ExitCode;

use teamlead::protocol::InboxEntry;
use teamlead::store::{Home, inbox, lock};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [home, team, to, from, count, prefix] = args.as_slice() else {
        eprintln!("usage: append HOME TEAM TO FROM COUNT PREFIX");
        return ExitCode::from(2);
    };
    let Ok(count) = count.parse::<usize>() else {
        eprintln!("append: COUNT must be a number, got `{count}`");
        return ExitCode::from(2);
    };
    if let Err(e) = lock::install_signal_cleanup() {
        eprintln!("append: {e}");
        return ExitCode::FAILURE;
    }
    let home = Home::new(PathBuf::from(home));
    for i in 0..count {
        let entry = InboxEntry::new(from, format!("{prefix}-{i}"));
        if let Err(e) = inbox::append(&home, team, to, &entry) {
            eprintln!("append: {e}");
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}
