//! The permission policy hook (`--permission-hook CMD`, `permission-hook` in the config
//! file): for each permission request the server runs `sh -c CMD` with one JSON document on
//! stdin ([`request_document`]) and reads its answer from stdout ([`parse_answer`]): `allow`,
//! `deny` (optionally `deny: feedback`), `ask`, or the same as JSON (`{"decision": "deny",
//! "feedback": "…"}`). A time limit, a failing exit status, a crash or unreadable output
//! mean `ask`: the request stays for a person. It runs beside the hub, never on the
//! controller's loop.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::lead::contract::{PendingPermission, TeammateView};

/// How long the hook may take before its request is left to a person.
pub const HOOK_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of its output that is read.
const OUTPUT_LIMIT: u64 = 64 * 1024;

/// The hook: a shell command and its time limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyHook {
    pub command: String,
    pub timeout: Duration,
}

/// What the hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicyDecision {
    Allow,
    Deny {
        feedback: Option<String>,
    },
    /// Left to a person, and why (`ask` itself, or what went wrong).
    Ask {
        why: String,
    },
}

/// The document the hook reads: the request, and the teammate's mode and working directory.
pub fn request_document(team: &str, p: &PendingPermission, members: &[TeammateView]) -> Value {
    let member = members.iter().find(|m| m.name == p.worker);
    json!({
        "team": team,
        "teammate": p.worker,
        "request_id": p.request_id,
        "tool": p.tool_name,
        "input": p.input,
        "description": p.description,
        "cwd": member.map(|m| m.cwd.clone()),
        "mode": member.map(|m| m.mode),
        "suggestions": p.suggestions,
    })
}

/// Reads the hook's answer; `None` when it is none of the forms.
pub fn parse_answer(stdout: &str) -> Option<PolicyDecision> {
    let text = stdout.trim();
    if text.starts_with('{') {
        let v: Value = serde_json::from_str(text).ok()?;
        let feedback = v["feedback"].as_str().map(str::to_string);
        return match v["decision"].as_str()? {
            "allow" => Some(PolicyDecision::Allow),
            "deny" => Some(PolicyDecision::Deny { feedback }),
            "ask" => Some(PolicyDecision::Ask {
                why: "the hook said ask".to_string(),
            }),
            _ => None,
        };
    }
    let first = text.lines().next()?.trim();
    let (word, rest) = match first.split_once(':') {
        Some((w, r)) => (w.trim(), Some(r.trim()).filter(|r| !r.is_empty())),
        None => (first, None),
    };
    match word {
        "allow" if rest.is_none() => Some(PolicyDecision::Allow),
        "deny" => Some(PolicyDecision::Deny {
            feedback: rest.map(str::to_string),
        }),
        "ask" => Some(PolicyDecision::Ask {
            why: "the hook said ask".to_string(),
        }),
        _ => None,
    }
}

/// Runs the hook on `document`.
pub async fn ask(hook: &PolicyHook, document: &Value) -> PolicyDecision {
    let ask = |why: String| PolicyDecision::Ask { why };
    let mut child = match tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&hook.command)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(e) => return ask(format!("the hook could not start: {e}")),
    };
    let input = serde_json::to_vec(document).unwrap_or_default();
    let mut stdin = child.stdin.take();
    let mut stdout = child.stdout.take();
    let run = async {
        if let Some(stdin) = stdin.as_mut() {
            // A hook that does not read its input is fine.
            let _ = stdin.write_all(&input).await;
        }
        drop(stdin);
        let mut out = String::new();
        if let Some(stdout) = stdout.as_mut() {
            let _ = stdout.take(OUTPUT_LIMIT).read_to_string(&mut out).await;
        }
        (child.wait().await, out)
    };
    match tokio::time::timeout(hook.timeout, run).await {
        Err(_) => ask(format!(
            "the hook took longer than {} s",
            hook.timeout.as_secs_f64()
        )),
        Ok((Err(e), _)) => ask(format!("the hook failed: {e}")),
        Ok((Ok(status), _)) if !status.success() => ask(format!("the hook failed ({status})")),
        Ok((Ok(_), out)) => parse_answer(&out)
            .unwrap_or_else(|| ask("the hook's answer was not allow, deny or ask".to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_in_words_and_json() {
        assert_eq!(parse_answer("allow\n"), Some(PolicyDecision::Allow));
        assert_eq!(
            parse_answer("deny: use make\n"),
            Some(PolicyDecision::Deny {
                feedback: Some("use make".into())
            })
        );
        assert_eq!(
            parse_answer("deny"),
            Some(PolicyDecision::Deny { feedback: None })
        );
        assert!(matches!(
            parse_answer("ask"),
            Some(PolicyDecision::Ask { .. })
        ));
        assert_eq!(
            parse_answer(r#"{"decision":"deny","feedback":"no"}"#),
            Some(PolicyDecision::Deny {
                feedback: Some("no".into())
            })
        );
        for bad in ["", "yes", "allow: but", "{\"decision\": 3}", "{"] {
            assert_eq!(parse_answer(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn a_slow_or_failing_hook_means_ask() {
        let slow = PolicyHook {
            command: "sleep 5; echo allow".into(),
            timeout: Duration::from_millis(200),
        };
        assert!(matches!(
            ask(&slow, &json!({})).await,
            PolicyDecision::Ask { .. }
        ));
        let failing = PolicyHook {
            command: "echo allow; exit 3".into(),
            timeout: HOOK_TIMEOUT,
        };
        assert!(matches!(
            ask(&failing, &json!({})).await,
            PolicyDecision::Ask { .. }
        ));
        let reader = PolicyHook {
            command: "grep -q '\"tool\":\"Bash\"' && echo allow || echo deny".into(),
            timeout: HOOK_TIMEOUT,
        };
        assert_eq!(
            ask(&reader, &json!({"tool": "Bash"})).await,
            PolicyDecision::Allow
        );
    }
}
