//! `teamlead task add|list|claim|done|reset|unassign|edit|delete`: the store's task list from the shell, one line
//! of output per action (a table or JSON for `list`). `list` reads through the store's audit
//! and warns on stderr about every file it skipped; the writers look at the files they will
//! change first and refuse, untouched, what they cannot safely change. Subjects and ids from
//! files are escaped.

use color_eyre::eyre::{Result, WrapErr, bail};
use serde_json::{Map, Value};

use super::Context;
use super::args::{TaskArgs, TaskCommand};
use super::inspect::report::{TeamReport, report_from};
use super::output::Out;
use super::refuse::{note_stale_lock, refuse_if_any, warn};
use super::style::{Style, pad};
use crate::protocol::display::{escape_json_output, visible_line};
use crate::protocol::names::check_path_component;
use crate::store::audit::{self, Expect, Look, before_task_list_write, before_write};
use crate::store::{Home, TaskList, lock};

fn task_list(home: &Home, team: &str) -> Result<TaskList> {
    check_path_component(team).wrap_err("bad --team")?;
    let list = TaskList::new(home, team)?;
    let missing = |p: &std::path::Path| audit::look(home, p) == Look::Missing;
    if missing(&home.team_dir(team)?) && missing(list.dir()) {
        bail!(
            "team `{team}` not found in {} (no teams/{team} or tasks/{team})",
            visible_line(&home.root.display().to_string())
        );
    }
    Ok(list)
}

/// Refuses to change the task file of `id` (or the list, for add and delete) when the audit
/// finds it unsafe.
fn check_task(home: &Home, list: &TaskList, id: &str, doing: &str) -> Result<()> {
    let path = list.task_path(id)?;
    refuse_if_any(home, &before_write(home, &path, Expect::JsonObject), doing)
}

/// `"subject"` escaped for one line.
fn quoted(subject: &str) -> String {
    format!("\"{}\"", visible_line(subject))
}

