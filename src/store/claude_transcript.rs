//! A `claude` teammate's session transcript, read incrementally: Claude Code writes one JSON
//! line per event to `<config dir>/projects/<cwd, sanitized>/<session id>.jsonl` (teamlead
//! chooses the session id at spawn, `--session-id`). From it the lead learns what a claude
//! teammate does not send in its frames: the model it runs, what it used (assistant entries
//! carry `message.usage`; one API message can appear on several lines, so usage is kept per
//! message id and summed once), its tool calls, the turns it started, the files its Write,
//! Edit, MultiEdit and NotebookEdit calls wrote (a call whose result is not an error), and — on
//! clients that record the request's shape (2.1.332) — which tools its model was offered — and
//! until when it is rate- or usage-limited (`store::claude_limit`; a real answer after the
//! limit lifts it), and the frames for the lead its client said it could not deliver
//! ([`Undelivered`], `store::claude_undelivered`). Each read starts
//! where the last one ended and takes complete lines only; a line that does not parse is
//! skipped. The file is opened without following links and never blocks.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::claude_undelivered::undelivered;
pub use super::claude_undelivered::{Undelivered, UndeliveredKind};
use super::home::Home;
use crate::protocol::frames::ReportedUsage;

/// The most bytes one read takes (the rest waits for the next read).
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The longest line kept while waiting for its end (longer ones are dropped whole).
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What the transcript says so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TranscriptFacts {
    pub usage: ReportedUsage,
    /// The model of its last answer.
    pub model: Option<String>,
    /// The tools its model was last offered (`None`: the client does not record them).
    pub tools: Option<Vec<String>>,
    /// The files its writing tools wrote (the paths as the calls gave them), each once, in
    /// the order first written.
    pub written: Vec<String>,
    /// Until when (epoch milliseconds) its rate or usage limit holds, as the client last
    /// recorded it (`None`: no limit, or an answer came after it).
    pub limited_until_ms: Option<u64>,
    /// The latest frames for the lead the client said it could not deliver (the last
    /// [`UNDELIVERED_KEPT`], oldest first; each numbered from 1 over the transcript's life).
    pub undelivered: Vec<Undelivered>,
}

/// How many undelivered frames the facts keep.
pub const UNDELIVERED_KEPT: usize = 20;

/// The most tool calls kept while waiting for their results.
const CALLS_KEPT: usize = 1000;

