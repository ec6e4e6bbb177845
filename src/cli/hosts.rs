//! `teamlead hosts add|list|remove|check|install`: the `[hosts.NAME]` tables of the config
//! file, and what each host has, found through `backend::hosts` (one ssh master per host,
//! every call under a deadline). `check` writes nothing on the host; `install` writes only
//! `~/.local/bin/teamlead` there.

use std::collections::HashMap;

use color_eyre::eyre::{Result, eyre};

use super::Failure;
use super::args::{HostNameArg, HostsAddArgs, HostsArgs, HostsCommand, HostsListArgs};
use super::output::Out;
use crate::backend::hosts::{Connection, Connector, HostError, Probe, install, probe};
use crate::config::{self, Config, HostConfig, hosts as rules};

/// `teamlead hosts …`.
pub fn run(args: &HostsArgs, home: Option<&std::path::Path>) -> Result<()> {
    match &args.command {
        HostsCommand::Add(a) => add(a),
        HostsCommand::List(a) => list(a, home),
        HostsCommand::Remove(a) => remove(a),
        HostsCommand::Check(a) => check(a),
        HostsCommand::Install(a) => install_on(a),
    }
}

fn config_path() -> Result<std::path::PathBuf> {
    config::path().ok_or_else(|| eyre!("no config directory: set TEAMLEAD_CONFIG"))
}

/// Teamlead's own ssh control sockets: `<runtime dir>/ssh`, private to the user.
fn connector() -> Result<Connector> {
    let dir = crate::server::paths::runtime_dir()?.join("ssh");
    crate::server::paths::ensure_private(&dir)?;
    Ok(Connector::new(dir))
}

/// The host `name` of the config file.
fn find(name: &str) -> Result<(Config, HostConfig)> {
    let config = super::config::load()?;
    let host = config.hosts.iter().find(|h| h.name == name).cloned();
    match host {
        Some(host) => Ok((config, host)),
        None => {
            let file = config
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "the config file".to_string());
            Err(eyre!(
                "no host `{name}` in {file}: `teamlead hosts add {name} [user@]host` adds it, `teamlead hosts list` shows the hosts"
            ))
        }
    }
}

fn add(args: &HostsAddArgs) -> Result<()> {
    let problems = [
        rules::host_name_problem(&args.name),
        rules::destination_problem(&args.destination),
        (args.port == Some(0)).then(|| "--port 0 is not a port: give 1 to 65535".to_string()),
    ];
    let option_problems = args.options.iter().filter_map(|o| rules::option_problem(o));
    if let Some(why) = problems.into_iter().flatten().chain(option_problems).next() {
        return Err(eyre!(why));
    }
    let host = HostConfig {
        name: args.name.clone(),
        destination: args.destination.clone(),
        port: args.port,
        options: args.options.clone(),
        dir: args.dir.clone(),
        home: args.remote_home.clone(),
    };
    let path = config_path()?;
    config::edit::add_host(&path, &host)?;
    Out::new().line(format!(
        "added host {} ({}) to {}; `teamlead hosts check {}` says whether it is ready",
        host.name,
        shown(&host),
        path.display(),
        host.name
    ))?;
    Ok(())
}

fn remove(args: &HostNameArg) -> Result<()> {
    let (_, host) = find(&args.name)?;
    let path = config_path()?;
    config::edit::remove_host(&path, &host.name)?;
    if let Ok(connector) = connector() {
        connector.connection(&host).close();
    }
    Out::new().line(format!(
        "removed host {} from {}",
        host.name,
        path.display()
    ))?;
    Ok(())
}

/// `me@box:2222`.
fn shown(host: &HostConfig) -> String {
    match host.port {
        Some(port) => format!("{}:{port}", host.destination),
        None => host.destination.clone(),
    }
}

/// One line of `check`: `ok` or `FAIL`, what, and what to do.
struct Line {
    ok: bool,
    text: String,
}

