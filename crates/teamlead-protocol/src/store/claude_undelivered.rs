//! Frames for the lead that a `claude` teammate's client said it could not deliver, read from
//! the tool results of its session transcript (`store::claude_transcript`). Claude Code
//! 2.1.332 tells its model, not its lead, when a write to the lead's inbox fails: a permission
//! request ends the tool call with `The permission request could not be delivered to the team
//! lead (mailbox write failed). Retry the tool call…`, a `SendMessage` returns
//! `{"success":false,"message":"Failed to write to team-lead's inbox — nothing was sent…"}`
//! (or `Couldn't read the roster of team … nothing was sent`), `ExitPlanMode` fails with
//! `Failed to write the plan approval request to the lead's inbox — plan not submitted`, and a
//! shutdown approval with `The confirmation could not be written to team-lead's inbox`. What is
//! matched is the class (a result that says it was not delivered, not written, or nothing was
//! sent), not one sentence of one version.

use serde_json::Value;

/// What did not reach the lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum UndeliveredKind {
    /// A tool call's permission request (the call did not run).
    PermissionRequest,
    /// A `SendMessage` to the lead.
    Message,
    /// `ExitPlanMode`'s plan approval request (the plan was not submitted).
    PlanApproval,
}

/// One frame the client said it could not deliver to the lead.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Undelivered {
    /// Numbered from 1 over the transcript's life (how the lead tells new ones).
    pub seq: u64,
    pub kind: UndeliveredKind,
    /// The tool whose call carried it.
    pub tool: String,
    /// What the call was for, in one line: a command, a file, a message's text.
    pub input: String,
    /// The client's own words (the tool result), in one line.
    pub said: String,
}

/// The longest `input` and `said` kept.
const SHOWN_CHARS: usize = 160;

/// Words of a result that say a frame did not go out.
const NOT_SENT: [&str; 6] = [
    "could not be delivered",
    "mailbox write failed",
    "could not be written",
    "failed to write",
    "nothing was sent",
    "not submitted",
];

/// The frame `tool`'s call with `input` could not deliver, when its result `block` says so.
pub fn undelivered(tool: &str, input: &Value, block: &Value) -> Option<Undelivered> {
    let said = super::claude_limit::content_text(&block["content"]);
    let lower = said.to_lowercase();
    if !NOT_SENT.iter().any(|w| lower.contains(w)) {
        return None;
    }
    let kind = match tool {
        "SendMessage" => {
            // Only what was for the lead, and only a failed send (`success: false` or an
            // error), not a message that merely quotes those words.
            let failed = block["is_error"] == true
                || serde_json::from_str::<Value>(&said).is_ok_and(|v| v["success"] == false);
            if !failed || !to_the_lead(input) {
                return None;
            }
            UndeliveredKind::Message
        }
        "ExitPlanMode" if block["is_error"] == true => UndeliveredKind::PlanApproval,
        _ if lower.contains("permission request") => UndeliveredKind::PermissionRequest,
        _ => return None,
    };
    Some(Undelivered {
        seq: 0,
        kind,
        tool: tool.to_string(),
        input: one_line(&what_for(tool, input)),
        said: one_line(&message_of(&said)),
    })
}

/// Whether a `SendMessage` input names the lead (`to` in newer clients, `recipient` in 2.1.45;
/// a shutdown answer always goes to the lead).
fn to_the_lead(input: &Value) -> bool {
    let to = input["to"].as_str().or_else(|| input["recipient"].as_str());
    match to {
        Some(to) => to == crate::LEAD_NAME,
        None => input["type"] == "shutdown_response",
    }
}

/// The `message` of a JSON result, else the text without a `<tool_use_error>` wrapper.
fn message_of(said: &str) -> String {
    if let Ok(v) = serde_json::from_str::<Value>(said)
        && let Some(m) = v["message"].as_str()
    {
        return m.to_string();
    }
    said.replace("<tool_use_error>", "")
        .replace("</tool_use_error>", "")
}

