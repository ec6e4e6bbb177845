//! `teamlead ctl TEAM …`: a script's hold on a running team, through its server's socket.
//! Composer commands (with their outcome), answers to permission requests, the waiting
//! requests, the team's status, its story (`events`), and waits for a condition. Exit
//! status: 0 done, 1 refused or timed out, 2 bad usage, 3 no server (or it went away);
//! errors are one `error:` line.

use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr};
use serde_json::{Value, json};

use super::Context;
use super::Failure;
use super::args::{CtlAction, CtlArgs, WaitArgs};
use super::output::Out;
use crate::lead::commands::{Input, SlashCommand, parse_input};
use crate::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, PermissionDecision, TranscriptItem, ViewTarget,
};
use crate::lead::controller::LeadOptions;
use crate::protocol::display::{escape_json_output, visible_line, visible_text};
use crate::protocol::permission::fallback_update;
use crate::server::client::{self, Connection};
use crate::server::paths;
use crate::server::wait::{Seen, WaitFor};
use crate::server::wire::{ClientMsg, ServerMsg};

/// Exit status of a refusal or a timeout.
const REFUSED: u8 = 1;
/// Exit status of bad usage.
const USAGE: u8 = 2;
/// Exit status when no server answers.
const NO_SERVER: u8 = 3;

/// How long a command that ends the team may take to end it.
const END_DEADLINE: Duration = Duration::from_secs(120);

/// `teamlead ctl`.
pub fn run(ctx: &Context, args: &CtlArgs) -> Result<()> {
    let team = LeadOptions::new(ctx.home.clone(), ".")
        .with_team(args.team.clone())
        .team_name()
        .map_err(|e| Failure::new(USAGE, e.to_string()))?;
    let socket = paths::socket_path(&ctx.home, &team)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .wrap_err("cannot start the async runtime")?;
    runtime.block_on(async {
        let conn = client::connect(&socket, &team)
            .await
            .map_err(|e| Failure::new(NO_SERVER, e.to_string()))?;
        let json = args.json;
        match &args.action {
            CtlAction::Composer(words) => {
                // `ctl T review NAME`, `merge NAME --squash …`, `queue`: the slash commands.
                let (words, json) = review_words(words, json);
                composer(conn, &words.join(" "), json).await
            }
            CtlAction::Approve { id, always } => approve(conn, *id, *always, json).await,
            CtlAction::Deny { id, feedback } => {
                let decision = PermissionDecision::Deny {
                    feedback: feedback.clone(),
                };
                answer(conn, *id, decision, json).await
            }
            CtlAction::Pending => pending(conn, json).await,
            CtlAction::Status => status(conn, json).await,
            CtlAction::Events { follow } => events(conn, *follow, json).await,
            CtlAction::Wait(w) => wait(conn, w).await,
        }
    })
}

/// `review …`, `merge …` and `merges` as their slash commands (`--json` among their words too).
fn review_words(words: &[String], json: bool) -> (Vec<String>, bool) {
    match words.first().map(String::as_str) {
        Some("review" | "merge" | "merges") => {
            let json = json || words.iter().any(|w| w == "--json");
            let mut out: Vec<String> = words.iter().filter(|w| *w != "--json").cloned().collect();
            out[0] = format!("/{}", out[0]);
            (out, json)
        }
        _ => (words.to_vec(), json),
    }
}

fn gone(team: &str) -> Failure {
    Failure::new(
        NO_SERVER,
        format!("the lead server of team `{team}` went away"),
    )
}

fn print_json(value: &Value) -> Result<()> {
    let text = serde_json::to_string(value).unwrap_or_default();
    Out::new().line(escape_json_output(&text))?;
    Ok(())
}

/// What a client attached without transcripts knows after the snapshot.
struct Attached {
    conn: Connection,
    seen: Seen,
    started: Option<LeadEvent>,
    /// The reviews and merge queues sent while its commands ran (`review`/`merges --json`).
    review: Vec<LeadEvent>,
}

