//! The command line (DESIGN.md "Command line") as clap derive types. No behavior here: the
//! types are read by the command modules and by the interactive session.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod hosts;
mod server;
use crate::protocol::BackendRequest;

mod task;

pub use hosts::{HostNameArg, HostsAddArgs, HostsArgs, HostsCommand, HostsListArgs};
pub use server::{AttachArgs, CtlAction, CtlArgs, ServeArgs, WaitArgs, WebArgs};
use task::TASK_EXAMPLES;
pub use task::{
    TaskAddArgs, TaskArgs, TaskClaimArgs, TaskCommand, TaskEditArgs, TaskIdArgs, TaskListArgs,
    TeamArg,
};

const MAIN_EXAMPLES: &str = "\
Examples:
  teamlead                          open the lead session; the team is named after this directory
  teamlead --team parser-work       open (or resume) the team `parser-work`; its lead runs in a
                                    server: /detach or closing the terminal leave it running
  teamlead attach parser-work       come back to it (from any terminal, ssh included)
  teamlead ctl parser-work status   control it from a script (see `teamlead ctl --help`)
  teamlead serve --team ci-run      a lead without a terminal, in the foreground
  teamlead --backend in-process     keep every teammate inside this terminal
  teamlead demo                     an offline demo with `shell` teammates
  teamlead inspect                  list the teams in the home
  teamlead inspect my-team --json   everything about one team, as JSON
  teamlead monitor my-team          a live log of every file change in a team
  teamlead config init              write a commented config file (defaults, keys, llm)
  teamlead hosts add gpu me@box     a machine teammates may run on (then: hosts check gpu)

The home is, first match wins: --home, $TEAMLEAD_HOME, $CLAUDE_CONFIG_DIR, ~/.claude.
Defaults come from the config file (teamlead config path); flags win over it.
Logs go to a file under the user's state directory (never to the terminal); -v for more.";

/// A terminal lead for teams of coding agents (Claude Code agent-teams protocol).
#[derive(Debug, Parser)]
#[command(
    name = "teamlead",
    version,
    about = "A terminal lead for teams of coding agents (Claude Code agent-teams protocol)",
    after_help = MAIN_EXAMPLES,
    propagate_version = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Options of the interactive lead session (when no command is given).
    #[command(flatten)]
    pub lead: LeadArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every command takes.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalArgs {
    /// The home holding `teams/` and `tasks/` [default: $TEAMLEAD_HOME, $CLAUDE_CONFIG_DIR, ~/.claude]
    #[arg(long, global = true, value_name = "DIR")]
    pub home: Option<PathBuf>,
    /// More logging in the log file (-v debug, -vv trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

/// `--backend`'s values: `auto` and every kind by name (`protocol::BackendRequest`, which
/// knows no clap), each with its help from the terminals' registry.
fn backend_values() -> impl clap::builder::TypedValueParser<Value = BackendRequest> {
    use crate::backend::terminals::{auto_help, terminal};
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
    let values = BackendRequest::all().into_iter().map(|request| {
        let help = match request {
            BackendRequest::Auto => auto_help(),
            BackendRequest::Kind(kind) => match terminal(kind) {
                Some(t) => t.about().help.to_string(),
                None => "Teammates inside the lead's process".to_string(),
            },
        };
        PossibleValue::new(request.as_str()).help(help)
    });
    PossibleValuesParser::new(values).try_map(|name| name.parse::<BackendRequest>())
}

/// What runs a teammate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum AgentChoice {
    /// teamlead's own teammate runtime (`teamlead teammate`)
    #[default]
    Builtin,
    /// Real `claude` processes
    Claude,
}

/// How much colour the terminal UI uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ThemeChoice {
    /// None with NO_COLOR; all with COLORTERM=truecolor or a 256-colour TERM; else 16
    #[default]
    Auto,
    /// Every colour
    Full,
    /// The 16 standard colours
    Basic,
    /// No colour
    None,
}

