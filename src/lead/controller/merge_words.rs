//! What `/merge` says: the one place that turns the git work's typed report
//! (`backend::git::MergeReport`, or a `LandRefusal`) into the sentences the lead shows, and
//! into what the controller must remember (a worktree kept for `/quit`, one removed, a merge to
//! tell the screens).

use std::path::{Path, PathBuf};

use crate::backend::git::{LandRefusal, Landing, MergeHow, MergeReport, Retired};

/// What a merge did, for the controller.
pub(super) struct MergeDone {
    pub text: String,
    /// Merged but kept (the teammate still runs in it, or retiring was not asked): path,
    /// branch and the tip merged.
    pub kept: Option<(PathBuf, String, String)>,
    /// The worktree removed after the merge.
    pub retired: Option<PathBuf>,
    /// Merged for real (not a dry run, not nothing to merge): the branch and the worktree.
    pub merged: Option<(String, PathBuf)>,
}

/// Who and where, for the sentences.
pub(super) struct Subject<'a> {
    pub name: &'a str,
    pub worktree: &'a Path,
    pub how: MergeHow,
    pub dry_run: bool,
    /// The teammate still runs in its worktree (so it was not retired).
    pub running: bool,
}

/// The sentence of a refusal: nothing was changed.
pub(super) fn refusal(name: &str, branch: &str, how: MergeHow, refusal: &LandRefusal) -> String {
    match refusal {
        LandRefusal::Dirty(files) => format!(
            "Not merging {name}: the lead's checkout has uncommitted changes ({}): commit or stash them first. Nothing was changed.",
            files.join(", ")
        ),
        LandRefusal::Conflicts { lead_branch, files } => format!(
            "Not merging {name}: {branch} conflicts with {lead_branch} in {}. Nothing was changed.",
            files.join(", ")
        ),
        LandRefusal::Failed(e) => {
            format!("Could not {} {name}: {e}. Nothing was changed.", how.verb())
        }
        LandRefusal::Git(e) => e.clone(),
    }
}

/// What the lead says and keeps after a merge (or a dry run, or nothing to merge).
pub(super) fn done(who: &Subject<'_>, report: MergeReport) -> MergeDone {
    let name = who.name;
    let MergeReport {
        branch,
        lead_branch,
        ahead,
        behind,
        left_out,
        tip,
        landing,
        retired,
    } = report;
    let left_out = if left_out > 0 {
        format!(
            " {left_out} uncommitted file(s) in its worktree are not part of it (ask {name} to commit them)."
        )
    } else {
        String::new()
    };
    let what = format!("{ahead} commit(s) of {name} ({branch}, {behind} behind {lead_branch})");
    let mut done = MergeDone {
        text: String::new(),
        kept: None,
        retired: None,
        merged: None,
    };
    let worktree = who.worktree.display();
    match landing {
        Landing::NothingLeft { found_by_merging } => {
            let why = if found_by_merging {
                format!("the changes of {branch} are already in {lead_branch}")
            } else if ahead == 0 {
                format!("{branch} has no commit that {lead_branch} lacks")
            } else {
                format!(
                    "the changes of the {ahead} commit(s) of {branch} are already in {lead_branch} (merged before, as a squash or a rebase)"
                )
            };
            done.text = format!("Nothing left to merge: {why}.{left_out}");
            match retired {
                _ if who.dry_run => {}
                Some(Retired::Removed) => {
                    done.text.push_str(&format!(
                        " Removed its worktree {worktree} and branch {branch}."
                    ));
                    done.retired = Some(who.worktree.to_path_buf());
                }
                Some(Retired::Kept(why)) => done
                    .text
                    .push_str(&format!(" Kept its worktree {worktree}: it holds {why}.")),
                Some(Retired::Failed(e)) => done.text.push_str(&format!(
                    " Kept its worktree {worktree}: it could not be removed ({e})."
                )),
                None if who.running => {
                    done.text.push_str(&format!(
                        " {name} still runs in its worktree: it is removed at /quit if nothing changes there."
                    ));
                    done.kept = Some((who.worktree.to_path_buf(), branch, tip));
                }
                None if who.worktree.exists() => done.text.push_str(&format!(
                    " /merge {name} {} --retire removes its worktree and branch once it has stopped.",
                    who.how.option()
                )),
                None => {}
            }
        }
        Landing::WouldApply => {
            done.text = format!(
                "Would {} {what} into {lead_branch}: it applies cleanly.{left_out}",
                who.how.verb()
            );
        }
        Landing::Merged { head } => {
            done.text = format!(
                "Merged ({}) {what} into {lead_branch}: now at {}.{left_out}",
                who.how.verb(),
                head.chars().take(7).collect::<String>()
            );
            match retired {
                Some(Retired::Removed) => {
                    done.text.push_str(&format!(
                        " Removed its worktree {worktree} and branch {branch}."
                    ));
                    done.retired = Some(who.worktree.to_path_buf());
                }
                Some(Retired::Kept(why)) => done
                    .text
                    .push_str(&format!(" Kept its worktree {worktree}: it holds {why}.")),
                Some(Retired::Failed(e)) => {
                    done.text.push_str(&format!(" Kept its worktree: {e}"));
                }
                None => {
                    // What really happens to it: it stays, and `/quit` removes it if nothing
                    // changes there (`retire_merged_worktrees`); the screen that asked offers
                    // to retire it now.
                    if who.running {
                        done.text.push_str(&format!(
                            " {name} still runs in its worktree, which stays for now: /quit removes it if nothing changes there."
                        ));
                    } else {
                        done.text.push_str(&format!(
                            " Its worktree {worktree} stays for now: /quit removes it if nothing changes there, and /merge {name} {} --retire removes it now.",
                            who.how.option()
                        ));
                    }
                    done.kept = Some((who.worktree.to_path_buf(), branch.clone(), tip));
                }
            }
            done.merged = Some((branch, who.worktree.to_path_buf()));
        }
    }
    done
}
