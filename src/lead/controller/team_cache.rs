//! The controller's team cache part: the team file and the task list as the lead last read
//! them. Its fields are private: every other file reads them through [`TeamCache::file`] and
//! [`TeamCache::tasks`]; only the re-reads (`controller::files`) replace them, and a spawn adds
//! the member it just wrote (so the next command sees it before the re-read comes).
//!
//! Reads of `config.json` run off the loop on more than one lane, so they can come back out
//! of order. Each read stamps itself from one [`ReadClock`] just before it reads the file: a
//! read that started before one already taken is dropped (it would bring back a member just
//! removed, or hide one just spawned). A member the lead added after a read started stays
//! until a read that started after the addition comes back; one it is removing stays out until
//! the removal is done (its write lands after later reads may have started).

use crate::protocol::{Member, Task, TeamFile};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// `config.json` and the tasks, as last read.
pub(crate) struct TeamCache {
    file: TeamFile,
    tasks: Vec<Task>,
    /// The stamps of reads and of the lead's own additions.
    clock: ReadClock,
    /// The ticket of the newest read taken.
    taken: u64,
    /// The lead's own changes to the members, with their ticket, until a later read shows
    /// the file.
    changes: Vec<(u64, MemberChange)>,
}

/// A change the lead made (or is making) to the members before a re-read shows it.
enum MemberChange {
    /// A member it has just written (a spawn).
    Added(Box<Member>),
    /// A member it is removing, until [`TeamCache::removal_done`] (its write may land after
    /// reads that started later than the removal).
    Removed(String),
}

/// When a read of `config.json` started (see [`ReadClock::stamp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ReadTicket(u64);

/// One count shared by the reads (which run on the store's threads) and the loop.
#[derive(Clone, Default)]
pub(crate) struct ReadClock(Arc<AtomicU64>);

impl ReadClock {
    /// The next stamp: a read takes it just before it opens the file.
    pub fn stamp(&self) -> ReadTicket {
        ReadTicket(self.0.fetch_add(1, Ordering::SeqCst) + 1)
    }
}

impl TeamCache {
    pub fn new(file: TeamFile) -> TeamCache {
        TeamCache {
            file,
            tasks: Vec::new(),
            clock: ReadClock::default(),
            taken: 0,
            changes: Vec::new(),
        }
    }

    /// The team file as last read.
    pub fn file(&self) -> &TeamFile {
        &self.file
    }

    /// The teammates' names (the lead left out), as last read.
    pub fn teammate_names(&self) -> Vec<String> {
        self.file.teammates().map(|m| m.name.clone()).collect()
    }

    /// The task list as last read.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// The clock a read stamps itself with, to move into the read's closure.
    pub(super) fn clock(&self) -> ReadClock {
        self.clock.clone()
    }

    /// Whether a read that started at `ticket` is older than one already taken.
    pub(super) fn is_stale(&self, ticket: ReadTicket) -> bool {
        ticket.0 < self.taken
    }

    /// A fresh read of the team file, started at `ticket`: false (and nothing changes) when a
    /// read that started later was taken already.
    pub(super) fn replace_file(&mut self, mut file: TeamFile, ticket: ReadTicket) -> bool {
        if self.is_stale(ticket) {
            return false;
        }
        self.taken = ticket.0;
        // What the lead changed after this read started may not be in it yet.
        self.changes
            .retain(|(at, c)| *at > ticket.0 || matches!(c, MemberChange::Removed(_)));
        for (_, change) in &self.changes {
            match change {
                MemberChange::Added(member) if file.member(&member.name).is_none() => {
                    file.members.push((**member).clone())
                }
                MemberChange::Added(_) => {}
                MemberChange::Removed(name) => file.members.retain(|m| &m.name != name),
            }
        }
        self.file = file;
        true
    }

    /// A fresh read of the task list: the list it replaces.
    pub(super) fn replace_tasks(&mut self, tasks: Vec<Task>) -> Vec<Task> {
        std::mem::replace(&mut self.tasks, tasks)
    }

    /// A member the lead has just written, until the re-read brings it.
    pub(super) fn add_member(&mut self, member: Member) {
        let ReadTicket(at) = self.clock.stamp();
        self.changes
            .push((at, MemberChange::Added(Box::new(member.clone()))));
        if self.file.member(&member.name).is_none() {
            self.file.members.push(member);
        }
    }

    /// A member the lead is removing: gone from the copy at once, and kept out of every read
    /// until [`TeamCache::removal_done`].
    pub(super) fn remove_member(&mut self, name: &str) {
        let ReadTicket(at) = self.clock.stamp();
        self.changes
            .retain(|(_, c)| !matches!(c, MemberChange::Added(m) if m.name == name));
        self.changes
            .push((at, MemberChange::Removed(name.to_string())));
        self.file.members.retain(|m| m.name != name);
    }

    /// The removal of `name` was written (or failed): reads are the truth about it again.
    pub(super) fn removal_done(&mut self, name: &str) {
        self.changes
            .retain(|(_, c)| !matches!(c, MemberChange::Removed(n) if n == name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(names: &[&str]) -> TeamFile {
        let members: Vec<_> = names
            .iter()
            .map(|n| serde_json::json!({"agentId": format!("{n}@t"), "name": n}))
            .collect();
        serde_json::from_value(serde_json::json!({"name": "t", "members": members})).unwrap()
    }

    fn names(cache: &TeamCache) -> Vec<&str> {
        cache
            .file()
            .members
            .iter()
            .map(|m| m.name.as_str())
            .collect()
    }

    #[test]
    fn a_read_that_started_before_a_newer_one_taken_is_dropped() {
        let mut cache = TeamCache::new(file(&["lead"]));
        let clock = cache.clock();
        let older = clock.stamp();
        let newer = clock.stamp();
        assert!(cache.replace_file(file(&["lead"]), newer));
        // The older read still has a member the newer one no longer has.
        assert!(!cache.replace_file(file(&["lead", "gone"]), older));
        assert_eq!(names(&cache), ["lead"]);
    }

    #[test]
    fn a_spawned_member_outlives_a_read_that_started_before_it() {
        let mut cache = TeamCache::new(file(&["lead"]));
        let clock = cache.clock();
        let before = clock.stamp();
        cache.add_member(file(&["beta"]).members.remove(0));
        assert!(cache.replace_file(file(&["lead"]), before));
        assert_eq!(names(&cache), ["lead", "beta"]);
        // A read that started after the spawn is the truth, with or without it.
        let after = clock.stamp();
        assert!(cache.replace_file(file(&["lead"]), after));
        assert_eq!(names(&cache), ["lead"]);
    }

    #[test]
    fn a_member_being_removed_stays_out_until_the_removal_is_done() {
        let mut cache = TeamCache::new(file(&["lead", "gone"]));
        let clock = cache.clock();
        let before = clock.stamp();
        cache.remove_member("gone");
        assert_eq!(names(&cache), ["lead"]);
        // Reads before and after the call, but before the write landed, still have it.
        assert!(cache.replace_file(file(&["lead", "gone"]), before));
        assert_eq!(names(&cache), ["lead"]);
        assert!(cache.replace_file(file(&["lead", "gone"]), clock.stamp()));
        assert_eq!(names(&cache), ["lead"]);
        // Once it is done, reads are the truth (a removal that failed shows it again).
        cache.removal_done("gone");
        assert!(cache.replace_file(file(&["lead", "gone"]), clock.stamp()));
        assert_eq!(names(&cache), ["lead", "gone"]);
    }
}
