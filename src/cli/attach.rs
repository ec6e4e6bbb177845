//! The screens of the lead server: `teamlead` (attach to the team's server, starting one in
//! the background when none runs) and `teamlead attach [TEAM]`. A screen is the ordinary UI
//! over the socket's channels; it leaves with `/detach` or when its terminal closes, and the
//! team runs on.

use std::io::{IsTerminal, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use color_eyre::eyre::{Result, WrapErr, bail, eyre};

use super::Context;
use super::args::{AttachArgs, LeadArgs};
use super::output::Out;
use crate::lead::controller::LeadOptions;
use crate::protocol::display::visible_line;
use crate::server::ServerError;
use crate::server::client::{self, Connection, Ending};
use crate::server::paths;

/// How long a server started in the background may take to answer.
pub const START_DEADLINE: Duration = Duration::from_secs(20);

/// Screens need a terminal: without one, say what works instead.
pub fn require_terminal() -> Result<()> {
    if std::io::stdin().is_terminal() && std::io::stdout().is_terminal() {
        return Ok(());
    }
    bail!(
        "teamlead needs a terminal (its standard input and output are not one): for a lead without a terminal run `teamlead serve --team TEAM`, and control it with `teamlead ctl TEAM …`"
    )
}

/// The sanitized team name `teamlead` would lead here (`team`, else the directory's name).
pub(super) fn team_here(ctx: &Context, team: Option<&String>) -> Result<String> {
    let cwd = std::env::current_dir().wrap_err("cannot read the current directory")?;
    let mut opts = LeadOptions::new(ctx.home.clone(), cwd);
    if let Some(team) = team {
        opts = opts.with_team(team.clone());
    }
    Ok(opts.team_name()?)
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")
}

/// `teamlead [--team T] …`: the team's server, started when none runs, on this terminal.
pub fn run_default(ctx: &Context, args: &LeadArgs, setup: crate::ui::UiSetup) -> Result<()> {
    let team = team_here(ctx, args.team.as_ref())?;
    let socket = paths::socket_path(&ctx.home, &team)?;
    runtime()?.block_on(async {
        let (conn, notes) = match client::connect(&socket, &team).await {
            Ok(conn) => (conn, ignored_options(args)),
            Err(ServerError::NotRunning { .. }) => {
                let child = start_server(ctx, args, &team)?;
                (wait_for_server(&socket, &team, child).await?, Vec::new())
            }
            Err(e) => return Err(e.into()),
        };
        screen(conn, setup, notes).await
    })
}

/// What to tell a user whose start options meet a lead server that already runs: they
/// shape a lead only when it starts.
fn ignored_options(args: &LeadArgs) -> Vec<String> {
    let given = args.start_options();
    if given.is_empty() {
        return Vec::new();
    }
    vec![format!(
        "This team's lead server was already running, so {} did not apply (start options take effect when a lead starts: `/quit`, or `/quit --keep`, then start it again with them).",
        given.join(", ")
    )]
}

/// `teamlead attach [TEAM]`.
pub fn run_attach(ctx: &Context, args: &AttachArgs) -> Result<()> {
    let config = super::config::load()?;
    let setup = super::session::ui_setup(&config, args.theme)?;
    require_terminal()?;
    runtime()?.block_on(async {
        let conn = match &args.team {
            Some(team) => {
                let team = team_here(ctx, Some(team))?;
                let socket = paths::socket_path(&ctx.home, &team)?;
                client::connect(&socket, &team).await.map_err(|e| match e {
                    ServerError::NotRunning { .. } => eyre!(
                        "no lead server runs for team `{team}` in this home: `teamlead --team {team}` starts one"
                    ),
                    e => e.into(),
                })?
            }
            None => the_one_running(ctx).await?,
        };
        screen(conn, setup, Vec::new()).await
    })
}

/// The one team of the home whose server answers.
pub(super) async fn the_one_running(ctx: &Context) -> Result<Connection> {
    let dir = paths::runtime_dir()?;
    let mut running = Vec::new();
    for team in ctx.home.list_teams().unwrap_or_default() {
        let socket = paths::socket_in(&dir, &ctx.home, &team);
        if !socket.exists() {
            continue;
        }
        if let Ok(conn) = client::connect(&socket, &team).await {
            running.push(conn);
        }
    }
    match running.len() {
        0 => bail!("no team is running in this home: `teamlead` starts one"),
        1 => Ok(running.remove(0)),
        _ => {
            let names: Vec<String> = running.iter().map(|c| c.team.clone()).collect();
            bail!(
                "several teams are running in this home ({}): name one, `teamlead attach TEAM`",
                names.join(", ")
            )
        }
    }
}

/// The UI on this terminal over `conn`, until it leaves.
async fn screen(conn: Connection, setup: crate::ui::UiSetup, notes: Vec<String>) -> Result<()> {
    let team = conn.team.clone();
    let (events, commands, ending) = conn.into_screen(notes).await?;
    let events = super::notify::filter(
        events,
        super::notify::Notify::from_env(),
        setup.focus.clone(),
    );
    let ui = crate::ui::run_tui(events, commands, setup, &mut hand_over).await;
    if ui.is_err() {
        // The terminal is gone (a hang-up): the team runs on, and nobody is left to tell.
        return Ok(());
    }
    let ending = tokio::time::timeout(Duration::from_millis(200), ending)
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or(Ending::Left);
    let team = visible_line(&team);
    match ending {
        Ending::Detached => {
            let _ = Out::new().line(format!(
                "Detached from team `{team}`: it keeps running. `teamlead attach {team}` comes back; `teamlead ctl {team} /quit` ends it."
            ));
        }
        Ending::Exited => {}
        Ending::EndedBy { who, how } => {
            let _ = Out::new().line(ended_by_line(&team, &who, &how));
        }
        Ending::Left => {}
        Ending::Broken(why) => {
            return Err(super::Failure::new(
                1,
                format!(
                    "this screen lost its connection to the lead of team `{team}`: {}. `teamlead attach {team}` connects again; `teamlead ctl {team} status` shows the team",
                    visible_line(&why)
                ),
            )
            .into());
        }
        Ending::Lost => {
            return Err(super::Failure::new(
                1,
                format!(
                    "the lead of team `{team}` went away (its server ended without a word): `teamlead --team {team}` resumes the team"
                ),
            )
            .into());
        }
    }
    Ok(())
}

/// What a screen says on the terminal when another client ended its team.
pub fn ended_by_line(team: &str, who: &str, how: &str) -> String {
    let how = visible_line(how);
    if how.starts_with("/quit --keep") || how.starts_with("/detach") {
        format!(
            "The lead of team `{team}` left, asked by {who} ({how}): the team is kept, and `teamlead --team {team}` resumes it."
        )
    } else {
        format!("Team `{team}` was ended by {who} ({how}).")
    }
}

/// Runs the program a jump hands the terminal to (`tmux attach`, `zellij attach`) on this
/// terminal until the user detaches from it, without holding the runtime (the screen's
/// connection goes on meanwhile); what went wrong is said.
pub fn hand_over(argv: &[String]) -> futures::future::BoxFuture<'static, Result<(), String>> {
    use futures::FutureExt;
    let argv = argv.to_vec();
    async move {
        let Some((program, args)) = argv.split_first() else {
            return Err("is no program".to_string());
        };
        let status = tokio::process::Command::new(program)
            .args(args)
            .status()
            .await
            .map_err(|e| format!("could not start: {e}"))?;
        if status.success() {
            Ok(())
        } else {
            Err(format!("ended with {status}"))
        }
    }
    .boxed()
}

