//! What can go wrong talking to a model, and which of it is worth another attempt: rate limits
//! (429), timeouts (408), conflicts (409), server errors (5xx, 529 overloaded), an
//! `overloaded_error`/`api_error` in the stream, network errors and streams that end early are
//! retried; refused credentials (401/403) and bad requests (400, 404, 413, 422) are not.
//! Messages never hold a key (server texts are scrubbed before they get here).

use std::time::Duration;

/// One failed model request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// A non-2xx answer.
    #[error("{}", describe_status(*status, kind.as_deref(), message))]
    Status {
        status: u16,
        /// The service's error type (`rate_limit_error`, `overloaded_error`, …), if it said.
        kind: Option<String>,
        message: String,
        retry_after: Option<Duration>,
    },
    /// An `error` event inside a streaming answer.
    #[error("the model service reported {kind}: {message}")]
    Stream { kind: String, message: String },
    /// The service could not be reached, or the connection broke.
    #[error("cannot reach the model service at {url}: {detail}")]
    Network { url: String, detail: String },
    /// The answer was not what the wire format promises (cut short, unreadable).
    #[error("the model service sent an unreadable answer: {0}")]
    Protocol(String),
    /// The turn was interrupted.
    #[error("interrupted")]
    Cancelled,
    /// The HTTP client could not be made.
    #[error("cannot set up the HTTP client: {0}")]
    Client(String),
    /// The account's usage limit is reached until `until_ms` (epoch ms): a 429 that says so
    /// (`anthropic-ratelimit-unified-status: rejected` with its reset), or one whose
    /// `retry-after` is longer than any retry waits. Not worth another attempt before then.
    #[error("the model service's usage limit is reached until {}: {message}", crate::protocol::time::iso_from_ms(*until_ms))]
    UsageLimit { until_ms: u64, message: String },
}

fn describe_status(status: u16, kind: Option<&str>, message: &str) -> String {
    let what = match status {
        401 | 403 => "the model service refused the credentials",
        429 => "the model service is rate limiting",
        529 => "the model service is overloaded",
        500..=599 => "the model service failed",
        _ => "the model service rejected the request",
    };
    let kind = kind.map(|k| format!(" {k}")).unwrap_or_default();
    if message.is_empty() {
        format!("{what} (HTTP {status}{kind})")
    } else {
        format!("{what} (HTTP {status}{kind}): {message}")
    }
}

impl LlmError {
    /// Worth another attempt.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::Status { status, kind, .. } => {
                matches!(status, 408 | 409 | 429 | 500..=599)
                    || matches!(
                        kind.as_deref(),
                        Some("overloaded_error" | "rate_limit_error")
                    )
            }
            LlmError::Stream { kind, .. } => matches!(
                kind.as_str(),
                "overloaded_error" | "api_error" | "rate_limit_error" | "server_error"
            ),
            LlmError::Network { .. } | LlmError::Protocol(_) => true,
            LlmError::Cancelled | LlmError::Client(_) | LlmError::UsageLimit { .. } => false,
        }
    }

    /// The service asks everyone using the endpoint and key to slow down: 429, 529, or a
    /// rate-limit or overload error (in the answer or in the stream).
    pub fn is_rate_limit(&self) -> bool {
        let limiting = |kind: &str| matches!(kind, "rate_limit_error" | "overloaded_error");
        match self {
            LlmError::Status { status, kind, .. } => {
                matches!(status, 429 | 529) || kind.as_deref().is_some_and(limiting)
            }
            LlmError::Stream { kind, .. } => limiting(kind),
            _ => false,
        }
    }

    /// Credentials refused (401/403).
    pub fn is_auth(&self) -> bool {
        matches!(
            self,
            LlmError::Status {
                status: 401 | 403,
                ..
            }
        )
    }

    /// Until when (epoch ms) the account's usage limit holds, when this is one.
    pub fn limit_until_ms(&self) -> Option<u64> {
        match self {
            LlmError::UsageLimit { until_ms, .. } => Some(*until_ms),
            _ => None,
        }
    }

    /// `error`, or the usage limit it is: a 429 whose `retry-after` (`wait`) is longer than
    /// `longest` (what a retry would wait at most) lasts until then.
    pub fn as_usage_limit(self, longest: Duration, now_ms: u64) -> LlmError {
        match self {
            LlmError::Status {
                status: 429,
                message,
                retry_after: Some(wait),
                ..
            } if wait > longest => LlmError::UsageLimit {
                until_ms: now_ms + wait.as_millis() as u64,
                message,
            },
            other => other,
        }
    }

    /// The wait the service asked for (`retry-after`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(code: u16, kind: Option<&str>) -> LlmError {
        LlmError::Status {
            status: code,
            kind: kind.map(str::to_string),
            message: "m".into(),
            retry_after: None,
        }
    }

    #[test]
    fn a_wait_longer_than_any_retry_is_a_usage_limit() {
        let limited = |wait: u64| LlmError::Status {
            status: 429,
            kind: Some("rate_limit_error".into()),
            message: "m".into(),
            retry_after: Some(Duration::from_secs(wait)),
        };
        let longest = Duration::from_secs(120);
        assert_eq!(
            limited(3600)
                .as_usage_limit(longest, 1_000)
                .limit_until_ms(),
            Some(3_601_000)
        );
        assert!(!limited(3600).as_usage_limit(longest, 0).is_retryable());
        assert_eq!(limited(30).as_usage_limit(longest, 0), limited(30));
        assert_eq!(
            status(503, None).as_usage_limit(longest, 0),
            status(503, None)
        );
    }

    #[test]
    fn retry_classes() {
        for code in [408, 409, 429, 500, 502, 503, 529] {
            assert!(status(code, None).is_retryable(), "{code}");
        }
        for code in [400, 401, 403, 404, 413] {
            assert!(!status(code, None).is_retryable(), "{code}");
        }
        assert!(status(400, Some("overloaded_error")).is_retryable());
        assert!(status(401, None).is_auth());
        assert_eq!(
            status(401, Some("authentication_error")).to_string(),
            "the model service refused the credentials (HTTP 401 authentication_error): m"
        );
        assert!(
            LlmError::Stream {
                kind: "overloaded_error".into(),
                message: "Overloaded".into()
            }
            .is_retryable()
        );
        assert!(!LlmError::Cancelled.is_retryable());
        for code in [429, 529] {
            assert!(status(code, None).is_rate_limit(), "{code}");
        }
        for code in [408, 500, 503, 401] {
            assert!(!status(code, None).is_rate_limit(), "{code}");
        }
        assert!(status(400, Some("rate_limit_error")).is_rate_limit());
        assert!(
            LlmError::Stream {
                kind: "overloaded_error".into(),
                message: "Overloaded".into()
            }
            .is_rate_limit()
        );
    }
}
