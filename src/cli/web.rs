//! `teamlead web [TEAM]`: the web view of a running team from its own process, a client of the
//! team's socket like `attach` (`crate::web`); it runs until the team ends or it is stopped
//! (Ctrl-C). `serve --web` runs the same view inside the server. Both print the one-time
//! login link on the terminal only (never to the log), and what an address beyond loopback
//! exposes.

use std::net::SocketAddr;

use color_eyre::eyre::{Result, WrapErr, eyre};

use super::Context;
use super::args::WebArgs;
use super::output::Out;
use crate::protocol::display::visible_line;
use crate::server::ServerError;
use crate::server::client;
use crate::server::paths;
use crate::web::{Allow, Running, WebOptions};

/// The options of `--web ADDR` / `--addr` and `--allow`, or why they are wrong.
/// The web view's address and what it may do; `flag` is the command line's list and the name
/// of its option (`--allow`, `--web-allow`).
pub fn web_options(
    addr: &str,
    flag: (&str, Option<&str>),
    config: &crate::config::Config,
) -> Result<WebOptions> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        eyre!(
            "{:?} is not an address to listen on (like 127.0.0.1:8765, or 0.0.0.0:8765 beyond this machine)",
            visible_line(addr)
        )
    })?;
    let allow = allow_in_force(flag, config)?;
    Ok(WebOptions { addr, allow })
}

/// What the web view may do: the flag's list, else the config file's `web-allow`, else
/// `read,answer,message`; a wrong word names where it was written.
fn allow_in_force(flag: (&str, Option<&str>), config: &crate::config::Config) -> Result<Allow> {
    let (option, flag) = flag;
    match (flag, &config.web_allow) {
        (Some(list), _) => Allow::parse(list).map_err(|why| eyre!("{option}: {why}")),
        (None, Some(list)) => Allow::parse(list).map_err(|why| {
            let file = config.path.as_deref().map_or_else(
                || "the config file".to_string(),
                |p| p.display().to_string(),
            );
            eyre!("web-allow = {:?} in {file}: {why}", visible_line(list))
        }),
        (None, None) => Allow::parse(crate::web::DEFAULT_ALLOW).map_err(|why| eyre!("{why}")),
    }
}

/// Prints where the view is, its login link, and what a wider address exposes.
pub fn announce(running: &Running, allow: &Allow, team: &str) -> Result<()> {
    let mut out = Out::new();
    out.line(format!(
        "teamlead: web view of team `{}` on http://{} (may: {})",
        visible_line(team),
        running.addr,
        allow.words().join(", ")
    ))?;
    if let Some(exposure) = running.exposure(allow) {
        out.line(exposure)?;
    }
    out.line(format!(
        "teamlead: log in once with {} (the link works once; keep it to yourself)",
        running.login_url
    ))?;
    tracing::info!("web view listening on {}", running.addr);
    Ok(())
}

/// `teamlead web`.
pub fn run(ctx: &Context, args: &WebArgs) -> Result<()> {
    let config = super::config::load()?;
    let options = web_options(&args.addr, ("--allow", args.allow.as_deref()), &config)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    runtime.block_on(async move {
        let conn = match &args.team {
            Some(team) => {
                let team = super::attach::team_here(ctx, Some(team))?;
                let socket = paths::socket_path(&ctx.home, &team)?;
                client::connect(&socket, &team).await.map_err(|e| match e {
                    ServerError::NotRunning { .. } => eyre!(
                        "no lead server runs for team `{team}` in this home: `teamlead --team {team}` or `teamlead serve --team {team}` starts one"
                    ),
                    e => e.into(),
                })?
            }
            None => super::attach::the_one_running(ctx).await?,
        };
        let team = conn.team.clone();
        let upstream = crate::web::upstream::Upstream::from_connection(conn);
        let running = crate::web::start(upstream, options.clone())
            .await
            .wrap_err_with(|| format!("cannot listen on {}", options.addr))?;
        announce(&running, &options.allow, &team)?;
        let Running { pump, server, .. } = running;
        tokio::select! {
            _ = pump => {
                let _ = Out::new().line(format!("teamlead: team `{}` has ended; the web view stops", visible_line(&team)));
            }
            _ = tokio::signal::ctrl_c() => {}
        }
        server.abort();
        Ok(())
    })
}
