//! The one way text that came from a file reaches a terminal: every control character, escape
//! sequence introducer, bidi override and other invisible formatting character is shown as a
//! visible escape (`\e`, `\0`, `\x07`, `\u{202e}`), so a member name, a message, a frame field
//! or a task subject can never move the cursor, retitle the window, clear the screen or reorder
//! what the person reads. `visible_line` is for one-line fields (names, subjects, previews: a
//! newline shows as `\n`); `visible_text` keeps line breaks for multi-line bodies. For `--json`
//! output, [`escape_json_output`] turns the same characters into `\uXXXX` escapes, which
//! serde_json leaves raw.
//!
//! Escaping also reports: [`shown_line`] and [`shown_text`] return the shown text together
//! with whether the text carried control sequences (every unsafe character but a line break
//! and a tab), so whoever shows text can also say that it was altered ([`carries_controls`],
//! [`controls_in_value`] for JSON values: frames, tasks, members).

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

/// Text as a terminal shows it, and whether the original carried control sequences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown<'a> {
    /// The text with every unsafe character as a visible escape.
    pub text: Cow<'a, str>,
    /// Did the text hold a control character, escape introducer, bidi or invisible character
    /// (anything unsafe but a line break or a tab)?
    pub controls: bool,
}

/// Is `c` a control sequence character worth reporting (unsafe, and not a line break or tab)?
fn is_reported(c: char) -> bool {
    is_unsafe(c) && !matches!(c, '\n' | '\t')
}

/// Does `text` carry control sequences (a `\r` only counts outside a `\r\n`)?
pub fn carries_controls(text: &str) -> bool {
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if is_reported(c) {
            return true;
        }
    }
    false
}

/// The top-level fields of a JSON value (an object's keys; `""` for a bare string or array)
/// whose strings or keys, at any depth, carry control sequences. Empty when none does.
pub fn controls_in_value(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::Object(map) => map
            .iter()
            .filter(|(k, v)| carries_controls(k) || value_carries(v))
            .map(|(k, _)| k.clone())
            .collect(),
        other if value_carries(other) => vec![String::new()],
        _ => Vec::new(),
    }
}

/// The top-level fields of anything serializable (a task, a member) that carry control
/// sequences, as [`controls_in_value`] names them.
pub fn controls_in<T: serde::Serialize>(item: &T) -> Vec<String> {
    serde_json::to_value(item)
        .map(|v| controls_in_value(&v))
        .unwrap_or_default()
}

/// The fields of an inbox entry that carry control sequences. A `text` holding a JSON object
/// (a frame) is looked into: its own fields are named (`tool_name`, `input`), else `text`.
pub fn controls_in_message(entry: &crate::InboxEntry) -> Vec<String> {
    let mut fields: Vec<String> = controls_in(entry)
        .into_iter()
        .filter(|f| f != "text")
        .collect();
    match serde_json::from_str::<serde_json::Value>(&entry.text) {
        Ok(frame @ serde_json::Value::Object(_)) => fields.extend(controls_in_value(&frame)),
        _ if carries_controls(&entry.text) => fields.push("text".to_string()),
        _ => {}
    }
    fields
}

/// Field names for a report: "`tool_name`, `input`" (an unnamed field is "its text").
pub fn field_list(names: &[String]) -> String {
    names
        .iter()
        .map(|n| {
            if n.is_empty() {
                "its text".to_string()
            } else {
                format!("`{}`", visible_line(n))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a message is, for a report: its frame's `type`, else `message`.
pub fn message_kind(entry: &crate::InboxEntry) -> String {
    serde_json::from_str::<serde_json::Value>(&entry.text)
        .ok()
        .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_string))
        .unwrap_or_else(|| "message".to_string())
}

fn value_carries(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => carries_controls(s),
        serde_json::Value::Array(items) => items.iter().any(value_carries),
        serde_json::Value::Object(map) => map
            .iter()
            .any(|(k, v)| carries_controls(k) || value_carries(v)),
        _ => false,
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
    shown_line(text).text
}

/// [`visible_line`], and whether the text carried control sequences.
pub(crate) fn shown_line(text: &str) -> Shown<'_> {
    Shown {
        controls: carries_controls(text),
        text: escape_where(text, |_| None),
    }
}

/// [`visible_text`], and whether the text carried control sequences.
pub(crate) fn shown_text(text: &str) -> Shown<'_> {
    Shown {
        controls: carries_controls(text),
        text: visible_text_only(text),
    }
}

/// Multi-line text from a file, safe for a terminal: line breaks stay (`\r\n` as `\n`), a tab
/// becomes four spaces, every other unsafe character a visible escape.
pub fn visible_text(text: &str) -> Cow<'_, str> {
    shown_text(text).text
}

fn visible_text_only(text: &str) -> Cow<'_, str> {
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
    fn shown_text_reports_control_sequences() {
        let concealed = shown_text("ls\u{1b}[8m; rm -rf ~\u{1b}[0m");
        assert_eq!(concealed.text, "ls\\e[8m; rm -rf ~\\e[0m");
        assert!(concealed.controls);
        assert!(!shown_text("a\r\nb\tc").controls);
        assert!(!shown_line("a\nb").controls);
        assert!(shown_line("a\rb").controls);
        for hidden in [
            "\u{202e}", "\u{2066}", "\u{200b}", "\u{200f}", "\u{feff}", "\u{9b}", "\u{7f}",
        ] {
            assert!(shown_line(&format!("x{hidden}")).controls, "{hidden:?}");
        }
        let frame = serde_json::json!({"type": "permission_request", "tool_name": "\u{1b}]0;t\u{7}",
            "input": {"command": ["ok", "\u{202e}"]}, "ok": "plain"});
        assert_eq!(controls_in_value(&frame), vec!["tool_name", "input"]);
        assert!(controls_in_value(&serde_json::json!("\u{1b}")).len() == 1);
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