pub fn run(ctx: &Context, args: &TaskArgs) -> Result<()> {
    let home = &ctx.home;
    let mut out = Out::new();
    lock::install_signal_cleanup()?;
    match &args.command {
        TaskCommand::Add(a) => {
            let list = task_list(home, &a.team.team)?;
            if a.subject.trim().is_empty() {
                bail!("the subject is empty");
            }
            for id in &a.blocked_by {
                check_path_component(id).wrap_err("bad --blocked-by")?;
            }
            refuse_if_any(
                home,
                &before_task_list_write(home, &a.team.team)?,
                "add a task",
            )?;
            for id in &a.blocked_by {
                check_task(home, &list, id, "add a task blocked by it")?;
            }
            note_stale_lock(home, &list.dir().join(".lock"));
            let metadata = a.command.as_ref().map(|c| {
                let mut m = Map::new();
                m.insert("command".into(), Value::String(c.clone()));
                m
            });
            let task = list.create(&a.subject, &a.description, a.blocked_by.clone(), metadata)?;
            out.line(format!(
                "created task #{} {}",
                visible_line(&task.id),
                quoted(&task.subject)
            ))?;
        }
        TaskCommand::List(a) => {
            let list = task_list(home, &a.team.team)?;
            let mut found = audit::audit_team(home, &a.team.team)?;
            // The task list's own problems (and a task list directory that is not one).
            found.problems.retain(|p| p.path.starts_with(list.dir()));
            for p in &found.problems {
                warn(home, p);
            }
            let report = report_from(
                home,
                &a.team.team,
                &found,
                &std::sync::Arc::new(crate::protocol::pricing::PriceTable::built_in()),
            );
            if a.json {
                let doc = serde_json::to_string_pretty(&serde_json::json!({
                    "team": report.name,
                    "tasks": report.tasks,
                    "available": report.available,
                    "problems": report.problems,
                }))?;
                out.line(escape_json_output(&doc))?;
            } else {
                out.raw(list_text(&report, Style::stdout()))?;
            }
        }
        TaskCommand::Claim(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            check_path_component(&a.owner).wrap_err("bad --owner")?;
            check_task(home, &list, &a.id, "claim the task")?;
            match list.claim(&a.id, &a.owner, a.check_busy) {
                Ok(task) => out.line(format!(
                    "task #{} {} claimed by {}",
                    visible_line(&task.id),
                    quoted(&task.subject),
                    a.owner
                ))?,
                Err(e) => bail!("cannot claim task #{} ({}): {e}", a.id, e.code()),
            }
        }
        TaskCommand::Done(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            check_task(home, &list, &a.id, "complete the task")?;
            let task = list.complete(&a.id)?;
            out.line(format!(
                "task #{} {} completed",
                visible_line(&task.id),
                quoted(&task.subject)
            ))?;
        }
        TaskCommand::Reset(a) | TaskCommand::Unassign(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            let reset = matches!(args.command, TaskCommand::Reset(_));
            let (doing, now) = if reset {
                ("reset the task", "pending, with no owner")
            } else {
                ("unassign the task", "unassigned")
            };
            check_task(home, &list, &a.id, doing)?;
            let task = if reset {
                list.reset(&a.id)?
            } else {
                list.unassign(&a.id)?
            };
            out.line(format!(
                "task #{} {} is {now} ({})",
                visible_line(&task.id),
                quoted(&task.subject),
                task.status.as_str()
            ))?;
        }
        TaskCommand::Edit(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            if a.subject.as_deref().is_some_and(|s| s.trim().is_empty()) {
                bail!("the subject is empty");
            }
            check_task(home, &list, &a.id, "edit the task")?;
            let edit = crate::store::tasks::TaskEdit {
                subject: a.subject.clone(),
                description: a.description.clone(),
            };
            let task = list.edit(&a.id, &edit)?;
            out.line(format!(
                "task #{} {} edited",
                visible_line(&task.id),
                quoted(&task.subject)
            ))?;
        }
        TaskCommand::Delete(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            refuse_if_any(
                home,
                &before_task_list_write(home, &a.team.team)?,
                "delete the task",
            )?;
            check_task(home, &list, &a.id, "delete the task")?;
            let task = list.delete(&a.id)?;
            out.line(format!(
                "deleted task #{} {}",
                visible_line(&task.id),
                quoted(&task.subject)
            ))?;
        }
    }
    Ok(())
}

fn list_text(report: &TeamReport, style: Style) -> String {
    let mut out = String::new();
    if report.tasks.is_empty() {
        out.push_str(&format!(
            "no tasks in team {}\n",
            visible_line(&report.name)
        ));
    }
    let owner_width = report
        .tasks
        .iter()
        .map(|t| {
            t.owner
                .as_deref()
                .map_or(1, |o| visible_line(o).chars().count())
        })
        .max()
        .unwrap_or(1)
        .max(5);
    let id_width = report
        .tasks
        .iter()
        .map(|t| visible_line(&t.id).chars().count() + 1)
        .max()
        .unwrap_or(2)
        .max(3);
    if !report.tasks.is_empty() {
        out.push_str(&style.bold(&format!(
            "{}  {}  {}  SUBJECT",
            pad("ID", id_width),
            pad("STATUS", 11),
            pad("OWNER", owner_width)
        )));
        out.push('\n');
    }
    for t in &report.tasks {
        let mut notes = Vec::new();
        if t.internal {
            notes.push("internal".to_string());
        }
        if t.available {
            notes.push("available".to_string());
        }
        if !t.waiting_on.is_empty() {
            let ids: Vec<String> = t
                .waiting_on
                .iter()
                .map(|b| format!("#{} ({})", visible_line(&b.id), b.status))
                .collect();
            notes.push(format!("blocked by {}", ids.join(", ")));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("  [{}]", notes.join("; "))
        };
        out.push_str(&format!(
            "{}  {}  {}  {}{notes}\n",
            pad(&format!("#{}", visible_line(&t.id)), id_width),
            pad(&t.status, 11),
            pad(
                &visible_line(t.owner.as_deref().unwrap_or("-")),
                owner_width
            ),
            visible_line(&t.subject)
        ));
    }
    out
}
