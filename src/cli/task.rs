//! `teamlead task add|list|claim|done|delete`: the store's task list from the shell, one line
//! of output per action (a table or JSON for `list`).

use color_eyre::eyre::{Result, WrapErr, bail};
use serde_json::{Map, Value};

use super::Context;
use super::args::{TaskArgs, TaskCommand};
use super::inspect::report::{TeamReport, team_report};
use super::output::Out;
use super::style::{Style, pad};
use crate::protocol::names::check_path_component;
use crate::store::{Home, TaskList, lock};

fn task_list(home: &Home, team: &str) -> Result<TaskList> {
    check_path_component(team).wrap_err("bad --team")?;
    let list = TaskList::new(home, team)?;
    if !home.team_dir(team)?.is_dir() && !list.dir().is_dir() {
        bail!(
            "team `{team}` not found in {} (no teams/{team} or tasks/{team})",
            home.root.display()
        );
    }
    Ok(list)
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
            let metadata = a.command.as_ref().map(|c| {
                let mut m = Map::new();
                m.insert("command".into(), Value::String(c.clone()));
                m
            });
            let task = list.create(&a.subject, &a.description, a.blocked_by.clone(), metadata)?;
            out.line(format!("created task #{} \"{}\"", task.id, task.subject))?;
        }
        TaskCommand::List(a) => {
            let list = task_list(home, &a.team.team)?;
            let mut report = team_report(home, &a.team.team)?;
            report
                .problems
                .retain(|p| std::path::Path::new(&p.path).starts_with(list.dir()));
            if a.json {
                out.line(serde_json::to_string_pretty(&serde_json::json!({
                    "team": report.name,
                    "tasks": report.tasks,
                    "available": report.available,
                    "problems": report.problems,
                }))?)?;
            } else {
                out.raw(list_text(&report, Style::stdout()))?;
            }
        }
        TaskCommand::Claim(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            check_path_component(&a.owner).wrap_err("bad --owner")?;
            match list.claim(&a.id, &a.owner, a.check_busy) {
                Ok(task) => out.line(format!(
                    "task #{} \"{}\" claimed by {}",
                    task.id, task.subject, a.owner
                ))?,
                Err(e) => bail!("cannot claim task #{} ({}): {e}", a.id, e.code()),
            }
        }
        TaskCommand::Done(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            let task = list.complete(&a.id)?;
            out.line(format!("task #{} \"{}\" completed", task.id, task.subject))?;
        }
        TaskCommand::Delete(a) => {
            let list = task_list(home, &a.team.team)?;
            check_path_component(&a.id).wrap_err("bad task id")?;
            let task = list.delete(&a.id)?;
            out.line(format!("deleted task #{} \"{}\"", task.id, task.subject))?;
        }
    }
    Ok(())
}

fn list_text(report: &TeamReport, style: Style) -> String {
    let mut out = String::new();
    if report.tasks.is_empty() {
        out.push_str(&format!("no tasks in team {}\n", report.name));
    }
    let owner_width = report
        .tasks
        .iter()
        .map(|t| t.owner.as_deref().map_or(1, |o| o.chars().count()))
        .max()
        .unwrap_or(1)
        .max(5);
    let id_width = report
        .tasks
        .iter()
        .map(|t| t.id.len() + 1)
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
                .map(|b| format!("#{} ({})", b.id, b.status))
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
            pad(&format!("#{}", t.id), id_width),
            pad(&t.status, 11),
            pad(t.owner.as_deref().unwrap_or("-"), owner_width),
            t.subject
        ));
    }
    for p in &report.problems {
        out.push_str(&format!("problem: {}: {}\n", p.path, p.message));
    }
    out
}
