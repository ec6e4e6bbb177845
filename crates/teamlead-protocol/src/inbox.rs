//! Inbox entries (PROTOCOL.md 3): the reader schema, what teamlead writes, the de-duplication
//! key, and the readable one-liner used wherever an entry is shown to a human.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::frames::{Frame, IdleReason};
use super::time::now_iso;

/// One entry of an inbox array. Unknown keys are kept in `extra` and written back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxEntry {
    pub from: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default, rename = "msgV", skip_serializing_if = "Option::is_none")]
    pub msg_v: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_id: Option<String>,
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<bool>,
    /// teamlead's relay id (`relayId`): the id the link between two hosts gave this entry when
    /// it forwarded it, kept in the entry so the receiving host appends it exactly once. Claude
    /// Code keeps unknown keys when it rewrites an inbox (PROTOCOL.md 3), so the id survives.
    #[serde(default, rename = "relayId", skip_serializing_if = "Option::is_none")]
    pub relay_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl InboxEntry {
    /// A new message in the 2.1.329 shape: `{from, text, summary?, timestamp, color?, msgV: 1,
    /// msg_id, type: "message", read: false}`.
    pub fn new(from: &str, text: impl Into<String>) -> InboxEntry {
        InboxEntry {
            from: from.to_string(),
            text: text.into(),
            summary: None,
            timestamp: now_iso(),
            color: None,
            msg_v: Some(1),
            msg_id: Some(uuid::Uuid::new_v4().to_string()),
            kind: Some("message".to_string()),
            read: Some(false),
            relay_id: None,
            extra: Map::new(),
        }
    }

    /// A frame as a message from `from`.
    pub fn frame(from: &str, frame: &Frame) -> InboxEntry {
        InboxEntry::new(from, frame.to_text())
    }

    /// Sets the preview (at most 200 characters).
    pub fn with_summary(mut self, summary: Option<&str>) -> InboxEntry {
        self.summary = summary.map(|s| s.chars().take(200).collect());
        self
    }

    /// Sets the sender's color.
    pub fn with_color(mut self, color: Option<&str>) -> InboxEntry {
        self.color = color.map(str::to_string);
        self
    }

    /// Not yet delivered (`read != true`).
    pub fn is_unread(&self) -> bool {
        self.read != Some(true)
    }

    /// The frame in `text`, if any.
    pub fn parse_frame(&self) -> Option<Frame> {
        Frame::parse(&self.text)
    }

    /// The de-duplication key: `msg_id`, or `(from, timestamp, text)` when there is none.
    pub fn dedup_key(&self) -> String {
        match &self.msg_id {
            Some(id) => format!("id:{id}"),
            None => {
                use sha2::{Digest, Sha256};
                let mut h = Sha256::new();
                for part in [&self.from, &self.timestamp, &self.text] {
                    h.update(part.as_bytes());
                    h.update([0u8]);
                }
                format!("h:{}", super::frames::hex(&h.finalize()))
            }
        }
    }

    /// A readable one-liner: frames as "permission request: Bash `mkdir -p …` from x",
    /// plain text as its summary or first line.
    pub fn one_liner(&self) -> String {
        match self.parse_frame() {
            Some(frame) => frame_one_liner(&frame, &self.from),
            None => {
                let body = self
                    .summary
                    .clone()
                    .unwrap_or_else(|| first_line(&self.text));
                format!("{}: {}", self.from, clip(&body, 100))
            }
        }
    }
}

/// The first non-empty line of a text.
pub fn first_line(text: &str) -> String {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_string()
}

/// At most `max` characters, with `…` when cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// The human summary of a tool input: the command for Bash, the path for file tools, else JSON.
pub fn input_preview(tool_name: &str, input: &Value) -> String {
    let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
    let s = match tool_name {
        "Bash" => field("command"),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => {
            field("file_path").or_else(|| field("path"))
        }
        "Glob" | "Grep" => field("pattern"),
        "WebFetch" => field("url"),
        _ => None,
    };
    s.unwrap_or_else(|| serde_json::to_string(input).unwrap_or_default())
}

/// `text` as a sentence: a period added unless it already ends with one (or `?`, `!`, `…`).
pub fn sentence(text: &str) -> String {
    let text = text.trim_end();
    if text.ends_with(['.', '?', '!', '…']) {
        text.to_string()
    } else {
        format!("{text}.")
    }
}

