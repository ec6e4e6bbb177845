//! Resolving flags, environment and file into an `LlmConfig`, and the retry backoff.

use super::*;
use std::collections::HashMap;

fn resolve(
    vars: &[(&str, &str)],
    model: Option<&str>,
    file: Option<&FileSettings>,
) -> Result<LlmConfig, ConfigError> {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let env = move |k: &str| map.get(k).cloned();
    let overrides = LlmOverrides {
        model: model.map(str::to_string),
        ..LlmOverrides::default()
    };
    LlmConfig::resolve(&overrides, &env, file, "/cfg/teamlead/config.json")
}

#[test]
fn nothing_configured_is_one_clear_line() {
    let err = resolve(&[], Some("claude-x"), None).unwrap_err();
    let text = err.to_string();
    assert!(text.starts_with("no model configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) or OPENAI_BASE_URL/OPENAI_API_KEY"), "{text}");
    assert!(!text.contains('\n'));
}

#[test]
fn anthropic_from_its_key_with_default_model_and_aliases() {
    let c = resolve(&[("ANTHROPIC_API_KEY", "sk-ant-1")], None, None).unwrap();
    assert_eq!(c.provider, Provider::Anthropic);
    assert_eq!(c.base_url, "https://api.anthropic.com");
    assert_eq!(c.endpoint(), "https://api.anthropic.com/v1/messages");
    assert_eq!(c.model, DEFAULT_ANTHROPIC_MODEL);
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("sk-ant-1"));
    assert!(!format!("{c:?}").contains("sk-ant-1"));
    let c = resolve(
        &[("ANTHROPIC_API_KEY", "k"), ("TEAMLEAD_MODEL", "haiku")],
        Some("opus"),
        None,
    )
    .unwrap();
    assert_eq!(c.model, "claude-opus-4-1");
}

#[test]
fn a_base_url_decides_over_a_key_and_v1_is_not_doubled() {
    let c = resolve(
        &[
            ("ANTHROPIC_API_KEY", "k"),
            ("OPENAI_BASE_URL", "http://127.0.0.1:11434/v1/"),
        ],
        Some("qwen2.5-coder"),
        None,
    )
    .unwrap();
    assert_eq!(c.provider, Provider::OpenAi);
    assert_eq!(c.endpoint(), "http://127.0.0.1:11434/v1/chat/completions");
    assert!(c.api_key.is_none());
    let c = resolve(
        &[("OPENAI_BASE_URL", "http://localhost:8000")],
        Some("m"),
        None,
    )
    .unwrap();
    assert_eq!(c.endpoint(), "http://localhost:8000/v1/chat/completions");
    let err = resolve(&[("OPENAI_BASE_URL", "http://localhost:8000")], None, None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("pass --model"), "{err}");
}

#[test]
fn the_file_names_provider_model_and_key_variable() {
    let file = FileSettings {
        provider: Some("openai".into()),
        base_url: Some("http://127.0.0.1:8080/v1".into()),
        model: Some("local-model".into()),
        api_key_env: Some("MY_KEY".into()),
        max_tokens: Some(2048),
        context_tokens: Some(50_000),
        keep_exchanges: Some(2),
        prompt_caching: Some(false),
        retry: Some(FileRetry {
            max_attempts: Some(2),
            base_delay_ms: Some(5),
            max_delay_ms: Some(10),
        }),
    };
    let c = resolve(&[("MY_KEY", "secret-value")], None, Some(&file)).unwrap();
    assert_eq!(c.provider, Provider::OpenAi);
    assert_eq!(c.model, "local-model");
    assert_eq!(c.api_key.as_ref().map(ApiKey::expose), Some("secret-value"));
    assert_eq!(c.max_tokens, 2048);
    assert!(c.max_tokens_configured);
    assert_eq!(c.context.max_tokens, 50_000);
    assert!(!c.prompt_caching);
    assert_eq!(c.retry.max_attempts, 2);
    // The environment beats the file.
    let c = resolve(
        &[("MY_KEY", "s"), ("OPENAI_BASE_URL", "http://other:1/v1")],
        Some("flag-model"),
        Some(&file),
    )
    .unwrap();
    assert_eq!(c.base_url, "http://other:1/v1");
    assert_eq!(c.model, "flag-model");
    let err = resolve(&[], None, Some(&file)).unwrap_err();
    assert_eq!(
        err,
        ConfigError::MissingKeyVariable {
            var: "MY_KEY".into()
        }
    );
}

#[test]
fn backoff_grows_and_is_capped() {
    let p = RetryPolicy {
        max_attempts: 5,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(350),
        max_retry_after: Duration::from_secs(1),
    };
    assert!(p.backoff(2) <= Duration::from_millis(100));
    assert!(p.backoff(2) >= Duration::from_millis(75));
    assert!(p.backoff(3) >= Duration::from_millis(150));
    assert!(p.backoff(9) <= Duration::from_millis(350));
}
