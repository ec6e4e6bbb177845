//! The interactive parts of the command line: the lead session and the demo (the lead
//! controller and the terminal UI on one tokio runtime), the teammate runtime and `clean`.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, bail};

use super::Context;
use super::args::{AgentChoice, BackendChoice, CleanArgs, DemoArgs, LeadArgs, TeammateArgs};
use crate::lead::controller::{Lead, LeadOptions, QUIT_TIMEOUT};
use crate::lead::demo::setup_demo;
use crate::lead::view::LeadCommand;

/// How long the controller may keep cleaning up after the UI has gone.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Starts the controller with `opts` and runs the UI until the controller exits.
fn run_session(opts: LeadOptions) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        let (handle, events) = Lead::start(opts).wrap_err("cannot start the lead session")?;
        let ui = crate::ui::run_tui(events, handle.commands.clone()).await;
        if ui.is_err() {
            // The terminal failed (a hangup, typically): the team still gets its graceful quit.
            let _ = handle.commands.try_send(LeadCommand::Quit);
            let _ =
                tokio::time::timeout(QUIT_TIMEOUT + SHUTDOWN_GRACE, handle.commands.closed()).await;
        }
        ui.wrap_err("the terminal UI failed")
    });
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    result
}

/// `teamlead [--team NAME] [--backend …] [--agent …]`: the interactive lead session.
pub fn run_lead(ctx: &Context, args: &LeadArgs) -> Result<()> {
    match args.backend {
        BackendChoice::Auto | BackendChoice::InProcess => {}
        BackendChoice::Tmux | BackendChoice::Iterm2 => {
            bail!(
                "the lead session runs in-process teammates only in this build (use --backend in-process)"
            )
        }
    }
    if args.agent == AgentChoice::Claude {
        bail!(
            "the lead session runs teamlead's own teammates only in this build (--agent builtin)"
        );
    }
    let cwd = std::env::current_dir().wrap_err("cannot read the current directory")?;
    let mut opts = LeadOptions::new(ctx.home.clone(), cwd);
    if let Some(team) = &args.team {
        opts = opts.with_team(team.clone());
    }
    run_session(opts)
}

/// `teamlead demo`.
pub fn run_demo(ctx: &Context, _args: &DemoArgs) -> Result<()> {
    let plan = setup_demo(&ctx.home).wrap_err("cannot prepare the demo")?;
    run_session(LeadOptions::new(ctx.home.clone(), ".").with_demo(plan))
}

/// `teamlead teammate …`: the teammate runtime.
pub fn run_teammate(ctx: &Context, args: &TeammateArgs) -> Result<()> {
    super::teammate::run(ctx, args)
}

/// `teamlead clean [--orphans] [--dry-run]`.
pub fn run_clean(ctx: &Context, args: &CleanArgs) -> Result<()> {
    super::clean::run(ctx, args)
}