/// What `check` says about a host that answered.
fn verdicts(host: &HostConfig, probe: &Probe) -> Vec<Line> {
    let name = &host.name;
    let ok = |text: String| Line { ok: true, text };
    let fail = |text: String| Line { ok: false, text };
    let here = env!("CARGO_PKG_VERSION");
    let install_hint = install_command(name, probe);
    let mut lines = vec![
        ok(format!(
            "ssh: {} reached (host key known, key accepted)",
            shown(host)
        )),
        ok(format!("system: {} (home {})", probe.system, probe.home)),
    ];
    lines.push(match (&probe.teamlead, probe.version_number()) {
        (None, _) => fail(format!("no teamlead on the host: {install_hint}")),
        (Some(path), None) => fail(format!(
            "teamlead at {path} does not run on the host: {install_hint}"
        )),
        (Some(path), Some(v)) if v != here => fail(format!(
            "wrong teamlead version on the host: {v} at {path}, this one is {here}: {install_hint}"
        )),
        (Some(path), Some(v)) => ok(format!("teamlead: {v} at {path}")),
    });
    lines.push(match &probe.tmux {
        Some(v) => ok(format!("tmux: {v}")),
        None => fail(
            "no tmux on the host: install it there (its package `tmux`): teammates run in a tmux server on the host"
                .to_string(),
        ),
    });
    if let (Some(dir), Some(exists)) = (&host.dir, probe.dir_exists) {
        lines.push(if exists {
            ok(format!("dir: {dir}"))
        } else {
            fail(format!(
                "dir {dir} does not exist on the host: make it there, or change `dir` of [hosts.{name}]"
            ))
        });
    }
    lines
}

/// What makes the host's teamlead this one: `hosts install`, or building it there.
fn install_command(name: &str, probe: &Probe) -> String {
    if probe.same_platform() {
        format!("run `teamlead hosts install {name}`")
    } else {
        format!(
            "the host is {} and this teamlead is built for {} {}: build it there with `cargo install --locked --root ~/.local --path <teamlead's source>`",
            probe.system,
            std::env::consts::OS,
            std::env::consts::ARCH
        )
    }
}

fn check(args: &HostNameArg) -> Result<()> {
    let (_, host) = find(&args.name)?;
    let connection = connector()?.connection(&host);
    let lines = match probe(&connection) {
        Ok(found) => verdicts(&host, &found),
        Err(e) => vec![Line {
            ok: false,
            text: e.to_string(),
        }],
    };
    let mut out = Out::new();
    for line in &lines {
        let mark = if line.ok { "ok  " } else { "FAIL" };
        out.line(format!("{mark}  {}", line.text))?;
    }
    let failed = lines.iter().filter(|l| !l.ok).count();
    if failed > 0 {
        return Err(Failure::new(
            1,
            format!(
                "host {} is not ready: {failed} problem{} above",
                host.name,
                if failed == 1 { "" } else { "s" }
            ),
        )
        .into());
    }
    out.line(format!("host {} is ready", host.name))?;
    Ok(())
}

fn install_on(args: &HostNameArg) -> Result<()> {
    let (_, host) = find(&args.name)?;
    let connection = connector()?.connection(&host);
    let found = probe(&connection)?;
    let mut out = Out::new();
    if !found.same_platform() {
        out.line(install_command(&host.name, &found))?;
        return Err(Failure::new(1, "").into());
    }
    let binary =
        std::env::current_exe().map_err(|e| eyre!("cannot find this teamlead's own file: {e}"))?;
    let version = install(&connection, &binary)?;
    out.line(format!(
        "installed {version} on {} at {}/{}",
        host.name,
        found.home,
        crate::backend::hosts::probe::INSTALL_PATH
    ))?;
    Ok(())
}