async fn attach(mut conn: Connection) -> Result<Attached> {
    conn.send(&ClientMsg::Attach { transcripts: false }).await?;
    let mut seen = Seen::default();
    let mut started = None;
    loop {
        match conn.recv().await? {
            Some(ServerMsg::Event(e)) => {
                if matches!(e, LeadEvent::Started { .. }) {
                    started = Some(e.clone());
                }
                seen.apply(&e);
            }
            Some(ServerMsg::SnapshotEnd) => break,
            Some(_) => {}
            None => return Err(gone(&conn.team).into()),
        }
    }
    Ok(Attached {
        conn,
        seen,
        started,
        review: Vec::new(),
    })
}

/// Sends `commands` then a barrier; returns what the transcript said meanwhile and whether
/// the lead refused anything (`seen` follows the snapshots). With `ends` (the commands end
/// the team), the lead finishing before the barrier is success.
async fn carry_out(
    a: &mut Attached,
    commands: Vec<LeadCommand>,
    ends: bool,
) -> Result<(Vec<TranscriptItem>, bool)> {
    let token = rand::random::<u64>();
    for c in commands {
        let tracked = LeadCommand::Tracked {
            token,
            command: Box::new(c),
        };
        a.conn.send(&ClientMsg::Command(tracked)).await?;
    }
    a.conn
        .send(&ClientMsg::Command(LeadCommand::Barrier { token }))
        .await?;
    let mut said = Vec::new();
    loop {
        match a.conn.recv().await? {
            Some(ServerMsg::Event(LeadEvent::Barrier { token: t, refused })) if t == token => {
                return Ok((said, refused));
            }
            Some(ServerMsg::Event(LeadEvent::Transcript(item))) => {
                if !matches!(
                    item,
                    TranscriptItem::User { .. } | TranscriptItem::Ctl { .. }
                ) {
                    said.push(item);
                }
            }
            Some(ServerMsg::Event(
                e @ (LeadEvent::Review(_) | LeadEvent::ReviewPr { .. } | LeadEvent::MergeQueue(_)),
            )) => a.review.push(e),
            Some(ServerMsg::Event(e)) => a.seen.apply(&e),
            Some(_) => {}
            None if ends => return Ok((said, false)),
            None => return Err(gone(&a.conn.team).into()),
        }
    }
}

/// A transcript item as plain text (unescaped).
fn item_text(item: &TranscriptItem) -> String {
    match item {
        TranscriptItem::User { text } => format!("> {text}"),
        TranscriptItem::Ctl { text } => format!("ctl> {text}"),
        TranscriptItem::ToTeammate { to, text, .. } => format!("→ {to}: {text}"),
        TranscriptItem::Lead { text } => format!("lead: {text}"),
        TranscriptItem::Teammate { from, text, .. } => format!("{from}: {text}"),
        TranscriptItem::Frame { from, line, .. } => format!("{from}: {line}"),
        TranscriptItem::System { text } => text.clone(),
    }
}

async fn composer(conn: Connection, text: &str, json: bool) -> Result<()> {
    let text = text.trim();
    if !(text.starts_with('/') || text.starts_with('@')) {
        let word = text.split_whitespace().next().unwrap_or("");
        return Err(Failure::new(
            USAGE,
            format!(
                "unknown ctl command `{}`: expected approve, deny, pending, status, events, wait, or a composer command such as '/task list' (see teamlead ctl --help)",
                visible_line(word)
            ),
        )
        .into());
    }
    let parsed = parse_input(text);
    if parsed == Ok(Input::Slash(SlashCommand::DetachScreen)) {
        return Err(Failure::new(
            USAGE,
            "/detach leaves a screen, and ctl is none: `/quit --keep` stops the lead and keeps the team, `/quit` ends it",
        )
        .into());
    }
    let ends = matches!(
        parsed,
        Ok(Input::Slash(
            SlashCommand::Quit | SlashCommand::Detach | SlashCommand::TeamDelete
        ))
    );
    let mut a = attach(conn).await?;
    let (mut said, refused) = carry_out(
        &mut a,
        vec![LeadCommand::Submit {
            target: ViewTarget::Lead,
            text: text.to_string(),
        }],
        ends,
    )
    .await?;
    if ends && !refused {
        // The team ends: what it says until then is the outcome too.
        let deadline = tokio::time::Instant::now() + END_DEADLINE;
        loop {
            match tokio::time::timeout_at(deadline, a.conn.recv()).await {
                Ok(Ok(Some(ServerMsg::Event(LeadEvent::Transcript(item))))) => said.push(item),
                Ok(Ok(Some(_))) => {}
                Ok(Ok(None)) | Ok(Err(_)) => break,
                Err(_) => {
                    return Err(Failure::new(
                        REFUSED,
                        format!("the team did not end within {} s", END_DEADLINE.as_secs()),
                    )
                    .into());
                }
            }
        }
    }
    if json {
        let output: Vec<String> = said.iter().map(item_text).collect();
        let structured = match &parsed {
            Ok(Input::Slash(SlashCommand::Review { name })) if !refused => {
                review_json(&a.review, name)
            }
            Ok(Input::Slash(SlashCommand::Queue)) if !refused => queue_json(&a.review),
            _ => None,
        };
        match structured {
            Some(mut value) => {
                value["ok"] = json!(true);
                value["output"] = json!(output);
                print_json(&value)?;
            }
            None => print_json(&json!({"ok": !refused, "output": output}))?,
        }
    } else {
        let mut out = Out::new();
        for item in &said {
            out.line(visible_text(&item_text(item)))?;
        }
    }
    if refused {
        return Err(Failure::new(REFUSED, "the lead refused the command").into());
    }
    Ok(())
}

