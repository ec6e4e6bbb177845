//! A `claude` teammate's session transcript, read incrementally: Claude Code writes one JSON
//! line per event to `<config dir>/projects/<cwd, sanitized>/<session id>.jsonl` (teamlead
//! chooses the session id at spawn, `--session-id`), and its subagents' to
//! `<session id>/subagents/agent-*.jsonl` beside it. From them the lead (and `inspect`, with the
//! same reader) learns what a claude teammate does not send in its frames: the model it runs,
//! what it used — every API message priced on its own by its own model and tier
//! (`protocol::pricing::Ledger`: assistant entries carry `message.usage`, with the 5-minute and
//! 1-hour cache writes apart in `usage.cache_creation` and the tier in `usage.speed`; one API
//! message can appear on several lines, so usage is kept per message id and counted once, the
//! largest count of each kind), its subagents' messages included — its tool calls, the turns it
//! started, the files its Write, Edit, MultiEdit and NotebookEdit calls wrote (a call whose
//! result is not an error), and — on clients that record the request's shape (2.1.332) — which
//! tools its model was offered — and until when it is rate- or usage-limited
//! (`store::claude_limit`; a real answer after the limit lifts it), and the frames for the lead
//! its client said it could not deliver ([`Undelivered`], `store::claude_undelivered`). Each read starts where the
//! last one ended, takes every complete line up to the end of each file (in bounded chunks) and
//! keeps a torn last line for the next read; a line that does not parse is skipped. Files are
//! opened without following links and never block.

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::claude_undelivered::undelivered;
pub use super::claude_undelivered::{Undelivered, UndeliveredKind};
use super::home::Home;
use crate::frames::ReportedUsage;
use crate::pricing::{Ledger, PriceTable, Tokens};

/// The most bytes one chunk of a read takes (a read takes chunks up to the end of the file).
const CHUNK_BYTES: u64 = 8 * 1024 * 1024;

/// The longest line kept while waiting for its end (longer ones are dropped whole).
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What the transcript says so far. Serialized as a whole when a relay sends a remote
/// teammate's facts to its lead (`teamlead-relay`'s `transcript` body).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct TranscriptFacts {
    /// Its tokens by kind (subagents' included), tool uses and turns.
    pub usage: ReportedUsage,
    /// Its usage by model, each message priced by its own model and tier.
    pub ledger: Ledger,
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
    /// When (epoch milliseconds, its `timestamp`) the newest turn began: the latest prompt of
    /// the teammate's own transcript (a message it took, the lead's or its first).
    pub last_turn_ms: Option<u64>,
}

/// How many undelivered frames the facts keep.
pub(crate) const UNDELIVERED_KEPT: usize = 20;

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

/// One API message as counted: its model, whether fast mode served it, its tokens (the
/// largest count of each kind seen on its lines) and what it cost.
#[derive(Debug, Clone)]
struct Counted {
    model: String,
    fast: bool,
    tokens: Tokens,
    micros: Option<f64>,
}

/// Where the reading of one file stands.
#[derive(Debug, Default)]
struct Tail {
    path: PathBuf,
    offset: u64,
    partial: Vec<u8>,
}

/// Reads one teammate's transcript and its subagents', a little more each time.
#[derive(Debug, Default)]
pub struct TranscriptMeter {
    session_id: String,
    prices: Arc<PriceTable>,
    main: Option<Tail>,
    /// The subagents' transcripts, by path.
    subagents: Vec<Tail>,
    /// Usage per API message id.
    per_message: HashMap<String, Counted>,
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

/// Which transcript a line comes from: the teammate's own, or one of its subagents'.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Main,
    Subagent,
}

impl TranscriptMeter {
    /// A meter of session `session_id`, pricing by `prices`.
    pub fn new(session_id: &str, prices: Arc<PriceTable>) -> TranscriptMeter {
        TranscriptMeter {
            session_id: session_id.to_string(),
            prices,
            ..TranscriptMeter::default()
        }
    }

