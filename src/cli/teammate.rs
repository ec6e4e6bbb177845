//! `teamlead teammate …`: starts the teammate runtime as its own process (what a pane runs),
//! with the same flags as `claude`. Checks the flags, builds the configuration (for
//! `--engine llm`, the model service from `--model`, the environment and the config file),
//! runs it.

use color_eyre::eyre::{Result, bail, eyre};

use super::Context;
use super::args::{EngineChoice, TeammateArgs};
use crate::agent::EngineKind;
use crate::agent::events::StopReason;
use crate::agent::llm::LlmConfig;
use crate::agent::runtime::TeammateConfig;
use crate::protocol::names::check_path_component;
use crate::protocol::{AgentId, Color};

/// Runs one teammate until it shuts down.
pub fn run(ctx: &Context, args: &TeammateArgs) -> Result<()> {
    let (config, engine) = config_from(ctx, args)?;
    // One thread is enough for one teammate: its loop waits on its inbox, its model or its
    // command; file and process work goes to the blocking pool as everywhere. No worker thread
    // (and no allocator arena of its own) beside the main one.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let reason = runtime.block_on(crate::agent::process::run(
        config,
        engine,
        Box::new(std::io::stdout()),
    ));
    // A blocking read still in flight must not keep a stopped teammate alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(200));
    match reason {
        StopReason::Shutdown | StopReason::Killed => Ok(()),
        StopReason::Failed(why) => bail!("the teammate stopped: {why}"),
    }
}

/// The runtime's configuration and engine from the command line and the pane's environment.
pub fn config_from(ctx: &Context, args: &TeammateArgs) -> Result<(TeammateConfig, EngineKind)> {
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
    let mut engine = EngineKind::Shell;
    if let EngineChoice::Llm = args.engine {
        // One line, never a key: the flag over the environment over the config file.
        let llm = LlmConfig::from_environment(args.model.as_deref()).map_err(|e| eyre!("{e}"))?;
        engine = EngineKind::llm(llm);
    }
    config.plan_mode_required = args.plan_mode_required;
    let env = crate::backend::detect::CapturedEnv::from_process();
    (config.pane_id, config.backend_type) = own_pane(&env);
    Ok((config, engine))
}

/// The pane this teammate runs in and its backend, from the variables its terminal sets: the
/// first terminal of the registry that finds one (a multiplexer's before the terminal's own);
/// tmux with no pane when none does.
fn own_pane(env: &crate::backend::detect::CapturedEnv) -> (String, String) {
    use crate::backend::BackendKind;
    use crate::backend::terminals::TERMINALS;
    TERMINALS
        .iter()
        .find_map(|t| Some((t.own_pane(env)?, t.about().kind)))
        .map(|(pane, kind)| (pane, kind.as_str().to_string()))
        .unwrap_or_else(|| (String::new(), BackendKind::Tmux.as_str().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::detect::CapturedEnv;

    #[test]
    fn the_own_pane_is_the_first_terminals() {
        let pane = |vars: &[(&str, &str)]| own_pane(&CapturedEnv::from_map(vars.iter().copied()));
        let (p, k) = pane(&[("TMUX_PANE", "%4"), ("KITTY_WINDOW_ID", "3")]);
        assert_eq!((p.as_str(), k.as_str()), ("%4", "tmux"));
        let (p, k) = pane(&[
            ("ZELLIJ", "0"),
            ("ZELLIJ_PANE_ID", "7"),
            ("KITTY_WINDOW_ID", "3"),
        ]);
        assert_eq!((p.as_str(), k.as_str()), ("terminal_7", "zellij"));
        let (p, k) = pane(&[("ITERM_SESSION_ID", "w0t0p0:ABC")]);
        assert_eq!((p.as_str(), k.as_str()), ("ABC", "iterm2"));
        let (p, k) = pane(&[("WEZTERM_PANE", "9")]);
        assert_eq!((p.as_str(), k.as_str()), ("9", "wezterm"));
        let (p, k) = pane(&[]);
        assert_eq!((p.as_str(), k.as_str()), ("", "tmux"));
    }
}
