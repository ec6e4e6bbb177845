//! Reading a shell command the way permission rules need it: match Bash rule content
//! (`cargo test:*` prefix, `cargo test *` prefix, exact text, or any). Splitting a command into
//! its simple commands and suggesting the prefix rules that would allow it next time are pure
//! protocol functions ([`crate::protocol::permission::bash`]), shared with the lead's dialog.

pub use crate::protocol::permission::bash::{
    ParsedCommand, parse, suggested_prefix, suggested_rule_contents,
};

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