    /// Reads what was added since the last read, to the end of every file; the facts so far
    /// (`None` while there is no transcript yet).
    pub fn read(&mut self, home: &Home) -> Option<TranscriptFacts> {
        if self.main.is_none() {
            let path = find(&home.root.join("projects"), &self.session_id)?;
            self.main = Some(Tail {
                path,
                ..Tail::default()
            });
        }
        let main_path = self.main.as_ref()?.path.clone();
        let mut main = self.main.take()?;
        let read = self.read_tail(&mut main, Source::Main);
        self.main = Some(main);
        match read {
            TailRead::Missing => return None,
            TailRead::Shrunk => {
                // Rewritten from the start: read everything again.
                *self = TranscriptMeter::new(&self.session_id, self.prices.clone());
                return self.read(home);
            }
            TailRead::Read => {}
        }
        let dir = main_path.with_extension("").join("subagents");
        for path in subagent_files(&dir) {
            if !self.subagents.iter().any(|t| t.path == path) {
                self.subagents.push(Tail {
                    path,
                    ..Tail::default()
                });
            }
        }
        let mut subagents = std::mem::take(&mut self.subagents);
        for tail in &mut subagents {
            if self.read_tail(tail, Source::Subagent) == TailRead::Shrunk {
                self.subagents = subagents;
                *self = TranscriptMeter::new(&self.session_id, self.prices.clone());
                return self.read(home);
            }
        }
        self.subagents = subagents;
        self.sum_up();
        Some(self.facts.clone())
    }

    /// Reads `tail`'s file from where it stands to its end, chunk by chunk.
    fn read_tail(&mut self, tail: &mut Tail, source: Source) -> TailRead {
        let Ok(Some(mut file)) = super::safe_file::open_regular(&tail.path) else {
            return TailRead::Missing;
        };
        let Ok(len) = file.metadata().map(|m| m.len()) else {
            return TailRead::Missing;
        };
        if len < tail.offset {
            return TailRead::Shrunk;
        }
        if len > tail.offset && file.seek(SeekFrom::Start(tail.offset)).is_err() {
            return TailRead::Missing;
        }
        while tail.offset < len {
            let mut bytes = Vec::new();
            let chunk = CHUNK_BYTES.min(len - tail.offset);
            match (&mut file).take(chunk).read_to_end(&mut bytes) {
                Ok(0) | Err(_) => break,
                Ok(n) => tail.offset += n as u64,
            }
            self.take(tail, &bytes, source);
        }
        TailRead::Read
    }

