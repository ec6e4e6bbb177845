//! The lead server's commands: `serve`, `attach` and `ctl` (DESIGN.md "The lead server").

use clap::{Args, Subcommand};

use super::{LeadArgs, ThemeChoice};

pub const SERVE_EXAMPLES: &str = "\
Examples:
  teamlead serve --team ci-run --backend in-process     a team for a CI job, in the foreground
  teamlead serve --team ci-run --permission-hook ./policy.sh
                                                       a script answers routine permission requests

The server listens on a socket private to the user ($TEAMLEAD_RUNTIME_DIR, else
$XDG_RUNTIME_DIR/teamlead, else <tmp>/teamlead-<uid>; directory 0700, socket 0600, the peer's
uid is checked) and logs to the log file. SIGINT or SIGTERM quit the team as /quit does.
`teamlead attach TEAM` shows it; `teamlead ctl TEAM …` controls it; `--web` (or `teamlead web
TEAM` beside it) shows it in a browser.";

pub const WEB_EXAMPLES: &str = "\
Examples:
  teamlead web                              the one running team, on 127.0.0.1 at a free port
  teamlead web parser-work --addr 127.0.0.1:8765
  teamlead web parser-work --allow read,answer,message,steer,interrupt
  teamlead serve --team ci-run --web        the server itself answers HTTP

It prints a one-time login link: opening it gives that browser a session (a cookie). On a phone,
reach it through an SSH tunnel (ssh -L 8765:127.0.0.1:8765 host) or a private network
(tailscale serve 8765); --addr beyond 127.0.0.1 is plain HTTP to anyone who can reach it.";

pub const ATTACH_EXAMPLES: &str = "\
Examples:
  teamlead attach                   the one team running in this home
  teamlead attach parser-work       that team's server
  ssh host teamlead attach parser-work

/detach (or closing the terminal) leaves the team running; /quit ends it.";

const CTL_MORE: &str = "\
More commands (a word starting with / or @ is a composer command):
  review NAME                                   one teammate's work: files with counts, base,
                                                commits, pull request (--json)
  merges                                        every branch against the lead's: ahead/behind,
                                                conflicts, conflicting pairs (--json)
  merge NAME --squash|--merge|--rebase [--dry-run] [--retire]
                                                merge a teammate's branch into the lead's
  '/COMMAND …'                                  any composer command, quoted as one argument:";

const CTL_EXAMPLES: &str = "\
Examples:
  teamlead ctl T '/spawn alpha \"run the tests\"'      any composer command, quoted as one argument
  teamlead ctl T --json '/task add build --command \"cargo build\"'
  teamlead ctl T pending                              waiting requests, with their ids
  teamlead ctl T approve 3 [--always]                 answer request #3
  teamlead ctl T deny 3 --feedback 'use make'
  teamlead ctl T status --json                        the team, its tasks and what waits
  teamlead ctl T events --follow --json               one JSON line per event
  teamlead ctl T wait --tasks-done --timeout 600
  teamlead ctl T review alpha --json                  files with counts, base, commits, pull request
  teamlead ctl T merges --json                        every branch: ahead/behind, conflicts, pairs
  teamlead ctl T merge alpha --squash [--dry-run]     exit 1 when refused (a conflict, a dirty checkout)
  teamlead ctl T '/quit'                              ends the team and its server

Exit status: 0 done (or the condition holds); 1 the lead refused the command, or the wait
timed out; 2 bad usage; 3 no server runs for the team, or it went away. Errors are one
`error:` line on stderr.";

/// `teamlead ctl --help`'s text after the options: its own commands, every composer command
/// (from the one command table, `lead::commands::table`), examples and exit statuses.
pub fn ctl_after_help() -> String {
    format!(
        "{CTL_MORE}\n{}\n\n{CTL_EXAMPLES}",
        crate::lead::commands::table::ctl_lines()
    )
}

