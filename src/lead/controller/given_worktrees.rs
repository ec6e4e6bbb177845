//! The worktrees given to teammates: one part of the controller. Each with its owner, in the
//! order given (a later worktree at the same path replaces the earlier); the lead retires them
//! at `/quit` and `/merge` lets one go. Its list is private: the controller's other files
//! reach it through these methods.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::backend::worktree::Worktree;

/// The worktrees given this session (and those a dead lead left), with their owners.
#[derive(Debug, Default)]
pub(crate) struct GivenWorktrees {
    given: Vec<(String, Worktree)>,
}

impl GivenWorktrees {
    /// `owner` was given `worktree` (one known at its path before is replaced).
    pub fn give(&mut self, owner: &str, worktree: Worktree) {
        self.forget(&worktree.path);
        self.given.push((owner.to_string(), worktree));
    }

    /// A worktree an earlier session gave `owner`, kept unless one is known at its path.
    pub fn adopt(&mut self, owner: &str, worktree: Worktree) {
        if self.at(&worktree.path).is_none() {
            self.given.push((owner.to_string(), worktree));
        }
    }

    /// The worktree at `path` is gone (retired, removed).
    pub fn forget(&mut self, path: &Path) {
        self.given.retain(|(_, w)| w.path != path);
    }

    /// The worktree at `path`, when one was given.
    pub fn at(&self, path: &Path) -> Option<&Worktree> {
        self.given
            .iter()
            .find(|(_, w)| w.path == path)
            .map(|(_, w)| w)
    }

    /// The worktree given to `owner` last.
    pub fn last_of(&self, owner: &str) -> Option<&Worktree> {
        self.given
            .iter()
            .rev()
            .find(|(n, _)| n == owner)
            .map(|(_, w)| w)
    }

    /// Each worktree with its owner, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Worktree)> {
        self.given.iter().map(|(n, w)| (n.as_str(), w))
    }

    /// The owner of each worktree, by path.
    pub fn owners(&self) -> HashMap<PathBuf, String> {
        self.iter()
            .map(|(n, w)| (w.path.clone(), n.to_string()))
            .collect()
    }

    /// Every worktree with its owner, leaving none (`/quit` retires them all).
    pub fn take_all(&mut self) -> Vec<(String, Worktree)> {
        std::mem::take(&mut self.given)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(path: &str, branch: &str) -> Worktree {
        Worktree {
            path: PathBuf::from(path),
            branch: branch.to_string(),
            repo: PathBuf::from("/repo"),
            host: None,
        }
    }

    #[test]
    fn a_worktree_given_again_at_its_path_replaces_the_first() {
        let mut given = GivenWorktrees::default();
        given.give("alpha", tree("/w/a", "one"));
        given.give("beta", tree("/w/a", "two"));
        let all: Vec<_> = given.iter().map(|(n, w)| (n, w.branch.as_str())).collect();
        assert_eq!(all, [("beta", "two")]);
    }

    #[test]
    fn an_adopted_worktree_never_replaces_a_known_one() {
        let mut given = GivenWorktrees::default();
        given.give("alpha", tree("/w/a", "one"));
        given.adopt("old", tree("/w/a", "left"));
        given.adopt("old", tree("/w/b", "left"));
        assert_eq!(
            given.at(Path::new("/w/a")).map(|w| w.branch.as_str()),
            Some("one")
        );
        assert_eq!(
            given.last_of("old").map(|w| w.branch.as_str()),
            Some("left")
        );
        assert_eq!(given.owners().len(), 2);
        given.forget(Path::new("/w/b"));
        assert!(given.last_of("old").is_none());
        assert_eq!(given.take_all().len(), 1);
        assert_eq!(given.iter().count(), 0);
    }
}
