//! Getting a decision for one tool use: the gate's verdict, and when it says "ask", a
//! `permission_request` through the teammate's [`PermissionAsker`] (the leader bridge in
//! process, the mailbox in a pane) raced against the turn's cancellation. An approval's
//! `permission_updates` go into the session rules so the same request is not asked again.

use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{PermissionGate, ToolCall, ToolUse, Verdict};
use crate::agent::asker::{AskError, Asking, PermissionAsker};
use crate::agent::events::{EventSink, TeammateEventKind};
use crate::protocol::PermissionMode;
use crate::protocol::inbox::{clip, first_line, input_preview};

/// The outcome of asking for one tool use.
#[derive(Debug, Clone, PartialEq)]
pub enum Authorization {
    /// Go ahead. `updated_input` replaces the input when the lead edited it; `mode` is the new
    /// mode when the answer changed it.
    Allowed {
        asked: bool,
        updated_input: Option<Value>,
        mode: Option<PermissionMode>,
    },
    /// Not allowed, and why (the lead's feedback, or the rule or mode that refused).
    Denied { asked: bool, reason: String },
    /// The turn was interrupted while waiting.
    Interrupted,
}

/// Who asks, and through what.
pub struct AskContext<'a> {
    pub asker: &'a Arc<dyn PermissionAsker>,
    pub name: &'a str,
    pub color: Option<&'a str>,
    pub events: &'a EventSink,
    pub cancel: &'a CancellationToken,
}

/// Decides one tool use, asking the lead when the gate says so.
pub async fn authorize(
    gate: &mut PermissionGate,
    tool: &ToolUse,
    ctx: &AskContext<'_>,
) -> Authorization {
    authorize_call(gate, tool, None, ctx).await
}

/// [`authorize`] for a model's tool call: the request carries the call's id and whole input.
/// A Write or Edit that is allowed is recorded as a file the teammate writes
/// ([`EventSink::wrote`]: what the lead's review of a teammate without a worktree lists).
pub async fn authorize_call(
    gate: &mut PermissionGate,
    tool: &ToolUse,
    call: Option<ToolCall<'_>>,
    ctx: &AskContext<'_>,
) -> Authorization {
    let auth = decide(gate, tool, call, ctx).await;
    if let (
        ToolUse::Edit { path } | ToolUse::Write { path },
        Authorization::Allowed { updated_input, .. },
    ) = (tool, &auth)
    {
        // The lead may have edited the input: its path is the one written.
        let edited = updated_input
            .as_ref()
            .and_then(|v| v.get("file_path"))
            .and_then(Value::as_str)
            .map(|p| super::rules::normalize(&gate.cwd().join(p)));
        ctx.events.wrote(edited.as_deref().unwrap_or(path));
    }
    auth
}

async fn decide(
    gate: &mut PermissionGate,
    tool: &ToolUse,
    call: Option<ToolCall<'_>>,
    ctx: &AskContext<'_>,
) -> Authorization {
    match gate.check(tool) {
        Verdict::Allow => Authorization::Allowed {
            asked: false,
            updated_input: None,
            mode: None,
        },
        Verdict::Deny(reason) => Authorization::Denied {
            asked: false,
            reason,
        },
        Verdict::Ask => {
            let request = gate.request_for_call(ctx.name, tool, call.as_ref());
            let preview = clip(
                &first_line(&input_preview(&request.tool_name, &request.input)),
                80,
            );
            ctx.events.send(TeammateEventKind::WaitingForApproval {
                what: format!("{} `{preview}`", request.tool_name),
            });
            let asking = Asking {
                worker: ctx.name.to_string(),
                color: ctx.color.map(str::to_string),
                request: request.clone(),
            };
            let answer = ctx.asker.ask(asking);
            let answer = tokio::select! {
                biased;
                _ = ctx.cancel.cancelled() => return Authorization::Interrupted,
                answer = answer => answer,
            };
            match answer {
                Ok(response) if !response.matches(&request) => Authorization::Denied {
                    asked: true,
                    reason: "the answer did not match the request".to_string(),
                },
                Ok(response) if response.approved() => {
                    let body = response.response.unwrap_or_default();
                    let mode = body
                        .permission_updates
                        .as_deref()
                        .and_then(|updates| gate.apply_updates(updates));
                    Authorization::Allowed {
                        asked: true,
                        updated_input: body.updated_input,
                        mode,
                    }
                }
                Ok(response) => Authorization::Denied {
                    asked: true,
                    reason: response
                        .error
                        .unwrap_or_else(|| "Permission denied".to_string()),
                },
                Err(AskError::Cancelled) => Authorization::Interrupted,
                Err(e) => Authorization::Denied {
                    asked: true,
                    reason: e.to_string(),
                },
            }
        }
    }
}
