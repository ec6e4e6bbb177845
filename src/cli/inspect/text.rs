//! `inspect` as text: a table of teams, or one team's members, tasks, inboxes and problems.
//! Paths are shown relative to the home.

use std::path::Path;

use super::report::{HomeReport, TaskRow, TeamReport};
use crate::cli::style::{Style, pad};

fn or_dash(v: Option<&str>) -> String {
    match v {
        Some(s) if !s.is_empty() => s.to_string(),
        _ => "-".to_string(),
    }
}

fn relative(home: &str, path: &str) -> String {
    Path::new(path)
        .strip_prefix(home)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string())
}

/// The team list.
pub fn home_text(report: &HomeReport, style: Style) -> String {
    let mut out = String::new();
    out.push_str(&format!("home {}\n", report.home));
    if report.teams.is_empty() {
        out.push_str("no teams\n");
        return out;
    }
    let width = report
        .teams
        .iter()
        .map(|t| t.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&style.bold(&format!(
        "{}  MEMBERS  LEAD         UNREAD FOR LEAD  TASKS",
        pad("TEAM", width)
    )));
    out.push('\n');
    for t in &report.teams {
        let members = t
            .members
            .map(|n| n.to_string())
            .unwrap_or_else(|| "?".to_string());
        let lead = match t.lead_pid {
            Some(0) => "running".to_string(),
            Some(pid) => format!("pid {pid}"),
            None => "not running".to_string(),
        };
        out.push_str(&format!(
            "{}  {}  {}  {}  {}",
            pad(&t.name, width),
            pad(&members, 7),
            pad(&lead, 11),
            pad(&t.unread_for_lead.to_string(), 15),
            t.tasks
        ));
        if let Some(p) = &t.problem {
            out.push_str(&format!("  {}", style.warn(&format!("({p})"))));
        }
        out.push('\n');
    }
    out
}

/// One team.
pub fn team_text(r: &TeamReport, style: Style) -> String {
    let mut out = String::new();
    let title = match &r.description {
        Some(d) if !d.is_empty() => format!("team {} — {d}", r.name),
        _ => format!("team {}", r.name),
    };
    out.push_str(&style.bold(&title));
    out.push('\n');
    let lead_state = match r.lead_pid {
        Some(0) => "running".to_string(),
        Some(pid) => format!("running (pid {pid})"),
        None => "not running".to_string(),
    };
    out.push_str(&format!(
        "  lead {}: {lead_state}",
        or_dash(r.lead_agent_id.as_deref())
    ));
    if let Some(c) = &r.created_at {
        out.push_str(&format!(" · created {c}"));
    }
    out.push_str(&format!(" · home {}\n", r.home));

    members_text(r, style, &mut out);
    tasks_text(r, style, &mut out);
    inboxes_text(r, style, &mut out);

    out.push('\n');
    if r.problems.is_empty() {
        out.push_str(&format!("{} none\n", style.bold("problems:")));
    } else {
        out.push_str(&style.bold(&format!("problems ({})", r.problems.len())));
        out.push('\n');
        for p in &r.problems {
            out.push_str(&format!(
                "  {}: {}\n",
                relative(&r.home, &p.path),
                style.warn(&p.message)
            ));
        }
    }
    out
}

fn members_text(r: &TeamReport, style: Style, out: &mut String) {
    out.push('\n');
    out.push_str(&style.bold(&format!("members ({})", r.members.len())));
    out.push('\n');
    if r.members.is_empty() {
        out.push_str("  none\n");
        return;
    }
    let names: Vec<String> = r
        .members
        .iter()
        .map(|m| {
            if m.lead {
                format!("{} (lead)", m.name)
            } else {
                m.name.clone()
            }
        })
        .collect();
    let width = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&style.dim(&format!(
        "  {}  STATUS  BACKEND     PANE        MODE               COLOR",
        pad("NAME", width)
    )));
    out.push('\n');
    for (m, name) in r.members.iter().zip(&names) {
        let plan = if m.plan_mode_required {
            "  plan required"
        } else {
            ""
        };
        out.push_str(&format!(
            "  {}  {}  {}  {}  {}  {}{plan}\n",
            style.color(m.color.as_deref(), &pad(name, width)),
            pad(&m.status, 6),
            pad(&or_dash(m.backend.as_deref()), 10),
            pad(&or_dash(Some(&m.pane)), 10),
            pad(&m.mode, 17),
            or_dash(m.color.as_deref()),
        ));
    }
}

fn task_note(t: &TaskRow) -> String {
    let mut notes = Vec::new();
    if t.internal {
        notes.push("internal".to_string());
    }
    if t.available {
        notes.push("available".to_string());
    }
    if !t.waiting_on.is_empty() {
        let by: Vec<String> = t
            .waiting_on
            .iter()
            .map(|b| match &b.owner {
                Some(o) => format!("#{} ({}, {o})", b.id, b.status),
                None => format!("#{} ({})", b.id, b.status),
            })
            .collect();
        notes.push(format!("blocked by {}", by.join(", ")));
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!("  [{}]", notes.join("; "))
    }
}

fn tasks_text(r: &TeamReport, style: Style, out: &mut String) {
    out.push('\n');
    let count = |s: &str| r.tasks.iter().filter(|t| t.status == s).count();
    out.push_str(&style.bold(&format!(
        "tasks ({}: {} completed, {} in progress, {} pending; {} available)",
        r.tasks.len(),
        count("completed"),
        count("in_progress"),
        count("pending"),
        r.available.len()
    )));
    out.push('\n');
    if r.tasks.is_empty() {
        out.push_str("  none\n");
        return;
    }
    let id_width = r.tasks.iter().map(|t| t.id.len() + 1).max().unwrap_or(2);
    let owner_width = r
        .tasks
        .iter()
        .map(|t| t.owner.as_deref().map_or(1, |o| o.chars().count()))
        .max()
        .unwrap_or(1)
        .max(5);
    for t in &r.tasks {
        let line = format!(
            "  {}  {}  {}  {}{}",
            pad(&format!("#{}", t.id), id_width),
            pad(&t.status, 11),
            pad(&or_dash(t.owner.as_deref()), owner_width),
            t.subject,
            task_note(t)
        );
        if t.status == "completed" || t.internal {
            out.push_str(&style.dim(&line));
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    let available: Vec<String> = r.available.iter().map(|id| format!("#{id}")).collect();
    out.push_str(&format!(
        "  available: {}\n",
        if available.is_empty() {
            "none".to_string()
        } else {
            available.join(", ")
        }
    ));
}

fn inboxes_text(r: &TeamReport, style: Style, out: &mut String) {
    out.push('\n');
    out.push_str(&style.bold(&format!("inboxes ({})", r.inboxes.len())));
    out.push('\n');
    if r.inboxes.is_empty() {
        out.push_str("  none\n");
        return;
    }
    for inbox in &r.inboxes {
        out.push_str(&format!(
            "  {}: {} unread ({} total)\n",
            inbox.member, inbox.unread, inbox.total
        ));
        if inbox.unread > inbox.recent_unread.len() {
            out.push_str(&format!(
                "    … {} older unread\n",
                inbox.unread - inbox.recent_unread.len()
            ));
        }
        for m in &inbox.recent_unread {
            out.push_str(&format!("    {}  {}\n", style.dim(&m.timestamp), m.summary));
        }
    }
}