/// The tools that write a file, and the input field naming it.
const WRITING_TOOLS: [(&str, &str); 4] = [
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

impl TranscriptFacts {
    /// Whether its model was offered the task tools (`None`: not known).
    pub fn has_task_tools(&self) -> Option<bool> {
        self.tools
            .as_ref()
            .map(|t| t.iter().any(|n| n == "TaskUpdate") && t.iter().any(|n| n == "TaskList"))
    }
}

/// One API message's usage (the largest count of each kind seen on its lines).
#[derive(Debug, Default, Clone, Copy)]
struct MessageUsage {
    input: u64,
    cache_write: u64,
    cache_read: u64,
    output: u64,
}

/// Reads one teammate's transcript, a little more each time.
#[derive(Debug, Default)]
pub struct TranscriptMeter {
    session_id: String,
    path: Option<PathBuf>,
    offset: u64,
    partial: Vec<u8>,
    /// Usage per API message id.
    per_message: HashMap<String, MessageUsage>,
    tool_ids: HashSet<String>,
    /// Writing calls whose result has not been seen: id → path.
    pending_writes: HashMap<String, String>,
    /// Calls whose result has not been seen: id → (tool, input).
    pending_calls: HashMap<String, (String, Value)>,
    /// How many undelivered frames were seen.
    undelivered_seen: u64,
    turns: u64,
    facts: TranscriptFacts,
}

impl TranscriptMeter {
    pub fn new(session_id: &str) -> TranscriptMeter {
        TranscriptMeter {
            session_id: session_id.to_string(),
            ..TranscriptMeter::default()
        }
    }

    /// Reads what was added since the last read; the facts so far (`None` while there is no
    /// transcript yet).
    pub fn read(&mut self, home: &Home) -> Option<TranscriptFacts> {
        if self.path.is_none() {
            self.path = find(&home.root.join("projects"), &self.session_id);
        }
        let path = self.path.clone()?;
        let mut file = super::safe_file::open_regular(&path).ok()??;
        let len = file.metadata().ok()?.len();
        if len < self.offset {
            // Rewritten from the start: read it again.
            *self = TranscriptMeter {
                path: Some(path.clone()),
                ..TranscriptMeter::new(&self.session_id)
            };
        }
        if len > self.offset {
            file.seek(SeekFrom::Start(self.offset)).ok()?;
            let mut bytes = Vec::new();
            file.take(MAX_READ_BYTES).read_to_end(&mut bytes).ok()?;
            self.offset += bytes.len() as u64;
            self.take(&bytes);
        }
        Some(self.facts.clone())
    }

    /// Takes complete lines out of `bytes` (after what was left of the last read).
    fn take(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let mut line = std::mem::take(&mut self.partial);
            line.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            if let Ok(entry) = serde_json::from_slice::<Value>(&line) {
                self.entry(&entry);
            }
        }
        if self.partial.len() + rest.len() <= MAX_LINE_BYTES {
            self.partial.extend_from_slice(rest);
        } else {
            self.partial.clear();
        }
    }

    fn entry(&mut self, entry: &Value) {
        match entry["type"].as_str() {
            Some("assistant") if entry["isApiErrorMessage"] == true => {
                if let Some(until) = super::claude_limit::limit_reset_ms(entry) {
                    self.facts.limited_until_ms = Some(until);
                }
            }
            Some("assistant") => {
                if entry["message"]["usage"].is_object() {
                    // A real answer: whatever limit was recorded has lifted.
                    self.facts.limited_until_ms = None;
                }
                self.assistant(&entry["message"]);
            }
            Some("user") if entry["message"]["content"].is_string() => self.turns += 1,
            Some("user") => self.results(&entry["message"]["content"]),
            Some("api-request-shape") => {
                if let Some(tools) = entry["shape"]["tools"].as_array() {
                    self.facts.tools = Some(
                        tools
                            .iter()
                            .filter_map(|t| t["name"].as_str().map(str::to_string))
                            .collect(),
                    );
                }
            }
            _ => {}
        }
        let sum = |f: fn(&MessageUsage) -> u64| self.per_message.values().map(f).sum::<u64>();
        let (cache_write, cache_read) = (sum(|m| m.cache_write), sum(|m| m.cache_read));
        self.facts.usage = ReportedUsage {
            input_tokens: sum(|m| m.input) + cache_write + cache_read,
            output_tokens: sum(|m| m.output),
            tool_uses: self.tool_ids.len() as u64,
            turns: self.turns,
            cache_read_tokens: cache_read,
            cache_write_tokens: cache_write,
        };
    }

    fn assistant(&mut self, message: &Value) {
        if let Some(model) = message["model"].as_str().filter(|m| !m.starts_with('<')) {
            self.facts.model = Some(model.to_string());
        }
        if let Some(blocks) = message["content"].as_array() {
            for block in blocks {
                if block["type"] == "tool_use"
                    && let Some(id) = block["id"].as_str()
                {
                    self.tool_ids.insert(id.to_string());
                    let name = block["name"].as_str().unwrap_or("");
                    if self.pending_calls.len() < CALLS_KEPT {
                        self.pending_calls
                            .insert(id.to_string(), (name.to_string(), block["input"].clone()));
                    }
                    if let Some((_, field)) = WRITING_TOOLS.iter().find(|(t, _)| *t == name)
                        && let Some(path) = block["input"][field].as_str()
                    {
                        self.pending_writes.insert(id.to_string(), path.to_string());
                    }
                }
            }
        }
        let (Some(id), usage) = (message["id"].as_str(), &message["usage"]) else {
            return;
        };
        if !usage.is_object() {
            return;
        }
        let n = |k: &str| usage[k].as_u64().unwrap_or(0);
        // Later lines of one message carry the same or a larger count: keep the largest.
        let seen = self.per_message.entry(id.to_string()).or_default();
        seen.input = seen.input.max(n("input_tokens"));
        seen.cache_write = seen.cache_write.max(n("cache_creation_input_tokens"));
        seen.cache_read = seen.cache_read.max(n("cache_read_input_tokens"));
        seen.output = seen.output.max(n("output_tokens"));
    }

    /// Tool results: a writing call that did not fail wrote its file; a call whose result
    /// says its frame for the lead could not be delivered is recorded.
    fn results(&mut self, content: &Value) {
        for block in content.as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            if let Some((tool, input)) = block["tool_use_id"]
                .as_str()
                .and_then(|id| self.pending_calls.remove(id))
                && let Some(mut lost) = undelivered(&tool, &input, block)
            {
                self.undelivered_seen += 1;
                lost.seq = self.undelivered_seen;
                self.facts.undelivered.push(lost);
                if self.facts.undelivered.len() > UNDELIVERED_KEPT {
                    self.facts.undelivered.remove(0);
                }
            }
            let Some(path) = block["tool_use_id"]
                .as_str()
                .and_then(|id| self.pending_writes.remove(id))
            else {
                continue;
            };
            if block["is_error"] != true && !self.facts.written.contains(&path) {
                self.facts.written.push(path);
            }
        }
    }
}

