//! Strict checks of JSON text, for the places that must decide whether a file is understood
//! without building its values (the inbox append splices text). serde_json's `IgnoredAny`
//! skips values without checking their nesting depth, their UTF-8 or their `\u` escapes, so
//! it would accept what every reader then refuses; the visitor here goes through
//! `deserialize_any`, which enforces serde_json's recursion limit (128 levels), valid UTF-8
//! and paired surrogates, and allocates nothing but the scratch space of escaped strings.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Any JSON value, checked and dropped.
struct Checked;

impl<'de> Deserialize<'de> for Checked {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Checked, D::Error> {
        d.deserialize_any(CheckVisitor)
    }
}

/// A JSON object, checked and dropped; anything else is an error.
struct CheckedObject;

impl<'de> Deserialize<'de> for CheckedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<CheckedObject, D::Error> {
        d.deserialize_map(CheckVisitor).map(|_| CheckedObject)
    }
}

struct CheckVisitor;

impl<'de> Visitor<'de> for CheckVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_unit<E: de::Error>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }
}

/// The text of `bytes` as UTF-8, or a short reason naming the first bad byte.
pub(crate) fn utf8_text(bytes: &[u8]) -> Result<&str, String> {
    std::str::from_utf8(bytes).map_err(|e| {
        format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.valid_up_to()
        )
    })
}

/// Checks that `bytes` are one JSON array whose elements are all objects, strictly (UTF-8,
/// nesting, escapes), and returns how many elements it has. Whitespace only counts as `[]`.
pub(crate) fn array_of_objects(bytes: &[u8]) -> Result<usize, String> {
    let text = utf8_text(bytes)?;
    if text.trim().is_empty() {
        return Ok(0);
    }
    serde_json::from_str::<Vec<CheckedObject>>(text)
        .map(|v| v.len())
        .map_err(|e| format!("not a JSON array of objects: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deep(levels: usize, inner: &str) -> String {
        format!("{}{inner}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn accepts_inboxes_and_refuses_what_ignored_any_lets_through() {
        assert_eq!(array_of_objects(b"[]"), Ok(0));
        assert_eq!(array_of_objects(b"  \n"), Ok(0));
        assert_eq!(
            array_of_objects(br#"[{"a": [1, {"b": "\u00e9\ud83d\ude00"}]}, {}]"#),
            Ok(2)
        );
        let nested = format!(r#"[{{"a": {}}}]"#, deep(50_000, "1"));
        // The hole this module closes: IgnoredAny accepts it.
        assert!(serde_json::from_str::<Vec<serde::de::IgnoredAny>>(&nested).is_ok());
        assert!(
            array_of_objects(nested.as_bytes())
                .unwrap_err()
                .contains("recursion")
        );
        assert!(array_of_objects(deep(50_000, "").as_bytes()).is_err());
        assert!(array_of_objects(br#"[{"a": "\ud800"}]"#).is_err());
        assert!(
            array_of_objects(b"[{\"a\": \"\xff\"}]")
                .unwrap_err()
                .contains("UTF-8")
        );
        assert!(array_of_objects(br#"[{"a": 1}, "bare"]"#).is_err());
        assert!(array_of_objects(br#"{"a": 1}"#).is_err());
        assert!(array_of_objects(br#"[{"a": 1}"#).is_err());
        assert!(array_of_objects(br#"[{"a": 1}] x"#).is_err());
    }
}
