//! The command line: clap commands, wiring to the layers below, logging setup, and the one-line
//! error report. Commands hold no logic of their own beyond gathering what the store says and
//! formatting it. `main` is what the binary calls: exit 0 on success, 1 on an error (printed
//! as one `error: …` line, its text from files escaped by `visible_line`), 2 on a usage error
//! (clap's message).

pub mod args;
mod attach;
mod clean;
mod completions;
pub mod config;
mod ctl;
mod hosts;
pub mod inspect;
pub mod logging;
pub mod monitor;
mod notify;
mod output;
pub mod prices;
mod refuse;
mod relay;
mod send;
mod serve;
pub mod session;
mod style;
mod task;
mod teammate;
mod web;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use color_eyre::eyre::{Report, Result};

pub use args::{Cli, Command, GlobalArgs};

use crate::protocol::display::visible_line;
use crate::store::Home;

/// What every command gets: the resolved home and the global options.
#[derive(Debug, Clone)]
pub struct Context {
    pub home: Home,
    pub global: GlobalArgs,
    /// Where the log files are, when logging is on.
    pub log_dir: Option<PathBuf>,
}

/// The binary's entry point.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with 0; usage errors to stderr with 2.
            let code = e.exit_code();
            let _ = e.print();
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
    };
    if cli.command.is_some() && cli.lead.given() {
        use clap::CommandFactory;
        let e = Cli::command().error(
            clap::error::ErrorKind::ArgumentConflict,
            "--team, --backend and --agent belong to the interactive session; \
             commands take their own options (see `teamlead <COMMAND> --help`)",
        );
        let _ = e.print();
        return ExitCode::from(2);
    }
    install_panic_hook();
    // Every teamlead process (the lead, a teammate, a relay) before its threads start.
    crate::lead::runtime::limit_malloc_arenas();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(cli)));
    match outcome {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(report)) if is_broken_pipe(&report) => ExitCode::SUCCESS,
        Ok(Err(ref report)) if let Some(failure) = report.downcast_ref::<Failure>() => {
            tracing::info!("exit {}: {}", failure.code, failure.message);
            if !failure.message.is_empty() {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: {}",
                    visible_line(&failure.message)
                );
            }
            ExitCode::from(failure.code)
        }
        Ok(Err(report)) => {
            tracing::error!("{report:?}");
            // Never `eprintln!`: with the terminal gone (a hangup) it would panic.
            // Error texts carry names and paths from files: never let them reach a terminal raw.
            let _ = writeln!(
                std::io::stderr(),
                "error: {}",
                visible_line(&one_line(&report))
            );
            ExitCode::from(1)
        }
        // The panic hook already printed one line.
        Err(_) => ExitCode::from(1),
    }
}

fn run(cli: Cli) -> Result<()> {
    let Cli {
        global,
        lead,
        command,
    } = cli;
    match &command {
        Some(Command::Completions(args)) => return completions::run(args),
        Some(Command::Man(args)) => return completions::man(args),
        Some(Command::Config(args)) => return config::run(args),
        Some(Command::Prices(args)) => return prices::run(args),
        Some(Command::Hosts(args)) => return hosts::run(args, global.home.as_deref()),
        _ => {}
    }
    // The demo keeps out of ~/.claude: without --home or TEAMLEAD_HOME it runs in a temporary
    // home, removed when this function returns.
    let demo_home = match &command {
        Some(Command::Demo(_)) => session::demo_home(global.home.as_deref())?,
        _ => None,
    };
    let home = match &demo_home {
        Some(dir) => Home::new(dir.path()),
        None => Home::resolve(global.home.as_deref())?,
    };
    let log_dir = logging::init(global.verbose, Some(&home.root));
    tracing::info!(
        "teamlead {} started: {:?} (home {})",
        env!("CARGO_PKG_VERSION"),
        std::env::args().collect::<Vec<_>>(),
        home.root.display()
    );
    let ctx = Context {
        home,
        global,
        log_dir,
    };
    match command {
        None => session::run_lead(&ctx, &lead),
        Some(Command::Demo(args)) => session::run_demo(&ctx, &args),
        Some(Command::Teammate(args)) => session::run_teammate(&ctx, &args),
        Some(Command::Guard(args)) => {
            let ended = crate::agent::process::guard::run(&ctx.home, &args.agent_id, &args.program);
            crate::agent::process::guard::exit_like(ended)
        }
        Some(Command::Clean(args)) => session::run_clean(&ctx, &args),
        Some(Command::Inspect(args)) => inspect::run(&ctx, &args),
        Some(Command::Monitor(args)) => monitor::run(&ctx, &args),
        Some(Command::Send(args)) => send::run(&ctx, &args),
        Some(Command::Task(args)) => task::run(&ctx, &args),
        Some(Command::Completions(args)) => completions::run(&args),
        Some(Command::Man(args)) => completions::man(&args),
        Some(Command::Config(args)) => config::run(&args),
        Some(Command::Prices(args)) => prices::run(&args),
        Some(Command::Serve(args)) => serve::run(&ctx, &args),
        Some(Command::Relay(args)) => relay::run(&ctx, &args),
        Some(Command::Web(args)) => web::run(&ctx, &args),
        Some(Command::Attach(args)) => attach::run_attach(&ctx, &args),
        Some(Command::Ctl(args)) => ctl::run(&ctx, &args),
        Some(Command::Hosts(args)) => hosts::run(&args, ctx.global.home.as_deref()),
    }
}

/// An error with its own exit status (`teamlead ctl`'s documented codes); an empty message
/// prints nothing.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn new(code: u8, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }
}

/// An error and its causes as one line (`a: b: c`), skipping a cause whose text the previous
/// part already contains.
pub fn one_line(report: &Report) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in report.chain() {
        let text = cause.to_string().replace(['\n', '\r'], " ");
        if text.is_empty() || parts.last().is_some_and(|p| p.contains(&text)) {
            continue;
        }
        parts.push(text);
    }
    parts.join(": ")
}

fn is_broken_pipe(report: &Report) -> bool {
    report.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// A panic is a bug: say so in one line (the log has the location), no backtrace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let location = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!("panic{location}: {message}");
        // A failing write must not panic inside the panic hook (that aborts).
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error: {} (this is a bug in teamlead)",
            visible_line(&message)
        );
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use color_eyre::eyre::{WrapErr, eyre};

    #[test]
    fn errors_are_one_line_without_repeats() {
        let inner: Result<()> = Err(eyre!("task #3 not found\nsecond line"));
        let report = inner.wrap_err("cannot finish").unwrap_err();
        assert_eq!(
            one_line(&report),
            "cannot finish: task #3 not found second line"
        );
        let store = crate::store::StoreError::not_found("team `x`");
        let report = Report::new(store).wrap_err("team `x` not found");
        assert_eq!(one_line(&report), "team `x` not found");
    }

    #[test]
    fn broken_pipes_are_not_errors() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "closed");
        assert!(is_broken_pipe(&Report::new(io)));
        assert!(!is_broken_pipe(&eyre!("other")));
    }
}
