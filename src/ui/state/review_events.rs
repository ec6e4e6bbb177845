//! What the screen does with the review and merge events: a review or the merge queue opens
//! on the screen that asked for it ([`Asked`]), not on every attached one; the pull request
//! joins an open review; the merge queue updates its dialog; a merge this screen asked
//! for (from the queue, or `/merge` typed here) is followed by the offer to retire the
//! worktree, which waits behind the banner like a request; and the worktrees a `/quit` kept or removed are kept for the terminal after the
//! screen closes ([`AppState::farewell`]).

use super::AppState;
use crate::lead::commands::{Input, SlashCommand, parse_input};
use crate::lead::contract::{LeadCommand, LeadEvent};
use crate::lead::review::Merged;
use crate::ui::modal::Modal;
use crate::ui::modal::confirm::ConfirmDialog;
use crate::ui::modal::merges::MergesDialog;

impl AppState {
    /// One of `ReviewPr`, `MergeQueue`, `Merged`, `WorktreesAtQuit`.
    pub(super) fn apply_review_event(&mut self, event: LeadEvent) {
        match event {
            LeadEvent::ReviewPr { name, pr } => {
                for modal in &mut self.modals {
                    if let Modal::Review(d) = modal
                        && d.name() == name
                    {
                        d.set_pr(pr.clone());
                    }
                }
            }
            LeadEvent::MergeQueue(queue) => {
                if queue.opens && self.asked.take_merges() {
                    self.modals.retain(|m| !matches!(m, Modal::Merges(_)));
                    self.dialog_notice = None;
                    self.modals
                        .push(Modal::Merges(Box::new(MergesDialog::new(queue))));
                } else {
                    for modal in &mut self.modals {
                        if let Modal::Merges(d) = modal {
                            d.update(queue.clone());
                        }
                    }
                }
            }
            LeadEvent::Merged(merged) => self.offer_retire(&merged),
            LeadEvent::WorktreesAtQuit(report) => self.farewell = report.lines(),
            _ => {}
        }
    }

    /// After a merge this screen asked for: a confirmation that removes the worktree.
    fn offer_retire(&mut self, m: &Merged) {
        let mut asked = self.merge_asked.as_deref() == Some(m.name.as_str());
        if asked {
            self.merge_asked = None;
        }
        for modal in &mut self.modals {
            if let Modal::Merges(d) = modal {
                asked |= d.take_asked(&m.name);
            }
        }
        if !asked || m.retired {
            return;
        }
        let stop = if m.running {
            format!(" @{} still runs: it is stopped first.", m.name)
        } else {
            String::new()
        };
        let question = format!(
            "Merged @{}'s branch {}. Retire its worktree: remove {} and the branch?{stop}\nAnything added there since the merge keeps them, and then nothing is stopped.",
            m.name, m.branch, m.worktree
        );
        // It arrived by itself: it waits behind the banner until the person opens it or stops
        // typing, like a request (never under the fingers of someone typing).
        let mut offer = ConfirmDialog::new(
            format!("retire @{}'s worktree", m.name),
            question,
            LeadCommand::RetireWorktree {
                name: m.name.clone(),
            },
            self.now_ms,
        );
        offer.arrived = true;
        self.park_question(offer);
    }

    /// The composer sent `text`: a `/merge` of a branch (not a dry run, not retiring it
    /// already) is remembered, so its outcome offers to retire the worktree here.
    pub(crate) fn note_merge_asked(&mut self, text: &str) {
        if let Ok(Input::Slash(SlashCommand::Merge {
            name,
            dry_run: false,
            retire: false,
            ..
        })) = parse_input(text)
        {
            self.merge_asked = Some(name);
        }
    }
}

/// The reviews and the merge queue this screen asked for and has not seen yet.
#[derive(Debug, Default)]
pub(crate) struct Asked {
    reviews: Vec<String>,
    merges: bool,
}

impl Asked {
    /// A command this screen sends: a `/review NAME` or `/merges` among them is remembered.
    pub(crate) fn note(&mut self, command: &LeadCommand) {
        let LeadCommand::Submit { text, .. } = command else {
            return;
        };
        match parse_input(text) {
            Ok(Input::Slash(SlashCommand::Review { name })) => {
                let name = name.trim_start_matches('@').to_string();
                if !self.reviews.contains(&name) {
                    self.reviews.push(name);
                }
            }
            Ok(Input::Slash(SlashCommand::Queue)) => self.merges = true,
            _ => {}
        }
    }

    /// Whether this screen asked for `name`'s review (taken: it opens once).
    pub(crate) fn take_review(&mut self, name: &str) -> bool {
        let before = self.reviews.len();
        self.reviews.retain(|n| n != name);
        self.reviews.len() != before
    }

    /// Whether this screen asked for the merge queue (taken).
    pub(crate) fn take_merges(&mut self) -> bool {
        std::mem::take(&mut self.merges)
    }
}
