//! `teamlead send`: appends one message to a member's inbox with the store's lock-compatible
//! append, after checking every name. The sender's color comes from the team file when the
//! sender is a member. An interrupted send leaves no lock directory behind. Before anything is
//! written the store's audit looks at the team file and the inbox: what it refuses is named
//! in one error and left untouched. A lock in the way that would turn stale is waited out
//! past the timeout, and a lock of a teamlead writer that died is taken over at once
//! (`store::lock`), so killed writers never make a send fail.

use std::io::Read;

use color_eyre::eyre::{Result, WrapErr, bail};

use super::Context;
use super::args::SendArgs;
use super::output::Out;
use super::refuse::{note_stale_lock, refuse_if_any, shown_path};
use crate::protocol::InboxEntry;
use crate::protocol::names::check_path_component;
use crate::store::audit::{Expect, ProblemKind, before_write};
use crate::store::{inbox, lock, read_team};

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
    refuse_if_any(
        home,
        &before_write(home, &path, Expect::JsonArray),
        "append to the inbox",
    )?;
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