impl ThemeChoice {
    pub fn theme(self) -> crate::config::Theme {
        use crate::config::Theme;
        match self {
            ThemeChoice::Auto => Theme::Auto,
            ThemeChoice::Full => Theme::Full,
            ThemeChoice::Basic => Theme::Basic,
            ThemeChoice::None => Theme::None,
        }
    }
}

/// The interactive lead session. Options not given take the config file's defaults.
#[derive(Debug, Clone, Default, Args)]
pub struct LeadArgs {
    /// The team to lead [default: named after the current directory]
    #[arg(long, value_name = "NAME")]
    pub team: Option<String>,
    /// Where teammates run [default: auto, or the config file's `backend`]
    #[arg(long, value_parser = backend_values())]
    pub backend: Option<BackendRequest>,
    /// What runs each teammate [default: builtin, or the config file's `agent`]
    #[arg(long, value_enum)]
    pub agent: Option<AgentChoice>,
    /// Give every teammate its own git worktree and branch (also: /spawn --worktree)
    #[arg(long, overrides_with = "no_worktree")]
    pub worktree: bool,
    /// No worktrees, whatever the config file says
    #[arg(long, overrides_with = "worktree")]
    pub no_worktree: bool,
    /// Colours of the terminal UI [default: auto, or the config file's `theme`]
    #[arg(long, value_enum)]
    pub theme: Option<ThemeChoice>,
    /// A language model leads the team: plain text goes to it (MODEL: sonnet, opus, haiku or
    /// a model name; without it TEAMLEAD_MODEL or the llm config decides; see docs/llm.md)
    #[arg(long, value_name = "MODEL", num_args = 0..=1, default_missing_value = "")]
    pub lead_model: Option<String>,
    /// What does the teammates' work: `shell` runs task commands, `llm` is a coding agent
    /// (Anthropic or OpenAI-compatible; see docs/llm.md) [default: shell, or the config file's]
    #[arg(long, value_enum)]
    pub engine: Option<EngineChoice>,
    /// The teammates' model with `--engine llm` (sonnet, opus, haiku or a model name)
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Run CMD (with `sh -c`) for each permission request: it reads the request as JSON on
    /// stdin and answers allow, deny or ask (see README "Permission policy hook") [default:
    /// the config file's `permission-hook`]
    #[arg(long, value_name = "CMD")]
    pub permission_hook: Option<String>,
    /// Lead in this terminal, without a server: closing it ends the team (as before servers)
    #[arg(
        long,
        env = "TEAMLEAD_NO_SERVER",
        action = clap::ArgAction::SetTrue,
        value_parser = clap::builder::BoolishValueParser::new()
    )]
    pub no_server: bool,
}

impl LeadArgs {
    /// Was any session option given on the command line?
    pub fn given(&self) -> bool {
        self.team.is_some()
            || self.worktree
            || self.no_worktree
            || self.lead_model.is_some()
            || self.engine.is_some()
            || self.model.is_some()
            || self.backend.is_some()
            || self.agent.is_some()
    }

