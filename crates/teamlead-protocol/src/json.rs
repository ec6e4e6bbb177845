//! JSON writer shapes shared by every file: 2-space pretty files with a trailing newline, and
//! compact JSON for frames placed inside a message's `text`.

use serde::Serialize;

/// Pretty JSON with a 2-space indent, as Claude Code writes its files (`JSON.stringify(v, null, 2)`).
pub(crate) fn to_pretty<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string_pretty(value)
}

/// Compact JSON, as `JSON.stringify(v)` writes frames inside `text`.
pub(crate) fn to_compact<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    serde_json::to_string(value)
}

/// A copy of `value` with the keys of every object sorted, recursively.
pub(crate) fn sorted_keys(value: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = serde_json::Map::new();
            for k in keys {
                out.insert(k.clone(), sorted_keys(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(sorted_keys).collect()),
        other => other.clone(),
    }
}
