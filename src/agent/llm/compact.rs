//! Keeping a long-lived conversation inside its context budget. Tokens are estimated as
//! characters / 4 (or the last count the service reported, when larger). Over budget, the
//! exchanges before the last `keep_exchanges` (an exchange is a prompt and everything its turn
//! did, so tool calls and their results stay together) are replaced by one summary message: a
//! dedicated request asks the model for the summary, and when that fails a shortened
//! transcript stands in. If the kept part alone is still over budget, long tool results in all
//! but the last messages are cut.

use std::future::Future;

use super::conversation::{Block, Message, ModelRequest, Role, ToolSpec};
use crate::protocol::inbox::clip;

/// Characters of older tool results kept when the kept exchanges are still too large.
const CLIPPED_RESULT_CHARS: usize = 2_000;
/// Characters of transcript sent to be summarized (the most recent part).
const SUMMARY_INPUT_CHARS: usize = 200_000;
/// Characters of the stand-in transcript when no summary could be made.
const FALLBACK_CHARS: usize = 6_000;

/// Estimated tokens of a request: all its characters / 4.
pub fn estimate_tokens(system: &str, tools: &[ToolSpec], messages: &[Message]) -> usize {
    let tools: usize = tools
        .iter()
        .map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len())
        .sum();
    let messages: usize = messages.iter().map(Message::chars).sum();
    (system.len() + tools + messages) / 4 + 1
}

/// The text a summary message starts with.
const SUMMARY_START: &str = "<conversation-summary>";

/// A message made by [`summary_message`].
pub fn is_summary(message: &Message) -> bool {
    message.is_prompt() && message.text().starts_with(SUMMARY_START)
}

/// The index of the first message kept: the start of the `keep`-th exchange from the end (a
/// summary of earlier compactions is not an exchange). `None` when there are no more than
/// `keep` exchanges (nothing older to summarize).
pub fn keep_from(messages: &[Message], keep: usize) -> Option<usize> {
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.is_prompt() && !is_summary(m))
        .map(|(i, _)| i)
        .collect();
    let keep = keep.max(1);
    if starts.len() <= keep {
        return None;
    }
    let index = starts[starts.len() - keep];
    (index > 0).then_some(index)
}

/// The messages as readable text, each entry cut to `entry_chars`.
pub fn transcript(messages: &[Message], entry_chars: usize) -> String {
    let mut lines = Vec::new();
    for m in messages {
        for block in &m.content {
            let line = match (m.role, block) {
                (Role::User, Block::Text(t)) => {
                    format!("[message to you]\n{}", clip(t, entry_chars))
                }
                (Role::Assistant, Block::Text(t)) => format!("[you]\n{}", clip(t, entry_chars)),
                (_, Block::ToolUse { name, input, .. }) => {
                    format!(
                        "[you called {name}] {}",
                        clip(&input.to_string(), entry_chars)
                    )
                }
                (
                    _,
                    Block::ToolResult {
                        content, is_error, ..
                    },
                ) => format!(
                    "[{}] {}",
                    if *is_error {
                        "tool error"
                    } else {
                        "tool result"
                    },
                    clip(content, entry_chars)
                ),
            };
            lines.push(line);
        }
    }
    lines.join("\n\n")
}

/// The most recent `max` characters of `text`, marked when cut.
fn recent(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max {
        return text.to_string();
    }
    let kept: String = text.chars().skip(count - max).collect();
    format!("[earlier part left out]\n…{kept}")
}

/// The request that asks the model for a summary of `older`.
pub fn summary_request(name: &str, older: &[Message]) -> ModelRequest {
    let system = format!(
        "You summarize the work so far of {name}, a member of an agent team, so that it can go \
on without the full history. Write plain text, at most about 500 words."
    );
    let body = format!(
        "Summarize this conversation. Keep: the tasks and their state (ids), decisions made, \
files changed, commands run and their results, what was promised to whom, and open questions. \
Leave out greetings and repetition.\n\n<transcript>\n{}\n</transcript>",
        recent(&transcript(older, 2_000), SUMMARY_INPUT_CHARS)
    );
    ModelRequest {
        system,
        messages: vec![Message::user(body)],
        tools: Vec::new(),
    }
}

