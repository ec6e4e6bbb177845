//! `inspect` as text: a table of teams, or one team's members, tasks, inboxes and problems.
//! Paths are shown relative to the home. Every string that came from a file (names, subjects,
//! messages, paths, details) goes through `visible_line`, so none can reach the terminal raw.

use std::path::Path;

use super::report::{HomeReport, ProblemRow, TaskRow, TeamReport};
use crate::cli::style::{Style, pad};
use crate::protocol::display::visible_line;

/// Text from a file, safe for one line of the terminal.
fn v(text: &str) -> String {
    visible_line(text).into_owned()
}

fn or_dash(value: Option<&str>) -> String {
    match value {
        Some(s) if !s.is_empty() => v(s),
        _ => "-".to_string(),
    }
}

fn relative(home: &str, path: &str) -> String {
    let shown = Path::new(path)
        .strip_prefix(home)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string());
    v(&shown)
}

/// The problems section: `problems: none`, or a count and one line per problem.
pub fn problems_text(home: &str, problems: &[ProblemRow], style: Style, out: &mut String) {
    if problems.is_empty() {
        out.push_str(&format!("{} none\n", style.bold("problems:")));
        return;
    }
    out.push_str(&style.bold(&format!("problems ({})", problems.len())));
    out.push('\n');
    for p in problems {
        out.push_str(&format!(
            "  {}: {}\n",
            relative(home, &p.path),
            style.warn(&v(&p.message))
        ));
    }
}

/// The team list.
pub fn home_text(report: &HomeReport, style: Style) -> String {
    let mut out = String::new();
    out.push_str(&format!("home {}\n", v(&report.home)));
    if report.teams.is_empty() {
        out.push_str("no teams\n");
        out.push('\n');
        problems_text(&report.home, &report.problems, style, &mut out);
        return out;
    }
    let width = report
        .teams
        .iter()
        .map(|t| v(&t.name).chars().count())
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
        let lead = match (t.lead_pid, t.lead_status.as_str()) {
            (Some(0), _) => "running".to_string(),
            (Some(pid), _) => format!("pid {pid}"),
            (None, "unknown") => "unknown".to_string(),
            (None, _) => "not running".to_string(),
        };
        out.push_str(&format!(
            "{}  {}  {}  {}  {}",
            pad(&v(&t.name), width),
            pad(&members, 7),
            pad(&lead, 11),
            pad(&t.unread_for_lead.to_string(), 15),
            t.tasks
        ));
        if let Some(p) = &t.problem {
            out.push_str(&format!("  {}", style.warn(&format!("({})", v(p)))));
        } else if t.problems > 0 {
            out.push_str(&format!(
                "  {}",
                style.warn(&format!("({} problem(s))", t.problems))
            ));
        }
        out.push('\n');
    }
    out.push('\n');
    problems_text(&report.home, &report.problems, style, &mut out);
    out
}

/// One team.
pub fn team_text(r: &TeamReport, style: Style) -> String {
    let mut out = String::new();
    let title = match &r.description {
        Some(d) if !d.is_empty() => format!("team {} — {}", v(&r.name), v(d)),
        _ => format!("team {}", v(&r.name)),
    };
    out.push_str(&style.bold(&title));
    out.push('\n');
    let lead_state = match (r.lead_pid, r.lead_status.as_str()) {
        (Some(0), _) => "running".to_string(),
        (Some(pid), _) => format!("running (pid {pid})"),
        (None, "unknown") => "unknown (neither running nor provably gone)".to_string(),
        (None, _) => "not running".to_string(),
    };
    out.push_str(&format!(
        "  lead {}: {lead_state}",
        or_dash(r.lead_agent_id.as_deref())
    ));
    if let Some(c) = &r.created_at {
        out.push_str(&format!(" · created {c}"));
    }
    out.push_str(&format!(" · home {}\n", v(&r.home)));
    for why in &r.lead_evidence {
        out.push_str(&format!("    {}\n", style.dim(&v(why))));
    }

    members_text(r, style, &mut out);
    usage_text(r, style, &mut out);
    tasks_text(r, style, &mut out);
    inboxes_text(r, style, &mut out);
    quarantine_text(r, style, &mut out);

    out.push('\n');
    problems_text(&r.home, &r.problems, style, &mut out);
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
                format!("{} (lead)", v(&m.name))
            } else if let Some(host) = &m.host {
                format!("{} · {}", v(&m.name), v(host))
            } else {
                v(&m.name)
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
            pad(&v(&m.mode), 17),
            or_dash(m.color.as_deref()),
        ));
    }
}

