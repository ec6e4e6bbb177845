//! Reading a shell command the way permission rules need it: split into its simple commands at
//! `&&`, `||`, `;`, `|`, `&` and newlines (outside quotes), notice command substitution, match
//! Bash rule content (`cargo test:*` prefix, `cargo test *` prefix, exact text, or any), and
//! suggest the prefix rules that would allow a command next time.

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

/// What a Bash rule's content means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BashPattern {
    /// No content, `""` or `*`: every command.
    Any,
    /// `cargo test:*` or `cargo test *`: a simple command that is `cargo test` or starts with
    /// `cargo test` followed by whitespace.
    Prefix(String),
    /// Anything else: the whole command, exactly (surrounding whitespace ignored).
    Exact(String),
}

impl BashPattern {
    /// Reads rule content.
    pub fn from_rule(content: Option<&str>) -> BashPattern {
        let Some(content) = content.map(str::trim) else {
            return BashPattern::Any;
        };
        if content.is_empty() || content == "*" {
            return BashPattern::Any;
        }
        if let Some(prefix) = content
            .strip_suffix(":*")
            .or_else(|| content.strip_suffix(" *"))
        {
            let prefix = prefix.trim();
            if prefix.is_empty() {
                return BashPattern::Any;
            }
            return BashPattern::Prefix(prefix.to_string());
        }
        BashPattern::Exact(content.to_string())
    }

    /// Does this pattern cover one simple command?
    pub fn matches_part(&self, part: &str) -> bool {
        match self {
            BashPattern::Any => true,
            BashPattern::Prefix(prefix) => match part.strip_prefix(prefix.as_str()) {
                Some(rest) => rest.is_empty() || rest.starts_with(char::is_whitespace),
                None => false,
            },
            BashPattern::Exact(text) => part.trim() == text,
        }
    }

    /// Does this pattern cover the whole command on its own (every part, and no
    /// substitution for a prefix)?
    pub fn matches_command(&self, command: &str, parsed: &ParsedCommand) -> bool {
        match self {
            BashPattern::Any => true,
            BashPattern::Exact(text) => command.trim() == text,
            BashPattern::Prefix(_) => {
                !parsed.has_substitution
                    && !parsed.parts.is_empty()
                    && parsed.parts.iter().all(|p| self.matches_part(p))
            }
        }
    }
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

/// The prefix a rule for one simple command would use: the first word, plus the second when
/// the first is a tool with subcommands and the second is a plain word.
pub fn suggested_prefix(part: &str) -> Option<String> {
    let mut words = part.split_whitespace();
    let first = words.next()?;
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
/// distinct simple command, or the exact command when it has a substitution.
pub fn suggested_rule_contents(command: &str) -> Vec<String> {
    let parsed = parse(command);
    if parsed.has_substitution || parsed.parts.is_empty() {
        return vec![command.trim().to_string()];
    }
    let mut out: Vec<String> = Vec::new();
    for part in &parsed.parts {
        if let Some(prefix) = suggested_prefix(part) {
            let rule = format!("{prefix}:*");
            if !out.contains(&rule) {
                out.push(rule);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_outside_quotes() {
        let p = parse("mkdir -p out && echo 'a && b' > out/f; ls | wc -l\necho \"x;y\"");
        assert_eq!(
            p.parts,
            vec![
                "mkdir -p out",
                "echo 'a && b' > out/f",
                "ls",
                "wc -l",
                "echo \"x;y\""
            ]
        );
        assert!(!p.has_substitution);
        assert!(parse("echo $(whoami)").has_substitution);
        assert!(!parse("echo '$(whoami)'").has_substitution);
        assert_eq!(parse("make 2>&1").parts, vec!["make 2>&1"]);
    }

    #[test]
    fn prefix_rules_match_on_word_boundaries_and_every_part() {
        let rule = BashPattern::from_rule(Some("cargo test:*"));
        let ok = |c: &str| rule.matches_command(c, &parse(c));
        assert!(ok("cargo test"));
        assert!(ok("cargo test -p parser"));
        assert!(!ok("cargo testing"));
        assert!(!ok("cargo test && rm -rf /"));
        assert!(!ok("cargo test $(rm -rf /)"));
        assert!(BashPattern::from_rule(Some("cargo test *")).matches_part("cargo test -q"));
        assert!(BashPattern::from_rule(None).matches_part("anything"));
        let exact = BashPattern::from_rule(Some("echo $(date)"));
        assert!(exact.matches_command(" echo $(date) ", &parse("echo $(date)")));
    }

    #[test]
    fn suggestions_cover_the_command() {
        assert_eq!(
            suggested_rule_contents("cargo test -p x"),
            vec!["cargo test:*"]
        );
        assert_eq!(
            suggested_rule_contents("mkdir -p out && echo hi > out/f && mkdir b"),
            vec!["mkdir:*", "echo:*"]
        );
        assert_eq!(suggested_rule_contents("echo `date`"), vec!["echo `date`"]);
        for command in ["cargo test -p x", "mkdir -p out && echo hi > out/f"] {
            let parsed = parse(command);
            let rules: Vec<BashPattern> = suggested_rule_contents(command)
                .iter()
                .map(|c| BashPattern::from_rule(Some(c)))
                .collect();
            assert!(
                parsed
                    .parts
                    .iter()
                    .all(|p| rules.iter().any(|r| r.matches_part(p)))
            );
        }
    }
}
