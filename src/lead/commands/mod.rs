//! The composer's language: slash commands (`/spawn`, `/task …`, `/msg`, …), `@name text`
//! mentions and plain text, parsed into a typed [`Input`] with clear errors. Every command is
//! one entry of [`table::COMMANDS`] (its spellings, arguments, help and reader), from which the
//! parser, `/help`, the UI's completion and `teamlead ctl --help` are made.

use crate::protocol::PermissionMode;

mod lexer;
pub mod table;

use lexer::{all_tokens, next_token, rest_text, split_word};

/// A parsed slash command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlashCommand {
    Spawn {
        name: String,
        plan_mode_required: bool,
        mode: Option<PermissionMode>,
        /// `--agent claude`: a real Claude Code process (pane backends only).
        claude: bool,
        /// `--worktree`: its own git worktree and branch.
        worktree: bool,
        /// `--host HOST`: it runs on that host (`[hosts.HOST]` of the config).
        host: Option<String>,
        prompt: String,
    },
    TaskAdd {
        subject: String,
        description: String,
        blocked_by: Vec<String>,
        command: Option<String>,
    },
    TaskList,
    TaskAssign {
        id: String,
        name: String,
    },
    /// `/task done|reset|unassign ID`.
    TaskSet {
        id: String,
        change: TaskChange,
    },
    /// `/task edit ID [--subject S] [--description D]`.
    TaskEdit {
        id: String,
        subject: Option<String>,
        description: Option<String>,
    },
    Msg {
        to: String,
        text: String,
    },
    Broadcast {
        text: String,
    },
    Shutdown {
        target: ShutdownTarget,
        /// `--force`: kill it when it has not shut down within `shutdown-timeout`.
        force: bool,
    },
    Kill {
        name: String,
    },
    /// Stop a teammate's current turn (Esc in its view or pane).
    Interrupt {
        name: String,
    },
    /// Show the budgets in force and what each teammate has spent (`/budget` alone).
    Budgets,
    /// `/limits …`: park and resume at a usage limit (`lead::park`).
    Limits(LimitsCommand),
    /// Set a teammate's budget (`Some(name)`) or the team's (`None`), in millionths of a
    /// dollar.
    Budget {
        name: Option<String>,
        micros: u64,
    },
    /// Interrupt a teammate's turn, then message it.
    Steer {
        to: String,
        text: String,
    },
    /// Start a stopped teammate again under its name.
    Respawn {
        name: String,
    },
    Mode {
        name: String,
        mode: PermissionMode,
        /// Move a plan-mode-required teammate out of plan mode anyway.
        force: bool,
    },
    Team,
    TeamDelete,
    /// Remove orphans of dead sessions.
    Clean,
    /// `/review NAME`.
    Review {
        name: String,
    },
    /// `/merge NAME --squash|--merge|--rebase [--dry-run] [--retire]`.
    Merge {
        name: String,
        how: crate::lead::review::MergeHow,
        dry_run: bool,
        retire: bool,
    },
    /// `/merges`: the merge queue.
    Queue,
    Help,
    /// `/version`: which teamlead leads the team.
    Version,
    Quit,
    /// `/quit --keep`: the lead leaves with the team kept.
    Detach,
    /// `/detach`: this screen leaves; the lead server keeps running (a lead without a server
    /// leaves as with `/quit --keep`).
    DetachScreen,
}

/// What `/limits` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitsCommand {
    /// `/limits`: the settings, the park, the limits known.
    Show,
    /// `/limits resume on|off`.
    Resume(bool),
    /// `/limits resume now`: resume a parked team now, cut-off or not.
    ResumeNow,
    /// `/limits resume-until HH:MM|off`.
    Until(Option<chrono::NaiveTime>),
}

/// What `/task done|reset|unassign` does to one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskChange {
    Done,
    Reset,
    Unassign,
}

/// Who `/shutdown` is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShutdownTarget {
    One(String),
    All,
}

/// What the user submitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    Slash(SlashCommand),
    /// `@name text`.
    Mention {
        to: String,
        text: String,
    },
    /// Anything else (for the lead model, when there is one).
    Plain(String),
    /// Only whitespace.
    Empty,
}

/// Why a command could not be parsed; the message says what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command `{0}` (try /help)")]
    Unknown(String),
    #[error("usage: {0}")]
    Usage(&'static str),
    #[error("{0}")]
    Invalid(String),
}