/// The stand-in when no summary could be made: a shortened transcript.
pub fn fallback_summary(older: &[Message]) -> String {
    format!(
        "(No summary could be made; a shortened transcript of the earlier conversation follows.)\n{}",
        recent(&transcript(older, 200), FALLBACK_CHARS)
    )
}

/// The message that stands for the compacted part.
pub fn summary_message(summary: &str) -> Message {
    Message::user(format!(
        "{SUMMARY_START}\n{}\n</conversation-summary>\nThe conversation before this point \
was replaced by the summary above to save space.",
        summary.trim()
    ))
}

/// Cuts tool results longer than `max` in every message but the last `spare`.
pub fn clip_old_results(messages: &mut [Message], spare: usize, max: usize) -> usize {
    let end = messages.len().saturating_sub(spare);
    let mut cut = 0;
    for m in &mut messages[..end] {
        for block in &mut m.content {
            if let Block::ToolResult { content, .. } = block
                && content.chars().count() > max
            {
                let kept: String = content.chars().take(max).collect();
                *content = format!("{kept}\n… [cut when the conversation was compacted]");
                cut += 1;
            }
        }
    }
    cut
}

/// What a compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    /// Messages replaced by the summary.
    pub summarized: usize,
    /// The model wrote the summary (else the shortened transcript stands in).
    pub by_model: bool,
    /// Tool results cut afterwards.
    pub clipped_results: usize,
    pub tokens_before: usize,
    pub tokens_after: usize,
}

