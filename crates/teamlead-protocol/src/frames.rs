//! Structured frames (PROTOCOL.md 3): compact JSON objects placed in a message's `text`, tagged on
//! `type`. [`Frame::parse`] reads one out of a `text`; [`Frame::to_text`] writes one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::json::{sorted_keys, to_compact};
use super::permission::{PermissionUpdate, parse_suggestions};

/// Every frame of the protocol.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Frame {
    IdleNotification(IdleNotification),
    PermissionRequest(PermissionRequest),
    PermissionResponse(PermissionResponse),
    SandboxPermissionRequest(SandboxPermissionRequest),
    SandboxPermissionResponse(SandboxPermissionResponse),
    PlanApprovalRequest(PlanApprovalRequest),
    PlanApprovalResponse(PlanApprovalResponse),
    ShutdownRequest(ShutdownRequest),
    ShutdownApproved(ShutdownApproved),
    ShutdownRejected(ShutdownRejected),
    ModeSetRequest(ModeSetRequest),
    TaskAssignment(TaskAssignment),
    TaskCompleted(TaskCompleted),
}

impl Frame {
    /// Reads a frame out of a message `text`; `None` for plain text (or JSON that is no frame).
    pub fn parse(text: &str) -> Option<Frame> {
        let t = text.trim_start();
        if !t.starts_with('{') {
            return None;
        }
        serde_json::from_str(t).ok()
    }

    /// The compact JSON placed in `text`.
    pub fn to_text(&self) -> String {
        to_compact(self).unwrap_or_default()
    }

    /// The `type` tag.
    pub fn kind(&self) -> &'static str {
        match self {
            Frame::IdleNotification(_) => "idle_notification",
            Frame::PermissionRequest(_) => "permission_request",
            Frame::PermissionResponse(_) => "permission_response",
            Frame::SandboxPermissionRequest(_) => "sandbox_permission_request",
            Frame::SandboxPermissionResponse(_) => "sandbox_permission_response",
            Frame::PlanApprovalRequest(_) => "plan_approval_request",
            Frame::PlanApprovalResponse(_) => "plan_approval_response",
            Frame::ShutdownRequest(_) => "shutdown_request",
            Frame::ShutdownApproved(_) => "shutdown_approved",
            Frame::ShutdownRejected(_) => "shutdown_rejected",
            Frame::ModeSetRequest(_) => "mode_set_request",
            Frame::TaskAssignment(_) => "task_assignment",
            Frame::TaskCompleted(_) => "task_completed",
        }
    }
}

/// Why a teammate went idle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdleReason {
    Available,
    Interrupted,
    Failed,
}

/// teammate → lead at the end of every turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct IdleNotification {
    pub from: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_reason: Option<IdleReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_task_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// teamlead extension (PROTOCOL.md 3): what the teammate's model has used so far in its
    /// life. Claude Code readers ignore the key.
    #[serde(
        default,
        rename = "teamleadUsage",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<ReportedUsage>,
    /// teamlead extension (PROTOCOL.md 3): the turn stopped at the model service's usage
    /// limit, which resets then (epoch milliseconds). Claude Code readers ignore the key.
    #[serde(
        default,
        rename = "teamleadLimitUntil",
        skip_serializing_if = "Option::is_none"
    )]
    pub limit_until_ms: Option<u64>,
}

/// A teammate's model usage over its life, as it reports it (the `teamleadUsage` extension of
/// `idle_notification`). Input tokens include cache reads and writes; `cacheReadTokens` and
/// `cacheWriteTokens` (absent from older teamlead teammates: then 0) say how many of them were,
/// so the cost can be priced; `cacheWrite1hTokens` how many of the writes were 1-hour ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportedUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub tool_uses: u64,
    #[serde(default)]
    pub turns: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_read_tokens: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cache_write_tokens: u64,
    /// How many of the cache writes were to the 1-hour cache (priced at its own rate).
    #[serde(
        default,
        rename = "cacheWrite1hTokens",
        skip_serializing_if = "is_zero"
    )]
    pub cache_write_1h_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ReportedUsage {
    /// Its tokens by kind (input without the cache's), for pricing.
    pub fn tokens(&self) -> crate::pricing::Tokens {
        let cached = self.cache_read_tokens + self.cache_write_tokens;
        crate::pricing::Tokens {
            input: self.input_tokens.saturating_sub(cached),
            output: self.output_tokens,
            cache_write_5m: self
                .cache_write_tokens
                .saturating_sub(self.cache_write_1h_tokens),
            cache_write_1h: self.cache_write_1h_tokens,
            cache_read: self.cache_read_tokens,
        }
    }
}

