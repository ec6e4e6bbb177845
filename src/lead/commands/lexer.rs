//! The words of a command line: whitespace-separated tokens where `"…"` and `'…'` group words
//! (and `\` escapes inside double quotes), and "the rest of the line" for free text arguments.

use super::CommandError;

/// The first whitespace-delimited word and the rest (untrimmed).
pub(super) fn split_word(s: &str) -> (&str, &str) {
    let s = s.trim_start();
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// One shell-like token: the value (quotes removed) and where the raw text continues.
pub(super) struct Token {
    pub value: String,
    pub end: usize,
}

/// Reads the next token of `s` from byte `at`: `"…"` and `'…'` group words, `\` escapes in
/// double quotes. `None` at the end of the text.
pub(super) fn next_token(s: &str, at: usize) -> Result<Option<(usize, Token)>, CommandError> {
    let bytes = s.as_bytes();
    let mut i = at;
    while i < bytes.len() && (bytes[i] as char).is_ascii_whitespace() {
        i += 1;
    }
    if i >= bytes.len() {
        return Ok(None);
    }
    let start = i;
    let mut value = String::new();
    let mut chars = s[i..].char_indices().peekable();
    let mut quote: Option<char> = None;
    let mut end = s.len();
    while let Some((off, c)) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if c == '\\' => {
                if let Some((_, n)) = chars.next() {
                    value.push(n);
                }
            }
            Some(_) => value.push(c),
            None if c == '"' || c == '\'' => quote = Some(c),
            None if c.is_whitespace() => {
                end = i + off;
                break;
            }
            None => value.push(c),
        }
    }
    if quote.is_some() {
        return Err(CommandError::Invalid("unclosed quote".to_string()));
    }
    Ok(Some((start, Token { value, end })))
}

/// The rest of the text from `at` as one argument: a single quoted token is unquoted, anything
/// else is kept as typed (trimmed).
pub(super) fn rest_text(s: &str, at: usize) -> Result<String, CommandError> {
    let rest = s.get(at..).unwrap_or("").trim();
    if (rest.starts_with('"') || rest.starts_with('\''))
        && let Some((_, tok)) = next_token(rest, 0)?
        && rest[tok.end..].trim().is_empty()
    {
        return Ok(tok.value);
    }
    Ok(rest.to_string())
}

pub(super) fn all_tokens(s: &str) -> Result<Vec<String>, CommandError> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some((_, tok)) = next_token(s, at)? {
        at = tok.end;
        out.push(tok.value);
    }
    Ok(out)
}