/// One host of `list`.
#[derive(serde::Serialize)]
struct Listed {
    #[serde(flatten)]
    host: HostConfig,
    reachable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    teamlead_version: Option<String>,
    tmux: Option<String>,
    /// The teammates the teams of this home run on the host (`name@team`), from the lead's
    /// team files; `None` when the home cannot be read.
    teammates: Option<Vec<String>>,
}

fn listed(connection: &Connection) -> Listed {
    let (probe, error): (Option<Probe>, Option<HostError>) = match probe(connection) {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e)),
    };
    Listed {
        host: connection.host.clone(),
        reachable: probe.is_some(),
        error: error.map(|e| e.to_string()),
        system: probe.as_ref().map(|p| p.system.clone()),
        teamlead_version: probe
            .as_ref()
            .and_then(|p| p.version_number().map(str::to_string)),
        tmux: probe.as_ref().and_then(|p| p.tmux.clone()),
        teammates: None,
    }
}

/// The teammates of every team in `home` that run on each host (`name@team`, sorted).
fn teammates_by_host(home: Option<&std::path::Path>) -> Option<HashMap<String, Vec<String>>> {
    let home = crate::store::Home::resolve(home).ok()?;
    let mut by_host: HashMap<String, Vec<String>> = HashMap::new();
    for team in home.list_teams().ok()? {
        let Ok(file) = crate::store::read_team(&home, &team) else {
            continue;
        };
        for member in &file.members {
            if let Some(host) = member.host() {
                by_host
                    .entry(host.to_string())
                    .or_default()
                    .push(format!("{}@{team}", member.name));
            }
        }
    }
    by_host.values_mut().for_each(|names| names.sort());
    Some(by_host)
}

fn list(args: &HostsListArgs, home: Option<&std::path::Path>) -> Result<()> {
    let config = super::config::load()?;
    let mut out = Out::new();
    if config.hosts.is_empty() && !args.json {
        out.line("no hosts: `teamlead hosts add NAME [user@]host` adds one")?;
        return Ok(());
    }
    let connector = connector()?;
    // Every host at once: one down host costs its deadline, not everyone's.
    let rows: Vec<Listed> = std::thread::scope(|scope| {
        let handles: Vec<_> = config
            .hosts
            .iter()
            .map(|h| {
                let connection = connector.connection(h);
                scope.spawn(move || listed(&connection))
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let by_host = teammates_by_host(home);
    let rows: Vec<Listed> = rows
        .into_iter()
        .map(|mut r| {
            r.teammates = by_host
                .as_ref()
                .map(|all| all.get(&r.host.name).cloned().unwrap_or_default());
            r
        })
        .collect();
    if args.json {
        out.line(serde_json::to_string_pretty(&rows)?)?;
        return Ok(());
    }
    let table: Vec<[String; 5]> = rows
        .iter()
        .map(|r| {
            [
                r.host.name.clone(),
                shown(&r.host),
                if r.reachable { "yes" } else { "unreachable" }.to_string(),
                match (&r.teamlead_version, r.reachable) {
                    (Some(v), _) => v.clone(),
                    (None, true) => "none".to_string(),
                    (None, false) => "-".to_string(),
                },
                match &r.teammates {
                    Some(names) if !names.is_empty() => names
                        .iter()
                        .map(|n| crate::protocol::display::visible_line(n))
                        .collect::<Vec<_>>()
                        .join(", "),
                    Some(_) => "none".to_string(),
                    None => "-".to_string(),
                },
            ]
        })
        .collect();
    let head = ["HOST", "DESTINATION", "REACHABLE", "TEAMLEAD", "TEAMMATES"].map(String::from);
    let mut widths = head.clone().map(|h| h.chars().count());
    for row in &table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&head).chain(&table) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.line(cells.join("  ").trim_end())?;
    }
    for r in &rows {
        if let Some(e) = &r.error {
            out.line(format!("{}: {e}", r.host.name))?;
        }
    }
    Ok(())
}
