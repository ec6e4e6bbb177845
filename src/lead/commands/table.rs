//! The one table of slash commands: each command is one [`Command`] entry (what is typed and its
//! other spellings, its usage line, its one-line help, and how its arguments are read). The
//! parser ([`find`]), `/help`, the UI's completion and `teamlead ctl --help` are all made from
//! it, so adding a command is one entry here (with its reader) and one handler in the
//! controller (`lead::controller::submit`); the compiler then asks for the rest (its
//! `SlashCommand` variant and what it waits for, `lead::controller::order`).

use super::{CommandError, SlashCommand};

/// How a command reads its arguments.
pub enum Reader {
    /// It takes none: any word after it is an error.
    Bare(SlashCommand),
    /// It reads them (and says what is wrong).
    Args(fn(&str) -> Result<SlashCommand, CommandError>),
}

/// One slash command.
pub struct Command {
    /// What is typed, lower case: `/task add` (a second word is a subcommand).
    pub name: &'static str,
    /// Other spellings (`/tasks add`, `/exit`).
    pub aliases: &'static [&'static str],
    /// Its usage line: `/task add SUBJECT [--description D] …`.
    pub usage: &'static str,
    /// What it does, in a few words.
    pub help: &'static str,
    pub read: Reader,
}

impl Command {
    /// `usage — help`, as `/help` and the completion show it.
    pub fn help_line(&self) -> String {
        format!("{} — {}", self.usage, self.help)
    }

    fn spellings(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().copied())
    }
}

use Reader::{Args, Bare};

/// Every command, in the order `/help` shows them.
pub static COMMANDS: &[Command] = &[
    Command {
        name: "/spawn",
        aliases: &[],
        usage: "/spawn NAME [--plan] [--mode M] [--agent claude] [--worktree] [--host HOST] PROMPT",
        help: "start a teammate with this prompt",
        read: Args(super::parse_spawn),
    },
    Command {
        name: "/task add",
        aliases: &["/tasks add"],
        usage: "/task add SUBJECT [--description D] [--blocked-by 1,2] [--command CMD]",
        help: "add a task",
        read: Args(super::parse_task_add),
    },
    Command {
        name: "/task list",
        aliases: &["/task", "/task ls", "/tasks", "/tasks list", "/tasks ls"],
        usage: "/task list",
        help: "show the task list",
        read: Bare(SlashCommand::TaskList),
    },
    Command {
        name: "/task assign",
        aliases: &["/tasks assign"],
        usage: "/task assign ID NAME",
        help: "give a task to a teammate",
        read: Args(super::parse_task_assign),
    },
    Command {
        name: "/task done",
        aliases: &["/tasks done"],
        usage: "/task done ID",
        help: "mark a task completed",
        read: Args(super::parse_task_done),
    },
    Command {
        name: "/task reset",
        aliases: &["/tasks reset"],
        usage: "/task reset ID",
        help: "set a task back to pending, with no owner (to have it tried again)",
        read: Args(super::parse_task_reset),
    },
    Command {
        name: "/task unassign",
        aliases: &["/tasks unassign"],
        usage: "/task unassign ID",
        help: "take a task from its owner (in progress goes back to pending)",
        read: Args(super::parse_task_unassign),
    },
    Command {
        name: "/task edit",
        aliases: &["/tasks edit"],
        usage: "/task edit ID [--subject S] [--description D]",
        help: "change a task's subject or description",
        read: Args(super::parse_task_edit),
    },
    Command {
        name: "/msg",
        aliases: &["/message"],
        usage: "/msg @NAME TEXT",
        help: "send a message to a teammate",
        read: Args(super::parse_msg),
    },
    Command {
        name: "/broadcast",
        aliases: &[],
        usage: "/broadcast TEXT",
        help: "send a message to every teammate",
        read: Args(super::parse_broadcast),
    },
    Command {
        name: "/shutdown",
        aliases: &[],
        usage: "/shutdown NAME|all [--force]",
        help: "ask a teammate (or all) to shut down (--force: kill it after shutdown-timeout, 30 s)",
        read: Args(super::parse_shutdown),
    },
    Command {
        name: "/kill",
        aliases: &[],
        usage: "/kill NAME",
        help: "stop a teammate at once",
        read: Args(super::parse_kill),
    },
    Command {
        name: "/steer",
        aliases: &[],
        usage: "/steer @NAME TEXT",
        help: "interrupt a teammate's turn and give it this message at once",
        read: Args(super::parse_steer),
    },
    Command {
        name: "/interrupt",
        aliases: &[],
        usage: "/interrupt NAME",
        help: "stop a teammate's current turn (it stays, and takes your next message)",
        read: Args(super::parse_interrupt),
    },
    Command {
        name: "/budget",
        aliases: &[],
        usage: "/budget [[NAME|team] DOLLARS]",
        help: "alone: the budgets and what each teammate spent; with DOLLARS: set a teammate's (or the team's) budget: a warning at 80 %, paused at 100 %",
        read: Args(super::parse_budget),
    },
    Command {
        name: "/limits",
        aliases: &[],
        usage: "/limits [resume on|off|now | resume-until HH:MM|off]",
        help: "alone: usage limits and the park; resume on: at a usage limit park the team and resume it at the reset (off: never); resume now: resume a parked team now; resume-until: no resume starts past that hour",
        read: Args(super::parse_limits),
    },
    Command {
        name: "/respawn",
        aliases: &[],
        usage: "/respawn NAME",
        help: "start a stopped teammate again (same name, prompt, mode, agent, worktree)",
        read: Args(super::parse_respawn),
    },
    Command {
        name: "/mode",
        aliases: &[],
        usage: "/mode NAME MODE [--force]",
        help: "set a teammate's permission mode (--force moves a plan-mode-required teammate out of plan)",
        read: Args(super::parse_mode_command),
    },
    Command {
        name: "/team",
        aliases: &[],
        usage: "/team",
        help: "show the team",
        read: Bare(SlashCommand::Team),
    },
    Command {
        name: "/team delete",
        aliases: &[],
        usage: "/team delete",
        help: "delete the team (after its teammates are gone)",
        read: Bare(SlashCommand::TeamDelete),
    },
    Command {
        name: "/clean",
        aliases: &[],
        usage: "/clean",
        help: "remove what dead sessions left behind (teams, panes, tmux servers, temp files, locks)",
        read: Bare(SlashCommand::Clean),
    },
    Command {
        name: "/review",
        aliases: &[],
        usage: "/review NAME",
        help: "what a teammate changed in its worktree: files, diffs, commits",
        read: Args(super::parse_review),
    },
    Command {
        name: "/merge",
        aliases: &[],
        usage: "/merge NAME --squash|--merge|--rebase [--dry-run] [--retire]",
        help: "bring a teammate's branch into yours (refused when it conflicts)",
        read: Args(super::parse_merge),
    },
    Command {
        name: "/merges",
        aliases: &["/queue"],
        usage: "/merges",
        help: "every teammate's branch: ahead/behind, clean or conflicting, with yours and each other",
        read: Bare(SlashCommand::Queue),
    },
    Command {
        name: "/help",
        aliases: &["/?"],
        usage: "/help",
        help: "list the commands",
        read: Bare(SlashCommand::Help),
    },
    Command {
        name: "/version",
        aliases: &[],
        usage: "/version",
        help: "the version of teamlead that leads this team",
        read: Bare(SlashCommand::Version),
    },
    Command {
        name: "/quit",
        aliases: &["/exit"],
        usage: "/quit [--keep]",
        help: "shut the team down and exit (--keep: exit and keep the team for the next lead)",
        read: Args(super::parse_quit),
    },
    Command {
        name: "/detach",
        aliases: &[],
        usage: "/detach",
        help: "leave this screen; the team keeps running (`teamlead attach` comes back)",
        read: Bare(SlashCommand::DetachScreen),
    },
];