/// teammate → lead: may I use this tool with this input?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    pub request_id: String,
    /// The worker's name; must equal the envelope's `from`.
    pub agent_id: String,
    pub tool_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub input: Value,
    /// Kept as JSON so a suggestion of a newer shape never hides the request.
    #[serde(default)]
    pub permission_suggestions: Vec<Value>,
}

impl PermissionRequest {
    /// The suggestions teamlead understands.
    pub fn suggestions(&self) -> Vec<PermissionUpdate> {
        parse_suggestions(&self.permission_suggestions)
    }

    /// The digest that binds an answer to this request's tool and input.
    pub fn input_digest(&self) -> String {
        input_digest(&self.tool_name, &self.input)
    }
}

/// `sha256_hex(tool_name + "\0" + compact JSON of input with object keys sorted recursively)`.
pub fn input_digest(tool_name: &str, input: &Value) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(tool_name.as_bytes());
    hasher.update([0u8]);
    hasher.update(
        to_compact(&sorted_keys(input))
            .unwrap_or_default()
            .as_bytes(),
    );
    hex(&hasher.finalize())
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// success / error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseSubtype {
    Success,
    Error,
}

/// What an approved request was: binds the answer to one tool call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApprovedRequest {
    pub tool_use_id: String,
    pub tool_name: String,
    pub input_digest: String,
}

/// The body of a successful answer.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ResponseBody {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_updates: Option<Vec<PermissionUpdate>>,
}

/// lead → teammate: the answer to a `permission_request`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionResponse {
    pub request_id: String,
    pub subtype: ResponseSubtype,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_use_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved_request: Option<ApprovedRequest>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseBody>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl PermissionResponse {
    /// An approval, bound to the request when it carried a `tool_use_id`.
    pub fn approve(req: &PermissionRequest, updates: Vec<PermissionUpdate>) -> PermissionResponse {
        PermissionResponse::approve_bound(req, &req.input_digest(), updates)
    }

    /// An approval bound by `input_digest`, the digest of the request's whole input (taken
    /// when it was queued: a large input is not kept).
    pub fn approve_bound(
        req: &PermissionRequest,
        input_digest: &str,
        updates: Vec<PermissionUpdate>,
    ) -> PermissionResponse {
        PermissionResponse {
            request_id: req.request_id.clone(),
            subtype: ResponseSubtype::Success,
            tool_use_id: req.tool_use_id.clone(),
            approved_request: req.tool_use_id.as_ref().map(|id| ApprovedRequest {
                tool_use_id: id.clone(),
                tool_name: req.tool_name.clone(),
                input_digest: input_digest.to_string(),
            }),
            response: Some(ResponseBody {
                updated_input: None,
                permission_updates: if updates.is_empty() {
                    None
                } else {
                    Some(updates)
                },
            }),
            error: None,
        }
    }

    /// A refusal with the user's feedback (default "Permission denied").
    pub fn deny(req: &PermissionRequest, feedback: Option<&str>) -> PermissionResponse {
        let feedback = feedback.map(str::trim).filter(|f| !f.is_empty());
        PermissionResponse {
            request_id: req.request_id.clone(),
            subtype: ResponseSubtype::Error,
            tool_use_id: req.tool_use_id.clone(),
            approved_request: None,
            response: None,
            error: Some(feedback.unwrap_or("Permission denied").to_string()),
        }
    }

    /// True for an approval.
    pub fn approved(&self) -> bool {
        self.subtype == ResponseSubtype::Success
    }

    /// Whether this answer may be applied to `req`: same id, and when bound, same tool call.
    pub fn matches(&self, req: &PermissionRequest) -> bool {
        if self.request_id != req.request_id {
            return false;
        }
        match &self.approved_request {
            None => true,
            Some(bound) => {
                bound.tool_name == req.tool_name
                    && Some(&bound.tool_use_id) == req.tool_use_id.as_ref()
                    && bound.input_digest == req.input_digest()
            }
        }
    }
}

