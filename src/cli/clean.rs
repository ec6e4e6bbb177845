//! `teamlead clean [--orphans] [--dry-run]`: removes what dead teamlead processes left behind —
//! teams whose teamlead lead is provably gone (with their panes and worktrees), and in every
//! team the temp files, lock markers and lock directories of teamlead writers that died
//! (`store::leftovers`: only teamlead's names, only what no live writer holds); with
//! `--orphans` also private tmux servers of dead leads and lead sockets no server answers. A
//! removed team's teammates go with it: their panes and their processes (`backend::reap`). Every other team is left alone and
//! listed with the reason (a Claude Code team is never removed; a team whose lead is alive or
//! of unknown state is kept). A dead teamlead team whose team file cannot be read is moved, as
//! it is, into `<home>/quarantine/<team>/` instead ("would move to quarantine" / "moved to
//! quarantine"), never deleted. `--dry-run` only lists.

use color_eyre::eyre::{Result, bail};

use super::Context;
use super::args::CleanArgs;
use super::output::Out;
use super::refuse::shown_path;
use crate::backend::orphans::{self, Orphan};
use crate::protocol::display::visible_line;
use crate::store::leftovers;

/// Finds, prints and (unless `--dry-run`) removes orphans.
pub fn run(ctx: &Context, args: &CleanArgs) -> Result<()> {
    let survey = orphans::survey(&ctx.home);
    let found: Vec<&Orphan> = survey
        .orphans
        .iter()
        .filter(|o| {
            args.orphans || matches!(o, Orphan::DeadTeam { .. } | Orphan::BrokenTeam { .. })
        })
        .collect();
    let mut out = Out::new();
    for kept in &survey.kept {
        out.line(format!("left alone: {}", visible_line(&kept.to_string())))?;
    }
    let mut failures = 0;
    let swept = leftovers::sweep(&ctx.home, args.dry_run);
    for s in &swept {
        let what = format!("{} ({})", shown_path(&ctx.home, &s.path), s.kind.describe());
        match &s.result {
            Ok(()) if args.dry_run => out.line(format!("would remove: {what}"))?,
            Ok(()) => out.line(format!("removed: {what}"))?,
            Err(e) => {
                failures += 1;
                eprintln!("could not remove {what}: {}", visible_line(e));
            }
        }
    }
    // Lead sockets no server answers (a server killed with SIGKILL leaves its socket).
    let sockets = if args.orphans {
        match crate::server::paths::runtime_dir() {
            Ok(dir) => crate::server::paths::stale_sockets(&dir),
            Err(e) => {
                eprintln!(
                    "lead sockets not looked at: {}",
                    visible_line(&e.to_string())
                );
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    for socket in &sockets {
        let what = format!("lead socket {} (no server answers)", socket.display());
        if args.dry_run {
            out.line(format!("would remove: {}", visible_line(&what)))?;
        } else if std::fs::remove_file(socket).is_ok() {
            out.line(format!("removed: {}", visible_line(&what)))?;
        }
    }
    if found.is_empty() {
        if swept.is_empty() && sockets.is_empty() {
            out.line("nothing to clean")?;
        }
        if failures > 0 {
            bail!("{failures} item(s) could not be removed");
        }
        return Ok(());
    }
    for orphan in found {
        let what = visible_line(&orphan.to_string()).into_owned();
        let (would, done) = orphan.verbs();
        if args.dry_run {
            out.line(format!("{would}: {what}"))?;
            continue;
        }
        match orphans::remove(&ctx.home, orphan) {
            Ok(()) => out.line(format!("{done}: {what}"))?,
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
