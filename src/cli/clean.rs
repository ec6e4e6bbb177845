//! `teamlead clean [--orphans] [--dry-run]`: removes what dead teamlead processes left behind —
//! teams whose teamlead lead is provably gone (with their panes and worktrees), and in every
//! team the temp files, lock markers and lock directories of teamlead writers that died
//! (`store::leftovers`: only teamlead's names, only what no live writer holds); with
//! `--orphans` also private tmux servers of dead leads and lead sockets no server answers. A
//! removed team's teammates go with it: their panes and their processes (`backend::reap`). Every other team is left alone and
//! listed with the reason (a Claude Code team is never removed; a team whose lead is alive or
//! of unknown state is kept). A dead teamlead team whose team file cannot be read is moved, as
//! it is, into `<home>/quarantine/<team>/` instead ("would move to quarantine" / "moved to
//! quarantine"), never deleted. A dead team's teammate worktrees are listed with what each
//! holds (branch, commits ahead, uncommitted files) and whether it goes (it holds nothing) or
//! stays. `--dry-run` only lists.

use color_eyre::eyre::{Result, bail};

use super::Context;
use super::args::CleanArgs;
use super::output::Out;
use super::refuse::shown_path;
use crate::backend::orphans::{self, Orphan};
use crate::backend::worktree;
use crate::lead::review::WorktreeFate;
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
        let worktrees = match orphan {
            Orphan::DeadTeam { team, .. } => team_worktrees(ctx, team),
            _ => Vec::new(),
        };
        if args.dry_run {
            out.line(format!("{would}: {what}"))?;
            for w in &worktrees {
                let verb = if w.0.removed {
                    "would remove"
                } else {
                    "would keep"
                };
                out.line(worktree_line(verb, w))?;
            }
            continue;
        }
        match orphans::remove(&ctx.home, orphan) {
            Ok(()) => {
                out.line(format!("{done}: {what}"))?;
                for w in &worktrees {
                    let verb = if std::path::Path::new(&w.0.path).exists() {
                        "kept"
                    } else {
                        "removed"
                    };
                    out.line(worktree_line(verb, w))?;
                }
            }
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

/// The teammate worktrees a dead team recorded (its members', its session record's), with
/// what each holds and whether removing the team removes it (`removed`: it holds nothing) or
/// keeps it.
fn team_worktrees(ctx: &Context, team: &str) -> Vec<(WorktreeFate, String)> {
    let Ok(file) = crate::store::read_team(&ctx.home, team) else {
        return Vec::new();
    };
    crate::store::SessionRecord::team_worktrees(&ctx.home, team, &file)
        .into_iter()
        .filter_map(|(name, path)| {
            let found = worktree::at_path(std::path::Path::new(&path));
            let (branch, survey, lead_branch) = match &found {
                Ok(Some(w)) => (
                    Some(w.branch.clone()),
                    worktree::survey(w),
                    crate::backend::git::current_branch(&w.repo),
                ),
                // Gone already: nothing to list.
                Ok(None) => return None,
                Err(e) => (None, Err(e.clone()), "HEAD".to_string()),
            };
            let (survey, error) = match survey {
                Ok(s) => (s, None),
                Err(e) => (worktree::Survey::default(), Some(e.to_string())),
            };
            let fate = WorktreeFate {
                name,
                path,
                branch,
                ahead: survey.ahead,
                uncommitted: survey.work.uncommitted,
                unmerged: survey.work.unmerged,
                merged: false,
                removed: error.is_none() && survey.work.is_empty(),
                error,
            };
            Some((fate, lead_branch))
        })
        .collect()
}

/// `  would keep: worktree /r-worktrees/t-a of @a, branch teamlead/t/a: 1 uncommitted file`.
fn worktree_line(verb: &str, (w, lead_branch): &(WorktreeFate, String)) -> String {
    visible_line(&format!(
        "  {verb}: worktree {} of @{}, {}",
        w.path,
        w.name,
        w.holds(lead_branch)
    ))
    .into_owned()
}