/// `review NAME --json`: the review (files with counts, base, commits, its pull request).
fn review_json(events: &[LeadEvent], name: &str) -> Option<Value> {
    use crate::lead::review::WorkPlace;
    let summary = events.iter().rev().find_map(|e| match e {
        LeadEvent::Review(r) if r.name == name => Some(r),
        _ => None,
    })?;
    let pr = events
        .iter()
        .rev()
        .find_map(|e| match e {
            LeadEvent::ReviewPr { name: n, pr } if n == name => Some(pr),
            _ => None,
        })
        .or(summary.pr.as_ref());
    let files: Vec<Value> = summary
        .files
        .iter()
        .map(|f| {
            json!({"path": f.path, "status": f.status.to_string(), "added": f.added,
                "removed": f.removed, "binary": f.binary})
        })
        .collect();
    let commits: Vec<Value> = summary
        .commits
        .iter()
        .map(|c| json!({"id": c.id, "subject": c.subject}))
        .collect();
    Some(json!({
        "name": summary.name,
        "place": match summary.place { WorkPlace::Worktree => "worktree", WorkPlace::Checkout => "checkout", WorkPlace::Shared => "checkout-shared" },
        "branch": summary.branch,
        "base": summary.base,
        "files": files,
        "added": summary.added(),
        "removed": summary.removed(),
        "uncommitted": summary.uncommitted,
        "commits": commits,
        "pr": pr.map(|p| json!({"number": p.number, "state": p.state, "draft": p.draft, "url": p.url, "title": p.title})),
    }))
}

/// `merges --json`: every teammate branch against the lead's and the pairs that conflict.
fn queue_json(events: &[LeadEvent]) -> Option<Value> {
    let queue = events.iter().rev().find_map(|e| match e {
        LeadEvent::MergeQueue(q) => Some(q),
        _ => None,
    })?;
    let branches: Vec<Value> = queue
        .entries
        .iter()
        .map(|e| {
            json!({"name": e.name, "branch": e.branch, "ahead": e.ahead, "behind": e.behind,
                "clean": e.error.is_none() && e.conflicts.is_empty(), "conflicts": e.conflicts,
                "uncommitted": e.uncommitted, "error": e.error,
                "conflicts_with": queue.conflicts_of(&e.name).iter().map(|(n, _)| *n).collect::<Vec<_>>()})
        })
        .collect();
    let pairs: Option<Vec<Value>> = queue.pairs.as_ref().map(|ps| {
        ps.iter()
            .map(|p| json!({"a": p.a, "b": p.b, "files": p.files}))
            .collect()
    });
    Some(json!({"lead_branch": queue.lead_branch, "branches": branches, "pairs": pairs}))
}

/// The rule `--always` adds: the request's first offerable suggestion, else the rule built
/// from its tool and input (what the dialog offers first).
fn always_rule(p: &PendingPermission) -> Option<crate::protocol::PermissionUpdate> {
    p.suggestions
        .iter()
        .find(|s| s.is_offerable())
        .cloned()
        .or_else(|| {
            // The head of an input shown in part could give another rule than the whole.
            p.in_part
                .is_none()
                .then(|| fallback_update(&p.tool_name, &p.input))
                .flatten()
        })
}