fn usage(command: &str) -> CommandError {
    CommandError::Usage(table::usage_of(command))
}

/// Parses composer text.
pub fn parse_input(text: &str) -> Result<Input, CommandError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Ok(Input::Empty);
    }
    if let Some(rest) = trimmed.strip_prefix('/') {
        return parse_slash(rest).map(Input::Slash);
    }
    if let Some(rest) = trimmed.strip_prefix('@') {
        let (name, body) = split_word(rest);
        if !name.is_empty() {
            return Ok(Input::Mention {
                to: name.to_string(),
                text: body.trim().to_string(),
            });
        }
    }
    Ok(Input::Plain(trimmed.to_string()))
}

fn parse_mode(s: &str) -> Result<PermissionMode, CommandError> {
    s.parse::<PermissionMode>()
        .map_err(|e| CommandError::Invalid(e.to_string()))
}

fn strip_at(name: &str) -> String {
    name.trim_start_matches('@').to_string()
}

fn parse_slash(rest: &str) -> Result<SlashCommand, CommandError> {
    let (word, _) = split_word(rest);
    if word.is_empty() {
        return Err(CommandError::Unknown("/".to_string()));
    }
    let Some((command, args)) = table::find(rest) else {
        return Err(CommandError::Unknown(format!("/{word}")));
    };
    match command.read {
        table::Reader::Bare(ref bare) if args.trim().is_empty() => Ok(bare.clone()),
        table::Reader::Bare(_) if table::is_family(command) => Err(CommandError::Unknown(format!(
            "/{}",
            table::first_words(rest)
        ))),
        table::Reader::Bare(_) => Err(usage(command.name)),
        table::Reader::Args(read) => read(args),
    }
}

fn parse_budget(args: &str) -> Result<SlashCommand, CommandError> {
    if args.trim().is_empty() {
        return Ok(SlashCommand::Budgets);
    }
    let (first, rest) = split_word(args);
    let (name, amount) = if rest.trim().is_empty() {
        (None, first)
    } else {
        let who = strip_at(first);
        ((who != "team").then_some(who), rest.trim())
    };
    let dollars = amount
        .trim_start_matches('$')
        .parse::<f64>()
        .ok()
        .filter(|d| d.is_finite() && *d > 0.0);
    match dollars {
        Some(dollars) if !amount.is_empty() => Ok(SlashCommand::Budget {
            name,
            micros: (dollars * 1_000_000.0).round() as u64,
        }),
        _ => Err(usage("/budget")),
    }
}

fn parse_limits(args: &str) -> Result<SlashCommand, CommandError> {
    let (first, rest) = split_word(args.trim());
    let (second, extra) = split_word(rest.trim());
    if !extra.trim().is_empty() {
        return Err(usage("/limits"));
    }
    let command = match (first, second) {
        ("", "") => LimitsCommand::Show,
        ("resume", "on") => LimitsCommand::Resume(true),
        ("resume", "off") => LimitsCommand::Resume(false),
        ("resume", "now") => LimitsCommand::ResumeNow,
        ("resume-until", "off") => LimitsCommand::Until(None),
        ("resume-until", clock) => LimitsCommand::Until(Some(
            chrono::NaiveTime::parse_from_str(clock, "%H:%M").map_err(|_| usage("/limits"))?,
        )),
        _ => return Err(usage("/limits")),
    };
    Ok(SlashCommand::Limits(command))
}

/// `NAME TEXT` of `/steer` and `/msg`.
fn name_and_text(args: &str, command: &str) -> Result<(String, String), CommandError> {
    let (to, text) = split_word(args);
    let to = strip_at(to);
    let text = rest_text(text, 0)?;
    if to.is_empty() || text.is_empty() {
        return Err(usage(command));
    }
    Ok((to, text))
}

fn parse_steer(args: &str) -> Result<SlashCommand, CommandError> {
    let (to, text) = name_and_text(args, "/steer")?;
    Ok(SlashCommand::Steer { to, text })
}

fn parse_msg(args: &str) -> Result<SlashCommand, CommandError> {
    let (to, text) = name_and_text(args, "/msg")?;
    Ok(SlashCommand::Msg { to, text })
}

