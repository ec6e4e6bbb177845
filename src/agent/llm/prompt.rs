//! What an `llm` teammate is told: the system prompt (who it is, its team and lead, that its
//! plain text reaches no one and only SendMessage does, how messages arrive, how the task list
//! works, its permission mode and what plan mode means) and the notice that starts work on a
//! task it claimed or was given.

use std::path::Path;

use crate::protocol::{LEAD_NAME, PermissionMode, Task};

/// Who the teammate is, for its system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptContext<'a> {
    pub name: &'a str,
    pub team: &'a str,
    pub cwd: &'a Path,
    pub mode: PermissionMode,
    /// The other members (the lead included).
    pub members: &'a [String],
}

/// The system prompt.
pub fn system_prompt(ctx: &PromptContext<'_>) -> String {
    let members = if ctx.members.is_empty() {
        LEAD_NAME.to_string()
    } else {
        ctx.members.join(", ")
    };
    let mut text = format!(
        "You are {name}, a member of the agent team \"{team}\" (agent id {name}@{team}), led by \
{LEAD_NAME}. You are a capable software engineer. You work in {cwd} with tools to run \
commands, read, search and edit files, message your team and use the team's task list.

# Talking to your team
- Your plain text output is seen by no one. Only the SendMessage tool reaches others: send to \
\"{LEAD_NAME}\", to a teammate by name, or to \"*\" for everyone. Members now: {members}.
- Messages from others arrive in user turns as <teammate-message teammate_id=\"…\" …> blocks. \
Answer with SendMessage when an answer is expected; {LEAD_NAME} speaks for the user.
- When you finish a piece of work, tell {LEAD_NAME} what you did and what you found with \
SendMessage (briefly; include what matters: results, file names, failures).

# Tasks
- The team shares a task list: TaskList, TaskGet, TaskCreate, TaskUpdate. A task is available \
when it is pending, has no owner and every task blocking it is completed.
- Claim a task with TaskUpdate {{taskId, status: \"in_progress\"}} before working on it. You \
work on one task at a time.
- When a task is done and verified, mark it with TaskUpdate {{taskId, status: \"completed\"}}. \
If you cannot finish it, say why to {LEAD_NAME} and leave it in_progress, or give it back with \
status \"pending\".
- When you have nothing left to do, end your turn with a one-line summary. You are woken when \
a message or a task arrives.

# Permissions
- Your permission mode is {mode}. Some calls (Bash, file edits) may need {LEAD_NAME}'s \
approval; the call waits for it. A refused call returns an error: do not repeat it; adapt, or \
ask {LEAD_NAME}.",
        name = ctx.name,
        team = ctx.team,
        cwd = ctx.cwd.display(),
        mode = ctx.mode,
    );
    if ctx.mode == PermissionMode::Plan {
        text.push_str(&format!(
            "\n- You are in plan mode: until {LEAD_NAME} approves a plan you may only read \
(Read, Glob, Grep, TaskList, TaskGet) and send messages. Look at what you need, then submit \
your plan with SubmitPlan {{plan}} and wait for the decision. Edits, commands and task changes \
are refused until then."
        ));
    }
    text
}

/// The start of work on `task`: it was claimed for the teammate now, or it was already its own.
pub fn task_notice(task: &Task, claimed_now: bool) -> String {
    let how = if claimed_now {
        "You claimed task"
    } else {
        "Task"
    };
    let tail = if claimed_now {
        "It was available in the task list"
    } else {
        "It is assigned to you"
    };
    let description = if task.description.trim().is_empty() {
        "(no description)".to_string()
    } else {
        task.description.trim().to_string()
    };
    format!(
        "{how} #{id} \"{subject}\" ({tail}; status in_progress, owner you).\n\n{description}\n\n\
Work on it now. When it is done, mark it completed with TaskUpdate {{\"taskId\": \"{id}\", \
\"status\": \"completed\"}} and tell {LEAD_NAME} what you did with SendMessage.",
        id = task.id,
        subject = task.subject,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_says_who_and_how() {
        let members = vec!["team-lead".to_string(), "tester".to_string()];
        let ctx = PromptContext {
            name: "builder",
            team: "demo",
            cwd: Path::new("/w"),
            mode: PermissionMode::Default,
            members: &members,
        };
        let text = system_prompt(&ctx);
        assert!(text.contains("You are builder, a member of the agent team \"demo\""));
        assert!(text.contains("Your plain text output is seen by no one"));
        assert!(text.contains("Members now: team-lead, tester"));
        assert!(!text.contains("You are in plan mode"));
        let plan = system_prompt(&PromptContext {
            mode: PermissionMode::Plan,
            ..ctx
        });
        assert!(plan.contains("SubmitPlan"));
        let task = Task::new("3", "Add a parser", "Parse the input.");
        let notice = task_notice(&task, true);
        assert!(notice.starts_with("You claimed task #3 \"Add a parser\""));
        assert!(notice.contains("Parse the input."));
    }
}
