//! What a `claude` teammate's session transcript told the lead (`controller::claude_facts`):
//! the meter that reads it a little more each time, the model it runs, its usage by model,
//! whether its model has the task tools, and how many of its undelivered frames were told.

use std::sync::{Arc, Mutex};

use crate::protocol::pricing::Ledger;
use crate::store::claude_transcript::{TranscriptFacts, TranscriptMeter};

/// One `claude` teammate's transcript facts.
#[derive(Debug, Clone, Default)]
pub struct ClaudeFacts {
    /// Its session transcript's reader (shared with the off-loop read).
    meter: Option<Arc<Mutex<TranscriptMeter>>>,
    /// The model its transcript says it runs (when the team file names none).
    model: Option<String>,
    /// Its usage by model, each message priced by its own model and tier.
    ledger: Option<Ledger>,
    /// Its model was not offered the task tools (told once; assignments go as plain text).
    no_task_tools: bool,
    /// How many frames for the lead its transcript said were not delivered, as told so far.
    undelivered_told: u64,
}

/// What a read of the transcript changed, for the lead to say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FactsRead {
    /// Its model lost the task tools just now (was not known to lack them).
    pub task_tools_lost: bool,
    /// The undelivered frames told before this read: those numbered above are new.
    pub undelivered_told_before: u64,
}

impl ClaudeFacts {
    /// Its transcript's reader, made on the first read (of `session`, priced with `prices`).
    pub fn meter(&mut self, make: impl FnOnce() -> TranscriptMeter) -> Arc<Mutex<TranscriptMeter>> {
        self.meter
            .get_or_insert_with(|| Arc::new(Mutex::new(make())))
            .clone()
    }

    /// The model its transcript says it runs.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Its usage by model.
    pub fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_ref()
    }

    /// Its model was not offered the task tools.
    pub fn lacks_task_tools(&self) -> bool {
        self.no_task_tools
    }

    /// Takes in what a read of its transcript found.
    pub fn read(&mut self, facts: &TranscriptFacts) -> FactsRead {
        self.model = facts.model.clone();
        self.ledger = Some(facts.ledger.clone());
        let told = self.undelivered_told;
        self.undelivered_told = facts.undelivered.last().map_or(told, |u| u.seq.max(told));
        let task_tools_lost = match facts.has_task_tools() {
            Some(false) => !std::mem::replace(&mut self.no_task_tools, true),
            Some(true) => {
                self.no_task_tools = false;
                false
            }
            None => false,
        };
        FactsRead {
            task_tools_lost,
            undelivered_told_before: told,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_tools_lost_is_said_once_and_undelivered_frames_count_on() {
        let mut facts = ClaudeFacts::default();
        let mut read = TranscriptFacts {
            tools: Some(vec!["Bash".into()]),
            ..TranscriptFacts::default()
        };
        assert!(facts.read(&read).task_tools_lost);
        assert!(!facts.read(&read).task_tools_lost, "told once");
        assert!(facts.lacks_task_tools());
        read.tools = Some(vec!["TaskList".into(), "TaskUpdate".into()]);
        assert!(!facts.read(&read).task_tools_lost);
        assert!(!facts.lacks_task_tools());
        assert_eq!(facts.read(&read).undelivered_told_before, 0);
    }
}
