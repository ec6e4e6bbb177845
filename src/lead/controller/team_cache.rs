//! The controller's team cache part: the team file and the task list as the lead last read
//! them. Its fields are private: every other file reads them through [`TeamCache::file`] and
//! [`TeamCache::tasks`]; only the re-reads (`controller::files`) replace them, and a spawn adds
//! the member it just wrote (so the next command sees it before the re-read comes).

use crate::protocol::{Member, Task, TeamFile};

/// `config.json` and the tasks, as last read.
pub(crate) struct TeamCache {
    file: TeamFile,
    tasks: Vec<Task>,
}

impl TeamCache {
    pub fn new(file: TeamFile) -> TeamCache {
        TeamCache {
            file,
            tasks: Vec::new(),
        }
    }

    /// The team file as last read.
    pub fn file(&self) -> &TeamFile {
        &self.file
    }

    /// The task list as last read.
    pub fn tasks(&self) -> &[Task] {
        &self.tasks
    }

    /// A fresh read of the team file.
    pub(super) fn replace_file(&mut self, file: TeamFile) {
        self.file = file;
    }

    /// A fresh read of the task list: the list it replaces.
    pub(super) fn replace_tasks(&mut self, tasks: Vec<Task>) -> Vec<Task> {
        std::mem::replace(&mut self.tasks, tasks)
    }

    /// A member the lead has just written, until the re-read brings it.
    pub(super) fn add_member(&mut self, member: Member) {
        if self.file.member(&member.name).is_none() {
            self.file.members.push(member);
        }
    }
}