async fn approve(conn: Connection, id: u64, always: bool, json: bool) -> Result<()> {
    if !always {
        return answer(conn, id, PermissionDecision::AllowOnce, json).await;
    }
    let a = attach(conn).await?;
    let Some(p) = a.seen.permissions.iter().find(|p| p.key == id) else {
        return Err(no_request(id).into());
    };
    let Some(rule) = always_rule(p) else {
        return Err(Failure::new(
            REFUSED,
            format!("no rule can be offered for request #{id}: approve it once"),
        )
        .into());
    };
    answer_attached(a, id, PermissionDecision::AllowAlways(vec![rule]), json).await
}

fn no_request(id: u64) -> Failure {
    Failure::new(
        REFUSED,
        format!("no request #{id} waits for an answer (`teamlead ctl TEAM pending` lists them)"),
    )
}

async fn answer(conn: Connection, id: u64, decision: PermissionDecision, json: bool) -> Result<()> {
    let a = attach(conn).await?;
    answer_attached(a, id, decision, json).await
}

async fn answer_attached(
    mut a: Attached,
    id: u64,
    decision: PermissionDecision,
    json: bool,
) -> Result<()> {
    let Some(p) = a.seen.permissions.iter().find(|p| p.key == id).cloned() else {
        return Err(no_request(id).into());
    };
    let word = match &decision {
        PermissionDecision::AllowOnce => "allow",
        PermissionDecision::AllowAlways(_) => "allow_always",
        PermissionDecision::Deny { .. } => "deny",
    };
    carry_out(
        &mut a,
        vec![LeadCommand::AnswerPermission { key: id, decision }],
        false,
    )
    .await?;
    if a.seen.permissions.iter().any(|q| q.key == id) {
        return Err(Failure::new(REFUSED, format!("request #{id} is still waiting")).into());
    }
    if json {
        print_json(
            &json!({"ok": true, "id": id, "decision": word, "teammate": p.worker, "tool": p.tool_name}),
        )
    } else {
        Out::new().line(format!(
            "#{id} ({} {}): {word}",
            visible_line(&p.worker),
            visible_line(&p.tool_name)
        ))?;
        Ok(())
    }
}

/// A teammate as screens show it: `name`, or `name · host` for one on another host.
fn shown_name(name: &str, host: Option<&str>) -> String {
    match host {
        Some(host) => format!("{} · {}", visible_line(name), visible_line(host)),
        None => visible_line(name).into_owned(),
    }
}

fn permission_json(p: &PendingPermission) -> Value {
    json!({
        "id": p.key,
        "request_id": p.request_id,
        "teammate": p.worker,
        "tool": p.tool_name,
        "description": p.description,
        "input": p.input,
        "in_part": p.in_part,
        "host": p.host,
    })
}

async fn pending(conn: Connection, json: bool) -> Result<()> {
    let a = attach(conn).await?;
    if json {
        let plans: Vec<Value> = a
            .seen
            .plans
            .iter()
            .map(|p| json!({"request_id": p.request_id, "from": p.from, "plan": p.plan, "in_part": p.in_part, "host": p.host}))
            .collect();
        let perms: Vec<Value> = a.seen.permissions.iter().map(permission_json).collect();
        return print_json(&json!({"permissions": perms, "plans": plans}));
    }
    let mut out = Out::new();
    if a.seen.permissions.is_empty() && a.seen.plans.is_empty() {
        out.line("nothing waits for an answer")?;
    }
    for p in &a.seen.permissions {
        let input = serde_json::to_string(&p.input).unwrap_or_default();
        out.line(format!(
            "#{}  {}  {}  {}  {}",
            p.key,
            shown_name(&p.worker, p.host.as_deref()),
            visible_line(&p.tool_name),
            visible_line(&p.description),
            visible_line(&input)
        ))?;
        if let Some(part) = &p.in_part {
            out.line(format!("    ({})", visible_line(&part.note())))?;
        }
    }
    for p in &a.seen.plans {
        out.line(format!(
            "plan {}  {}",
            visible_line(&p.request_id),
            shown_name(&p.from, p.host.as_deref())
        ))?;
        if let Some(part) = &p.in_part {
            out.line(format!("    ({})", visible_line(&part.note())))?;
        }
    }
    Ok(())
}