    /// Takes complete lines out of `bytes` (after what was left of the last read).
    fn take(&mut self, tail: &mut Tail, bytes: &[u8], source: Source) {
        let mut rest = bytes;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let mut line = std::mem::take(&mut tail.partial);
            line.extend_from_slice(&rest[..end]);
            rest = &rest[end + 1..];
            if let Ok(entry) = serde_json::from_slice::<Value>(&line) {
                match source {
                    Source::Main => self.entry(&entry),
                    Source::Subagent => self.subagent_entry(&entry),
                }
            }
        }
        if tail.partial.len() + rest.len() <= MAX_LINE_BYTES {
            tail.partial.extend_from_slice(rest);
        } else {
            tail.partial.clear();
        }
    }

    /// The totals, from what was counted.
    fn sum_up(&mut self) {
        let t = self.facts.ledger.tokens();
        self.facts.usage = ReportedUsage {
            input_tokens: t.prompt(),
            output_tokens: t.output,
            tool_uses: self.tool_ids.len() as u64,
            turns: self.turns,
            cache_read_tokens: t.cache_read,
            cache_write_tokens: t.cache_write_5m + t.cache_write_1h,
            cache_write_1h_tokens: t.cache_write_1h,
        };
    }

    /// A line of a subagent's transcript: only what its model used counts.
    fn subagent_entry(&mut self, entry: &Value) {
        if entry["type"] == "assistant" && entry["isApiErrorMessage"] != true {
            self.count(&entry["message"]);
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
            Some("user") if entry["message"]["content"].is_string() => {
                self.turns += 1;
                if let Some(at) = entry["timestamp"]
                    .as_str()
                    .and_then(crate::time::parse_iso_ms)
                {
                    self.facts.last_turn_ms =
                        Some(self.facts.last_turn_ms.map_or(at, |t| t.max(at)));
                }
            }
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
        self.count(message);
    }

    /// Counts an API message's usage once, by its own model and tier: a later line of the same
    /// message with larger counts replaces what its earlier lines counted.
    fn count(&mut self, message: &Value) {
        let (Some(id), usage) = (message["id"].as_str(), &message["usage"]) else {
            return;
        };
        if !usage.is_object() {
            return;
        }
        let model = message["model"]
            .as_str()
            .filter(|m| !m.starts_with('<'))
            .or(self.facts.model.as_deref())
            .unwrap_or("unknown")
            .to_string();
        let fast = usage["speed"] == "fast";
        let seen = message_tokens(usage);
        let tokens = match self.per_message.get(id) {
            Some(before) => {
                let b = before.tokens;
                let now = Tokens {
                    input: b.input.max(seen.input),
                    output: b.output.max(seen.output),
                    cache_write_5m: b.cache_write_5m.max(seen.cache_write_5m),
                    cache_write_1h: b.cache_write_1h.max(seen.cache_write_1h),
                    cache_read: b.cache_read.max(seen.cache_read),
                };
                if now == b && before.model == model && before.fast == fast {
                    return;
                }
                now
            }
            None => seen,
        };
        if let Some(before) = self.per_message.remove(id) {
            self.facts
                .ledger
                .remove(&before.model, &before.tokens, before.micros);
        }
        let micros = self.prices.message_micros(&model, fast, &tokens);
        self.facts.ledger.add(&model, &tokens, micros);
        self.per_message.insert(
            id.to_string(),
            Counted {
                model,
                fast,
                tokens,
                micros,
            },
        );
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

/// How reading one file went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TailRead {
    Read,
    /// Not there, or not a regular file.
    Missing,
    /// Shorter than what was read of it: rewritten.
    Shrunk,
}

/// One message's `usage` by kind: the cache writes split into 5-minute and 1-hour ones by
/// `cache_creation` (writes it does not account for are 5-minute ones, the API's default).
fn message_tokens(usage: &Value) -> Tokens {
    let n = |v: &Value| v.as_u64().unwrap_or(0);
    let writes = n(&usage["cache_creation_input_tokens"]);
    let split = &usage["cache_creation"];
    let one_hour = n(&split["ephemeral_1h_input_tokens"]).min(writes);
    Tokens {
        input: n(&usage["input_tokens"]),
        output: n(&usage["output_tokens"]),
        cache_write_5m: writes - one_hour,
        cache_write_1h: one_hour,
        cache_read: n(&usage["cache_read_input_tokens"]),
    }
}

/// The subagents' transcripts in `dir` (`agent-*.jsonl`, regular files), in name order.
fn subagent_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .filter(|d| {
            let name = d.file_name();
            let name = name.to_string_lossy();
            name.starts_with("agent-") && name.ends_with(".jsonl")
        })
        .filter(|d| d.file_type().is_ok_and(|t| t.is_file()))
        .map(|d| d.path())
        .collect();
    files.sort();
    files
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

    fn meter() -> TranscriptMeter {
        TranscriptMeter::new(SESSION, Arc::new(PriceTable::built_in()))
    }

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
        let mut meter = meter();
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
        use crate::pricing::dollars;
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
        let facts = meter().read(&home).unwrap();
        let u = facts.usage;
        assert_eq!(
            (u.cache_write_tokens, u.cache_read_tokens),
            (21_500, 20_000)
        );
        assert_eq!(u.input_tokens, 8 + 21_500 + 20_000);
        assert_eq!(u.output_tokens, 1_400);
        // Sonnet: 8 × $3 + 1,400 × $15 + 21,500 × $3.75 + 20,000 × $0.30 per million
        // = $0.000024 + $0.021 + $0.080625 + $0.006 = $0.107649.
        assert_eq!(facts.ledger.cost_micros(), Some(107_649));
        assert_eq!(dollars(107_649), "$0.11");
    }

    /// One assistant line: `usage` is the JSON of `message.usage`.
    fn answer(id: &str, model: &str, usage: &str) -> String {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"{model}\",\"content\":[],\"usage\":{usage}}}}}\n"
        )
    }

    /// A session that switches from Opus 5.5 to Sonnet 5.5 and back (the last answer in fast
    /// mode), writes to the 1-hour cache, and runs two subagents: one on Haiku 5.5 with a
    /// request over its 100K tier, one on a model without a price. Every message is priced by
    /// its own model and tier; the figures are worked out by hand below.
    #[test]
    fn each_message_is_priced_by_its_own_model_and_tier_subagents_included() {
        let tmp = tempfile::tempdir().unwrap();
        let home = Home::new(tmp.path());
        let path = transcript(&home);
        let mut text = String::new();
        // Opus 5.5, on two lines (the output grows): 1,000 in, 10,000 written for 5 min and
        // 20,000 for 1 h, 2,000 out = 1000×4 + 10000×5 + 20000×8 + 2000×20 = 254,000 µ$.
        let opus = |out: u64| {
            format!(
                r#"{{"input_tokens":1000,"cache_creation_input_tokens":30000,"cache_creation":{{"ephemeral_5m_input_tokens":10000,"ephemeral_1h_input_tokens":20000}},"output_tokens":{out}}}"#
            )
        };
        text += &answer("msg_1", "claude-opus-5-5", &opus(500));
        text += &answer("msg_1", "claude-opus-5-5", &opus(2_000));
        // Sonnet 5.5 after /model: 500 in, 2,000 written (no split: 5-minute), 30,000 read,
        // 1,000 out = 500×2 + 2000×2.5 + 30000×0.20 + 1000×10 = 22,000 µ$.
        text += &answer(
            "msg_2",
            "claude-sonnet-5-5",
            r#"{"input_tokens":500,"cache_creation_input_tokens":2000,"cache_read_input_tokens":30000,"output_tokens":1000}"#,
        );
        // Opus 5.5 in fast mode (×2): 100 in, 32,000 read, 400 out
        // = (100×4 + 32000×0.20) × 2 + 400×20 × 2 = 13,600 + 16,000 = 29,600 µ$.
        text += &answer(
            "msg_3",
            "claude-opus-5-5",
            r#"{"input_tokens":100,"cache_read_input_tokens":32000,"output_tokens":400,"speed":"fast"}"#,
        );
        append(&path, &text);
        let subagents = path.with_extension("").join("subagents");
        std::fs::create_dir_all(&subagents).unwrap();
        // Haiku 5.5: 5,000 in and 1,000 out under 100K = 5000×0.10 + 1000×0.50 = 1,000 µ$;
        // then 2,000 in, 120,000 read, 3,000 out: a 122,000-token prompt, every token at 5×
        // = (2000×0.10 + 120000×0.01) × 5 + 3000×0.50 × 5 = 7,000 + 7,500 = 14,500 µ$.
        append(
            &subagents.join("agent-a1.jsonl"),
            &[
                "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"look around\"}}\n"
                    .to_string(),
                answer(
                    "msg_s1",
                    "claude-haiku-5-5",
                    r#"{"input_tokens":5000,"output_tokens":1000}"#,
                ),
                answer(
                    "msg_s2",
                    "claude-haiku-5-5",
                    r#"{"input_tokens":2000,"cache_read_input_tokens":120000,"output_tokens":3000}"#,
                ),
            ]
            .concat(),
        );
        // A model without a price: counted, not priced.
        append(
            &subagents.join("agent-b2.jsonl"),
            &answer(
                "msg_s3",
                "fable-5-2",
                r#"{"input_tokens":10000,"output_tokens":1000}"#,
            ),
        );
        let mut meter = meter();
        let facts = meter.read(&home).unwrap();
        // 254,000 + 22,000 + 29,600 + 1,000 + 14,500 = 321,100 µ$.
        assert_eq!(facts.ledger.cost_micros(), Some(321_100));
        assert_eq!(crate::pricing::dollars(321_100), "$0.32");
        assert_eq!(facts.ledger.unpriced(), vec!["fable-5-2".to_string()]);
        let u = facts.usage;
        assert_eq!(u.output_tokens, 2_000 + 1_000 + 400 + 1_000 + 3_000 + 1_000);
        assert_eq!(u.cache_read_tokens, 30_000 + 32_000 + 120_000);
        assert_eq!(u.cache_write_tokens, 32_000);
        assert_eq!(u.cache_write_1h_tokens, 20_000);
        assert_eq!(u.input_tokens, 18_600 + 182_000 + 32_000);
        assert_eq!(u.turns, 0, "a subagent's prompt is not the teammate's turn");
        assert_eq!(facts.model.as_deref(), Some("claude-opus-5-5"));
        let opus = &facts.ledger.models[0];
        assert_eq!((opus.model.as_str(), opus.messages), ("claude-opus-5-5", 2));
        // A later subagent line is read by the next read.
        append(
            &subagents.join("agent-a1.jsonl"),
            &answer(
                "msg_s4",
                "claude-haiku-5-5",
                r#"{"input_tokens":1000,"output_tokens":0}"#,
            ),
        );
        let facts = meter.read(&home).unwrap();
        assert_eq!(facts.ledger.cost_micros(), Some(321_200));
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
        let mut meter = meter();
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
        let mut meter = meter();
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
        let mut meter = meter();
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
        assert_eq!(meter().read(&home), None);
        std::fs::remove_file(&path).unwrap();
        let c = std::ffi::CString::new(path.to_string_lossy().as_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(meter().read(&home), None);
    }
}
