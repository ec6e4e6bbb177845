//! The synthetic turn: how inbox entries reach a model, as `<teammate-message>` blocks
//! (PROTOCOL.md 3).

use super::{Color, InboxEntry};

/// Escapes an attribute value: `"` → `&quot;`, `'` → `&apos;`.
pub(crate) fn escape_attr(value: &str) -> String {
    value.replace('"', "&quot;").replace('\'', "&apos;")
}

/// One entry as `<teammate-message teammate_id="…" color="…" summary="…">\n<text>\n</teammate-message>`;
/// `color` only when it is a palette name, `summary` only when present.
pub fn teammate_message(entry: &InboxEntry) -> String {
    let mut attrs = format!("teammate_id=\"{}\"", escape_attr(&entry.from));
    if let Some(c) = entry.color.as_deref().and_then(Color::parse) {
        attrs.push_str(&format!(" color=\"{}\"", c.as_str()));
    }
    if let Some(s) = &entry.summary {
        attrs.push_str(&format!(" summary=\"{}\"", escape_attr(s)));
    }
    format!(
        "<teammate-message {attrs}>\n{}\n</teammate-message>",
        entry.text
    )
}

/// Several entries joined by a blank line: one synthetic turn.
pub fn synthetic_turn(entries: &[InboxEntry]) -> String {
    entries
        .iter()
        .map(teammate_message)
        .collect::<Vec<_>>()
        .join("\n\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_and_escapes() {
        let mut e = InboxEntry::new("worker", "hi \"there\"");
        e.summary = Some("it's \"done\"".into());
        e.color = Some("blue".into());
        assert_eq!(
            teammate_message(&e),
            "<teammate-message teammate_id=\"worker\" color=\"blue\" summary=\"it&apos;s &quot;done&quot;\">\nhi \"there\"\n</teammate-message>"
        );
        e.color = Some("#fff".into());
        e.summary = None;
        assert_eq!(
            synthetic_turn(&[e.clone(), e]),
            "<teammate-message teammate_id=\"worker\">\nhi \"there\"\n</teammate-message>\n\n<teammate-message teammate_id=\"worker\">\nhi \"there\"\n</teammate-message>"
        );
    }
}
