//! `teamlead teammate …`: starts the teammate runtime as its own process (what a pane runs),
//! with the same flags as `claude`. Checks the flags, builds the configuration (for
//! `--engine llm`, the model service from `--model`, the environment and the config file),
//! runs it.

use color_eyre::eyre::{Result, bail, eyre};

use super::Context;
use super::args::{EngineChoice, TeammateArgs};
use crate::agent::events::StopReason;
use crate::agent::llm::LlmConfig;
use crate::agent::runtime::{EngineKind, TeammateConfig};
use crate::protocol::names::check_path_component;
use crate::protocol::{AgentId, Color};

/// Runs one teammate until it shuts down.
pub fn run(ctx: &Context, args: &TeammateArgs) -> Result<()> {
    let config = config_from(ctx, args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let reason = runtime.block_on(crate::agent::process::run(
        config,
        Box::new(std::io::stdout()),
    ));
    // A blocking read still in flight must not keep a stopped teammate alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match reason {
        StopReason::Shutdown | StopReason::Killed => Ok(()),
        StopReason::Failed(why) => bail!("the teammate stopped: {why}"),
    }
}

/// The runtime's configuration from the command line and the pane's environment.
pub fn config_from(ctx: &Context, args: &TeammateArgs) -> Result<TeammateConfig> {
    let id = AgentId::parse(&args.agent_id)
        .ok_or_else(|| eyre!("--agent-id must be NAME@TEAM, got `{}`", args.agent_id))?;
    if id.name != args.agent_name || id.team != args.team_name {
        bail!(
            "--agent-id `{}` does not match --agent-name `{}` and --team-name `{}`",
            args.agent_id,
            args.agent_name,
            args.team_name
        );
    }
    check_path_component(&args.agent_name)?;
    check_path_component(&args.team_name)?;
    if !ctx.home.config_path(&args.team_name)?.exists() {
        bail!(
            "team `{}` does not exist under {}",
            args.team_name,
            ctx.home.root.display()
        );
    }
    let cwd = std::env::current_dir()?;
    let mut config = TeammateConfig::new(&ctx.home, &args.team_name, &args.agent_name, cwd);
    config.color = args
        .agent_color
        .as_deref()
        .and_then(Color::parse)
        .map(|c| c.as_str().to_string());
    config.mode = args.start_mode();
    if let EngineChoice::Llm = args.engine {
        // One line, never a key: the flag over the environment over the config file.
        let llm = LlmConfig::from_environment(args.model.as_deref()).map_err(|e| eyre!("{e}"))?;
        config.engine = EngineKind::llm(llm);
    }
    config.plan_mode_required = args.plan_mode_required;
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    (config.pane_id, config.backend_type) = own_pane(&env);
    Ok(config)
}

/// The pane this teammate runs in and its backend, from the variables its terminal sets
/// (a multiplexer's before the terminal's own).
fn own_pane(env: &dyn Fn(&str) -> Option<String>) -> (String, String) {
    use crate::backend::BackendKind;
    let found = if let Some(pane) = env("TMUX_PANE") {
        Some((pane, BackendKind::Tmux))
    } else if let (Some(_), Some(pane)) = (env("ZELLIJ"), env("ZELLIJ_PANE_ID")) {
        Some((
            crate::backend::zellij::normalize_pane_id(&pane),
            BackendKind::Zellij,
        ))
    } else if let Some(window) = env("KITTY_WINDOW_ID") {
        Some((window, BackendKind::Kitty))
    } else if let Some(pane) = env("WEZTERM_PANE") {
        Some((pane, BackendKind::Wezterm))
    } else {
        env("ITERM_SESSION_ID").map(|session| {
            (
                crate::backend::iterm2::lead_session_uuid(&session),
                BackendKind::Iterm2,
            )
        })
    };
    match found {
        Some((pane, kind)) => (pane, kind.as_str().to_string()),
        None => (String::new(), BackendKind::Tmux.as_str().to_string()),
    }
}
