//! What the lead learns about a `claude` teammate from its session transcript
//! (`store::claude_transcript`): its model, what it used (shown like a teamlead teammate's
//! reported usage), and whether its model was offered the task tools. The transcript is read in
//! the background (the `Transcripts` lane) after each entry the teammate sends and at the
//! safety poll. A teammate whose model lacks the task tools is told about once, and its
//! assignments then go to it as plain instructions.

use std::sync::{Arc, Mutex};

use super::state::Controller;
use super::store_worker::Lane;
use crate::protocol::Task;
use crate::store::claude_transcript::TranscriptMeter;

/// The text of an assignment for a teammate that cannot use the task list.
pub fn plain_assignment(task: &Task) -> String {
    let mut text = format!("Task #{} is assigned to you: {}", task.id, task.subject);
    if !task.description.trim().is_empty() {
        text.push_str(&format!("\n\n{}", task.description));
    }
    text.push_str(&format!(
        "\n\nYour tools cannot update the shared task list: when the task is done, send \
         team-lead a message saying that task #{} is complete.",
        task.id
    ));
    text
}

impl Controller {
    /// Reads more of every `claude` teammate's transcript, in the background.
    pub(super) fn read_claude_transcripts(&mut self) {
        let names: Vec<String> = self
            .team_file
            .teammates()
            .filter(|m| self.is_claude(&m.name))
            .map(|m| m.name.clone())
            .collect();
        for name in names {
            self.read_claude_transcript(&name);
        }
    }

    /// Reads more of `name`'s transcript, when it is a `claude` teammate with a known session.
    pub(super) fn read_claude_transcript(&mut self, name: &str) {
        let Some(session) = self
            .record
            .teammates
            .get(name)
            .filter(|r| r.claude)
            .and_then(|r| r.session_id.clone())
        else {
            return;
        };
        let tracking = self.tracking.entry(name.to_string()).or_default();
        let meter = tracking
            .transcript
            .get_or_insert_with(|| Arc::new(Mutex::new(TranscriptMeter::new(&session))))
            .clone();
        let who = name.to_string();
        self.store.submit(
            Lane::Transcripts,
            move |home| meter.lock().unwrap_or_else(|e| e.into_inner()).read(home),
            move |c, facts| {
                let Some(facts) = facts else { return };
                let Some(t) = c.tracking.get_mut(&who) else {
                    return;
                };
                if facts.usage != Default::default() {
                    t.usage = Some(facts.usage);
                }
                t.model_seen = facts.model.clone();
                if facts.has_task_tools() == Some(false) && !t.no_task_tools {
                    t.no_task_tools = true;
                    let model = facts.model.as_deref().unwrap_or("its model");
                    c.note(format!(
                        "{who} cannot use the task list: {model} was not offered the task tools \
                         (TaskList, TaskUpdate); its assignments go to it as plain instructions."
                    ));
                } else if facts.has_task_tools() == Some(true) {
                    t.no_task_tools = false;
                }
                c.publish();
            },
        );
    }
}