fn parse_broadcast(args: &str) -> Result<SlashCommand, CommandError> {
    let text = rest_text(args, 0)?;
    if text.is_empty() {
        return Err(usage("/broadcast"));
    }
    Ok(SlashCommand::Broadcast { text })
}

fn parse_shutdown(args: &str) -> Result<SlashCommand, CommandError> {
    let mut words = all_tokens(args)?;
    let force = words.iter().any(|w| w == "--force");
    words.retain(|w| w != "--force");
    if let Some(flag) = words.iter().find(|w| w.starts_with("--")) {
        return Err(CommandError::Invalid(format!(
            "unknown option `{flag}` for /shutdown (use --force)"
        )));
    }
    match words.as_slice() {
        [t] if t == "all" => Ok(SlashCommand::Shutdown {
            target: ShutdownTarget::All,
            force,
        }),
        [name] => Ok(SlashCommand::Shutdown {
            target: ShutdownTarget::One(strip_at(name)),
            force,
        }),
        _ => Err(usage("/shutdown")),
    }
}

/// The one teammate name of `/kill`, `/interrupt`, `/respawn`, `/review`.
fn one_name(args: &str, command: &str) -> Result<String, CommandError> {
    match all_tokens(args)?.as_slice() {
        [name] => Ok(strip_at(name)),
        _ => Err(usage(command)),
    }
}

fn parse_interrupt(args: &str) -> Result<SlashCommand, CommandError> {
    let name = one_name(args, "/interrupt")?;
    Ok(SlashCommand::Interrupt { name })
}

fn parse_kill(args: &str) -> Result<SlashCommand, CommandError> {
    let name = one_name(args, "/kill")?;
    Ok(SlashCommand::Kill { name })
}

fn parse_respawn(args: &str) -> Result<SlashCommand, CommandError> {
    let name = one_name(args, "/respawn")?;
    Ok(SlashCommand::Respawn { name })
}

fn parse_review(args: &str) -> Result<SlashCommand, CommandError> {
    let name = one_name(args, "/review")?;
    Ok(SlashCommand::Review { name })
}

fn parse_mode_command(args: &str) -> Result<SlashCommand, CommandError> {
    match all_tokens(args)?.as_slice() {
        [name, mode] => Ok(SlashCommand::Mode {
            name: strip_at(name),
            mode: parse_mode(mode)?,
            force: false,
        }),
        [name, mode, force] if force == "--force" => Ok(SlashCommand::Mode {
            name: strip_at(name),
            mode: parse_mode(mode)?,
            force: true,
        }),
        _ => Err(usage("/mode")),
    }
}

fn parse_quit(args: &str) -> Result<SlashCommand, CommandError> {
    match all_tokens(args)?.as_slice() {
        [] => Ok(SlashCommand::Quit),
        [keep] if keep == "--keep" => Ok(SlashCommand::Detach),
        _ => Err(usage("/quit")),
    }
}

fn parse_spawn(args: &str) -> Result<SlashCommand, CommandError> {
    let Some((_, name_tok)) = next_token(args, 0)? else {
        return Err(usage("/spawn"));
    };
    if name_tok.value.starts_with("--") {
        return Err(usage("/spawn"));
    }
    let name = strip_at(&name_tok.value);
    let mut at = name_tok.end;
    let mut plan_mode_required = false;
    let mut mode = None;
    let mut claude = false;
    let mut worktree = false;
    let mut host = None;
    while let Some((start, tok)) = next_token(args, at)? {
        match tok.value.as_str() {
            "--plan" => {
                plan_mode_required = true;
                at = tok.end;
            }
            "--worktree" => {
                worktree = true;
                at = tok.end;
            }
            "--agent" => {
                let Some((_, a)) = next_token(args, tok.end)? else {
                    return Err(CommandError::Invalid(
                        "--agent needs builtin or claude".to_string(),
                    ));
                };
                claude = match a.value.as_str() {
                    "claude" => true,
                    "builtin" => false,
                    other => {
                        return Err(CommandError::Invalid(format!(
                            "unknown agent `{other}` (use builtin or claude)"
                        )));
                    }
                };
                at = a.end;
            }
            "--host" => {
                let Some((_, h)) = next_token(args, tok.end)? else {
                    return Err(CommandError::Invalid(
                        "--host needs a HOST (`teamlead hosts list` shows them)".to_string(),
                    ));
                };
                if let Some(problem) = crate::config::hosts::host_name_problem(&h.value) {
                    return Err(CommandError::Invalid(format!("--host: {problem}")));
                }
                host = Some(h.value.clone());
                at = h.end;
            }
            "--mode" => {
                let Some((_, m)) = next_token(args, tok.end)? else {
                    return Err(CommandError::Invalid("--mode needs a MODE".to_string()));
                };
                mode = Some(parse_mode(&m.value)?);
                at = m.end;
            }
            flag if flag.starts_with("--") && flag.len() > 2 => {
                return Err(CommandError::Invalid(format!(
                    "unknown option `{flag}` for /spawn (use --plan, --mode M, --agent claude, --worktree or --host HOST)"
                )));
            }
            _ => {
                at = start;
                break;
            }
        }
    }
    let prompt = rest_text(args, at)?;
    if prompt.is_empty() {
        return Err(CommandError::Invalid(
            "/spawn needs a PROMPT: /spawn NAME [--plan] [--mode M] [--agent claude] [--worktree] [--host HOST] PROMPT"
                .to_string(),
        ));
    }
    Ok(SlashCommand::Spawn {
        name,
        plan_mode_required,
        mode,
        claude,
        worktree,
        host,
        prompt,
    })
}

