//! The HTTP client of the `llm` engine: one streaming request to the configured service
//! (headers: `x-api-key` and `anthropic-version: 2023-06-01` for Anthropic, or
//! `Authorization: Bearer` for OpenAI-compatible servers; keys marked sensitive), its SSE body
//! read chunk by chunk into a [`ModelResponse`] while updates go out as they come, and retries
//! with exponential backoff (honoring `retry-after` / `retry-after-ms`) for rate limits,
//! overload, server and network errors, after the team's rate-limit pause ([`RateGovernor`]:
//! one per endpoint and key). The turn's cancellation token aborts the request or the stream
//! at once (the connection is dropped). TLS is rustls on the ring provider.

use std::sync::Once;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::config::{LlmConfig, Provider};
use super::conversation::{ModelRequest, ModelResponse, StreamUpdate};
use super::error::LlmError;
use super::governor::RateGovernor;
use super::sse::SseDecoder;
use super::wire::{self, StreamReader, anthropic, openai};

/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Talks to one configured model service. Cheap to clone.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
    governor: RateGovernor,
}

/// Installs rustls's ring provider once for the process (every HTTP client of teamlead
/// needs one).
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Fails only when another provider was installed first, which is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

use crate::config::is_loopback_url as is_loopback;

/// `retry-after-ms` (milliseconds) or `retry-after` (seconds; an HTTP date is not honored).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = value("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    value("retry-after").map(Duration::from_secs_f64)
}

/// The reset (epoch ms) of a claude.ai subscriber's usage limit the answer refuses the
/// request at: `anthropic-ratelimit-unified-status: rejected` with
/// `anthropic-ratelimit-unified-reset` (epoch seconds), as Claude Code reads them.
fn usage_limit_reset(headers: &HeaderMap) -> Option<u64> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if header("anthropic-ratelimit-unified-status")? != "rejected" {
        return None;
    }
    let secs: f64 = header("anthropic-ratelimit-unified-reset")?
        .trim()
        .parse()
        .ok()?;
    (secs.is_finite() && secs > 0.0).then_some((secs * 1000.0) as u64)
}