    /// The options that shape the lead only when it starts (a running lead server keeps
    /// its own), as typed.
    pub fn start_options(&self) -> Vec<&'static str> {
        let given = [
            ("--backend", self.backend.is_some()),
            ("--agent", self.agent.is_some()),
            ("--engine", self.engine.is_some()),
            ("--model", self.model.is_some()),
            ("--lead-model", self.lead_model.is_some()),
            ("--permission-hook", self.permission_hook.is_some()),
            ("--worktree", self.worktree),
            ("--no-worktree", self.no_worktree),
        ];
        given
            .into_iter()
            .filter_map(|(name, on)| on.then_some(name))
            .collect()
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Offline demo: a team of in-process `shell` teammates on a small task graph
    #[command(
        after_help = "Examples:\n  teamlead demo                          in a temporary home, removed at the end\n  teamlead --home /tmp/demo-home demo    in this home; what the demo made there is removed at the end"
    )]
    Demo(DemoArgs),
    /// The teammate runtime, with the same flags as `claude` (started by the lead)
    #[command(after_help = TEAMMATE_EXAMPLES)]
    Teammate(TeammateArgs),
    /// Runs a `claude` teammate and stops it when its lead is gone for good (started by the lead)
    #[command(hide = true)]
    Guard(GuardArgs),
    /// Read-only report: teams, members, tasks and what blocks them, unread messages, problems
    #[command(after_help = INSPECT_EXAMPLES)]
    Inspect(InspectArgs),
    /// Read-only live log of every file change in a team (or every team); Ctrl-C to stop
    #[command(after_help = MONITOR_EXAMPLES)]
    Monitor(MonitorArgs),
    /// Append one message to a member's inbox (lock-compatible with Claude Code)
    #[command(after_help = SEND_EXAMPLES)]
    Send(SendArgs),
    /// The task list of a team from the shell
    #[command(after_help = TASK_EXAMPLES)]
    Task(TaskArgs),
    /// Remove teams of dead teamlead leads and their private tmux servers (never another lead's team)
    #[command(
        after_help = "Examples:\n  teamlead clean --dry-run    also lists a dead team's worktrees: what each holds, kept or removed\n  teamlead clean --orphans"
    )]
    Clean(CleanArgs),
    /// Print a shell completion script
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// The config file: where it is, what it sets, a commented example to start from
    #[command(after_help = CONFIG_EXAMPLES)]
    Config(ConfigArgs),
    /// Print the manual page (roff), of teamlead or of one of its commands
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
    /// The model prices in force (built in, then the config file's [prices]), or which row a model takes
    #[command(after_help = PRICES_EXAMPLES)]
    Prices(PricesArgs),
    /// Run a team's lead without a terminal (the lead server), in the foreground
    #[command(after_help = server::SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// This host's end of a link to a lead on another host (started by the lead over ssh)
    #[command(after_help = RELAY_HELP)]
    Relay(RelayArgs),
    /// Show a running team's lead in this terminal (transcript, team, waiting approvals)
    #[command(after_help = server::ATTACH_EXAMPLES)]
    Attach(AttachArgs),
    /// Control a running team from a script: commands, approvals, status, events, waits
    #[command(after_help = server::ctl_after_help())]
    Ctl(CtlArgs),
    /// Show a running team in a browser or on a phone: the team, its transcript, and the
    /// requests waiting, answered from there
    #[command(after_help = server::WEB_EXAMPLES)]
    Web(WebArgs),
    /// Other machines teammates may run on, over your own ssh: add, list, check, install, remove
    #[command(after_help = hosts::HOSTS_EXAMPLES)]
    Hosts(HostsArgs),
}

/// `teamlead guard --home H --agent-id NAME@TEAM -- PROGRAM ARGS…`.
#[derive(Debug, Clone, Args)]
pub struct GuardArgs {
    /// The teammate this guard runs
    #[arg(long, value_name = "NAME@TEAM")]
    pub agent_id: String,
    /// The program and its arguments
    #[arg(last = true, required = true, value_name = "PROGRAM")]
    pub program: Vec<String>,
}

/// `teamlead demo`.
#[derive(Debug, Clone, Default, Args)]
pub struct DemoArgs {}

const TEAMMATE_EXAMPLES: &str = "\
Examples:
  teamlead teammate --agent-id builder@my-team --agent-name builder --team-name my-team \\
      --agent-color blue --permission-mode default --engine shell

The lead starts this command in a pane; you rarely type it yourself.";

/// The teammate's engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// Runs each task's command (metadata.command or the first code block); no model
    #[default]
    Shell,
    /// A language model (Anthropic or OpenAI-compatible) with tools
    Llm,
}

/// Permission modes as `claude` spells them on its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    #[value(name = "default")]
    Default,
    #[value(name = "acceptEdits")]
    AcceptEdits,
    #[value(name = "plan")]
    Plan,
    #[value(name = "bypassPermissions")]
    BypassPermissions,
}

