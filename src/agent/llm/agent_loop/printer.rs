//! The one printer of a streaming answer: text is held until a whole piece is there (a line
//! for a teammate's transcript, a paragraph for the lead's), then shown through the loop host with
//! the keys scrubbed out; a tool call or a retry first shows what is pending; retries and
//! rate-limit pauses become [`Notice`]s (and retries are counted).

use std::time::Duration;

use super::LoopHost;
use crate::agent::llm::compact::Compaction;
use crate::agent::llm::config::LlmConfig;
use crate::agent::llm::conversation::StreamUpdate;

/// Where streamed text is cut before it is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// At the last line break (a teammate's transcript shows lines).
    Lines,
    /// At the last blank line (the lead's transcript shows paragraphs).
    Paragraphs,
}

impl Cut {
    /// The separator and its length.
    fn separator(self) -> &'static str {
        match self {
            Cut::Lines => "\n",
            Cut::Paragraphs => "\n\n",
        }
    }
}

/// Something worth a line besides the answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An attempt failed; another follows after `delay` (the error's text holds no key).
    Retrying {
        attempt: u32,
        delay: Duration,
        error: String,
    },
    /// The service rate-limited this endpoint and key (this session or another one of the
    /// team): the next request waits `wait`.
    RateLimited { wait: Duration },
    /// The answer was cut at `max_tokens`.
    CutAtMaxTokens,
    /// Older turns were replaced by a summary.
    Compacted(Compaction),
}

impl Notice {
    /// Its line.
    pub fn line(&self) -> String {
        match self {
            Notice::Retrying {
                attempt,
                delay,
                error,
            } => format!(
                "{error}; trying again in {:.1} s (attempt {attempt})",
                delay.as_secs_f64()
            ),
            Notice::RateLimited { wait } => format!(
                "rate-limited by the model service: waiting {:.1} s with everyone using the same key",
                wait.as_secs_f64()
            ),
            Notice::CutAtMaxTokens => "the answer was cut at max_tokens".to_string(),
            Notice::Compacted(done) => format!(
                "compacted the conversation: {} older message(s) → {} summary, ~{} → ~{} tokens",
                done.summarized,
                if done.by_model {
                    "a"
                } else {
                    "a shortened-transcript"
                },
                done.tokens_before,
                done.tokens_after
            ),
        }
    }

    /// Shown as a warning (else as a note).
    pub fn is_warning(&self) -> bool {
        !matches!(self, Notice::Compacted(_))
    }
}

/// Turns stream updates into pieces of text and notices for a loop host.
pub struct Printer<'a, E: LoopHost> {
    host: &'a mut E,
    config: &'a LlmConfig,
    cut: Cut,
    pending: String,
}

impl<'a, E: LoopHost> Printer<'a, E> {
    pub fn new(host: &'a mut E, config: &'a LlmConfig) -> Printer<'a, E> {
        let cut = host.cut();
        Printer {
            host,
            config,
            cut,
            pending: String::new(),
        }
    }

    pub fn update(&mut self, update: StreamUpdate) {
        match update {
            StreamUpdate::Text(piece) => {
                self.pending.push_str(&piece);
                let separator = self.cut.separator();
                if let Some(end) = self.pending.rfind(separator) {
                    let done = self.pending[..end].to_string();
                    self.pending = self.pending[end + separator.len()..].to_string();
                    self.show(&done);
                }
            }
            StreamUpdate::ToolCall { .. } => self.flush(),
            StreamUpdate::Retrying {
                attempt,
                delay,
                error,
            } => {
                self.flush();
                self.host.usage().update(|u| u.retries += 1);
                self.host.show_notice(Notice::Retrying {
                    attempt,
                    delay,
                    error: self.config.scrub(&error),
                });
            }
            StreamUpdate::RateLimited { wait } => {
                self.flush();
                self.host.show_notice(Notice::RateLimited { wait });
            }
        }
    }

    /// Shows the text not yet shown (the end of an answer, or before a retry).
    pub fn flush(&mut self) {
        let rest = std::mem::take(&mut self.pending);
        self.show(&rest);
    }

    fn show(&mut self, text: &str) {
        let text = self.config.scrub(text.trim_end());
        let text = text.trim_start_matches('\n');
        if !text.trim().is_empty() {
            self.host.show_text(text.to_string());
        }
    }
}
