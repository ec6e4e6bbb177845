//! `teamlead serve`: the lead controller without a terminal, behind the team's socket
//! (`crate::server`). In the foreground it says where it listens and runs until the team
//! ends (`/quit` from any client, SIGINT or SIGTERM, or the idle limit: `--idle-exit`, the
//! config file's `server-idle-exit`); a hang-up does not stop it. Started by
//! `teamlead` for itself (`--background`), it lets go of its standard streams once it
//! listens, so the terminal that started it can close.

use color_eyre::eyre::{Result, WrapErr, eyre};
use tokio::sync::mpsc;

use super::Context;
use super::args::ServeArgs;
use super::output::Out;
use super::web;
use crate::lead::contract::LeadCommand;
use crate::lead::controller::{Lead, QUIT_TIMEOUT};
use crate::protocol::display::visible_line;
use crate::server::policy::{HOOK_TIMEOUT, PolicyHook};
use crate::server::wire::ServerMsg;
use crate::server::{hub, listener, paths};

/// `teamlead serve`.
pub fn run(ctx: &Context, args: &ServeArgs) -> Result<()> {
    return_large_blocks_to_the_system();
    let config = super::config::load()?;
    let opts = super::session::lead_options(ctx, &args.lead, &config)?;
    let idle_exit = match &args.idle_exit {
        Some(text) => crate::config::parse_idle_exit(text)
            .map_err(|why| eyre!("--idle-exit {text:?}: {why}"))?,
        None => config.server_idle_exit,
    };
    let push = push_options(config.push.as_ref())?;
    let web = match &args.web {
        Some(addr) => Some(web::web_options(
            addr,
            ("--web-allow", args.web_allow.as_deref()),
            &config,
        )?),
        None => None,
    };
    let args = &ServeArgs {
        lead: super::session::with_defaults(&args.lead, &config),
        background: args.background,
        idle_exit: None,
        web: None,
        web_allow: None,
    };
    let team = opts.team_name()?;
    let socket = paths::socket_path(&ctx.home, &team)?;
    // Sockets of servers that died (SIGKILL leaves them) go now.
    for stale in paths::remove_stale_sockets() {
        tracing::info!("removed the stale lead socket {}", stale.display());
    }
    let runtime = crate::lead::runtime::build().wrap_err("cannot start the async runtime")?;
    let result = runtime.block_on(async move {
        let (handle, events) = Lead::start(opts).wrap_err("cannot start the lead")?;
        let bound = listener::bind(&socket)?;
        tracing::info!("lead server of `{team}` listening on {}", socket.display());
        if args.background {
            let_go_of_the_terminal();
        } else {
            let _ = Out::new().line(format!(
                "teamlead: serving team `{}` on {} (teamlead attach {0}; teamlead ctl {0} /quit ends it)",
                visible_line(&team),
                socket.display()
            ));
        }
        let (hub_tx, hub_rx) = mpsc::channel(1024);
        let hello = ServerMsg::Hello {
            team: team.clone(),
            pid: std::process::id(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        };
        let policy = args.lead.permission_hook.clone().map(|command| PolicyHook {
            command,
            timeout: HOOK_TIMEOUT,
        });
        let hub = tokio::spawn(hub::run(
            events,
            hub_rx,
            handle.commands.clone(),
            hub::HubOptions {
                team: team.clone(),
                policy,
                idle_exit,
                push,
            },
        ));
        if let Some(options) = web {
            let upstream = crate::web::upstream::Upstream::from_hub(hub_tx.clone())
                .await
                .ok_or_else(|| eyre!("the lead server ended before its web view started"))?;
            let running = crate::web::start(upstream, options.clone())
                .await
                .wrap_err_with(|| format!("cannot listen on {}", options.addr))?;
            if !args.background {
                web::announce(&running, &options.allow, &team)?;
            }
        }
        let writers = tokio_util::task::TaskTracker::new();
        let accept = tokio::spawn({
            let writers = writers.clone();
            async move {
            listener::accept_loop(&bound.listener, hub_tx, hello, &writers).await;
            // The socket goes before the process: nobody connects to a server that ended.
            drop(bound);
            }
        });
        let signals = tokio::spawn(quit_on_signals(handle.commands.clone()));
        let _ = hub.await;
        let _ = accept.await;
        // What the hub queued last (the lead's `Exited`) is written before the runtime goes.
        writers.close();
        if tokio::time::timeout(CLIENTS_FLUSH_LIMIT, writers.wait())
            .await
            .is_err()
        {
            tracing::warn!("lead server: a client did not take its last messages in time");
        }
        signals.abort();
        Ok(())
    });
    runtime.shutdown_timeout(QUIT_TIMEOUT);
    result
}

/// How long an ending server waits for its clients' writers to write their last messages (a
/// client that stopped reading must not hold the server).
const CLIENTS_FLUSH_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

/// SIGINT and SIGTERM quit the team as `/quit` does; SIGHUP is ignored (the server has no
/// terminal to lose).
async fn quit_on_signals(commands: mpsc::Sender<LeadCommand>) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("lead server: cannot watch signals");
        return;
    };
    loop {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => continue,
        }
        tracing::info!("lead server: asked to stop by a signal");
        if commands.send(LeadCommand::Quit).await.is_err() {
            return;
        }
    }
}

/// Points the standard streams at /dev/null (the starter reads stderr only until the socket
/// answers; a write to a closed pipe must never reach the server).
fn let_go_of_the_terminal() {
    use std::os::fd::AsRawFd;
    let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    else {
        return;
    };
    for fd in 0..=2 {
        // SAFETY: dup2 onto the standard descriptors with a valid open descriptor.
        unsafe {
            libc::dup2(null.as_raw_fd(), fd);
        }
    }
}

/// A server lives long and may read a teammate's inbox entry of many megabytes once: glibc
/// would otherwise raise its mmap threshold to the size of the largest block freed (up to
/// 32 MiB) and keep every later block below it in its heaps after it is freed, so the RSS would
/// stay at the peak of one hostile frame. A fixed threshold (256 KiB) gives large blocks back
/// when they are freed; the server's memory is then what it keeps (`lead::shown`).
fn return_large_blocks_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets an allocator parameter; called before the runtime starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

/// `[push]` of the config file as the hub takes it: the token read from its variable now (a
/// variable named but not set is an error, not a push that the service refuses later).
fn push_options(
    settings: Option<&crate::config::PushSettings>,
) -> Result<Option<crate::server::push::PushOptions>> {
    let Some(s) = settings else {
        return Ok(None);
    };
    let token = match &s.token_env {
        Some(name) => Some(std::env::var(name).map_err(|_| {
            eyre!("[push] token-env names {name}, which is not set: export it, or remove token-env")
        })?),
        None => None,
    };
    Ok(Some(crate::server::push::PushOptions {
        url: s.url.clone(),
        token,
        after: s.after,
        web_url: s.web_url.clone(),
    }))
}
