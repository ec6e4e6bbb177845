//! The Bash tool: `sh -c <command>` in the teammate's working directory (through the shell
//! engine's runner: its own process group, killed with the turn or at the timeout), after the
//! gate allows it. The model gets stdout and stderr interleaved (the start and the end when
//! long) and the exit code; the transcript shows the first lines. The model services' key
//! variables are unset for the command, and the key is scrubbed from what it prints.

use std::collections::VecDeque;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Permit, TurnState, parse, permit, scrub_secrets, spec};
use crate::agent::events::LogKind;
use crate::agent::gate::ToolUse;
use crate::agent::llm::agent_loop::{Call, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::teammate::Teammate;
use crate::agent::shell::exec::{self, ExecStatus};

/// Output lines of one command shown in the transcript.
const SHOWN_LINES: usize = 30;
/// Characters kept from the start of the output.
const HEAD_CHARS: usize = 8_000;
/// Characters kept from the end of the output.
const TAIL_CHARS: usize = 16_000;
const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Unset before every command: the model never reads the teammate's own credentials.
const UNSET_KEYS: &str = "unset ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN OPENAI_API_KEY; ";
const MAX_TIMEOUT_MS: u64 = 600_000;

pub fn specs() -> Vec<ToolSpec> {
    vec![spec(
        "Bash",
        "Runs a shell command with `sh -c` in your working directory and returns its output \
         (stdout and stderr) and exit code. Use it to build, test, run git and other programs. \
         Prefer Read, Glob and Grep to look at files. The team lead may have to approve the \
         command first; the call waits for that.",
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "The command to run"},
                "description": {"type": "string", "description": "What it does, in 5-10 words (shown to the team lead)"},
                "timeout": {"type": "integer", "description": "Milliseconds before it is killed (default 120000, at most 600000)"}
            },
            "required": ["command"]
        }),
    )]
}

#[derive(Debug, Deserialize)]
struct BashInput {
    command: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    timeout: Option<u64>,
}

/// The start and the end of a command's output.
#[derive(Debug, Default)]
struct Collected {
    head: String,
    tail: VecDeque<String>,
    tail_chars: usize,
    dropped_lines: usize,
}

impl Collected {
    fn push(&mut self, line: &str) {
        if self.tail.is_empty() && self.head.len() + line.len() < HEAD_CHARS {
            self.head.push_str(line);
            self.head.push('\n');
            return;
        }
        self.tail_chars += line.len() + 1;
        self.tail.push_back(line.to_string());
        while self.tail_chars > TAIL_CHARS && self.tail.len() > 1 {
            if let Some(gone) = self.tail.pop_front() {
                self.tail_chars -= gone.len() + 1;
                self.dropped_lines += 1;
            }
        }
    }

    fn text(&self) -> String {
        let mut text = self.head.clone();
        if self.dropped_lines > 0 {
            text.push_str(&format!("… [{} lines left out] …\n", self.dropped_lines));
        }
        for line in &self.tail {
            text.push_str(line);
            text.push('\n');
        }
        text.trim_end().to_string()
    }
}

pub(super) async fn bash(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: BashInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    let tool = ToolUse::Bash {
        command: input.command.clone(),
        description: input.description.clone().unwrap_or_default(),
    };
    let mut command = input.command;
    match permit(tm, &tool, call, state, cancel).await {
        Permit::Go { updated_input } => {
            if let Some(c) = updated_input
                .as_ref()
                .and_then(|v| v.get("command"))
                .and_then(|c| c.as_str())
            {
                command = c.to_string();
                tm.events.log(
                    LogKind::Note,
                    format!("team-lead changed the command: {command}"),
                );
            }
        }
        Permit::Refused(out) => return out,
        Permit::Interrupted => return ToolOutput::interrupted(),
    }

    let timeout = Duration::from_millis(
        input
            .timeout
            .unwrap_or(DEFAULT_TIMEOUT_MS)
            .clamp(1_000, MAX_TIMEOUT_MS),
    );
    let run_token = cancel.child_token();
    let timer = {
        let token = run_token.clone();
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            token.cancel();
        })
    };
    let events = tm.events.clone();
    let mut shown = 0usize;
    let mut collected = Collected::default();
    let scrubbed = |line: &str| scrub_secrets(state, line);
    let run = format!("{UNSET_KEYS}{command}");
    let outcome = exec::run(&run, &tm.config.cwd, &run_token, |line| {
        let line = scrubbed(line);
        if shown < SHOWN_LINES {
            events.log(LogKind::Output, line.clone());
        }
        shown += 1;
        collected.push(&line);
    })
    .await;
    timer.abort();
    if shown > SHOWN_LINES {
        tm.events.log(
            LogKind::Note,
            format!("… {} more output line(s) not shown", shown - SHOWN_LINES),
        );
    }
    let text = collected.text();
    match outcome.status {
        ExecStatus::Interrupted if cancel.is_cancelled() => ToolOutput::interrupted(),
        ExecStatus::Interrupted => ToolOutput::error(format!(
            "{text}\n\nThe command timed out after {} ms and was killed.",
            timeout.as_millis()
        )),
        ExecStatus::Exited(0) if text.is_empty() => ToolOutput::ok("(no output, exit code 0)"),
        ExecStatus::Exited(0) => ToolOutput::ok(text),
        status => {
            let label = match &status {
                ExecStatus::Exited(code) => format!("Exit code {code}"),
                other => other.label(),
            };
            if text.is_empty() {
                ToolOutput::error(label)
            } else {
                ToolOutput::error(format!("{text}\n\n{label}"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collected_output_keeps_start_and_end() {
        let mut c = Collected::default();
        for i in 0..5000 {
            c.push(&format!("line {i:05} {}", "x".repeat(20)));
        }
        let text = c.text();
        assert!(text.starts_with("line 00000"));
        assert!(text.ends_with(&format!("line 04999 {}", "x".repeat(20))));
        assert!(text.contains("lines left out"));
        assert!(text.len() < HEAD_CHARS + TAIL_CHARS + 100);
    }
}
