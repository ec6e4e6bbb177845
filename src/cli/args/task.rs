//! `teamlead task …`: the task list's subcommands as clap derive types.

use clap::{Args, Subcommand};

pub(super) const TASK_EXAMPLES: &str = "\
Examples:
  teamlead task add --team my-team \"Write the parser\" --description \"see docs/grammar.md\"
  teamlead task add --team my-team \"Run the tests\" --blocked-by 1 --command \"cargo test\"
  teamlead task list --team my-team
  teamlead task claim 2 --team my-team --owner builder --check-busy
  teamlead task done 2 --team my-team
  teamlead task reset 2 --team my-team
  teamlead task unassign 2 --team my-team
  teamlead task edit 2 --team my-team --subject \"Write the lexer\" --description \"\"
  teamlead task delete 3 --team my-team";

/// `teamlead task`.
#[derive(Debug, Clone, Args)]
pub struct TaskArgs {
    #[command(subcommand)]
    pub command: TaskCommand,
}

/// The team a task command works on.
#[derive(Debug, Clone, Args)]
pub struct TeamArg {
    /// The team
    #[arg(long, value_name = "TEAM")]
    pub team: String,
}

#[derive(Debug, Clone, Subcommand)]
pub enum TaskCommand {
    /// Create a pending task
    #[command(
        after_help = "Example:\n  teamlead task add --team my-team \"Run the tests\" --blocked-by 1 --blocked-by 2 --command \"cargo test\""
    )]
    Add(TaskAddArgs),
    /// List the tasks, with owners, blockers and availability
    #[command(
        after_help = "Examples:\n  teamlead task list --team my-team\n  teamlead task list --team my-team --json"
    )]
    List(TaskListArgs),
    /// Claim a task for a member (fails if claimed, completed, blocked, or the member is busy)
    #[command(
        after_help = "Example:\n  teamlead task claim 4 --team my-team --owner builder --check-busy"
    )]
    Claim(TaskClaimArgs),
    /// Mark a task completed
    #[command(after_help = "Example:\n  teamlead task done 4 --team my-team")]
    Done(TaskIdArgs),
    /// Set a task back to pending with no owner (a completed one is opened again)
    #[command(after_help = "Example:\n  teamlead task reset 4 --team my-team")]
    Reset(TaskIdArgs),
    /// Take a task from its owner (one in progress goes back to pending)
    #[command(after_help = "Example:\n  teamlead task unassign 4 --team my-team")]
    Unassign(TaskIdArgs),
    /// Change a task's subject or description
    #[command(
        after_help = "Example:\n  teamlead task edit 4 --team my-team --subject \"Run the tests\" --description \"cargo test --all\""
    )]
    Edit(TaskEditArgs),
    /// Delete a task (its id is never reused; references to it are removed)
    #[command(after_help = "Example:\n  teamlead task delete 4 --team my-team")]
    Delete(TaskIdArgs),
}

#[derive(Debug, Clone, Args)]
pub struct TaskAddArgs {
    #[command(flatten)]
    pub team: TeamArg,
    /// What to do, in a few words
    #[arg(value_name = "SUBJECT")]
    pub subject: String,
    /// The details
    #[arg(long, short, value_name = "D", default_value = "")]
    pub description: String,
    /// Ids of tasks that must be completed first (repeat for several)
    #[arg(long, value_name = "ID", num_args = 1..)]
    pub blocked_by: Vec<String>,
    /// The command a `shell` teammate runs for this task (stored as metadata.command)
    #[arg(long, value_name = "CMD")]
    pub command: Option<String>,
}

#[derive(Debug, Clone, Args)]
pub struct TaskListArgs {
    #[command(flatten)]
    pub team: TeamArg,
    /// Print JSON instead of text
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TaskClaimArgs {
    #[command(flatten)]
    pub team: TeamArg,
    /// The task id
    #[arg(value_name = "ID")]
    pub id: String,
    /// Who claims it
    #[arg(long, value_name = "NAME")]
    pub owner: String,
    /// Fail when the owner already has another unfinished task
    #[arg(long)]
    pub check_busy: bool,
}

#[derive(Debug, Clone, Args)]
pub struct TaskIdArgs {
    #[command(flatten)]
    pub team: TeamArg,
    /// The task id
    #[arg(value_name = "ID")]
    pub id: String,
}

#[derive(Debug, Clone, Args)]
#[command(group(clap::ArgGroup::new("change").required(true).multiple(true).args(["subject", "description"])))]
pub struct TaskEditArgs {
    #[command(flatten)]
    pub team: TeamArg,
    /// The task id
    #[arg(value_name = "ID")]
    pub id: String,
    /// The new subject
    #[arg(long, value_name = "S")]
    pub subject: Option<String>,
    /// The new description ("" clears it)
    #[arg(long, short, value_name = "D")]
    pub description: Option<String>,
}
