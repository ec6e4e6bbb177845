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
    // A panic of the main thread (the UI) kills the lead's panes and removes its team first.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            crate::lead::emergency::run();
        }
        previous(info);
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        let (handle, events) = Lead::start(opts).wrap_err("cannot start the lead session")?;
        let mut attach = |argv: &[String]| {
            // The UI has left the screen: the program (tmux attach) owns the terminal until
            // the user detaches.
            if let Some((program, args)) = argv.split_first() {
                let _ = std::process::Command::new(program).args(args).status();
            }
        };
        let ui = crate::ui::run_tui(events, handle.commands.clone(), &mut attach).await;
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
    use crate::backend::detect::{self, BackendRequest, CapturedEnv};
    use crate::backend::iterm2::Iterm2Backend;
    let request = match args.backend {
        BackendChoice::Auto => BackendRequest::Auto,
        BackendChoice::Tmux => BackendRequest::Tmux,
        BackendChoice::Iterm2 => BackendRequest::Iterm2,
        BackendChoice::InProcess => BackendRequest::InProcess,
    };
    // One detection per session, from the environment captured now.
    let choice = detect::detect(
        &CapturedEnv::from_process(),
        request,
        &Iterm2Backend::is_available,
    );
    let claude = args.agent == AgentChoice::Claude;
    if claude && choice.label() == "in-process" {
        bail!(
            "--agent claude needs a pane backend (tmux or iTerm2) and none is usable here: install tmux or drop --agent claude"
        );
    }
    let cwd = std::env::current_dir().wrap_err("cannot read the current directory")?;
    let mut opts = LeadOptions::new(ctx.home.clone(), cwd).with_backend(choice);
    opts.claude_by_default = claude;
    opts.worktree_by_default = args.worktree;
    if let Some(team) = &args.team {
        opts = opts.with_team(team.clone());
    }
    if args.engine == super::args::EngineChoice::Llm {
        let config = crate::agent::llm::LlmConfig::from_environment(args.model.as_deref())
            .map_err(|e| color_eyre::eyre::eyre!("--engine llm: {e}"))?;
        // The model every teammate runs (recorded as `model` in its member entry).
        opts.teammate_model = Some(config.model.clone());
        opts.teammate_llm = Some(config);
    } else if args.model.is_some() {
        bail!("--model is the model of llm teammates: add --engine llm");
    }
    if let Some(model) = &args.lead_model {
        let model = Some(model.as_str()).filter(|m| !m.trim().is_empty());
        let config = crate::agent::llm::LlmConfig::from_environment(model)
            .map_err(|e| color_eyre::eyre::eyre!("--lead-model: {e}"))?;
        opts = opts.with_lead_model(config);
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