/// A secret header value that `Debug` of the headers does not show.
fn sensitive(text: &str) -> Result<HeaderValue, LlmError> {
    let mut value = HeaderValue::from_str(text)
        .map_err(|_| LlmError::Client("the API key holds characters a header cannot".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

/// The error and its causes on one line.
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(s) = source {
        let part = s.to_string();
        if !text.contains(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        source = s.source();
    }
    text
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<LlmClient, LlmError> {
        install_crypto_provider();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .read_timeout(config.read_timeout)
            .user_agent(concat!("teamlead/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&config.base_url) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| LlmError::Client(chain(&e)))?;
        let governor = RateGovernor::for_config(&config);
        Ok(LlmClient {
            http,
            config,
            governor,
        })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Shares its rate-limit pauses with the other processes of `team` too.
    pub fn share_rate_limits(&mut self, home: &crate::store::Home, team: &str) {
        self.governor.share_through(home, team);
    }

    /// The JSON body `request` is sent as.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let c = &self.config;
        match c.provider {
            Provider::Anthropic => anthropic::request_body(
                &c.model,
                c.max_tokens,
                &request.system,
                &request.messages,
                &request.tools,
                c.prompt_caching,
            ),
            Provider::OpenAi => openai::request_body(
                &c.model,
                c.max_tokens_configured.then_some(c.max_tokens),
                &request.system,
                &request.messages,
                &request.tools,
            ),
        }
    }

    fn scrub_error(&self, error: LlmError) -> LlmError {
        match error {
            LlmError::Status {
                status,
                kind,
                message,
                retry_after,
            } => LlmError::Status {
                status,
                kind,
                message: self.config.scrub(&message),
                retry_after,
            },
            LlmError::UsageLimit { until_ms, message } => LlmError::UsageLimit {
                until_ms,
                message: self.config.scrub(&message),
            },
            LlmError::Stream { kind, message } => LlmError::Stream {
                kind,
                message: self.config.scrub(&message),
            },
            LlmError::Network { url, detail } => LlmError::Network {
                url,
                detail: self.config.scrub(&detail),
            },
            other => other,
        }
    }

    /// Sends `request` and reads the streamed answer, retrying what is worth retrying.
    pub async fn send(
        &self,
        request: &ModelRequest,
        cancel: &CancellationToken,
        out: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<ModelResponse, LlmError> {
        let body = serde_json::to_vec(&self.body(request))
            .map_err(|e| LlmError::Client(format!("cannot encode the request: {e}")))?;
        let body = &body;
        super::retry::with_retries(
            self.config.retry,
            &self.governor,
            cancel,
            out,
            |out| async move {
                let result = self.attempt(body, cancel, &mut *out).await;
                (out, result.map_err(|e| self.scrub_error(e)))
            },
        )
        .await
    }

    /// One attempt: the request, then the stream until its end marker.
    async fn attempt(
        &self,
        body: &[u8],
        cancel: &CancellationToken,
        out: &mut (dyn FnMut(StreamUpdate) + Send),
    ) -> Result<ModelResponse, LlmError> {
        let url = self.config.endpoint();
        let network = |e: reqwest::Error| LlmError::Network {
            url: url.clone(),
            detail: chain(&e),
        };
        let mut request = self
            .http
            .post(&url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.to_vec());
        match self.config.provider {
            Provider::Anthropic => {
                request = request.header("anthropic-version", ANTHROPIC_VERSION);
                if let Some(key) = &self.config.api_key {
                    request = request.header("x-api-key", sensitive(key.expose())?);
                } else if let Some(token) = &self.config.auth_token {
                    request = request.header(
                        AUTHORIZATION,
                        sensitive(&format!("Bearer {}", token.expose()))?,
                    );
                }
            }
            Provider::OpenAi => {
                if let Some(key) = &self.config.api_key {
                    request = request.header(
                        AUTHORIZATION,
                        sensitive(&format!("Bearer {}", key.expose()))?,
                    );
                }
            }
        }
        let response = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            r = request.send() => r.map_err(network)?,
        };
        let status = response.status();
        if !status.is_success() {
            let wait = retry_after(response.headers());
            let limit = usage_limit_reset(response.headers());
            let text = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                t = response.text() => t.unwrap_or_default(),
            };
            let (kind, message) = wire::error_from_body(&text);
            if let Some(until_ms) = limit {
                return Err(LlmError::UsageLimit { until_ms, message });
            }
            return Err(LlmError::Status {
                status: status.as_u16(),
                kind,
                message,
                retry_after: wait,
            });
        }
        let mut reader = match self.config.provider {
            Provider::Anthropic => StreamReader::Anthropic(anthropic::AnthropicStream::new()),
            Provider::OpenAi => StreamReader::OpenAi(openai::OpenAiStream::new()),
        };
        let mut decoder = SseDecoder::new();
        let mut stream = response.bytes_stream();
        while !reader.is_done() {
            let chunk = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err(LlmError::Cancelled),
                c = stream.next() => c,
            };
            match chunk {
                None => {
                    for event in decoder.finish() {
                        reader.on_event(&event, out)?;
                    }
                    break;
                }
                Some(Err(e)) => return Err(network(e)),
                Some(Ok(bytes)) => {
                    for event in decoder.feed(&bytes) {
                        reader.on_event(&event, out)?;
                        if reader.is_done() {
                            break;
                        }
                    }
                }
            }
        }
        reader.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_retry_after() {
        assert!(is_loopback("http://127.0.0.1:9/v1"));
        assert!(is_loopback("http://localhost:11434"));
        assert!(is_loopback("http://[::1]:8000"));
        assert!(!is_loopback("https://api.anthropic.com"));
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&h), None);
        let mut h = HeaderMap::new();
        h.insert(
            "anthropic-ratelimit-unified-reset",
            "1795969031".parse().unwrap(),
        );
        assert_eq!(usage_limit_reset(&h), None, "no status: not a refusal");
        h.insert(
            "anthropic-ratelimit-unified-status",
            "allowed".parse().unwrap(),
        );
        assert_eq!(usage_limit_reset(&h), None);
        h.insert(
            "anthropic-ratelimit-unified-status",
            "rejected".parse().unwrap(),
        );
        assert_eq!(usage_limit_reset(&h), Some(1_795_969_031_000));
    }
}