async fn status(conn: Connection, json: bool) -> Result<()> {
    use crate::server::story::status_word;
    let a = attach(conn).await?;
    let (team, backend, mode) = match &a.started {
        Some(LeadEvent::Started {
            team,
            backend,
            lead_mode,
        }) => (team.clone(), backend.to_string(), lead_mode.to_string()),
        _ => (a.conn.team.clone(), String::new(), String::new()),
    };
    let s = &a.seen;
    if json {
        let teammates: Vec<Value> = s
            .team
            .iter()
            .map(|t| {
                let (word, detail) = status_word(&t.status);
                json!({
                    "name": t.name, "host": t.host, "status": word, "detail": detail, "mode": t.mode,
                    "backend": t.backend_label(), "model": t.model,
                    "current_task": t.current_task.as_ref().map(|(id, subject)| json!({"id": id, "subject": subject})),
                    "usage": t.usage.as_ref().map(usage_json),
                    "limited_until": t.rate_limited_until.map(crate::protocol::time::iso_from_ms),
                    "parked": t.parked.as_ref().map(|p| json!({
                        "reset": crate::protocol::time::iso_from_ms(p.reset_ms),
                        "resume_at": p.resume_at_ms.map(crate::protocol::time::iso_from_ms),
                        "held": p.held,
                    })),
                    "budget_usd": t.budget_micros.map(|b| b as f64 / 1e6),
                    "cost_usd": match (&t.usage, t.costs_nothing) {
                        (Some(u), _) => json!(u.cost_micros.map(|c| c as f64 / 1e6)),
                        (None, true) => json!(0.0),
                        (None, false) => Value::Null,
                    },
                    "costs_nothing": t.costs_nothing,
                })
            })
            .collect();
        let tasks: Vec<Value> = s
            .tasks
            .iter()
            .filter(|t| !t.internal)
            .map(|t| json!({"id": t.id, "subject": t.subject, "status": t.status, "owner": t.owner, "blocked_by": t.blocked_by}))
            .collect();
        return print_json(&json!({
            "team": team, "backend": backend, "lead_mode": mode, "server_pid": a.conn.pid,
            "teammates": teammates, "tasks": tasks,
            "cost_usd": total_cost(s.team.iter().filter_map(|t| t.usage.as_ref())),
            "cost_leaves_out": cost_leaves_out(&s.team),
            "pending": {"permissions": s.permissions.len(), "plans": s.plans.len()},
        }));
    }
    let mut out = Out::new();
    out.line(format!(
        "team {} · {backend} · lead mode {mode} · server pid {}",
        visible_line(&team),
        a.conn.pid
    ))?;
    if s.team.is_empty() {
        out.line("no teammates")?;
    }
    for t in &s.team {
        let (word, detail) = status_word(&t.status);
        let task = t
            .current_task
            .as_ref()
            .map(|(id, subject)| format!("  task #{id} {subject}"))
            .unwrap_or_default();
        let detail = detail.map(|d| format!(" ({d})")).unwrap_or_default();
        let clock = |ms: u64| crate::protocol::time::local_clock(ms).unwrap_or_default();
        let limit = match (&t.parked, t.rate_limited_until) {
            (Some(p), _) => format!(
                "  parked: the limit resets {}, {}",
                clock(p.reset_ms),
                p.resume_at_ms
                    .map_or("not resuming by itself".to_string(), |at| {
                        format!("resumes {}", clock(at))
                    })
            ),
            (None, Some(until)) => format!("  rate-limited until {}", clock(until)),
            (None, None) => String::new(),
        };
        out.line(visible_line(&format!(
            "  {}  {word}{detail}  {}  {}{task}{limit}",
            t.name,
            t.mode,
            t.backend_label()
        )))?;
    }
    for t in s.tasks.iter().filter(|t| !t.internal) {
        let owner = t.owner.as_deref().unwrap_or("-");
        out.line(visible_line(&format!(
            "  task #{} {}  {}  {owner}",
            t.id, t.status, t.subject
        )))?;
    }
    out.line(format!(
        "waiting: {} permission request(s), {} plan(s)",
        s.permissions.len(),
        s.plans.len()
    ))?;
    Ok(())
}

