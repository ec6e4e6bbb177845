//! How much of what a teammate wrote the screens are shown: bounded by what a person can read,
//! never by what a teammate writes. A permission request's input or a plan beyond its bound
//! travels as its head ([`value_head`], [`text_head`]) with its full size and the file that
//! holds it whole ([`InPart`]); any other string of an event (a message, a summary, a name, a
//! task's subject, a pane's tail) is cut at [`TEXT_MAX`] with its size said
//! ([`bound_event`]). So no teammate can push a line of the lead server's socket past
//! [`crate::server::wire::MAX_LINE`], and the server keeps the bounded copies only.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::contract::LeadEvent;

/// The most of a permission request's input a screen is shown (its compact JSON).
pub const INPUT_MAX: usize = 16 * 1024;
/// The most of a plan a screen is shown.
pub const PLAN_MAX: usize = 64 * 1024;
/// The most of a request's description.
pub const DESCRIPTION_MAX: usize = 2 * 1024;
/// A rule a teammate suggests that is larger than this (as JSON) is not offered.
pub const SUGGESTION_MAX: usize = 4 * 1024;
/// The most of any other string an event carries.
pub const TEXT_MAX: usize = 64 * 1024;
/// An event whose JSON is at most this long is sent as it is (nothing in it can be too long).
pub const EVENT_PLAIN: usize = TEXT_MAX;

/// A request or plan shown in part: how large it is whole, and where it can be read whole.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InPart {
    /// Its full size in bytes (the input's compact JSON, or the plan's text).
    pub bytes: u64,
    /// The file that holds it whole (written by the lead under the team's `.teamlead`
    /// directory), when it could be written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_at: Option<String>,
}

impl InPart {
    /// `shown in part: 20.0 MB in all` and where to read the rest.
    pub fn note(&self) -> String {
        match &self.full_at {
            Some(path) => format!(
                "shown in part: {} in all; the whole text is in {path}",
                size_label(self.bytes)
            ),
            None => format!(
                "shown in part: {} in all (its file could not be written)",
                size_label(self.bytes)
            ),
        }
    }
}

/// A size as a person reads it: `812 bytes`, `16.0 KB`, `20.0 MB`.
pub fn size_label(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if b < KB {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        format!("{:.1} KB", b / KB)
    } else if b < KB * KB * KB {
        format!("{:.1} MB", b / (KB * KB))
    } else {
        format!("{:.1} GB", b / (KB * KB * KB))
    }
}

/// The longest head of `s` of at most `max` bytes that ends on a character boundary.
fn head(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `s` as it is when it fits in `max` bytes, else its head and `… (shown in part: N in all)`.
pub fn text_head(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!(
        "{}… (shown in part: {} in all)",
        head(s, max),
        size_label(s.len() as u64)
    )
}

/// The head of a JSON value: the same shape, with strings cut (`…`) and arrays and objects
/// ending once about `max` bytes were taken.
pub fn value_head(v: &Value, max: usize) -> Value {
    let mut left = max;
    take(v, &mut left)
}

fn take(v: &Value, left: &mut usize) -> Value {
    match v {
        Value::String(s) => {
            let h = head(s, *left);
            *left -= h.len();
            if h.len() < s.len() {
                Value::String(format!("{h}…"))
            } else {
                Value::String(h.to_string())
            }
        }
        Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                if *left == 0 {
                    out.push(Value::String("…".to_string()));
                    break;
                }
                out.push(take(item, left));
            }
            Value::Array(out)
        }
        Value::Object(fields) => {
            let mut out = Map::new();
            for (k, item) in fields {
                if *left == 0 {
                    out.insert("…".to_string(), Value::String("…".to_string()));
                    break;
                }
                let key = head(k, (*left).min(256)).to_string();
                *left = left.saturating_sub(key.len());
                out.insert(key, take(item, left));
            }
            Value::Object(out)
        }
        other => {
            *left = left.saturating_sub(8);
            other.clone()
        }
    }
}

/// The size of a value's compact JSON, counted without building it.
pub fn json_len<T: Serialize + ?Sized>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

/// `event` with every string longer than [`TEXT_MAX`] cut ([`text_head`]): what a teammate
/// wrote (a message, a summary, a name, a task's subject, a pane's tail) cannot make an event
/// longer than the screens read. An event that is short as a whole is returned as it is.
pub fn bound_event(event: LeadEvent) -> LeadEvent {
    if json_len(&event) <= EVENT_PLAIN {
        return event;
    }
    let Ok(mut value) = serde_json::to_value(&event) else {
        return event;
    };
    if !cut_strings(&mut value) {
        return event;
    }
    serde_json::from_value(value).unwrap_or(event)
}

/// Cuts every string longer than [`TEXT_MAX`] in place; whether any was.
fn cut_strings(v: &mut Value) -> bool {
    match v {
        Value::String(s) if s.len() > TEXT_MAX => {
            *s = text_head(s, TEXT_MAX);
            true
        }
        Value::Array(items) => items.iter_mut().fold(false, |cut, i| cut_strings(i) | cut),
        Value::Object(fields) => fields
            .values_mut()
            .fold(false, |cut, i| cut_strings(i) | cut),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::TranscriptItem;
    use serde_json::json;

    #[test]
    fn heads_keep_the_shape_and_stop_at_the_bound() {
        let big = "é".repeat(100_000);
        let v = json!({"command": big, "list": [1, 2, 3]});
        let h = value_head(&v, 1000);
        assert!(json_len(&h) < 1300, "{}", json_len(&h));
        assert!(h["command"].as_str().unwrap().ends_with('…'));
        assert_eq!(text_head("short", 10), "short");
        let t = text_head(&"x".repeat(3 * 1024 * 1024), 10);
        assert_eq!(t, "xxxxxxxxxx… (shown in part: 3.0 MB in all)");
        assert_eq!(size_label(20 * 1024 * 1024), "20.0 MB");
    }

    #[test]
    fn a_huge_message_is_cut_and_a_small_event_untouched() {
        let small = LeadEvent::Transcript(TranscriptItem::System { text: "hi".into() });
        assert_eq!(bound_event(small.clone()), small);
        let huge = LeadEvent::Transcript(TranscriptItem::Teammate {
            from: "w".repeat(200_000),
            color: None,
            summary: Some("s".repeat(200_000)),
            text: "t".repeat(5_000_000),
        });
        let cut = bound_event(huge);
        assert!(json_len(&cut) < 4 * TEXT_MAX, "{}", json_len(&cut));
        let LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) = cut else {
            panic!("not a message")
        };
        assert!(
            text.ends_with("(shown in part: 4.8 MB in all)"),
            "{}",
            &text[text.len() - 40..]
        );
    }
}