/// What a call was for: the command, the file, the message's text, else its input.
fn what_for(tool: &str, input: &Value) -> String {
    let field = |k: &str| input[k].as_str().map(str::to_string);
    let found = match tool {
        "SendMessage" => field("message")
            .or_else(|| field("content"))
            .or_else(|| input["message"]["type"].as_str().map(str::to_string)),
        "ExitPlanMode" => field("plan"),
        _ => None,
    };
    found
        .or_else(|| field("command"))
        .or_else(|| field("file_path"))
        .or_else(|| field("notebook_path"))
        .or_else(|| field("url"))
        .or_else(|| field("pattern"))
        .unwrap_or_else(|| input.to_string())
}

/// `text` on one line, cut to [`SHOWN_CHARS`] characters.
fn one_line(text: &str) -> String {
    let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= SHOWN_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(SHOWN_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(content: Value, error: bool) -> Value {
        json!({"type": "tool_result", "tool_use_id": "t", "content": content, "is_error": error})
    }

    /// The texts Claude Code 2.1.332 writes (read from its binary and its transcripts).
    #[test]
    fn the_texts_of_2_1_332_are_recognized() {
        let bash = json!({"command": "touch x", "description": "d"});
        let lost = undelivered(
            "Bash",
            &bash,
            &result(json!("The permission request could not be delivered to the team lead (mailbox write failed). Retry the tool call, or ask the lead directly."), true),
        )
        .unwrap();
        assert_eq!(lost.kind, UndeliveredKind::PermissionRequest);
        assert_eq!(lost.input, "touch x");
        assert!(lost.said.starts_with("The permission request could not"));
        let send = json!({"to": "team-lead", "message": "hello  there\nlead", "summary": "s"});
        let text = json!([{"type": "text", "text": "{\"success\":false,\"message\":\"Failed to write to team-lead's inbox — nothing was sent. Try again, or message the lead.\"}"}]);
        let lost = undelivered("SendMessage", &send, &result(text.clone(), false)).unwrap();
        assert_eq!(lost.kind, UndeliveredKind::Message);
        assert_eq!(lost.input, "hello there lead");
        assert_eq!(
            lost.said,
            "Failed to write to team-lead's inbox — nothing was sent. Try again, or message the lead."
        );
        let roster = json!(
            "{\"success\":false,\"message\":\"Couldn't read the roster of team 't' to locate the member this message was resolved to — nothing was sent. Try again, or message the lead.\"}"
        );
        assert!(undelivered("SendMessage", &send, &result(roster, false)).is_some());
        let plan = undelivered(
            "ExitPlanMode",
            &json!({"plan": "step one"}),
            &result(json!("<tool_use_error>Failed to write the plan approval request to the lead's inbox — plan not submitted; try again</tool_use_error>"), true),
        )
        .unwrap();
        assert_eq!(plan.kind, UndeliveredKind::PlanApproval);
        assert!(plan.said.starts_with("Failed to write the plan approval"));
        let shutdown = json!({"to": "team-lead", "message": {"type": "shutdown_response", "request_id": "r", "approve": true}});
        let lost = undelivered(
            "SendMessage",
            &shutdown,
            &result(json!("{\"success\":false,\"message\":\"The confirmation could not be written to team-lead's inbox.\"}"), false),
        )
        .unwrap();
        assert_eq!(lost.input, "shutdown_response");
    }

    #[test]
    fn results_that_only_quote_the_words_are_not_taken() {
        let send = json!({"to": "team-lead", "message": "nothing was sent"});
        let ok = json!(
            "{\"success\":true,\"message\":\"Message sent to team-lead's inbox\",\"routing\":{\"content\":\"nothing was sent\"}}"
        );
        assert_eq!(undelivered("SendMessage", &send, &result(ok, false)), None);
        let to_peer = json!({"to": "other", "message": "m"});
        let failed = json!(
            "{\"success\":false,\"message\":\"Failed to write to other's inbox — nothing was sent.\"}"
        );
        assert_eq!(
            undelivered("SendMessage", &to_peer, &result(failed, false)),
            None,
            "a message to another teammate is not the lead's"
        );
        let bash = json!({"command": "grep -r 'could not be delivered' ."});
        assert_eq!(
            undelivered(
                "Bash",
                &bash,
                &result(json!("src/a.rs: could not be delivered"), false)
            ),
            None
        );
        assert_eq!(
            undelivered(
                "Bash",
                &bash,
                &result(json!("(Bash completed with no output)"), false)
            ),
            None
        );
    }
}
