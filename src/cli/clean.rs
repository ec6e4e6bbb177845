//! `teamlead clean [--orphans] [--dry-run]`: removes what dead leads left behind — teams whose
//! teamlead lead is gone and stale lock directories; with `--orphans` also members whose pane is
//! gone and private tmux servers of dead leads. `--dry-run` only lists them.

use color_eyre::eyre::{Result, bail};

use super::Context;
use super::args::CleanArgs;
use crate::backend::orphans::{self, Orphan};

/// Finds, prints and (unless `--dry-run`) removes orphans.
pub fn run(ctx: &Context, args: &CleanArgs) -> Result<()> {
    let found: Vec<Orphan> = orphans::find(&ctx.home)
        .into_iter()
        .filter(|o| args.orphans || matches!(o, Orphan::DeadTeam { .. } | Orphan::StaleLock { .. }))
        .collect();
    if found.is_empty() {
        println!("nothing to clean");
        return Ok(());
    }
    let mut failures = 0;
    for orphan in &found {
        if args.dry_run {
            println!("would remove: {orphan}");
            continue;
        }
        match orphans::remove(&ctx.home, orphan) {
            Ok(()) => println!("removed: {orphan}"),
            Err(e) => {
                failures += 1;
                eprintln!("could not remove {orphan}: {e}");
            }
        }
    }
    if failures > 0 {
        bail!("{failures} item(s) could not be removed");
    }
    Ok(())
}
