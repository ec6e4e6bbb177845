//! The `teamlead` binary: everything lives in the library; see `teamlead::cli`.

fn main() -> std::process::ExitCode {
    teamlead::cli::main()
}
