//! The one way text that came from a file reaches a terminal: every control character, escape
//! sequence introducer, bidi override and other invisible formatting character is shown as a
//! visible escape (`\e`, `\0`, `\x07`, `\u{202e}`), so a member name, a message, a frame field
//! or a task subject can never move the cursor, retitle the window, clear the screen or reorder
//! what the person reads. `visible_line` is for one-line fields (names, subjects, previews: a
//! newline shows as `\n`); `visible_text` keeps line breaks for multi-line bodies. For `--json`
//! output, [`escape_json_output`] turns the same characters into `\uXXXX` escapes, which
//! serde_json leaves raw.

use std::borrow::Cow;
use std::fmt::Write;

/// Is `c` a character that must never reach a terminal raw?
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            // Bidi embeddings, overrides, isolates and marks (Trojan Source).
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
            // Line and paragraph separators (terminals and editors break lines on them).
            | '\u{2028}' | '\u{2029}'
            // Zero-width characters that hide text.
            | '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}'
            // Interlinear annotation and object replacement controls.
            | '\u{FFF9}'..='\u{FFFB}'
        )
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\0' => out.push_str("\\0"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
    }
}

fn escape_where(text: &str, keep: impl Fn(char) -> Option<&'static str>) -> Cow<'_, str> {
    // A kept character that stays itself (a line break) needs no copy.
    let changes = |c: char| is_unsafe(c) && keep(c).is_none_or(|k| k.chars().ne([c]));
    if !text.chars().any(changes) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !is_unsafe(c) {
            out.push(c);
        } else if let Some(kept) = keep(c) {
            out.push_str(kept);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

/// One line of text from a file, safe for a terminal: every unsafe character (newlines and
/// tabs included) becomes a visible escape.
pub fn visible_line(text: &str) -> Cow<'_, str> {
    escape_where(text, |_| None)
}

/// Multi-line text from a file, safe for a terminal: line breaks stay (`\r\n` as `\n`), a tab
/// becomes four spaces, every other unsafe character a visible escape.
pub fn visible_text(text: &str) -> Cow<'_, str> {
    let text: Cow<'_, str> = if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    };
    match escape_where(&text, |c| match c {
        '\n' => Some("\n"),
        '\t' => Some("    "),
        _ => None,
    }) {
        Cow::Borrowed(_) => text,
        Cow::Owned(s) => Cow::Owned(s),
    }
}

/// Serialized JSON made safe for a terminal: the characters of [`is_unsafe`] that serde_json
/// writes raw (DEL, C1 controls, bidi and zero-width characters) become `\uXXXX` escapes. JSON
/// text holds such characters only inside strings, so the result is the same JSON value.
pub fn escape_json_output(json: &str) -> Cow<'_, str> {
    if !json.chars().any(is_unsafe_in_json) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe_in_json(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Unsafe characters other than the JSON whitespace serde_json writes between tokens.
fn is_unsafe_in_json(c: char) -> bool {
    is_unsafe(c) && !matches!(c, '\n' | ' ' | '\t' | '\r')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(visible_line("builder"), Cow::Borrowed(_)));
        assert!(matches!(visible_text("a\nb"), Cow::Borrowed(_)));
    }

    #[test]
    fn escapes_are_visible() {
        assert_eq!(visible_line("\u{1b}]0;pwned\u{7}x"), "\\e]0;pwned\\x07x");
        assert_eq!(visible_line("a\nb\0"), "a\\nb\\0");
        assert_eq!(visible_line("\u{202e}evil"), "\\u{202e}evil");
        assert_eq!(visible_line("\u{9b}2J"), "\\u{9b}2J");
        assert_eq!(visible_text("a\r\nb\tc\u{1b}[2J"), "a\nb    c\\e[2J");
    }

    #[test]
    fn json_output_stays_the_same_value() {
        let value = serde_json::json!({"name": "\u{1b}[2J\u{202e}\u{9b}\u{7f}x", "n": "a\nb"});
        let raw = serde_json::to_string_pretty(&value).unwrap();
        let safe = escape_json_output(&raw);
        assert!(!safe.chars().any(|c| is_unsafe(c) && c != '\n' && c != ' '));
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back, value);
    }
}