fn parse_merge(args: &str) -> Result<SlashCommand, CommandError> {
    use crate::lead::review::MergeHow;
    let mut name = None;
    let mut how = None;
    let (mut dry_run, mut retire) = (false, false);
    for tok in all_tokens(args)? {
        let set = |how: &mut Option<MergeHow>, h| match how.replace(h) {
            Some(_) => Err(CommandError::Invalid(
                "/merge takes one of --squash, --merge or --rebase".to_string(),
            )),
            None => Ok(()),
        };
        if let Some(style) = MergeHow::from_option(&tok) {
            set(&mut how, style)?;
            continue;
        }
        match tok.as_str() {
            "--dry-run" => dry_run = true,
            "--retire" => retire = true,
            flag if flag.starts_with("--") => {
                return Err(CommandError::Invalid(format!(
                    "unknown option `{flag}` for /merge (use --squash, --merge or --rebase, --dry-run, --retire)"
                )));
            }
            _ if name.is_none() => name = Some(strip_at(&tok)),
            _ => return Err(usage("/merge")),
        }
    }
    match (name, how) {
        (Some(name), Some(how)) => Ok(SlashCommand::Merge {
            name,
            how,
            dry_run,
            retire,
        }),
        _ => Err(usage("/merge")),
    }
}

fn parse_task_assign(args: &str) -> Result<SlashCommand, CommandError> {
    match all_tokens(args)?.as_slice() {
        [id, name] => Ok(SlashCommand::TaskAssign {
            id: task_id(id, "/task assign")?,
            name: strip_at(name),
        }),
        _ => Err(usage("/task assign")),
    }
}

fn parse_task_done(args: &str) -> Result<SlashCommand, CommandError> {
    task_set(args, "/task done", TaskChange::Done)
}

fn parse_task_reset(args: &str) -> Result<SlashCommand, CommandError> {
    task_set(args, "/task reset", TaskChange::Reset)
}

fn parse_task_unassign(args: &str) -> Result<SlashCommand, CommandError> {
    task_set(args, "/task unassign", TaskChange::Unassign)
}

/// `/task done|reset|unassign ID`.
fn task_set(args: &str, command: &str, change: TaskChange) -> Result<SlashCommand, CommandError> {
    match all_tokens(args)?.as_slice() {
        [id] if !id.starts_with("--") => Ok(SlashCommand::TaskSet {
            id: task_id(id, command)?,
            change,
        }),
        [_, flag, ..] | [flag] if flag.starts_with("--") => Err(CommandError::Invalid(format!(
            "unknown option `{flag}` for {command} (it takes a task ID only)"
        ))),
        _ => Err(usage(command)),
    }
}

/// `1` or `#1`: a task id (digits only, so it is never a path).
fn task_id(raw: &str, command: &str) -> Result<String, CommandError> {
    let id = raw.trim_start_matches('#');
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
        return Err(CommandError::Invalid(format!(
            "`{raw}` is not a task id ({})",
            usage_line(command)
        )));
    }
    Ok(id.to_string())
}

fn usage_line(command: &str) -> String {
    match usage(command) {
        CommandError::Usage(line) => format!("usage: {line}"),
        other => other.to_string(),
    }
}