/// `teamlead serve`.
#[derive(Debug, Clone, Default, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub lead: LeadArgs,
    /// Started by `teamlead` for itself: silent once listening
    #[arg(long, hide = true)]
    pub background: bool,
    /// End the team as /quit does once no screen or ctl client has been connected for this
    /// long: 8h, 30m, "1h 30m", or off [default: the config file's server-idle-exit, else off]
    #[arg(long, value_name = "DURATION")]
    pub idle_exit: Option<String>,
    /// Also answer HTTP: the web view, on this address [default: 127.0.0.1 at a free port]
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = crate::web::DEFAULT_ADDR)]
    pub web: Option<String>,
    /// What the web view may do: read,answer,message[,steer][,interrupt] [default: the
    /// config file's web-allow, else read,answer,message]
    #[arg(long, value_name = "LIST")]
    pub web_allow: Option<String>,
}

/// `teamlead web`.
#[derive(Debug, Clone, Args)]
pub struct WebArgs {
    /// The team [default: the one team with a running server in this home]
    pub team: Option<String>,
    /// Where to listen (beyond 127.0.0.1 only when said)
    #[arg(long, value_name = "ADDR", default_value = crate::web::DEFAULT_ADDR)]
    pub addr: String,
    /// What the page may do: read,answer,message[,steer][,interrupt] [default: the config
    /// file's web-allow, else read,answer,message]
    #[arg(long, value_name = "LIST")]
    pub allow: Option<String>,
}

/// `teamlead attach`.
#[derive(Debug, Clone, Default, Args)]
pub struct AttachArgs {
    /// The team [default: the one team with a running server in this home]
    pub team: Option<String>,
    /// Colours of the terminal UI [default: auto, or the config file's `theme`]
    #[arg(long, value_enum)]
    pub theme: Option<ThemeChoice>,
}

/// `teamlead ctl`.
#[derive(Debug, Clone, Args)]
pub struct CtlArgs {
    /// The team
    pub team: String,
    /// Print JSON (one document, or one line per event)
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub action: CtlAction,
}

/// What `ctl` does.
#[derive(Debug, Clone, Subcommand)]
pub enum CtlAction {
    /// Allow a waiting permission request (its id from `pending`)
    Approve {
        id: u64,
        /// Also allow it from now on (the rule the dialog would offer)
        #[arg(long)]
        always: bool,
    },
    /// Refuse a waiting permission request
    Deny {
        id: u64,
        /// Tell the teammate why, or what to do instead
        #[arg(long, value_name = "TEXT")]
        feedback: Option<String>,
    },
    /// List the requests waiting for an answer, with their ids
    Pending,
    /// The team, its tasks and what waits (the teams dialog's snapshot)
    Status,
    /// The team's story: messages, requests and answers, plans, teammates, tasks, usage
    Events {
        /// Keep printing new events until the team ends
        #[arg(long)]
        follow: bool,
    },
    /// Wait for a condition; exit 0 when it holds, 1 on timeout
    Wait(WaitArgs),
    /// A composer command (`/spawn …`, `/task add …`, `/msg @w …`, `/mode …`, `/quit`), or
    /// `review NAME`, `merge NAME --squash|--merge|--rebase`, `merges` (`--json` for review and
    /// merges gives structured data)
    #[command(external_subcommand)]
    Composer(Vec<String>),
}

/// `ctl T wait`.
#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("condition").required(true).args(["tasks_done", "idle", "approval", "teammate"])))]
pub struct WaitArgs {
    /// No task is pending or in progress
    #[arg(long)]
    pub tasks_done: bool,
    /// Every teammate is idle and nothing waits for an answer
    #[arg(long)]
    pub idle: bool,
    /// A permission request or plan waits for an answer
    #[arg(long)]
    pub approval: bool,
    /// This teammate has the status given with --status
    #[arg(long, value_name = "NAME", requires = "status")]
    pub teammate: Option<String>,
    /// working, waiting, idle, shutting-down, gone or stopped
    #[arg(long, value_name = "S", requires = "teammate", value_parser = crate::server::story::STATUS_WORDS)]
    pub status: Option<String>,
    /// Give up after this many seconds [default: wait for ever]
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,
}