/// Starts `teamlead serve --background` for `team` in its own session, with this
/// invocation's options.
fn start_server(ctx: &Context, args: &LeadArgs, team: &str) -> Result<Child> {
    let exe = std::env::current_exe().wrap_err("cannot find the teamlead executable")?;
    let mut cmd = Command::new(exe);
    if let Some(home) = &ctx.global.home {
        cmd.arg("--home").arg(home);
    }
    for _ in 0..ctx.global.verbose {
        cmd.arg("-v");
    }
    cmd.args(["serve", "--background", "--team", team]);
    let value = |v: Option<clap::builder::PossibleValue>| v.map(|p| p.get_name().to_string());
    if let Some(b) = args.backend {
        cmd.args(["--backend", b.as_str()]);
    }
    if let Some(a) = value(args.agent.and_then(|a| a.to_possible_value())) {
        cmd.args(["--agent", &a]);
    }
    if let Some(e) = value(args.engine.and_then(|e| e.to_possible_value())) {
        cmd.args(["--engine", &e]);
    }
    if let Some(m) = &args.model {
        cmd.args(["--model", m]);
    }
    if let Some(m) = &args.lead_model {
        cmd.arg(format!("--lead-model={m}"));
    }
    if let Some(hook) = &args.permission_hook {
        cmd.args(["--permission-hook", hook]);
    }
    if args.worktree {
        cmd.arg("--worktree");
    }
    if args.no_worktree {
        cmd.arg("--no-worktree");
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // Its own session: the terminal's hang-up never reaches it.
    use std::os::unix::process::CommandExt;
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    tracing::info!("starting the lead server of `{team}` in the background");
    cmd.spawn().wrap_err("cannot start the team's lead server")
}

/// Polls the socket until the server answers; a server that exits first is reported with
/// its last error line.
async fn wait_for_server(socket: &Path, team: &str, mut child: Child) -> Result<Connection> {
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        match client::connect(socket, team).await {
            Ok(conn) => return Ok(conn),
            Err(ServerError::NotRunning { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        if let Ok(Some(status)) = child.try_wait() {
            // Another `teamlead` may have won the race to start it.
            if let Ok(conn) = client::connect(socket, team).await {
                return Ok(conn);
            }
            let mut text = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = err.read_to_string(&mut text);
            }
            let why = text
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| l.trim_start_matches("error: ").to_string())
                .unwrap_or_else(|| format!("it exited ({status})"));
            bail!("{why}");
        }
        if Instant::now() > deadline {
            bail!(
                "the lead server of team `{team}` did not answer within {} s (see the log file)",
                START_DEADLINE.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
