//! What the page is sent: the controller's types turned into plain JSON with every string a
//! teammate could have written already escaped as the terminal shows it
//! ([`crate::protocol::display`]; the page then only ever sets `textContent`), and each waiting
//! request with the words of the terminal's dialogs ([`crate::lead::approval_text`]) and the
//! digest of exactly what was shown ([`permission`], [`plan`]): an answer must name it.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::lead::approval_text::{self, CONTROLS_WARNING, always_updates, describe, meaning};
use crate::lead::contract::{
    PendingPermission, PendingPlan, TaskView, TeammateStatus, TeammateView, TranscriptItem,
};
use crate::protocol::PermissionMode;
use crate::protocol::display::{visible_line, visible_text};

/// The modes a plan can be approved into (the plan dialog's).
pub const APPROVE_MODES: [PermissionMode; 3] = [
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::BypassPermissions,
];

fn line(s: &str) -> String {
    visible_line(s).into_owned()
}

fn text(s: &str) -> String {
    visible_text(s).into_owned()
}

/// The hex SHA-256 of a value's JSON.
fn digest_of(value: &Value) -> String {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let sum = Sha256::digest(&bytes);
    sum.iter().map(|b| format!("{b:02x}")).collect()
}

/// A teammate's status in words.
pub fn status_label(status: &TeammateStatus) -> String {
    match status {
        TeammateStatus::Working => "working".into(),
        TeammateStatus::WaitingForApproval => "waiting for approval".into(),
        TeammateStatus::OnClientPrompt { title, .. } => {
            format!("waiting on its client's prompt: {}", line(title))
        }
        TeammateStatus::Idle { .. } => "idle".into(),
        TeammateStatus::ShuttingDown { .. } => "shutting down".into(),
        TeammateStatus::Gone => "gone".into(),
        TeammateStatus::Unreachable { host, .. } => format!("unreachable ({})", line(host)),
        TeammateStatus::Stopped { how } => line(how),
    }
}

/// Micro-dollars as `$0.12`.
fn dollars(micros: u64) -> String {
    format!("${:.2}", micros as f64 / 1_000_000.0)
}

/// One teammate: name, state, mode, task, host and cost.
pub fn member(m: &TeammateView) -> Value {
    json!({
        "name": line(&m.name),
        "color": m.color.as_deref().map(line),
        "status": status_label(&m.status),
        "mode": line(&m.mode_label()),
        "task": m.current_task.as_ref().map(|(id, subject)| format!("#{} {}", line(id), line(subject))),
        "host": m.backend_label(),
        "cost": m.usage.as_ref().and_then(|u| u.cost_micros).map(dollars),
        "tokens": m.usage.as_ref().map(|u| u.total_tokens()),
        "over_budget": m.over_budget.as_deref().map(line),
    })
}

pub fn team(members: &[TeammateView]) -> Value {
    Value::Array(members.iter().filter(|m| !m.hidden).map(member).collect())
}

pub fn tasks(tasks: &[TaskView]) -> Value {
    Value::Array(
        tasks
            .iter()
            .filter(|t| !t.internal)
            .map(|t| {
                json!({
                    "id": line(&t.id),
                    "subject": line(&t.subject),
                    "status": line(&t.status),
                    "owner": t.owner.as_deref().map(line),
                })
            })
            .collect(),
    )
}

/// One transcript item; `receipt` names the ledger's entry of a message to a teammate.
pub fn transcript_item(item: &TranscriptItem) -> Value {
    match item {
        TranscriptItem::User { text: t } => json!({"kind": "user", "text": text(t)}),
        TranscriptItem::Ctl { text: t } => json!({"kind": "ctl", "text": text(t)}),
        TranscriptItem::ToTeammate {
            to,
            text: t,
            receipt,
        } => {
            json!({"kind": "to", "to": line(to), "text": text(t), "receipt": receipt})
        }
        TranscriptItem::Lead { text: t } => json!({"kind": "lead", "text": text(t)}),
        TranscriptItem::Teammate {
            from,
            color,
            summary,
            text: t,
        } => json!({
            "kind": "teammate",
            "from": line(from),
            "color": color.as_deref().map(line),
            "summary": summary.as_deref().map(line),
            "text": text(t),
        }),
        TranscriptItem::Frame {
            from,
            color,
            line: l,
        } => json!({
            "kind": "frame",
            "from": line(from),
            "color": color.as_deref().map(line),
            "text": line(l),
        }),
        TranscriptItem::System { text: t } => json!({"kind": "system", "text": text(t)}),
    }
}