/// The value after `flag`, or an error that names what it needs.
fn flag_value(
    it: &mut impl Iterator<Item = String>,
    flag: &str,
    needs: &str,
) -> Result<String, CommandError> {
    it.next()
        .filter(|v| !v.starts_with("--"))
        .ok_or_else(|| CommandError::Invalid(format!("{flag} needs {needs}")))
}

fn parse_task_add(rest: &str) -> Result<SlashCommand, CommandError> {
    let mut subject = Vec::new();
    let mut description = String::new();
    let mut blocked_by = Vec::new();
    let mut command = None;
    let mut it = all_tokens(rest)?.into_iter();
    while let Some(tok) = it.next() {
        match tok.as_str() {
            "--blocked-by" => {
                let list = flag_value(&mut it, "--blocked-by", "ids: 1,2")?;
                for id in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let id = id.trim_start_matches('#');
                    if id.parse::<u64>().is_err() {
                        return Err(CommandError::Invalid(format!("`{id}` is not a task id")));
                    }
                    blocked_by.push(id.to_string());
                }
            }
            "--command" => {
                command = Some(flag_value(
                    &mut it,
                    "--command",
                    "a CMD (quote it: --command \"wc -l *.txt\")",
                )?);
            }
            "--description" | "-d" => {
                description = flag_value(
                    &mut it,
                    "--description",
                    "a text (quote it: --description \"see the notes\")",
                )?;
            }
            flag if flag.starts_with("--") => {
                return Err(CommandError::Invalid(format!(
                    "unknown option `{flag}` for /task add (use --description D, --blocked-by 1,2 or --command CMD)"
                )));
            }
            _ => subject.push(tok),
        }
    }
    let subject = subject.join(" ");
    if subject.trim().is_empty() {
        return Err(usage("/task add"));
    }
    Ok(SlashCommand::TaskAdd {
        subject,
        description,
        blocked_by,
        command,
    })
}

fn parse_task_edit(rest: &str) -> Result<SlashCommand, CommandError> {
    let mut it = all_tokens(rest)?.into_iter();
    let Some(raw) = it.next() else {
        return Err(usage("/task edit"));
    };
    let id = task_id(&raw, "/task edit")?;
    let (mut subject, mut description) = (None, None);
    while let Some(tok) = it.next() {
        match tok.as_str() {
            "--subject" => {
                let s = flag_value(&mut it, "--subject", "a text")?;
                if s.trim().is_empty() {
                    return Err(CommandError::Invalid("the subject is empty".to_string()));
                }
                subject = Some(s);
            }
            "--description" | "-d" => {
                description = Some(it.next().ok_or_else(|| {
                    CommandError::Invalid("--description needs a text (\"\" clears it)".to_string())
                })?);
            }
            flag if flag.starts_with('-') => {
                return Err(CommandError::Invalid(format!(
                    "unknown option `{flag}` for /task edit (use --subject S or --description D)"
                )));
            }
            other => {
                return Err(CommandError::Invalid(format!(
                    "unexpected `{other}` ({}; quote a text of several words)",
                    usage_line("/task edit")
                )));
            }
        }
    }
    if subject.is_none() && description.is_none() {
        return Err(CommandError::Invalid(format!(
            "nothing to change ({})",
            usage_line("/task edit")
        )));
    }
    Ok(SlashCommand::TaskEdit {
        id,
        subject,
        description,
    })
}

/// The `/help` text.
pub fn help_text() -> String {
    let mut out = String::from("Commands:");
    for (_, help) in slash_commands() {
        out.push_str("\n  ");
        out.push_str(help);
    }
    out.push_str("\n  @NAME TEXT — message a teammate");
    out
}

/// Every slash command with its one-line help (`/task add SUBJECT … — add a task`), in the
/// order `/help` shows them: the completion's list, made from [`table::COMMANDS`].
pub fn slash_commands() -> &'static [(&'static str, &'static str)] {
    static LINES: std::sync::LazyLock<Vec<(&'static str, &'static str)>> =
        std::sync::LazyLock::new(|| {
            table::COMMANDS
                .iter()
                .map(|c| (c.name, &*Box::leak(c.help_line().into_boxed_str())))
                .collect()
        });
    &LINES
}

#[cfg(test)]
mod tests;
