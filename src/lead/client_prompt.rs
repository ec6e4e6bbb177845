//! Claude Code's own prompts in a teammate's pane: dialogs the client shows before it works
//! (the bypass-permissions warning, the folder-trust dialog, the API-key question, a notice
//! that waits for Enter) and that only a person at that pane can answer. The lead reads the
//! pane of a `claude` teammate that has not started its first turn
//! (`controller::client_prompts`) and asks [`client_prompt`] whether it waits on one.
//!
//! The class is recognised by what such prompts share on every client seen (2.1.45 and
//! 2.1.332, PROTOCOL.md 6), not by their sentences: the bottom of the pane is a key hint
//! (`Enter to confirm · Esc to cancel`, `Press Enter to continue`), above it a list of choices
//! with the cursor `❯` on one of them (numbered on 2.1.45, not on 2.1.332), and nothing of
//! the client's composer or status line below. The dialog's first line (after the rule above
//! it) is its title.

/// One prompt of the client, as its pane shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientPrompt {
    /// Its first line: `WARNING: Claude Code running in Bypass Permissions mode`.
    pub title: String,
    /// Its choices, in order, without numbers or marks: `No, exit`, `Yes, I accept`.
    pub choices: Vec<String>,
}

/// How many of a pane's last lines are read for a prompt.
pub const PROMPT_LINES: usize = 30;

/// The cursor marks a client puts before the selected choice.
const CURSORS: [char; 4] = ['❯', '›', '▶', '➤'];

/// Is `line` a key hint of a dialog (`Enter to confirm · Esc to cancel`, `Press Enter to
/// continue…`, `Esc to go back`)?
fn is_key_hint(line: &str) -> bool {
    let lower = line.trim().to_lowercase();
    [
        "enter to ",
        "press enter",
        "esc to ",
        "enter/esc",
        "↑/↓ to ",
    ]
    .iter()
    .any(|hint| lower.contains(hint))
}

/// Does `line` belong to the client's composer or status line (a pane at work or ready)?
fn is_composer(line: &str) -> bool {
    let lower = line.trim().to_lowercase();
    [
        "for shortcuts",
        "esc to interrupt",
        "shift+tab to cycle",
        "mode on",
    ]
    .iter()
    .any(|mark| lower.contains(mark))
}

/// Is `line` a horizontal rule (box drawing only)?
fn is_rule(line: &str) -> bool {
    let t = line.trim();
    t.chars().count() >= 8 && t.chars().all(|c| matches!(c, '─' | '━' | '═' | '╌' | '-'))
}

/// The text of a choice line: without the cursor, the number and a trailing check mark.
fn choice_text(line: &str) -> String {
    let t = line.trim_start();
    let t = t.strip_prefix(CURSORS).unwrap_or(t).trim_start();
    let t = t
        .split_once(". ")
        .filter(|(n, _)| !n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit()))
        .map_or(t, |(_, text)| text);
    t.trim_end_matches(['✔', '✓', ' ']).trim().to_string()
}

/// The indentation of `line` in characters.
fn indent(line: &str) -> usize {
    line.chars().take_while(|c| c.is_whitespace()).count()
}

/// The column where the text of a cursor line starts (after the cursor and its spaces).
fn text_column(line: &str) -> usize {
    let t = line.trim_start();
    let after = t.strip_prefix(CURSORS).unwrap_or(t);
    indent(line) + 1 + (after.chars().count() - after.trim_start().chars().count())
}