/// A frame as one readable line.
pub fn frame_one_liner(frame: &Frame, from: &str) -> String {
    match frame {
        Frame::IdleNotification(n) => {
            // What became of the task: `completedStatus` says (`resolved`, `failed`,
            // `blocked`); without it, a failed turn did not finish its task.
            let ended = match (n.completed_status.as_deref(), n.idle_reason) {
                (Some("resolved"), _) => "done",
                (Some("failed"), _) | (None, Some(IdleReason::Failed)) => "failed",
                (Some("blocked"), _) => "blocked",
                (None, Some(IdleReason::Interrupted)) => "not finished",
                _ => "done",
            };
            let done = n
                .completed_task_id
                .as_deref()
                .map(|id| format!("task #{id} {ended}"));
            let answer = n
                .result
                .as_deref()
                .map(|r| first_line(r.trim()))
                .filter(|r| !r.is_empty())
                .map(|r| format!(": {}", clip(&r, 60)))
                .unwrap_or_default();
            let done_after = done
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default();
            match n.idle_reason {
                Some(IdleReason::Failed) => {
                    let why = n
                        .failure_reason
                        .as_deref()
                        .map(|r| format!(": {}", clip(r, 60)))
                        .unwrap_or_default();
                    // Its answer repeats the failure (a teamlead teammate's report): one is enough.
                    let answer = if why.is_empty() {
                        answer
                    } else {
                        String::new()
                    };
                    format!("{from}'s turn failed{why}{done_after}{answer}")
                }
                Some(IdleReason::Interrupted) => {
                    format!("{from}'s turn was interrupted{done_after}{answer}")
                }
                _ => {
                    let done = done.map(|d| format!(", {d}")).unwrap_or_default();
                    format!("{from} is idle (available{done}){answer}")
                }
            }
        }
        Frame::PermissionRequest(r) => format!(
            "permission request: {} `{}` from {from}",
            r.tool_name,
            clip(&first_line(&input_preview(&r.tool_name, &r.input)), 60)
        ),
        Frame::PermissionResponse(r) => {
            if r.approved() {
                format!("permission granted by {from} ({})", r.request_id)
            } else {
                format!(
                    "permission denied by {from}: {}",
                    clip(r.error.as_deref().unwrap_or("Permission denied"), 60)
                )
            }
        }
        Frame::SandboxPermissionRequest(r) => format!(
            "sandbox request: network access to {} from {}",
            r.host_pattern.host, r.worker_name
        ),
        Frame::SandboxPermissionResponse(r) => format!(
            "sandbox answer: {} {}",
            if r.allow { "allow" } else { "deny" },
            r.host
        ),
        Frame::PlanApprovalRequest(r) => format!(
            "plan approval request from {from}: {}",
            clip(&first_line(&r.plan_content), 60)
        ),
        Frame::PlanApprovalResponse(r) => {
            if r.approved {
                "plan approved".to_string()
            } else {
                format!(
                    "plan rejected: {}",
                    clip(r.feedback.as_deref().unwrap_or(""), 60)
                )
            }
        }
        Frame::ShutdownRequest(r) => format!(
            "shutdown request from {from}{}",
            r.reason
                .as_deref()
                .map(|x| format!(": {}", clip(x, 60)))
                .unwrap_or_default()
        ),
        Frame::ShutdownApproved(_) => format!("{from} approved shutdown"),
        Frame::ShutdownRejected(r) => {
            format!("{from} rejected shutdown: {}", clip(&r.reason, 60))
        }
        Frame::ModeSetRequest(r) => format!("mode set to {} by {from}", r.mode),
        Frame::TaskAssignment(t) => format!(
            "task #{} \"{}\" assigned by {}",
            t.task_id,
            clip(&t.subject, 50),
            t.assigned_by
        ),
        Frame::TaskCompleted(t) => format!(
            "task #{} completed{}",
            t.task_id,
            t.task_subject
                .as_deref()
                .map(|s| format!(" \"{}\"", clip(s, 50)))
                .unwrap_or_default()
        ),
    }
}

/// Parses an inbox array leniently: valid entries, and the raw values that fail the schema.
pub fn parse_entries(values: Vec<Value>) -> (Vec<InboxEntry>, Vec<Value>) {
    let mut good = Vec::new();
    let mut bad = Vec::new();
    for v in values {
        match serde_json::from_value::<InboxEntry>(v.clone()) {
            Ok(e) => good.push(e),
            Err(_) => bad.push(v),
        }
    }
    (good, bad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frames::IdleNotification;

    fn idle(reason: Option<IdleReason>, failure: Option<&str>, task: Option<&str>) -> Frame {
        Frame::IdleNotification(IdleNotification {
            from: "alpha".into(),
            timestamp: "2026-01-01T00:00:00.000Z".into(),
            idle_reason: reason,
            summary: None,
            completed_task_id: task.map(Into::into),
            completed_status: None,
            failure_reason: failure.map(Into::into),
            result: None,
            usage: None,
            limit_until_ms: None,
        })
    }

    #[test]
    fn a_failed_or_interrupted_turn_reads_as_one_sentence() {
        let failed = idle(
            Some(IdleReason::Failed),
            Some("compiler exploded"),
            Some("3"),
        );
        assert_eq!(
            frame_one_liner(&failed, "alpha"),
            "alpha's turn failed: compiler exploded (task #3 failed)"
        );
        let interrupted = idle(Some(IdleReason::Interrupted), None, None);
        assert_eq!(
            frame_one_liner(&interrupted, "alpha"),
            "alpha's turn was interrupted"
        );
        let available = idle(Some(IdleReason::Available), None, Some("4"));
        assert_eq!(
            frame_one_liner(&available, "alpha"),
            "alpha is idle (available, task #4 done)"
        );
    }

    #[test]
    fn a_sentence_ends_once() {
        assert_eq!(
            sentence("The lead is shutting down."),
            "The lead is shutting down."
        );
        assert_eq!(sentence("Not now"), "Not now.");
        assert_eq!(sentence("Why?"), "Why?");
    }
}