/// The host a sandboxed teammate wants to reach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostPattern {
    pub host: String,
}

/// teammate → lead: may the sandbox reach this host?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPermissionRequest {
    pub request_id: String,
    pub worker_id: String,
    pub worker_name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_color: Option<String>,
    pub host_pattern: HostPattern,
    #[serde(default)]
    pub created_at: u64,
}

/// lead → teammate: the answer to a sandbox request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SandboxPermissionResponse {
    pub request_id: String,
    pub host: String,
    pub allow: bool,
    pub timestamp: String,
}

/// teammate → lead: here is my plan, may I proceed?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalRequest {
    pub from: String,
    pub timestamp: String,
    #[serde(default)]
    pub plan_file_path: String,
    pub plan_content: String,
    pub request_id: String,
}

/// lead → teammate: the plan decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanApprovalResponse {
    pub request_id: String,
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<super::PermissionMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_digest: Option<String>,
}

/// sha256 hex of a plan's content.
pub fn plan_digest(plan_content: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(plan_content.as_bytes()))
}

/// lead → teammate: please shut down.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRequest {
    pub request_id: String,
    pub from: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub timestamp: String,
}

/// teammate → lead: shutting down now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownApproved {
    pub request_id: String,
    pub from: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pane_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend_type: Option<String>,
}

/// teammate → lead: not shutting down, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShutdownRejected {
    pub request_id: String,
    pub from: String,
    #[serde(default)]
    pub reason: String,
    pub timestamp: String,
}

/// lead → teammate: switch to this permission mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeSetRequest {
    pub mode: super::PermissionMode,
    pub from: String,
}

/// assigner → owner: this task is yours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskAssignment {
    pub task_id: String,
    pub subject: String,
    #[serde(default)]
    pub description: String,
    pub assigned_by: String,
    pub timestamp: String,
}

/// any → any: a task is done.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskCompleted {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub task_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_subject: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// `<prefix>-<ms>-<7 base36>`, as request ids are made (`perm-…`, `sandbox-…`).
pub fn request_id(prefix: &str) -> String {
    use rand::Rng;
    const DIGITS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut rng = rand::rng();
    let tail: String = (0..7)
        .map(|_| DIGITS[rng.random_range(0..DIGITS.len())] as char)
        .collect();
    format!("{prefix}-{}-{tail}", super::time::now_ms())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_fixture_permission_request_and_binds_answer() {
        let text = r#"{"type":"permission_request","request_id":"perm-1795236899829-9vqjswc","agent_id":"worker","tool_name":"Bash","tool_use_id":"toolu_efd35925fbdf461abc86","description":"Create a marker file","input":{"command":"touch made_by_bash.txt","description":"Create a marker file"},"permission_suggestions":[{"type":"addDirectories","directories":["/home/user/work"],"destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]}"#;
        let Some(Frame::PermissionRequest(req)) = Frame::parse(text) else {
            panic!("not a permission request")
        };
        assert_eq!(req.suggestions().len(), 2);
        let answer = PermissionResponse::approve(&req, vec![]);
        assert!(answer.matches(&req));
        let round = Frame::parse(&Frame::PermissionResponse(answer.clone()).to_text()).unwrap();
        assert_eq!(round, Frame::PermissionResponse(answer));
        // The digest sorts keys: the same input in another key order binds the same.
        let swapped: Value = serde_json::from_str(
            r#"{"description":"Create a marker file","command":"touch made_by_bash.txt"}"#,
        )
        .unwrap();
        assert_eq!(input_digest("Bash", &swapped), req.input_digest());
    }

    #[test]
    fn frame_text_starts_with_type() {
        let f = Frame::ModeSetRequest(ModeSetRequest {
            mode: super::super::PermissionMode::AcceptEdits,
            from: "team-lead".into(),
        });
        assert_eq!(
            f.to_text(),
            r#"{"type":"mode_set_request","mode":"acceptEdits","from":"team-lead"}"#
        );
        assert!(Frame::parse("hello {").is_none());
        assert!(Frame::parse(r#"{"type":"message"}"#).is_none());
    }
}