/// The prompt of the client the pane's last `lines` wait on, if any.
pub fn client_prompt(lines: &[String]) -> Option<ClientPrompt> {
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| !l.trim().is_empty())
        .collect();
    // The key hint is at the bottom: one of the last two lines, nothing of the composer
    // after it.
    let hint = (lines.len().saturating_sub(2)..lines.len())
        .rev()
        .find(|&i| is_key_hint(lines[i]))?;
    if lines[hint..].iter().any(|l| is_composer(l)) {
        return None;
    }
    // The dialog starts after the rule above the hint (or at the top of what was read).
    let top = lines[..hint]
        .iter()
        .rposition(|l| is_rule(l))
        .map_or(0, |r| r + 1);
    // The choices: the line under the cursor, and the lines around it at its text's column.
    let cursor = (top..hint)
        .rev()
        .find(|&i| lines[i].trim_start().starts_with(CURSORS));
    let (first, choices) = match cursor {
        Some(at) => {
            let column = text_column(lines[at]);
            let at_column = |i: usize| indent(lines[i]) == column;
            let mut first = at;
            while first > top && at_column(first - 1) {
                first -= 1;
            }
            let mut last = at;
            while last + 1 < hint && at_column(last + 1) {
                last += 1;
            }
            let choices: Vec<String> = (first..=last).map(|i| choice_text(lines[i])).collect();
            (first, choices)
        }
        None => (hint, Vec::new()),
    };
    let press_enter = lines[hint].to_lowercase().contains("press enter");
    if choices.len() < 2 && !press_enter {
        return None;
    }
    // The title: the dialog's first line (`Accessing workspace:` says what only with its
    // next line).
    let body: Vec<&str> = lines[top..first].iter().map(|l| l.trim()).collect();
    let mut title = body
        .first()
        .map_or_else(|| lines[hint].trim().to_string(), |t| (*t).to_string());
    if title.ends_with(':')
        && let Some(next) = body.get(1)
    {
        title = format!("{title} {next}");
    }
    Some(ClientPrompt {
        title: crate::protocol::inbox::clip(&title, 120),
        choices,
    })
}

/// The transcript note for `name` waiting on `prompt`.
pub fn prompt_note(name: &str, prompt: &ClientPrompt) -> String {
    let choices = if prompt.choices.is_empty() {
        String::new()
    } else {
        format!(" ({})", prompt.choices.join(" / "))
    };
    format!(
        "{name} waits on Claude Code's own prompt in its pane, not on its work: \"{}\"{choices}. \
         teamlead does not answer it for you: jump to its pane (ctrl+n, or Enter on {name} in \
         the teams dialog) and choose there.",
        prompt.title
    )
}

/// What Claude Code's pane shows while a tool call waits for the lead's answer to its
/// permission request (2.1.45 and 2.1.332 alike: `✻ Waiting for team lead approval`, then
/// `Permission request sent to team "…" leader`). The client shows it once it has tried to
/// write the request, whether or not the write reached the lead's inbox.
const WAITING_FOR_LEAD: &str = "Waiting for team lead approval";