/// Compacts `messages` when `current` (the estimated tokens) is over `max_tokens`: the part
/// before the last `keep` exchanges becomes a summary from `summarize` (or the fallback), then
/// long old tool results are cut if `estimate` still says too much. `None` when under budget.
pub async fn compact<F, Fut>(
    messages: &mut Vec<Message>,
    name: &str,
    current: usize,
    max_tokens: usize,
    keep: usize,
    estimate: impl Fn(&[Message]) -> usize,
    summarize: F,
) -> Option<Compaction>
where
    F: FnOnce(ModelRequest) -> Fut,
    Fut: Future<Output = Result<String, String>>,
{
    if current <= max_tokens {
        return None;
    }
    let mut summarized = 0;
    let mut by_model = false;
    if let Some(index) = keep_from(messages, keep) {
        let older = &messages[..index];
        let summary = match summarize(summary_request(name, older)).await {
            Ok(text) if !text.trim().is_empty() => {
                by_model = true;
                text
            }
            _ => fallback_summary(older),
        };
        let mut kept = vec![summary_message(&summary)];
        kept.extend_from_slice(&messages[index..]);
        summarized = index;
        *messages = kept;
    }
    let mut clipped_results = 0;
    if estimate(messages) > max_tokens {
        clipped_results = clip_old_results(messages, 2, CLIPPED_RESULT_CHARS);
    }
    if summarized == 0 && clipped_results == 0 {
        return None;
    }
    Some(Compaction {
        summarized,
        by_model,
        clipped_results,
        tokens_before: current,
        tokens_after: estimate(messages),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `n` exchanges: a prompt, a tool call with a big result, a final answer.
    fn history(n: usize) -> Vec<Message> {
        let mut out = Vec::new();
        for i in 0..n {
            out.push(Message::user(format!("prompt {i}")));
            out.push(Message::assistant(vec![
                Block::Text(format!("working on {i}")),
                Block::ToolUse {
                    id: format!("toolu_{i}"),
                    name: "Bash".into(),
                    input: json!({"command": format!("make step{i}")}),
                },
            ]));
            out.push(Message {
                role: Role::User,
                content: vec![Block::ToolResult {
                    tool_use_id: format!("toolu_{i}"),
                    content: format!("output {i} {}", "x".repeat(4000)),
                    is_error: false,
                }],
            });
            out.push(Message::assistant(vec![Block::Text(format!("done {i}"))]));
        }
        out
    }

    fn estimate(m: &[Message]) -> usize {
        estimate_tokens("", &[], m)
    }

    /// Every tool call has its result right after it.
    fn pairs_intact(messages: &[Message]) -> bool {
        messages.iter().enumerate().all(|(i, m)| {
            m.tool_uses().iter().all(|(id, _, _)| {
                messages.get(i + 1).is_some_and(|next| {
                    next.content.iter().any(
                        |b| matches!(b, Block::ToolResult { tool_use_id, .. } if tool_use_id == id),
                    )
                })
            })
        })
    }

    #[tokio::test]
    async fn under_budget_nothing_changes() {
        let mut messages = history(3);
        let before = messages.clone();
        let current = estimate(&messages);
        let done = compact(
            &mut messages,
            "b",
            current,
            current + 1,
            2,
            estimate,
            |_| async { Ok::<_, String>("never".to_string()) },
        )
        .await;
        assert!(done.is_none());
        assert_eq!(messages, before);
    }

    #[tokio::test]
    async fn older_exchanges_become_the_model_summary() {
        let mut messages = history(6);
        let kept_tail = messages[16..].to_vec();
        let current = estimate(&messages);
        let mut asked = None;
        let done = compact(
            &mut messages,
            "builder",
            current,
            3_000,
            2,
            estimate,
            |req| {
                asked = Some(req);
                async { Ok::<_, String>("SUMMARY of exchanges 0-3".to_string()) }
            },
        )
        .await
        .expect("compacted");
        assert_eq!(done.summarized, 16);
        assert!(done.by_model);
        assert!(done.tokens_after < done.tokens_before);
        assert!(messages[0].text().contains("SUMMARY of exchanges 0-3"));
        assert!(messages[0].text().starts_with("<conversation-summary>"));
        assert_eq!(&messages[1..], &kept_tail[..]);
        assert!(pairs_intact(&messages));
        let request = asked.expect("a summary request");
        assert!(request.tools.is_empty());
        let body = request.messages[0].text();
        assert!(body.contains("prompt 0") && body.contains("[you called Bash]"));
        assert!(
            !body.contains("prompt 4"),
            "kept exchanges are not summarized"
        );
    }

    #[tokio::test]
    async fn a_failed_summary_falls_back_to_a_short_transcript_and_results_are_cut() {
        let mut messages = history(5);
        let current = estimate(&messages);
        let done = compact(
            &mut messages,
            "builder",
            current,
            500,
            2,
            estimate,
            |_| async { Err::<String, _>("HTTP 529".to_string()) },
        )
        .await
        .expect("compacted");
        assert!(!done.by_model);
        let summary = messages[0].text();
        assert!(summary.contains("No summary could be made"));
        assert!(summary.contains("prompt 2"));
        assert!(summary.len() < FALLBACK_CHARS + 400);
        // Still over 500 tokens: the older kept result was cut, the last ones were not.
        assert_eq!(done.clipped_results, 1);
        assert!(pairs_intact(&messages));
        let last_result = &messages[messages.len() - 2];
        assert!(
            matches!(&last_result.content[0], Block::ToolResult { content, .. } if content.len() > 4000)
        );
    }

    #[test]
    fn keep_from_counts_prompts_only() {
        let messages = history(3);
        assert_eq!(keep_from(&messages, 1), Some(8));
        assert_eq!(keep_from(&messages, 3), None);
        assert_eq!(keep_from(&messages, 0), Some(8));
        // A summary alone before the kept exchange is not summarized again.
        let mut compacted = vec![summary_message("earlier")];
        compacted.extend_from_slice(&messages[8..]);
        assert!(is_summary(&compacted[0]));
        assert_eq!(keep_from(&compacted, 1), None);
    }
}
