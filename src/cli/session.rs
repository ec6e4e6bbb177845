//! The interactive parts of the command line: the lead session and the demo (the lead
//! controller and the terminal UI on one tokio runtime), the teammate runtime and `clean`.

use std::time::Duration;

use color_eyre::eyre::{Result, WrapErr, bail};

use super::Context;
use super::args::{
    AgentChoice, CleanArgs, DemoArgs, EngineChoice, LeadArgs, TeammateArgs, ThemeChoice,
};
use crate::config::Config;
use crate::lead::contract::LeadCommand;
use crate::lead::controller::{Lead, LeadOptions, QUIT_TIMEOUT};
use crate::lead::demo::{DemoLeftovers, setup_demo};

/// How long the controller may keep cleaning up after the UI has gone.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Starts the controller with `opts` and runs the UI (`setup`: its keys and colours) until the
/// controller exits.
fn run_session(opts: LeadOptions, setup: crate::ui::UiSetup) -> Result<()> {
    // A panic of the main thread (the UI) kills the lead's panes and removes its team first.
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().name() == Some("main") {
            crate::lead::emergency::run();
        }
        previous(info);
    }));
    let runtime = crate::lead::runtime::build().wrap_err("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        let (handle, events) = Lead::start(opts).wrap_err("cannot start the lead session")?;
        let ui = crate::ui::run_tui(
            events,
            handle.commands.clone(),
            setup,
            &mut super::attach::hand_over,
        )
        .await;
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

/// The UI's keys and colours from the config file (and the `--theme` flag).
pub fn ui_setup(config: &Config, theme: Option<ThemeChoice>) -> Result<crate::ui::UiSetup> {
    Ok(crate::ui::UiSetup {
        keymap: super::config::keymap(config)?,
        colors: super::config::colors(theme, config),
        focus: crate::ui::focus::TerminalFocus::default(),
    })
}

/// The session's options: each flag given, else the config file's default, else the built-in
/// one.
pub fn with_defaults(args: &LeadArgs, config: &Config) -> LeadArgs {
    use crate::config::{Agent, Engine};
    let mut out = args.clone();
    out.backend = args.backend.or(config.backend);
    out.agent = args.agent.or(config.agent.map(|a| match a {
        Agent::Builtin => AgentChoice::Builtin,
        Agent::Claude => AgentChoice::Claude,
    }));
    out.engine = args.engine.or(config.engine.map(|e| match e {
        Engine::Shell => EngineChoice::Shell,
        Engine::Llm => EngineChoice::Llm,
    }));
    out.model = args.model.clone().or(config.model.clone());
    out.lead_model = args.lead_model.clone().or(config.lead_model.clone());
    out.worktree = !args.no_worktree && (args.worktree || config.worktree.unwrap_or(false));
    out.permission_hook = args
        .permission_hook
        .clone()
        .or(config.permission_hook.clone())
        .filter(|c| !c.trim().is_empty());
    out
}

/// `teamlead [--team NAME] [--backend …] [--agent …]`: the interactive lead session, as a
/// screen of the team's lead server (started in the background when none runs), or in this
/// process with `--no-server`.
pub fn run_lead(ctx: &Context, args: &LeadArgs) -> Result<()> {
    let config = super::config::load()?;
    // Bad options are told before anything else (the server would refuse them too).
    let opts = lead_options(ctx, args, &config)?;
    let setup = ui_setup(&config, args.theme)?;
    super::attach::require_terminal()?;
    if args.no_server && with_defaults(args, &config).permission_hook.is_some() {
        bail!(
            "the permission hook runs in the lead server: drop --no-server (or TEAMLEAD_NO_SERVER)"
        );
    }
    if !args.no_server {
        return super::attach::run_default(ctx, args, setup);
    }
    run_session(opts, setup)
}

/// The lead's options from the flags, the config file and the environment (the backend is
/// detected here, once per session).
pub fn lead_options(ctx: &Context, args: &LeadArgs, config: &Config) -> Result<LeadOptions> {
    use crate::backend::detect::{self, CapturedEnv};
    let args = &with_defaults(args, config);
    let request = args.backend.unwrap_or_default();
    // One detection per session, from the environment captured now.
    let choice = detect::detect(
        &CapturedEnv::from_process(),
        request,
        &crate::backend::terminals::answers,
    );
    let claude = args.agent == Some(AgentChoice::Claude);
    if claude && choice.label() == "in-process" {
        bail!(
            "--agent claude needs a pane backend ({}) and none is usable here: install tmux or drop --agent claude",
            crate::protocol::BackendKind::pane_terminals()
        );
    }
    let cwd = std::env::current_dir().wrap_err("cannot read the current directory")?;
    let mut opts = LeadOptions::new(ctx.home.clone(), cwd).with_backend(choice);
    opts.claude_by_default = claude;
    opts.worktree_by_default = args.worktree;
    opts.prices = crate::protocol::pricing::PriceTable::built_in().with_overrides(&config.prices);
    if let Some(timeout) = config.shutdown_timeout {
        opts.shutdown_timeout = timeout;
    }
    opts.shutdown_force = config.shutdown_force.unwrap_or(false);
    opts.retry_failed_tasks = config.retry_failed_tasks.unwrap_or(false);
    opts.budget_teammate = config.budget_teammate;
    opts.budget_team = config.budget_team;
    opts.park = crate::lead::park::ParkSettings {
        resume: config.resume_after_limit.unwrap_or(false),
        until: config.resume_until,
    };
    if !config.hosts.is_empty() {
        // Teammates on other hosts (`/spawn --host`): teamlead's own ssh masters live under
        // the runtime directory, as for `teamlead hosts`.
        let dir = crate::server::paths::runtime_dir()?.join("ssh");
        crate::server::paths::ensure_private(&dir)?;
        opts.hosts = config.hosts.clone();
        opts.ssh_dir = Some(dir);
    }
    if let Some(team) = &args.team {
        opts = opts.with_team(team.clone());
    }
    if args.engine == Some(EngineChoice::Llm) {
        let config = crate::agent::llm::LlmConfig::from_environment(args.model.as_deref())
            .map_err(|e| color_eyre::eyre::eyre!("--engine llm: {e}"))?;
        // The model every teammate runs (recorded as `model` in its member entry).
        opts.teammate_model = Some(config.model.clone());
        opts.teammate_llm = Some(config);
    } else if args.model.is_some() {
        bail!(
            "--model is the model of llm teammates: add --engine llm (or `engine = \"llm\"` in the config file)"
        );
    }
    if let Some(model) = &args.lead_model {
        let model = Some(model.as_str()).filter(|m| !m.trim().is_empty());
        let config = crate::agent::llm::LlmConfig::from_environment(model)
            .map_err(|e| color_eyre::eyre::eyre!("--lead-model: {e}"))?;
        opts = opts.with_lead_model(config);
    }
    Ok(opts)
}

/// `teamlead demo`: in the home given with `--home` or `TEAMLEAD_HOME` (whatever it made
/// there is removed at the end), else in a temporary home removed at the end.
pub fn run_demo(ctx: &Context, _args: &DemoArgs) -> Result<()> {
    let config = super::config::load()?;
    let setup = ui_setup(&config, None)?;
    let plan = setup_demo(&ctx.home).wrap_err("cannot prepare the demo")?;
    let _leftovers = DemoLeftovers::before(&ctx.home, &plan);
    run_session(
        LeadOptions::new(ctx.home.clone(), ".").with_demo(plan),
        setup,
    )
}

/// The home of `teamlead demo` when none was given (`--home`, `TEAMLEAD_HOME`): a temporary
/// directory, removed when the returned guard is dropped. `CLAUDE_CONFIG_DIR` is Claude Code's
/// own home: the demo stays out of it.
pub fn demo_home(flag: Option<&std::path::Path>) -> Result<Option<tempfile::TempDir>> {
    let given = flag.is_some() || std::env::var_os("TEAMLEAD_HOME").is_some_and(|v| !v.is_empty());
    if given {
        return Ok(None);
    }
    let dir = tempfile::Builder::new()
        .prefix("teamlead-demo-home-")
        .tempdir()
        .wrap_err("cannot make a temporary home for the demo")?;
    Ok(Some(dir))
}

/// `teamlead teammate …`: the teammate runtime.
pub fn run_teammate(ctx: &Context, args: &TeammateArgs) -> Result<()> {
    super::teammate::run(ctx, args)
}

/// `teamlead clean [--orphans] [--dry-run]`.
pub fn run_clean(ctx: &Context, args: &CleanArgs) -> Result<()> {
    super::clean::run(ctx, args)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{BackendKind, BackendRequest};

    #[test]
    fn flags_win_over_the_config_file() {
        let config = Config::parse(
            std::path::Path::new("/c/config.toml"),
            "backend = \"tmux\"\nagent = \"claude\"\nengine = \"llm\"\nmodel = \"opus\"\nworktree = true\n"
                .to_string(),
        )
        .unwrap();
        let none = with_defaults(&LeadArgs::default(), &config);
        assert_eq!(none.backend, Some(BackendRequest::Kind(BackendKind::Tmux)));
        assert_eq!(none.agent, Some(AgentChoice::Claude));
        assert_eq!(none.engine, Some(EngineChoice::Llm));
        assert_eq!(none.model.as_deref(), Some("opus"));
        assert!(none.worktree);
        let flags = LeadArgs {
            backend: Some(BackendRequest::Kind(BackendKind::InProcess)),
            agent: Some(AgentChoice::Builtin),
            engine: Some(EngineChoice::Shell),
            model: Some("haiku".to_string()),
            no_worktree: true,
            ..LeadArgs::default()
        };
        let both = with_defaults(&flags, &config);
        assert_eq!(
            both.backend,
            Some(BackendRequest::Kind(BackendKind::InProcess))
        );
        assert_eq!(both.agent, Some(AgentChoice::Builtin));
        assert_eq!(both.engine, Some(EngineChoice::Shell));
        assert_eq!(both.model.as_deref(), Some("haiku"));
        assert!(!both.worktree);
        let defaults = with_defaults(&LeadArgs::default(), &Config::default());
        assert_eq!((defaults.backend, defaults.worktree), (None, false));
    }
}