/// `<projects>/*/<session id>.jsonl`, when there is one.
fn find(projects: &Path, session_id: &str) -> Option<PathBuf> {
    let name = format!("{session_id}.jsonl");
    std::fs::read_dir(projects)
        .ok()?
        .flatten()
        .filter(|d| d.file_type().is_ok_and(|t| t.is_dir()))
        .map(|d| d.path().join(&name))
        .find(|p| p.symlink_metadata().is_ok_and(|m| m.is_file()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const SESSION: &str = "0c2f4a51-9d0e-4f5b-8a7c-3e1d2b6f9a80";

    fn transcript(home: &Home) -> PathBuf {
        let dir = home.root.join("projects").join("-w");
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(format!("{SESSION}.jsonl"))
    }

    fn append(path: &Path, text: &str) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn usage_is_counted_once_per_message_and_read_incrementally() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let mut meter = TranscriptMeter::new(SESSION);
        assert_eq!(meter.read(&home), None, "no transcript yet");
        let path = transcript(&home);
        append(
            &path,
            r#"{"type":"user","message":{"role":"user","content":"<teammate-message>go</teammate-message>"}}
{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-5-5","content":[{"type":"text","text":"x"}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":1}}}
{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-5-5","content":[{"type":"tool_use","id":"tu_1","name":"Bash","input":{}}],"usage":{"input_tokens":10,"cache_read_input_tokens":100,"output_tokens":7}}}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_1"}]}}
{"type":"assistant","message":{"id":"msg_2","#,
        );
        let facts = meter.read(&home).unwrap();
        assert_eq!(facts.model.as_deref(), Some("claude-opus-5-5"));
        assert_eq!(facts.usage.input_tokens, 110);
        assert_eq!(facts.usage.output_tokens, 7);
        assert_eq!(facts.usage.tool_uses, 1);
        assert_eq!(facts.usage.turns, 1);
        assert_eq!(facts.has_task_tools(), None);
        // The rest of the torn line, and a request shape.
        append(
            &path,
            "\"model\":\"claude-sonnet-5-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}}\nnot json\n{\"type\":\"api-request-shape\",\"shape\":{\"tools\":[{\"name\":\"Bash\"},{\"name\":\"TaskStop\"}]}}\n",
        );
        let facts = meter.read(&home).unwrap();
        assert_eq!(facts.usage.input_tokens, 115);
        assert_eq!(facts.usage.output_tokens, 9);
        assert_eq!(facts.model.as_deref(), Some("claude-sonnet-5-5"));
        assert_eq!(facts.has_task_tools(), Some(false));
        append(
            &path,
            "{\"type\":\"api-request-shape\",\"shape\":{\"tools\":[{\"name\":\"TaskList\"},{\"name\":\"TaskUpdate\"}]}}\n",
        );
        assert_eq!(meter.read(&home).unwrap().has_task_tools(), Some(true));
    }

    /// A recorded session whose messages repeat their id on several lines (one per content
    /// block, the counts growing): tokens counted once per message, by kind, and priced.
    #[test]
    fn repeated_message_ids_are_counted_once_and_priced_to_the_cent() {
        use crate::protocol::pricing::{PriceTable, dollars};
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        let line = |id: &str, input: u64, write: u64, read: u64, output: u64| {
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-sonnet-4-5-20250929\",\"content\":[],\"usage\":{{\"input_tokens\":{input},\"cache_creation_input_tokens\":{write},\"cache_read_input_tokens\":{read},\"output_tokens\":{output}}}}}}}\n"
            )
        };
        let mut text = String::new();
        // msg_a on three lines (thinking, text, tool use), msg_b on two.
        text += &line("msg_a", 3, 20_000, 0, 1);
        text += &line("msg_a", 3, 20_000, 0, 40);
        text += &line("msg_a", 3, 20_000, 0, 412);
        text += &line("msg_b", 5, 1_500, 20_000, 2);
        text += &line("msg_b", 5, 1_500, 20_000, 988);
        append(&path, &text);
        let facts = TranscriptMeter::new(SESSION).read(&home).unwrap();
        let u = facts.usage;
        assert_eq!(
            (u.cache_write_tokens, u.cache_read_tokens),
            (21_500, 20_000)
        );
        assert_eq!(u.input_tokens, 8 + 21_500 + 20_000);
        assert_eq!(u.output_tokens, 1_400);
        // Sonnet: 8 × $3 + 1,400 × $15 + 21,500 × $3.75 + 20,000 × $0.30 per million
        // = $0.000024 + $0.021 + $0.080625 + $0.006 = $0.107649.
        let cost = PriceTable::built_in().cost_micros(facts.model.as_deref(), &u.tokens());
        assert_eq!(cost, Some(107_649));
        assert_eq!(dollars(107_649), "$0.11");
    }

    #[test]
    fn files_written_by_calls_that_did_not_fail() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        let call = |id: &str, name: &str, input: &str| {
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"id\":\"m_{id}\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{name}\",\"input\":{input}}}]}}}}\n"
            )
        };
        let result = |id: &str, error: bool| {
            format!(
                "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"is_error\":{error}}}]}}}}\n"
            )
        };
        let mut text = String::new();
        text += &call("t1", "Write", r#"{"file_path":"/w/a.rs","content":"x"}"#);
        text += &result("t1", false);
        text += &call(
            "t2",
            "Edit",
            r#"{"file_path":"/w/b.rs","old_string":"a","new_string":"b"}"#,
        );
        text += &result("t2", true);
        text += &call("t3", "Read", r#"{"file_path":"/w/c.rs"}"#);
        text += &result("t3", false);
        text += &call("t4", "MultiEdit", r#"{"file_path":"/w/d.rs","edits":[]}"#);
        text += &call(
            "t5",
            "NotebookEdit",
            r#"{"notebook_path":"/w/e.ipynb","new_source":""}"#,
        );
        text += &result("t5", false);
        text += &call(
            "t6",
            "Edit",
            r#"{"file_path":"/w/a.rs","old_string":"x","new_string":"y"}"#,
        );
        text += &result("t6", false);
        append(&path, &text);
        let mut meter = TranscriptMeter::new(SESSION);
        // t4's result is not in yet; the failed edit of b.rs wrote nothing.
        assert_eq!(
            meter.read(&home).unwrap().written,
            vec!["/w/a.rs", "/w/e.ipynb"]
        );
        append(&path, &result("t4", false));
        assert_eq!(
            meter.read(&home).unwrap().written,
            vec!["/w/a.rs", "/w/e.ipynb", "/w/d.rs"]
        );
    }

    #[test]
    fn a_usage_limit_is_read_until_an_answer_lifts_it() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        let mut meter = TranscriptMeter::new(SESSION);
        append(
            &path,
            r#"{"type":"assistant","message":{"id":"msg_1","model":"claude-opus-5-5","content":[],"usage":{"input_tokens":10,"output_tokens":1}}}
{"type":"assistant","isApiErrorMessage":true,"error":"rate_limit","timestamp":"2025-06-23T17:00:00.000Z","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"Claude AI usage limit reached|1750708800"}],"usage":{"input_tokens":0,"output_tokens":0}}}
"#,
        );
        let facts = meter.read(&home).unwrap();
        assert_eq!(facts.limited_until_ms, Some(1_750_708_800_000));
        assert_eq!(
            facts.model.as_deref(),
            Some("claude-opus-5-5"),
            "not <synthetic>"
        );
        assert_eq!(facts.usage.input_tokens, 10);
        append(
            &path,
            "{\"type\":\"assistant\",\"message\":{\"id\":\"msg_2\",\"model\":\"claude-opus-5-5\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":2}}}\n",
        );
        assert_eq!(meter.read(&home).unwrap().limited_until_ms, None);
    }

    /// A tool call whose result says its frame for the lead was not delivered is told once,
    /// numbered, with the call's tool and input; a delivered one is not.
    #[test]
    fn frames_the_client_could_not_deliver_are_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        let call = |id: &str, name: &str, input: &str| {
            format!(
                "{{\"type\":\"assistant\",\"message\":{{\"id\":\"m_{id}\",\"content\":[{{\"type\":\"tool_use\",\"id\":\"{id}\",\"name\":\"{name}\",\"input\":{input}}}]}}}}\n"
            )
        };
        let result = |id: &str, content: &str| {
            format!(
                "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"{id}\",\"content\":{content},\"is_error\":true}}]}}}}\n"
            )
        };
        let mut text = String::new();
        text += &call("t1", "Bash", r#"{"command":"make migrate"}"#);
        text += &result(
            "t1",
            r#""The permission request could not be delivered to the team lead (mailbox write failed). Retry the tool call, or ask the lead directly.""#,
        );
        text += &call("t2", "Bash", r#"{"command":"ls"}"#);
        text += &result("t2", r#""(Bash completed with no output)""#);
        append(&path, &text);
        let mut meter = TranscriptMeter::new(SESSION);
        let lost = meter.read(&home).unwrap().undelivered;
        assert_eq!(lost.len(), 1, "{lost:?}");
        assert_eq!(
            (
                lost[0].seq,
                lost[0].kind,
                lost[0].tool.as_str(),
                lost[0].input.as_str()
            ),
            (
                1,
                UndeliveredKind::PermissionRequest,
                "Bash",
                "make migrate"
            )
        );
        append(
            &path,
            &(call(
                "t3",
                "SendMessage",
                r#"{"to":"team-lead","message":"done"}"#,
            ) + &result(
                "t3",
                r#"[{"type":"text","text":"{\"success\":false,\"message\":\"Failed to write to team-lead's inbox — nothing was sent.\"}"}]"#,
            )),
        );
        let lost = meter.read(&home).unwrap().undelivered;
        assert_eq!(lost.len(), 2);
        assert_eq!((lost[1].seq, lost[1].kind), (2, UndeliveredKind::Message));
    }

    #[test]
    fn a_link_or_fifo_is_never_read() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        std::os::unix::fs::symlink("/etc/passwd", &path).unwrap();
        assert_eq!(TranscriptMeter::new(SESSION).read(&home), None);
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(TranscriptMeter::new(SESSION).read(&home), None);
    }
}