impl ModeArg {
    /// The protocol's mode.
    pub fn mode(self) -> crate::protocol::PermissionMode {
        use crate::protocol::PermissionMode as M;
        match self {
            ModeArg::Default => M::Default,
            ModeArg::AcceptEdits => M::AcceptEdits,
            ModeArg::Plan => M::Plan,
            ModeArg::BypassPermissions => M::BypassPermissions,
        }
    }
}

/// `teamlead teammate`: Claude Code's teammate flags.
#[derive(Debug, Clone, Args)]
pub struct TeammateArgs {
    /// `<name>@<team>`
    #[arg(long, value_name = "NAME@TEAM")]
    pub agent_id: String,
    /// The teammate's name
    #[arg(long, value_name = "NAME")]
    pub agent_name: String,
    /// The team's name
    #[arg(long, value_name = "TEAM")]
    pub team_name: String,
    /// The teammate's palette color
    #[arg(long, value_name = "COLOR")]
    pub agent_color: Option<String>,
    /// The lead's session id
    #[arg(long, value_name = "ID")]
    pub parent_session_id: Option<String>,
    /// Start in plan mode and ask the lead to approve the plan
    #[arg(long)]
    pub plan_mode_required: bool,
    /// The agent type (general-purpose, …)
    #[arg(long, value_name = "TYPE")]
    pub agent_type: Option<String>,
    /// The model of the `llm` engine
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// The permission mode to start in
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        conflicts_with = "dangerously_skip_permissions"
    )]
    pub permission_mode: Option<ModeArg>,
    /// Start in bypassPermissions mode
    #[arg(long)]
    pub dangerously_skip_permissions: bool,
    /// What does the work
    #[arg(long, value_enum, default_value_t = EngineChoice::Shell)]
    pub engine: EngineChoice,
}

impl TeammateArgs {
    /// The mode the flags ask for (`default` when none).
    pub fn start_mode(&self) -> crate::protocol::PermissionMode {
        if self.dangerously_skip_permissions {
            crate::protocol::PermissionMode::BypassPermissions
        } else {
            self.permission_mode.map(ModeArg::mode).unwrap_or_default()
        }
    }
}

const INSPECT_EXAMPLES: &str = "\
Examples:
  teamlead inspect                        every team: members, is the lead running, unread for the lead
  teamlead inspect codebase-research      members, tasks and blockers, unread messages, problems
  teamlead inspect codebase-research --json | jq '.tasks[] | select(.available)'

inspect never writes, moves or locks anything.";

const PRICES_EXAMPLES: &str = "\
Examples:
  teamlead prices                          every row: rates, tiers, source and date
  teamlead prices claude-opus-4-20250514   the row this model takes, and why

