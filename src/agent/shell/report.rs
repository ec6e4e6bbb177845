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

/// What it says about a task it keeps after a failure.
pub fn kept_note(name: &str) -> String {
    format!(
        "{name} does not try it again by itself: a teamlead lead sets it back to pending with no owner (another lead may leave it in_progress and owned by {name}); assign it again to have it tried again."
    )
}
