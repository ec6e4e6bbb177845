//! Task files (PROTOCOL.md 5): one JSON file per task, with status, owner and dependencies.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// pending → in_progress → completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Pending,
    InProgress,
    Completed,
}

impl TaskStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
        }
    }
}

/// One task. Unknown keys are kept in `extra`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    pub id: String,
    pub subject: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Absent (never null) when unclaimed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    pub status: TaskStatus,
    #[serde(default)]
    pub blocks: Vec<String>,
    #[serde(default)]
    pub blocked_by: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Task {
    /// `task #3 "build the parser"` (the subject clipped): how a task is named in what
    /// teammates report and the lead says.
    pub fn label(&self) -> String {
        format!(
            "task #{} \"{}\"",
            self.id,
            crate::inbox::clip(&self.subject, 60)
        )
    }

    /// `task #3 "build the parser" done.`: a completion, in the same words for every kind of
    /// teammate (teamlead's own report it so; the lead says it for a `claude` teammate).
    pub fn done_line(&self) -> String {
        format!("{} done.", self.label())
    }

    /// A new pending task.
    pub fn new(
        id: impl Into<String>,
        subject: impl Into<String>,
        description: impl Into<String>,
    ) -> Task {
        Task {
            id: id.into(),
            subject: subject.into(),
            description: description.into(),
            active_form: None,
            owner: None,
            status: TaskStatus::Pending,
            blocks: Vec::new(),
            blocked_by: Vec::new(),
            metadata: None,
            extra: Map::new(),
        }
    }

    /// A teammate's own lifecycle task (`metadata._internal == true`).
    pub fn is_internal(&self) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("_internal"))
            .and_then(Value::as_bool)
            == Some(true)
    }

    /// The command a `shell` teammate runs for this task: `metadata.command`, else the first
    /// fenced code block of the description when it is a command (`protocol::fence`).
    pub fn command(&self) -> Option<String> {
        if let Some(c) = self
            .metadata
            .as_ref()
            .and_then(|m| m.get("command"))
            .and_then(Value::as_str)
        {
            return Some(c.to_string());
        }
        crate::fence::command_block(&self.description)
    }

    /// The numeric id, for sorting (non-numeric ids sort last).
    pub fn numeric_id(&self) -> u64 {
        self.id.parse().unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_from_metadata_or_code_block() {
        let mut t = Task::new("1", "s", "Run this:\n```sh\necho hi\nls\n```\nthanks");
        assert_eq!(t.command().as_deref(), Some("echo hi\nls"));
        let mut m = Map::new();
        m.insert("command".into(), Value::String("true".into()));
        t.metadata = Some(m);
        assert_eq!(t.command().as_deref(), Some("true"));
        assert!(Task::new("2", "s", "no code").command().is_none());
    }
}