/// Does the pane show its client waiting for the lead's approval of a request?
pub fn waits_for_lead_approval(lines: &[String]) -> bool {
    lines.iter().any(|l| l.contains(WAITING_FOR_LEAD))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn screen(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    const RULE: &str = "────────────────────────────────────────────────────────────────";

    /// Screens captured from the real clients (2.1.45 `old`, 2.1.332 `new`) in a tmux pane.
    fn bypass(new: bool) -> Vec<String> {
        let pad = if new { "  " } else { " " };
        let (a, b) = if new {
            ("❯ No, exit", "  Yes, I accept")
        } else {
            ("❯ 1. No, exit", "  2. Yes, I accept")
        };
        screen(&format!(
            "{RULE}\n{pad}WARNING: Claude Code running in Bypass Permissions mode\n\n{pad}In Bypass \
             Permissions mode, Claude Code will not ask for your approval before running \
             potentially dangerous commands.\n{pad}https://code.claude.com/docs/en/security\n\n\
             {pad}{a}\n{pad}{b}\n\n{pad}Enter to confirm · Esc to cancel\n\n\n"
        ))
    }

    #[test]
    fn the_bypass_warning_of_both_clients() {
        for new in [false, true] {
            assert_eq!(
                client_prompt(&bypass(new)),
                Some(ClientPrompt {
                    title: "WARNING: Claude Code running in Bypass Permissions mode".into(),
                    choices: vec!["No, exit".into(), "Yes, I accept".into()],
                }),
                "new: {new}"
            );
        }
    }

    #[test]
    fn the_trust_dialog_and_the_api_key_question() {
        let trust = screen(&format!(
            "{RULE}\n Accessing workspace:\n\n /home/me/work\n\n Quick safety check: Is this a \
             project you created or one you trust?\n Security guide\n\n ❯ No, exit\n   Yes, I \
             trust this folder\n\n Enter to confirm · Esc to cancel"
        ));
        let got = client_prompt(&trust).expect("the trust dialog");
        assert_eq!(got.title, "Accessing workspace: /home/me/work");
        assert_eq!(got.choices, ["No, exit", "Yes, I trust this folder"]);
        let key = screen(&format!(
            "{RULE}\n Detected a custom API key in your environment\n\n ANTHROPIC_API_KEY: \
             sk-ant-...0123456789abcdefghij\n\n Do you want to use this API key?\n\n   1. Yes\n \
             ❯ 2. No (recommended) ✔\n\n Enter to confirm · Esc to cancel"
        ));
        let got = client_prompt(&key).expect("the API key question");
        assert_eq!(got.title, "Detected a custom API key in your environment");
        assert_eq!(got.choices, ["Yes", "No (recommended)"]);
        let new_key = screen(&format!(
            "{RULE}\n  Detected a custom API key in your environment\n  Do you want to use this \
             API key?\n    Yes\n  ❯ No (recommended)\n  Enter to confirm · Esc to cancel"
        ));
        assert_eq!(
            client_prompt(&new_key).map(|p| p.choices),
            Some(vec!["Yes".to_string(), "No (recommended)".to_string()])
        );
    }

    #[test]
    fn worded_otherwise_it_is_still_a_prompt() {
        let drifted = screen(&format!(
            "{RULE}\n  Heads up: a new terms of service\n  Read them first.\n  › Accept\n    \
             Decline\n  Enter to select · Esc to go back"
        ));
        assert_eq!(
            client_prompt(&drifted),
            Some(ClientPrompt {
                title: "Heads up: a new terms of service".into(),
                choices: vec!["Accept".into(), "Decline".into()],
            })
        );
        let notice =
            screen("  Claude Code has been updated.\n  What's new: …\n  Press Enter to continue…");
        assert_eq!(
            client_prompt(&notice).map(|p| p.title),
            Some("Claude Code has been updated.".to_string())
        );
    }

    #[test]
    fn a_client_at_work_or_ready_waits_on_no_prompt() {
        let ready = screen(&format!(
            " ▐▛███▛█   Claude Code v2.1.332\n{RULE}\n❯ \n{RULE}\n  ⏸ manual mode on · ? for \
             shortcuts · ← for agents"
        ));
        assert_eq!(client_prompt(&ready), None);
        let old_ready = screen(&format!(
            "{RULE}\n❯ Try \"how do I log an error?\"\n{RULE}\n  ? for shortcuts"
        ));
        assert_eq!(client_prompt(&old_ready), None);
        let working = screen(&format!(
            "● Bash(cargo test)\n✻ Thinking… (esc to interrupt)\n{RULE}\n❯ \n{RULE}\n  \
             ⏵⏵ accept edits on (shift+tab to cycle)"
        ));
        assert_eq!(client_prompt(&working), None);
        // A refusal that ended the client is no prompt: the pane shows no choice.
        let refused = screen(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
        );
        assert_eq!(client_prompt(&refused), None);
        // A list in the model's answer with a hint far above the bottom is none either.
        let answer = screen(&format!(
            "● Options:\n  ❯ 1. first\n    2. second\n  Press Enter to continue\n● Done.\n{RULE}\n❯ \n{RULE}\n  ? for shortcuts"
        ));
        assert_eq!(client_prompt(&answer), None);
        assert_eq!(client_prompt(&[]), None);
    }
}
