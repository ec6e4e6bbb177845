//! `teamlead send`: appends one message to a member's inbox with the store's lock-compatible
//! append, after checking every name. The sender's color comes from the team file when the
//! sender is a member. An interrupted send leaves no lock directory behind. Before anything is
//! written the store's audit looks at the team file and the inbox: what it refuses is named
//! in one error and left untouched. A lock in the way that would turn stale is waited out
//! past the timeout, and a lock of a teamlead writer that died is taken over at once
//! (`store::lock`), so killed writers never make a send fail.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, WrapErr, bail};

use super::Context;
use super::args::SendArgs;
use super::output::Out;
use super::refuse::{note_stale_lock, problem_line, refuse_if_any, shown_path};
use crate::protocol::display::visible_line;
use crate::protocol::names::check_path_component;
use crate::protocol::{InboxEntry, LEAD_NAME};
use crate::store::audit::{Expect, Problem, ProblemKind, before_write};
use crate::store::{Home, inbox, is_lead_alive, lock, quarantine, read_team};

/// How long `send` waits for a running lead to move its unreadable inbox aside.
const RECOVERY_WAIT: Duration = Duration::from_secs(3);

/// An inbox whose content cannot be read (what the lead moves to quarantine), as opposed to a
/// link, a FIFO or a stray lock, which are left for a human.
fn unreadable_inbox(p: &Problem) -> bool {
    matches!(
        p.kind,
        ProblemKind::TooLarge | ProblemKind::NotUtf8 | ProblemKind::NotJson | ProblemKind::Schema
    )
}

/// `quarantine/<team>` as shown.
fn quarantine_shown(home: &Home, team: &str) -> String {
    shown_path(home, &home.quarantine_dir().join(team))
}

/// The lead's inbox cannot be read but its lead runs, and moves such an inbox to quarantine
/// within a second: waits for that (up to [`RECOVERY_WAIT`]), then says what was wrong and
/// where the content went. Returns the problems found at the end.
fn wait_for_recovery(home: &Home, team: &str, path: &Path, first: Vec<Problem>) -> Vec<Problem> {
    let origin = path.display().to_string();
    let before: Vec<PathBuf> = quarantine::list(home, team)
        .into_iter()
        .map(|k| k.path)
        .collect();
    let deadline = Instant::now() + RECOVERY_WAIT;
    let mut problems = first;
    while problems.iter().any(unreadable_inbox) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        problems = before_write(home, path, Expect::JsonArray);
    }
    if problems.iter().any(unreadable_inbox) {
        return problems;
    }
    let moved = quarantine::list(home, team)
        .into_iter()
        .rfind(|k| k.origin == origin && !before.contains(&k.path));
    let detail = match &moved {
        Some(k) => format!(
            "its lead moved the content to {} ({})",
            shown_path(home, &k.path),
            visible_line(&k.reason)
        ),
        None => "it is readable again".to_string(),
    };
    eprintln!(
        "note: {}: the lead's inbox could not be read; {detail}",
        shown_path(home, path)
    );
    problems
}

pub fn run(ctx: &Context, args: &SendArgs) -> Result<()> {
    let home = &ctx.home;
    check_path_component(&args.team).wrap_err("bad --team")?;
    check_path_component(&args.to).wrap_err("bad --to")?;
    check_path_component(&args.from).wrap_err("bad --from")?;
    // Look before touching: a link, a FIFO, a stray lock or an inbox that is not a JSON array
    // is named and left as it is.
    let config = home.config_path(&args.team)?;
    let mut config_problems = before_write(home, &config, Expect::JsonObject);
    // send only reads the team file: its lock does not matter here.
    config_problems.retain(|p| p.kind != ProblemKind::StrayLockFile);
    refuse_if_any(home, &config_problems, "read the team file")?;
    let path = home.inbox_path(&args.team, &args.to)?;
    let mut problems = before_write(home, &path, Expect::JsonArray);
    if args.to == LEAD_NAME
        && problems.iter().any(unreadable_inbox)
        && is_lead_alive(home, &args.team)
    {
        problems = wait_for_recovery(home, &args.team, &path, problems);
    }
    if let Some(p) = problems.iter().find(|p| unreadable_inbox(p)) {
        let what = problem_line(home, p);
        let hint = if args.to != LEAD_NAME {
            "move the file aside (or repair it) and a fresh inbox is started by the next message"
                .to_string()
        } else if is_lead_alive(home, &args.team) {
            format!(
                "the running lead of team `{}` moves such an inbox into {}/ and starts a fresh \
                 one, but it has not done so yet: try again in a moment, or see its transcript",
                args.team,
                quarantine_shown(home, &args.team)
            )
        } else {
            format!(
                "no lead of team `{}` is running: the next lead started on the team moves it \
                 into {}/ and starts a fresh inbox; or move the file aside yourself",
                args.team,
                quarantine_shown(home, &args.team)
            )
        };
        bail!("refusing to append to the inbox, nothing was changed: {what}; {hint}");
    }
    refuse_if_any(home, &problems, "append to the inbox")?;
    let team = read_team(home, &args.team)?;
    let text = if args.text == "-" {
        let mut buf = String::new();
        std::io::stdin()
            .read_to_string(&mut buf)
            .wrap_err("reading the message from standard input")?;
        buf.trim_end_matches('\n').to_string()
    } else {
        args.text.clone()
    };
    if text.trim().is_empty() {
        bail!("the message is empty");
    }
    let color = team.member(&args.from).and_then(|m| m.color.clone());
    let entry = InboxEntry::new(&args.from, text)
        .with_summary(args.summary.as_deref())
        .with_color(color.as_deref());
    lock::install_signal_cleanup()?;
    note_stale_lock(home, &path);
    let appended = inbox::append(home, &args.team, &args.to, &entry)?;
    tracing::info!(
        "sent {} from {} to {}@{}",
        entry.msg_id.as_deref().unwrap_or("?"),
        args.from,
        args.to,
        args.team
    );
    if let Some(kept) = appended.quarantined {
        eprintln!(
            "warning: the inbox was not a JSON array; its old content was kept in {}",
            shown_path(home, &kept)
        );
    }
    if team.member(&args.to).is_none() {
        eprintln!(
            "note: `{}` is not a member of team `{}`; the message waits in its inbox",
            args.to, args.team
        );
    }
    Out::new().line(format!(
        "sent to {}@{} (msg_id {})",
        args.to,
        args.team,
        entry.msg_id.as_deref().unwrap_or("-")
    ))?;
    Ok(())
}