/// The command that `rest` (what follows the `/`) starts with, and the rest of the text after
/// its spelling: the longest spelling whose words begin `rest` (`task add x` → `/task add`,
/// `task` → `/task list`). Words are compared without case.
pub fn find(rest: &str) -> Option<(&'static Command, &str)> {
    let mut best: Option<(&'static Command, &str, usize)> = None;
    for command in COMMANDS {
        for spelling in command.spellings() {
            let Some(args) = after_words(rest, spelling.trim_start_matches('/')) else {
                continue;
            };
            if best.is_none_or(|(_, _, len)| spelling.len() > len) {
                best = Some((command, args, spelling.len()));
            }
        }
    }
    best.map(|(command, args, _)| (command, args))
}

/// `rest` after the words of `spelling`, when they are its first words.
fn after_words<'a>(rest: &'a str, spelling: &str) -> Option<&'a str> {
    let mut text = rest.trim_start();
    for word in spelling.split(' ') {
        let end = text.find(char::is_whitespace).unwrap_or(text.len());
        if !text[..end].eq_ignore_ascii_case(word) {
            return None;
        }
        text = text[end..].trim_start();
    }
    Some(text)
}

/// Whether other commands share this one's first word (`/task list` with `/task add`): a word
/// after it that is no subcommand is then an unknown command, not a bad argument.
pub fn is_family(command: &Command) -> bool {
    let first = |name: &str| name.split(' ').next().map(str::to_string);
    COMMANDS
        .iter()
        .filter(|c| !std::ptr::eq(*c, command))
        .any(|c| {
            c.spellings()
                .any(|s| first(s) == command.spellings().find_map(first))
        })
}

/// The first two words of what was typed, for an unknown command's message.
pub fn first_words(rest: &str) -> String {
    rest.split_whitespace()
        .take(2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The usage line of `name` (`/help` when there is no such command).
pub fn usage_of(name: &str) -> &'static str {
    COMMANDS
        .iter()
        .find(|c| c.name == name)
        .map_or("/help", |c| c.usage)
}

/// The composer commands for `teamlead ctl --help`, in its two columns: the usage, then the
/// help from column 49 (on the next line when the usage is longer), wrapped at 94 columns.
pub fn ctl_lines() -> String {
    const HELP_AT: usize = 48;
    const WIDTH: usize = 94;
    let mut out = Vec::new();
    for command in COMMANDS {
        let mut line = format!("  {}", command.usage);
        if line.len() + 2 > HELP_AT {
            out.push(std::mem::take(&mut line));
        }
        for word in command.help.split(' ') {
            if line.len() < HELP_AT {
                line = format!("{line:HELP_AT$}{word}");
            } else if line.len() + 1 + word.len() > WIDTH {
                out.push(std::mem::take(&mut line));
                line = format!("{:HELP_AT$}{word}", "");
            } else {
                line.push(' ');
                line.push_str(word);
            }
        }
        out.push(line);
    }
    out.join("\n")
}
