//! The texts a `shell` teammate sends: what a command did (exit status and the tail of its
//! output), per task or per command the lead sent, with a short summary for previews.

use super::exec::ExecOutcome;
use crate::protocol::Task;
use crate::protocol::inbox::clip;

/// Output lines quoted in a report.
pub const TAIL_LINES: usize = 20;
/// Output characters quoted in a report.
pub const TAIL_CHARS: usize = 2000;

/// `task #3 "subject"`.
pub fn task_label(task: &Task) -> String {
    task.label()
}

/// A command, short, for summaries: its first line, clipped.
pub fn short_command(command: &str) -> String {
    clip(command.lines().next().unwrap_or(""), 40)
}

/// `head`, the command, its status and the tail of its output in a fenced block.
pub fn outcome_text(head: &str, command: &str, outcome: &ExecOutcome) -> String {
    let mut text = format!("{head}\n\n$ {command}\n→ {}", outcome.status.label());
    let tail = outcome.tail_text(TAIL_LINES, TAIL_CHARS);
    if !tail.is_empty() {
        let which = if outcome.lines > TAIL_LINES {
            format!(" (last {TAIL_LINES} of {} lines)", outcome.lines)
        } else {
            String::new()
        };
        text.push_str(&format!("\n\nOutput{which}:\n```\n{tail}\n```"));
    }
    text
}

/// What it says about a task after a failure, true when it is said: `owner` is the task's
/// owner as the task list shows it now. Still its own: it keeps it but does not run it again by
/// itself. Another's (the lead reassigned it, or holds it): it leaves it.
pub fn kept_note(name: &str, owner: Option<&str>) -> String {
    match owner {
        Some(o) if o == name => format!(
            "{name} does not run it again by itself: the task stays {name}'s, in progress, until the lead takes it back or assigns it again."
        ),
        Some(o) => {
            format!("The task is no longer {name}'s (its owner is now {o}): {name} leaves it.")
        }
        None => format!("The task is no longer {name}'s (it has no owner now): {name} leaves it."),
    }
}