async fn events(mut conn: Connection, follow: bool, json: bool) -> Result<()> {
    conn.send(&ClientMsg::Story { follow }).await?;
    let mut out = Out::new();
    loop {
        match conn.recv().await? {
            Some(ServerMsg::Story(e)) => {
                if json {
                    let text = serde_json::to_string(&e).unwrap_or_default();
                    out.line(escape_json_output(&text))?;
                } else {
                    out.line(format!("{} {}", e.seq, visible_line(&e.kind.one_line())))?;
                }
            }
            Some(ServerMsg::StoryEnd) if !follow => return Ok(()),
            Some(_) => {}
            // Following ends with the team.
            None => return Ok(()),
        }
    }
}

async fn wait(conn: Connection, w: &WaitArgs) -> Result<()> {
    let condition = if w.tasks_done {
        WaitFor::TasksDone
    } else if w.idle {
        WaitFor::Idle
    } else if w.approval {
        WaitFor::Approval
    } else {
        WaitFor::Teammate {
            name: w.teammate.clone().unwrap_or_default(),
            status: w.status.clone().unwrap_or_default(),
        }
    };
    let timeout = match w.timeout {
        Some(secs) if !(secs.is_finite() && secs >= 0.0) => {
            return Err(Failure::new(
                USAGE,
                format!("--timeout {secs}: expected seconds, 0 or more"),
            )
            .into());
        }
        Some(secs) => Some(Duration::from_secs_f64(secs.min(1e9))),
        None => None,
    };
    let started = Instant::now();
    let mut a = attach(conn).await?;
    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
    loop {
        if condition.holds(&a.seen) {
            return Ok(());
        }
        let next = match deadline {
            Some(d) => match tokio::time::timeout_at(d, a.conn.recv()).await {
                Ok(next) => next,
                Err(_) => {
                    return Err(Failure::new(
                        REFUSED,
                        format!(
                            "timed out after {:.1} s waiting for {}",
                            started.elapsed().as_secs_f64(),
                            condition.describe()
                        ),
                    )
                    .into());
                }
            },
            None => a.conn.recv().await,
        };
        match next? {
            Some(ServerMsg::Event(e)) => a.seen.apply(&e),
            Some(_) => {}
            None => {
                return Err(Failure::new(
                    NO_SERVER,
                    format!(
                        "the lead server of team `{}` went away while waiting for {}",
                        a.conn.team,
                        condition.describe()
                    ),
                )
                .into());
            }
        }
    }
}

/// A model's usage for `status --json`: tokens (by kind), and the cost in dollars of what is
/// priced, with the models that are not.
fn usage_json(u: &crate::lead::contract::UsageView) -> Value {
    json!({
        "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
        "cache_read_tokens": u.cache_read_tokens,
        "cache_write_5m_tokens": u.cache_write_5m_tokens,
        "cache_write_1h_tokens": u.cache_write_1h_tokens,
        "tool_uses": u.tool_uses, "turns": u.turns,
        "cost_usd": u.cost_micros.map(|c| c as f64 / 1e6),
        "unpriced_models": u.unpriced_models,
    })
}

/// What `cost_usd` leaves out: the teammates with usage of a model without a price, and a
/// sentence saying so (`null` when nothing is left out).
fn cost_leaves_out(team: &[crate::lead::contract::TeammateView]) -> Value {
    let unpriced: Vec<(&str, &[String])> = team
        .iter()
        .filter_map(|t| {
            Some((
                t.name.as_str(),
                t.usage.as_ref()?.unpriced_models.as_slice(),
            ))
        })
        .filter(|(_, m)| !m.is_empty())
        .collect();
    let models: Vec<&[String]> = unpriced.iter().map(|(_, m)| *m).collect();
    match crate::protocol::pricing::unpriced_note(&models) {
        None => Value::Null,
        Some(note) => json!({
            "note": note,
            "teammates": unpriced.iter().map(|(n, m)| json!({"name": n, "models": m})).collect::<Vec<_>>(),
        }),
    }
}

/// What the priced usages cost together, in dollars (`null` when none is priced).
fn total_cost<'a>(usages: impl Iterator<Item = &'a crate::lead::contract::UsageView>) -> Value {
    let costs: Vec<u64> = usages.filter_map(|u| u.cost_micros).collect();
    if costs.is_empty() {
        Value::Null
    } else {
        json!(costs.iter().sum::<u64>() as f64 / 1e6)
    }
}
