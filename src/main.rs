//! The `teamlead` binary: everything lives in the library; see `teamlead::cli`.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

fn main() -> std::process::ExitCode {
    teamlead::cli::main()
}