Rates are US dollars per million tokens. Override or add one in the config file:
  [prices.\"claude-opus-5-5\"]
  input = 4.0
  output = 20.0
  cache-write = 5.0      # 5-minute writes (default 1.25 x input)
  cache-write-1h = 8.0   # 1-hour writes (default 2 x input)
  cache-read = 0.2       # default 0.1 x input";

/// `teamlead prices`.
#[derive(Debug, Clone, Args)]
pub struct PricesArgs {
    /// A model name: print the row it takes [default: print the whole table]
    #[arg(value_name = "MODEL")]
    pub model: Option<String>,
}

/// `teamlead inspect`.
#[derive(Debug, Clone, Args)]
pub struct InspectArgs {
    /// The team to report on [default: list every team]
    #[arg(value_name = "TEAM")]
    pub team: Option<String>,
    /// Print one JSON document instead of text
    #[arg(long)]
    pub json: bool,
}

const MONITOR_EXAMPLES: &str = "\
Examples:
  teamlead monitor                 every team in the home
  teamlead monitor my-team         one team
  teamlead monitor my-team --locks also show lock directories taken and released

Each line: time since start, team, and what changed, e.g.
  +12.345s my-team  inbox team-lead: +1 permission_request from builder
Set TEAMLEAD_WATCH=poll to poll instead of using kernel notifications.";

/// `teamlead monitor`.
#[derive(Debug, Clone, Args)]
pub struct MonitorArgs {
    /// The team to watch [default: every team]
    #[arg(value_name = "TEAM")]
    pub team: Option<String>,
    /// Also show lock directories being acquired and released
    #[arg(long)]
    pub locks: bool,
}

const SEND_EXAMPLES: &str = "\
Examples:
  teamlead send --team my-team --to builder \"please rebase on main\"
  teamlead send --team my-team --to team-lead --from builder --summary \"done\" \"all tests pass\"
  echo \"long text\" | teamlead send --team my-team --to builder -";

/// `teamlead send`.
#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    /// The team
    #[arg(long, value_name = "TEAM")]
    pub team: String,
    /// The recipient's member name
    #[arg(long, value_name = "NAME")]
    pub to: String,
    /// The sender's name
    #[arg(long, value_name = "NAME", default_value = crate::protocol::LEAD_NAME)]
    pub from: String,
    /// A short preview (at most 200 characters)
    #[arg(long, value_name = "S")]
    pub summary: Option<String>,
    /// The message (`-` reads it from standard input)
    #[arg(value_name = "TEXT")]
    pub text: String,
}

/// `teamlead relay --stdio`.
#[derive(Debug, Clone, Default, Args)]
pub struct RelayArgs {
    /// Speak the link on standard input and output (the only transport; required)
    #[arg(long, required = true)]
    pub stdio: bool,
}

const RELAY_HELP: &str = "\
The lead starts this on a remote host over its own ssh connection, for a team with teammates
on that host; people do not run it. It keeps that host's copy of the team under --home, puts
the lead's messages into the inboxes of the teammates running there and sends what they write
to the lead, each exactly once. Standard input and output carry the link (JSON lines);
standard error and the log file say what happened. It exits when the lead closes the link.

Example (what the lead runs):
  ssh HOST -- teamlead relay --stdio --home ~/.claude";

/// `teamlead clean`.
#[derive(Debug, Clone, Default, Args)]
pub struct CleanArgs {
    /// Also kill private tmux servers (-L teamlead-<pid>) whose lead is gone
    #[arg(long)]
    pub orphans: bool,
    /// Only say what would be removed
    #[arg(long)]
    pub dry_run: bool,
}

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  teamlead completions bash > ~/.local/share/bash-completion/completions/teamlead
  teamlead completions zsh > \"${fpath[1]}/_teamlead\"
  teamlead completions fish > ~/.config/fish/completions/teamlead.fish";

const CONFIG_EXAMPLES: &str = "\
Examples:
  teamlead config init       write a commented example (never over an existing file)
  teamlead config path       where the file is read from ($TEAMLEAD_CONFIG overrides it)
  teamlead config show       what is in force: every setting and key, as a config file

The file is TOML: defaults of the session's flags (flags win), [keys.<place>] bindings, [llm].";

/// `teamlead config`.
#[derive(Debug, Clone, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub command: ConfigCommand,
}

#[derive(Debug, Clone, Copy, Subcommand)]
pub enum ConfigCommand {
    /// Print the config file's path
    Path,
    /// Print the settings in force (the file's, and the defaults), as a config file
    Show,
    /// Write a commented example config file (refuses to overwrite one)
    Init,
}

const MAN_EXAMPLES: &str = "\
Examples:
  teamlead man | man -l -                 read it now
  teamlead man inspect | man -l -         the page of one command
  teamlead man > ~/.local/share/man/man1/teamlead.1";

/// `teamlead man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The command whose page to print [default: teamlead itself]
    #[arg(value_name = "COMMAND")]
    pub command: Option<String>,
}

/// `teamlead completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}