/// What each teammate used and cost (by model when it used several), its limit, and the
/// team's total with what it leaves out (only when something is known).
fn usage_text(r: &TeamReport, style: Style, out: &mut String) {
    let rows: Vec<(&super::report::MemberRow, &super::report::UsageRow)> = r
        .members
        .iter()
        .filter_map(|m| Some((m, m.usage.as_ref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    out.push('\n');
    let models: Vec<&[String]> = r.unpriced.iter().map(|u| u.models.as_slice()).collect();
    let left_out = crate::protocol::pricing::unpriced_note(&models)
        .map(|note| format!(" + {note}"))
        .unwrap_or_default();
    out.push_str(&style.bold(&format!(
        "usage (team {}{left_out})",
        crate::protocol::pricing::dollars(r.cost_micros)
    )));
    out.push('\n');
    let width = rows
        .iter()
        .map(|(m, _)| v(&m.name).chars().count())
        .max()
        .unwrap_or(4);
    let tokens = crate::ui::usage::short_count;
    for (m, u) in rows {
        let cached = [
            (u.cache_read_tokens, "cache read"),
            (u.cache_write_5m_tokens, "cache write 5 min"),
            (u.cache_write_1h_tokens, "cache write 1 h"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{} {what}", tokens(n)))
        .collect::<Vec<_>>();
        let cached = if cached.is_empty() {
            String::new()
        } else {
            format!(" ({})", cached.join(", "))
        };
        let cost = match (u.cost_micros, u.unpriced_models.is_empty()) {
            (Some(c), true) => crate::protocol::pricing::dollars(c),
            (Some(c), false) => format!(
                "{} + {} not priced",
                crate::protocol::pricing::dollars(c),
                v(&u.unpriced_models.join(", "))
            ),
            (None, _) => "no price".to_string(),
        };
        let model = u
            .model
            .as_deref()
            .map(|m| format!("  {}", v(m)))
            .unwrap_or_default();
        let limited = m
            .limited_until
            .as_deref()
            .map(|t| format!("  limited until {}", v(t)))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}  {} in{cached} · {} out · {cost}{model}{limited}\n",
            pad(&v(&m.name), width),
            tokens(u.input_tokens),
            tokens(u.output_tokens),
        ));
        if u.by_model.len() > 1 {
            for b in &u.by_model {
                let cost = b
                    .cost_micros
                    .map_or_else(|| "no price".to_string(), crate::protocol::pricing::dollars);
                out.push_str(&format!(
                    "  {}    {}: {} message{} · {} in · {} out · {cost}\n",
                    pad("", width),
                    v(&b.model),
                    b.messages,
                    if b.messages == 1 { "" } else { "s" },
                    tokens(
                        b.input_tokens
                            + b.cache_read_tokens
                            + b.cache_write_5m_tokens
                            + b.cache_write_1h_tokens
                    ),
                    tokens(b.output_tokens),
                ));
            }
        }
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
                Some(o) => format!("#{} ({}, {})", v(&b.id), b.status, v(o)),
                None => format!("#{} ({})", v(&b.id), b.status),
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
    let id_width = r
        .tasks
        .iter()
        .map(|t| v(&t.id).chars().count() + 1)
        .max()
        .unwrap_or(2);
    let owner_width = r
        .tasks
        .iter()
        .map(|t| t.owner.as_deref().map_or(1, |o| v(o).chars().count()))
        .max()
        .unwrap_or(1)
        .max(5);
    for t in &r.tasks {
        let line = format!(
            "  {}  {}  {}  {}{}",
            pad(&format!("#{}", v(&t.id)), id_width),
            pad(&t.status, 11),
            pad(&or_dash(t.owner.as_deref()), owner_width),
            v(&t.subject),
            task_note(t)
        );
        if t.status == "completed" || t.internal {
            out.push_str(&style.dim(&line));
        } else {
            out.push_str(&line);
        }
        out.push('\n');
    }
    let available: Vec<String> = r.available.iter().map(|id| format!("#{}", v(id))).collect();
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
        let from_lead = if inbox.from_lead_read + inbox.from_lead_unread > 0 {
            format!(
                "; from the lead: {} read, {} unread",
                inbox.from_lead_read, inbox.from_lead_unread
            )
        } else {
            String::new()
        };
        out.push_str(&format!(
            "  {}: {} unread ({} total{from_lead})\n",
            v(&inbox.member),
            inbox.unread,
            inbox.total
        ));
        if inbox.unread > inbox.recent_unread.len() {
            out.push_str(&format!(
                "    … {} older unread\n",
                inbox.unread - inbox.recent_unread.len()
            ));
        }
        for m in &inbox.recent_unread {
            out.push_str(&format!(
                "    {}  {}\n",
                style.dim(&v(&m.timestamp)),
                v(&m.summary)
            ));
        }
    }
}

/// What the team's quarantine holds, where it came from and why (only when there is some).
fn quarantine_text(r: &TeamReport, style: Style, out: &mut String) {
    if r.quarantined.is_empty() {
        return;
    }
    out.push('\n');
    out.push_str(&style.bold(&format!("quarantined ({})", r.quarantined.len())));
    out.push('\n');
    for q in &r.quarantined {
        out.push_str(&format!(
            "  {}\n    from {}: {}\n",
            v(&q.path),
            v(&q.origin),
            v(&q.reason)
        ));
    }
}
