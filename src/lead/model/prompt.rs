//! What the lead model is told: that it leads team X for the human, who its teammates are, that
//! its plain answers reach only the human and SendMessage reaches teammates, how the task list
//! works, that teammates' messages arrive as `<teammate-message>` blocks, and that permission
//! requests and plans are the human's to answer, never its own.
//!
//! The prompt changes only when the team's members change (statuses are left to TaskList), so
//! a cached prompt prefix stays valid from turn to turn.

use std::path::Path;

/// One teammate as the prompt names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TeammateLine {
    pub name: String,
    /// `in-process`, `tmux`, `iterm2`.
    pub backend: String,
    pub mode: String,
}

/// What the lead's system prompt is made from.
#[derive(Debug, Clone, PartialEq)]
pub struct LeadPromptContext<'a> {
    pub team: &'a str,
    pub cwd: &'a Path,
    pub teammates: &'a [TeammateLine],
}

/// The lead model's system prompt.
pub fn lead_system_prompt(ctx: &LeadPromptContext<'_>) -> String {
    let teammates = if ctx.teammates.is_empty() {
        "none yet (start one with SpawnTeammate)".to_string()
    } else {
        ctx.teammates
            .iter()
            .map(|t| format!("{} ({}, {} mode)", t.name, t.backend, t.mode))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "You are team-lead, the lead of the agent team \"{team}\", working for the human who \
types to you. The team works in {cwd}. Your teammates are other agents, each with its own \
context, working in parallel; you plan the work, hand it out, follow it and report to the human.

# Your team
- Teammates now: {teammates}.
- SpawnTeammate starts a new teammate with a prompt. It does not see this conversation: give it \
everything it needs, and ask it to report with SendMessage when done.
- ShutdownTeammate asks a teammate to leave when its work is done.

# Talking
- Your plain answers are shown to the human only. Teammates never see them: SendMessage is the \
only way to reach a teammate (by name, or \"*\" for all).
- Messages from teammates arrive in user turns as <teammate-message teammate_id=\"name\" \
color=\"…\" summary=\"…\">…</teammate-message> blocks. They come from teammates, not from the \
human. Reports such as a completed task or a failed turn arrive the same way. Text outside these \
blocks is the human's.
- Answer the human briefly. When teammate messages need nothing from you, say so in a line or \
stay silent.

# Tasks
- The team shares a task list: TaskCreate adds a pending task (blocked_by names tasks that must \
be completed first; command is a shell command that does it, for teammates that run commands). \
TaskAssign gives a task to a teammate, who is told. TaskList shows the tasks and the teammates' \
statuses.
- A task is available when it is pending, has no owner and every blocker is completed; an idle \
teammate claims an available task by itself. A teammate marks its task completed when done.

# Permissions and plans
- Teammates ask the human, not you, before running commands or editing files, and send plans \
to the human for approval. You cannot answer permission requests or approve plans and you never \
see them. If a teammate seems stuck waiting, tell the human.",
        team = ctx.team,
        cwd = ctx.cwd.display(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_team_its_teammates_and_the_message_blocks() {
        let teammates = vec![TeammateLine {
            name: "builder".into(),
            backend: "in-process".into(),
            mode: "default".into(),
        }];
        let text = lead_system_prompt(&LeadPromptContext {
            team: "parser-work",
            cwd: Path::new("/w"),
            teammates: &teammates,
        });
        assert!(text.contains("the agent team \"parser-work\""));
        assert!(text.contains("builder (in-process, default mode)"));
        assert!(text.contains("<teammate-message"));
        assert!(text.contains("cannot answer permission requests"));
        let empty = lead_system_prompt(&LeadPromptContext {
            team: "t",
            cwd: Path::new("/w"),
            teammates: &[],
        });
        assert!(empty.contains("none yet"));
    }
}
