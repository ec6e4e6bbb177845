//! Shell commands as permission rules see them, with no I/O: a command split into its simple
//! commands at `&&`, `||`, `;`, `|`, `&` and newlines (outside quotes), whether it has a
//! command substitution, and the Bash rule contents (`cargo test:*`) that would allow it next
//! time. Used by the teammate's gate (its suggestions) and by the lead's dialog (a rule for a
//! request that came without a usable suggestion). A suggestion is built only from plain words
//! and checked with [`super::valid_rule`], so nothing like `Bash({:*)` is ever offered.

/// A command split into its simple commands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedCommand {
    /// The simple commands, trimmed, empty ones dropped.
    pub parts: Vec<String>,
    /// `$(…)` or a backtick appears outside single quotes: prefix rules never match such a
    /// command (what runs cannot be read from its text), only an exact rule does.
    pub has_substitution: bool,
}

/// Splits `command` at the shell's list and pipe operators, outside quotes.
pub fn parse(command: &str) -> ParsedCommand {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut has_substitution = false;
    let mut chars = command.chars().peekable();
    let mut single = false;
    let mut double = false;
    while let Some(c) = chars.next() {
        if single {
            current.push(c);
            if c == '\'' {
                single = false;
            }
            continue;
        }
        match c {
            '\\' => {
                current.push(c);
                if let Some(next) = chars.next() {
                    current.push(next);
                }
            }
            '\'' if !double => {
                single = true;
                current.push(c);
            }
            '"' => {
                double = !double;
                current.push(c);
            }
            '`' => {
                has_substitution = true;
                current.push(c);
            }
            '$' if chars.peek() == Some(&'(') => {
                has_substitution = true;
                current.push(c);
            }
            '<' | '>' if chars.peek() == Some(&'(') && !double => {
                // Process substitution `<(…)` / `>(…)`.
                has_substitution = true;
                current.push(c);
            }
            '&' | '|' | ';' | '\n' if !double => {
                // `&&`, `||`, `|&` and `;;` are one operator; `>&`/`&>` are redirections.
                if c == '&' && (current.ends_with('>') || chars.peek() == Some(&'>')) {
                    current.push(c);
                    continue;
                }
                if matches!(chars.peek(), Some('&') | Some('|') | Some(';')) && c != '\n' {
                    chars.next();
                }
                push_part(&mut parts, &mut current);
            }
            _ => current.push(c),
        }
    }
    push_part(&mut parts, &mut current);
    ParsedCommand {
        parts,
        has_substitution,
    }
}

fn push_part(parts: &mut Vec<String>, current: &mut String) {
    let part = current.trim();
    if !part.is_empty() {
        parts.push(part.to_string());
    }
    current.clear();
}

/// Tools whose second word is a subcommand worth keeping in a suggested prefix
/// (`cargo test:*`, `git status:*`), rather than allowing the whole tool.
const SUBCOMMAND_TOOLS: [&str; 24] = [
    "apt",
    "apt-get",
    "brew",
    "bun",
    "cargo",
    "deno",
    "docker",
    "gh",
    "git",
    "go",
    "kubectl",
    "make",
    "npm",
    "npx",
    "pip",
    "pip3",
    "pnpm",
    "poetry",
    "python",
    "python3",
    "rustup",
    "systemctl",
    "uv",
    "yarn",
];

/// A word a prefix rule can be made of: a command name or a subcommand (`cargo`, `./run.sh`,
/// `apt-get`, `python3`), never an operator, a group (`{`, `(`), an assignment (`FOO=1`), a
/// quote, a variable or a glob.
fn command_word(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word.chars().any(|c| c.is_ascii_alphanumeric())
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '+'))
}

/// The prefix a rule for one simple command would use: the first word, plus the second when
/// the first is a tool with subcommands and the second is a plain word. `None` when the first
/// word is not a plain command name (`{ a; }`, `(cd x`, `FOO=1 make`, `"$X"`).
pub fn suggested_prefix(part: &str) -> Option<String> {
    let mut words = part.split_whitespace();
    let first = words.next()?;
    if !command_word(first) {
        return None;
    }
    let plain = |w: &str| {
        !w.starts_with('-')
            && w.chars().any(|c| c.is_ascii_alphabetic())
            && w.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    };
    match words.next() {
        Some(second) if SUBCOMMAND_TOOLS.contains(&first) && plain(second) => {
            Some(format!("{first} {second}"))
        }
        _ => Some(first.to_string()),
    }
}

/// The rule contents that, added as allow rules, cover `command` next time: one `prefix:*` per
/// distinct simple command; the exact command when it has a substitution or a simple command
/// has no plain prefix; nothing when even the exact command would not make a valid rule (a
/// multi-line command, control characters, unbalanced brackets).
pub fn suggested_rule_contents(command: &str) -> Vec<String> {
    let parsed = parse(command);
    let exact = || {
        let text = command.trim();
        if super::valid_rule_content(text) {
            vec![text.to_string()]
        } else {
            Vec::new()
        }
    };
    if parsed.has_substitution || parsed.parts.is_empty() {
        return exact();
    }
    let mut out: Vec<String> = Vec::new();
    for part in &parsed.parts {
        let Some(prefix) = suggested_prefix(part) else {
            return exact();
        };
        let rule = format!("{prefix}:*");
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_keep_subcommands_and_refuse_what_is_not_a_command_word() {
        assert_eq!(
            suggested_prefix("cargo test -p x").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            suggested_prefix("git status").as_deref(),
            Some("git status")
        );
        assert_eq!(
            suggested_prefix("cargo --version").as_deref(),
            Some("cargo")
        );
        assert_eq!(
            suggested_prefix("rm -rf ~/important").as_deref(),
            Some("rm")
        );
        assert_eq!(
            suggested_prefix("./run.sh now").as_deref(),
            Some("./run.sh")
        );
        for odd in [
            "{ make; }",
            "(cd x",
            "FOO=1 make",
            "\"$X\" y",
            "$HOME/bin/x",
            "!",
            "*",
        ] {
            assert_eq!(suggested_prefix(odd), None, "{odd}");
        }
    }

    #[test]
    fn groups_and_subshells_fall_back_to_the_exact_command_or_nothing() {
        // What once produced `Bash({:*)`.
        assert_eq!(
            suggested_rule_contents("{ cargo build; } 2>&1"),
            vec!["{ cargo build; } 2>&1"]
        );
        assert_eq!(
            suggested_rule_contents("(cd sub && make)"),
            vec!["(cd sub && make)"]
        );
        // Unbalanced or multi-line: no rule at all.
        assert!(suggested_rule_contents("(echo x").is_empty());
        assert!(suggested_rule_contents("echo $(date)\nrm x").is_empty());
        assert_eq!(
            suggested_rule_contents("cargo test && git status"),
            vec!["cargo test:*", "git status:*"]
        );
    }
}
