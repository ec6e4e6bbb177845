//! `teamlead clean [--orphans] [--dry-run]`: removes what dead teamlead leads left behind —
//! teams whose teamlead lead is provably gone (with their panes and worktrees); with
//! `--orphans` also private tmux servers of dead leads. Every other team is left alone and
//! listed with the reason (a Claude Code team is never removed; a team whose lead is alive or
//! of unknown state is kept). `--dry-run` only lists.

use color_eyre::eyre::{Result, bail};

use super::Context;
use super::args::CleanArgs;
use super::output::Out;
use crate::backend::orphans::{self, Orphan};
use crate::protocol::display::visible_line;

/// Finds, prints and (unless `--dry-run`) removes orphans.
pub fn run(ctx: &Context, args: &CleanArgs) -> Result<()> {
    let survey = orphans::survey(&ctx.home);
    let found: Vec<&Orphan> = survey
        .orphans
        .iter()
        .filter(|o| args.orphans || matches!(o, Orphan::DeadTeam { .. }))
        .collect();
    let mut out = Out::new();
    for kept in &survey.kept {
        out.line(format!("left alone: {}", visible_line(&kept.to_string())))?;
    }
    if found.is_empty() {
        out.line("nothing to clean")?;
        return Ok(());
    }
    let mut failures = 0;
    for orphan in found {
        let what = visible_line(&orphan.to_string()).into_owned();
        if args.dry_run {
            out.line(format!("would remove: {what}"))?;
            continue;
        }
        match orphans::remove(&ctx.home, orphan) {
            Ok(()) => out.line(format!("removed: {what}"))?,
            Err(e) => {
                failures += 1;
                eprintln!("could not remove {what}: {}", visible_line(&e));
            }
        }
    }
    if failures > 0 {
        bail!("{failures} item(s) could not be removed");
    }
    Ok(())
}
