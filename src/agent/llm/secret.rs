//! API keys that never show: a newtype whose `Debug` prints `<redacted>`, with no `Display` and
//! no `Serialize`, so a key cannot reach a log line, an error, a transcript or a file by
//! accident. Its text leaves it only through [`ApiKey::expose`], to build a request header (and
//! [`ApiKey::scrub`] removes it from any text a server sends back).

use std::fmt;

/// A secret credential (an API key or a bearer token).
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// The key, or `None` when the text is empty or blank.
    pub fn new(text: impl Into<String>) -> Option<ApiKey> {
        let text = text.into();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            None
        } else {
            Some(ApiKey(trimmed.to_string()))
        }
    }

    /// The key itself, for a request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `<redacted>`.
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 {
            // A key this short would match ordinary text; it is never sent back anyway.
            return text.to_string();
        }
        text.replace(&self.0, "<redacted>")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_shows_in_debug_and_scrubs_echoes() {
        let key = ApiKey::new(" sk-ant-secret-123 ").expect("key");
        assert_eq!(key.expose(), "sk-ant-secret-123");
        let shown = format!("{key:?} {:?}", Some(key.clone()));
        assert!(!shown.contains("secret"), "{shown}");
        assert_eq!(
            key.scrub("bad key sk-ant-secret-123 given"),
            "bad key <redacted> given"
        );
        assert!(ApiKey::new("   ").is_none());
    }
}
