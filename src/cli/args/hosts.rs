//! `teamlead hosts …`: the other machines teammates may run on (`[hosts.NAME]` in the config
//! file), reached with the user's own `ssh`.

use clap::{Args, Subcommand};

pub const HOSTS_EXAMPLES: &str = "\
Examples:
  teamlead hosts add gpu me@buildbox --dir '~/src/app'   remember it (~ is the host's home)
  teamlead hosts check gpu      what works and what does not there; exit 1 when not ready
  teamlead hosts install gpu    copy this teamlead to ~/.local/bin/teamlead on the host
  teamlead hosts list           every host: reachable, its teamlead, its teammates
  teamlead hosts remove gpu

Connections use your own ssh (~/.ssh/config, keys, agent, jump hosts) in batch mode: set
up key login first (`ssh HOST` must work without a password). One connection per host is kept
open by teamlead (its control socket in teamlead's runtime directory). $TEAMLEAD_SSH_CONFIG
names an ssh config file to use instead of ~/.ssh/config.";

/// `teamlead hosts`.
#[derive(Debug, Clone, Args)]
pub struct HostsArgs {
    #[command(subcommand)]
    pub command: HostsCommand,
}

#[derive(Debug, Clone, Subcommand)]
pub enum HostsCommand {
    /// Remember a host in the config file (`[hosts.NAME]`); nothing is run on it
    #[command(
        after_help = "Examples:\n  teamlead hosts add gpu me@buildbox\n  teamlead hosts add lab lab.example.org --port 2222 --dir /srv/work -o ProxyJump=bastion"
    )]
    Add(HostsAddArgs),
    /// Every host: reachable or not, its teamlead version, its teammates
    List(HostsListArgs),
    /// Forget a host (its `[hosts.NAME]` table) and close teamlead's connection to it
    Remove(HostNameArg),
    /// What works on a host and what does not, one line each; exit 1 when it is not ready.
    /// Nothing is written on the host
    Check(HostNameArg),
    /// Copy this teamlead to ~/.local/bin/teamlead on the host (same OS and architecture),
    /// or print the command to run there
    Install(HostNameArg),
}

/// `teamlead hosts add`.
#[derive(Debug, Clone, Args)]
pub struct HostsAddArgs {
    /// Its name in teamlead (lower-case letters, digits and `-`)
    #[arg(value_name = "NAME")]
    pub name: String,
    /// What ssh connects to: [user@]host (a Host of ~/.ssh/config works too)
    #[arg(value_name = "[USER@]HOST")]
    pub destination: String,
    /// The ssh port [default: ssh's]
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// The teammates' working directory on the host (`~/` is its home: quote it, '~/src')
    #[arg(long, value_name = "DIR")]
    pub dir: Option<String>,
    /// The teamlead home on the host [default: the host's own default]
    #[arg(long, value_name = "DIR")]
    pub remote_home: Option<String>,
    /// An ssh option (`-o Key=Value`), repeatable
    #[arg(short = 'o', value_name = "OPTION")]
    pub options: Vec<String>,
}

/// `teamlead hosts list`.
#[derive(Debug, Clone, Args)]
pub struct HostsListArgs {
    /// Print one JSON document instead of a table
    #[arg(long)]
    pub json: bool,
}

/// A host's name.
#[derive(Debug, Clone, Args)]
pub struct HostNameArg {
    /// The host's name (see `teamlead hosts list`)
    #[arg(value_name = "NAME")]
    pub name: String,
}