/// The choices of a permission request, as the dialog offers them: `once`, one `always` per
/// offered rule (with the exact rule and what it allows), `no` (with a reason).
fn permission_choices(p: &PendingPermission) -> Vec<Value> {
    let mut out = vec![json!({"id": "once", "label": "Yes"})];
    for (i, u) in always_updates(p).iter().enumerate() {
        out.push(json!({
            "id": format!("always:{i}"),
            "label": format!("Yes, and {}", describe(u, &line(&p.worker))),
            "meaning": meaning(u),
        }));
    }
    out.push(json!({"id": "no", "label": format!("No, and tell @{} why", line(&p.worker))}));
    out
}

/// A waiting permission request as the page shows it, with its digest: the key, the request's
/// id, its teammate, tool, description, input (whole, as the lead holds it), the warnings and
/// the choices. Anything of it that changes changes the digest.
pub fn permission(p: &PendingPermission) -> Value {
    let lines: Vec<Value> = approval_text::input_lines(&p.tool_name, &p.input)
        .into_iter()
        .map(|(kind, t)| json!({"kind": kind.as_str(), "text": t}))
        .collect();
    let mut warnings = Vec::new();
    if approval_text::carries_controls(p) {
        warnings.push(CONTROLS_WARNING.to_string());
    }
    if let Some(part) = &p.in_part {
        warnings.push(approval_text::in_part_warning(part));
    }
    let mut view = json!({
        "kind": "permission",
        "key": p.key,
        "request_id": line(&p.request_id),
        "teammate": line(&p.worker),
        "color": p.color.as_deref().map(line),
        "tool": line(&p.tool_name),
        "description": text(&p.description),
        "warnings": warnings,
        "lines": lines,
        "choices": permission_choices(p),
    });
    let bound = json!({"shown": view, "input": p.input, "suggestions": p.suggestions, "in_part": p.in_part});
    view["digest"] = Value::String(digest_of(&bound));
    view
}

/// A waiting plan as the page shows it, with its digest.
pub fn plan(p: &PendingPlan) -> Value {
    let mut warnings = Vec::new();
    if crate::protocol::display::carries_controls(&p.plan)
        || crate::protocol::display::carries_controls(&p.from)
    {
        warnings.push(CONTROLS_WARNING.replace("request", "plan"));
    }
    if let Some(part) = &p.in_part {
        warnings.push(text(&format!("⚠ This plan is {}", part.note())));
    }
    let modes: Vec<String> = APPROVE_MODES.iter().map(|m| m.to_string()).collect();
    let mut view = json!({
        "kind": "plan",
        "request_id": line(&p.request_id),
        "teammate": line(&p.from),
        "color": p.color.as_deref().map(line),
        "plan": text(&p.plan),
        "warnings": warnings,
        "modes": modes,
    });
    let bound = json!({"shown": view, "request_id": p.request_id, "in_part": p.in_part});
    view["digest"] = Value::String(digest_of(&bound));
    view
}

pub fn requests(permissions: &[PendingPermission], plans: &[PendingPlan]) -> Value {
    json!({
        "permissions": permissions.iter().map(permission).collect::<Vec<_>>(),
        "plans": plans.iter().map(plan).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::PermissionSource;

    fn request(command: &str) -> PendingPermission {
        PendingPermission {
            key: 1,
            request_id: "r1".into(),
            worker: "alpha".into(),
            color: None,
            tool_name: "Bash".into(),
            description: String::new(),
            input: json!({"command": command}),
            suggestions: vec![],
            source: PermissionSource::Inbox,
            in_part: None,
            host: None,
        }
    }

    #[test]
    fn a_request_shows_the_command_escaped_and_warns() {
        let v = permission(&request("echo \u{1b}]0;x\u{7} <b>"));
        assert_eq!(v["lines"][0]["text"], "echo \\e]0;x\\x07 <b>");
        assert_eq!(v["warnings"][0], CONTROLS_WARNING);
        let plain = permission(&request("cargo test"));
        let labels: Vec<&str> = plain["choices"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels[0], "Yes");
        assert!(labels[1].starts_with("Yes, and allow Bash("), "{labels:?}");
        assert_eq!(labels.last().unwrap(), &"No, and tell @alpha why");
    }

    #[test]
    fn the_digest_changes_with_anything_shown_or_bound() {
        let a = permission(&request("ls"));
        assert_eq!(a["digest"], permission(&request("ls"))["digest"]);
        assert_ne!(a["digest"], permission(&request("ls -la"))["digest"]);
        let mut other = request("ls");
        other.input["timeout"] = json!(5);
        assert_ne!(a["digest"], permission(&other)["digest"]);
        let mut later = request("ls");
        later.key = 2;
        assert_ne!(a["digest"], permission(&later)["digest"]);
    }
}
