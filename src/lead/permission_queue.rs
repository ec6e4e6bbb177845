//! The permission queue (the plan queue is in [`super::plan_queue`]). One FIFO of tool-use confirmations fed by the leader
//! bridge (in-process teammates) and by `permission_request` / `sandbox_permission_request`
//! frames (pane teammates); every queued request has a queue-unique key and is answered at most
//! once: [`PermissionQueue::take`] removes it, so a second answer to the same key is a no-op.
//! Answers are computed here as data ([`Answer`]); the controller delivers them.

use std::collections::{HashMap, VecDeque};

use serde_json::json;
use tokio::sync::oneshot;

use super::contract::{PendingPermission, PermissionDecision, PermissionSource};
use super::shown;
use crate::agent::asker::Asking;
use crate::protocol::PermissionUpdate;
use crate::protocol::frames::{
    Frame, PermissionRequest, PermissionResponse, SandboxPermissionRequest,
    SandboxPermissionResponse,
};
use crate::protocol::time::now_iso;

/// The tool name a sandbox network request is shown with.
pub const SANDBOX_TOOL_NAME: &str = "SandboxNetworkAccess";

/// Who waits for the answer, and how it is delivered.
#[derive(Debug)]
pub enum Requester {
    /// An in-process teammate awaiting the bridge's oneshot.
    Bridge {
        ask_id: u64,
        request: PermissionRequest,
        reply: oneshot::Sender<PermissionResponse>,
    },
    /// A pane teammate awaiting a `permission_response` in its inbox.
    Inbox { request: PermissionRequest },
    /// A teammate awaiting a `sandbox_permission_response` in its inbox.
    Sandbox { request: SandboxPermissionRequest },
}

/// One queued request: what the dialog shows and who to answer.
#[derive(Debug)]
pub struct QueuedPermission {
    pub pending: PendingPermission,
    pub requester: Requester,
    /// What an answer binds to, from the whole input.
    pub whole: WholeInput,
}

/// What an answer needs of a request's whole input, taken when it is queued: an input shown in
/// part is not kept in memory (its head is shown, its file holds it), yet an approval is bound
/// to the exact request by the digest of all of it.
#[derive(Debug, Clone, PartialEq)]
pub struct WholeInput {
    /// `protocol::frames::input_digest` of the whole input.
    pub digest: String,
    /// The "always" rule offered when the request suggests none (from the whole input).
    pub fallback: Option<PermissionUpdate>,
}

impl WholeInput {
    pub fn of(request: &PermissionRequest) -> WholeInput {
        WholeInput {
            digest: request.input_digest(),
            fallback: crate::protocol::permission::fallback_update(
                &request.tool_name,
                &request.input,
            ),
        }
    }
}

/// A request's input too large to show whole, taken out of the queue's memory: the caller
/// keeps it in a file (`store::kept_texts`) and tells the queue where ([`PermissionQueue::kept_at`]).
#[derive(Debug)]
pub struct WholeText {
    pub key: u64,
    /// The digest of the whole input (names its file).
    pub digest: String,
    /// The input's compact JSON.
    pub text: String,
}

/// An answer, ready to deliver.
#[derive(Debug)]
pub enum Answer {
    /// Send `response` through the bridge's oneshot (the teammate may have gone: ignore errors).
    Bridge {
        reply: oneshot::Sender<PermissionResponse>,
        response: PermissionResponse,
    },
    /// Append `frame` to `to`'s inbox, from `team-lead`.
    Inbox { to: String, frame: Frame },
}

impl QueuedPermission {
    /// The answer to deliver for `decision`.
    pub fn answer(self, decision: &PermissionDecision) -> Answer {
        let worker = self.pending.worker;
        let whole = self.whole;
        match self.requester {
            Requester::Bridge { request, reply, .. } => Answer::Bridge {
                response: permission_response(&request, &whole, decision),
                reply,
            },
            Requester::Inbox { request } => Answer::Inbox {
                to: worker,
                frame: Frame::PermissionResponse(permission_response(&request, &whole, decision)),
            },
            Requester::Sandbox { request } => Answer::Inbox {
                to: worker,
                frame: Frame::SandboxPermissionResponse(SandboxPermissionResponse {
                    request_id: request.request_id,
                    host: request.host_pattern.host,
                    allow: !matches!(decision, PermissionDecision::Deny { .. }),
                    timestamp: now_iso(),
                }),
            },
        }
    }
}

/// The `permission_response` for a decision: bound when the request had a `tool_use_id`.
/// `AllowAlways` with no updates takes the rule the permission dialog offers when a request has
/// no usable suggestion (`protocol::permission::fallback_update`: a `prefix:*` rule per simple
/// Bash command, the tool alone otherwise); when no valid rule can be built it approves once.
/// `whole` is what the request's whole input binds the answer to (its input may be gone).
pub fn permission_response(
    request: &PermissionRequest,
    whole: &WholeInput,
    decision: &PermissionDecision,
) -> PermissionResponse {
    match decision {
        PermissionDecision::AllowOnce => {
            PermissionResponse::approve_bound(request, &whole.digest, Vec::new())
        }
        PermissionDecision::AllowAlways(updates) => {
            let updates = if updates.is_empty() {
                whole.fallback.clone().into_iter().collect()
            } else {
                updates.clone()
            };
            PermissionResponse::approve_bound(request, &whole.digest, updates)
        }
        PermissionDecision::Deny { feedback } => {
            PermissionResponse::deny(request, feedback.as_deref())
        }
    }
}

/// The FIFO of pending tool-use confirmations.
#[derive(Debug, Default)]
pub struct PermissionQueue {
    items: VecDeque<QueuedPermission>,
    next_key: u64,
}

impl PermissionQueue {
    pub fn new() -> PermissionQueue {
        PermissionQueue::default()
    }

    fn push(
        &mut self,
        mut pending: PendingPermission,
        requester: Requester,
        whole: WholeInput,
    ) -> u64 {
        self.next_key += 1;
        pending.key = self.next_key;
        self.items.push_back(QueuedPermission {
            pending,
            requester,
            whole,
        });
        self.next_key
    }

    /// Says where the whole input of request `key` is kept (`None`: it could not be).
    pub fn kept_at(&mut self, key: u64, path: Option<String>) {
        if let Some(q) = self.items.iter_mut().find(|q| q.pending.key == key)
            && let Some(part) = &mut q.pending.in_part
        {
            part.full_at = path;
        }
    }

    fn has_request(&self, worker: &str, request_id: &str) -> bool {
        self.items
            .iter()
            .any(|q| q.pending.worker == worker && q.pending.request_id == request_id)
    }

    /// Queues a bridge request; returns its key.
    pub fn push_bridge(
        &mut self,
        ask_id: u64,
        asking: Asking,
        reply: oneshot::Sender<PermissionResponse>,
    ) -> (u64, Option<WholeText>) {
        let Asking {
            worker,
            color,
            mut request,
        } = asking;
        let (pending, whole, text) =
            pending_for(&worker, color, &mut request, PermissionSource::Bridge);
        let digest = whole.digest.clone();
        let key = self.push(
            pending,
            Requester::Bridge {
                ask_id,
                request,
                reply,
            },
            whole,
        );
        (key, text.map(|text| WholeText { key, digest, text }))
    }

    /// Queues a `permission_request` frame from `from`'s envelope. `None` when it was dropped:
    /// its `agent_id` is not the sender, or the same request is queued already.
    pub fn push_inbox(
        &mut self,
        from: &str,
        color: Option<String>,
        mut request: PermissionRequest,
    ) -> Option<(u64, Option<WholeText>)> {
        if request.agent_id != from || self.has_request(from, &request.request_id) {
            return None;
        }
        let (pending, whole, text) =
            pending_for(from, color, &mut request, PermissionSource::Inbox);
        let digest = whole.digest.clone();
        let key = self.push(pending, Requester::Inbox { request }, whole);
        Some((key, text.map(|text| WholeText { key, digest, text })))
    }

    /// Queues a `sandbox_permission_request` from `from`. `None` when its `workerName` is not
    /// the sender or it is queued already.
    pub fn push_sandbox(
        &mut self,
        from: &str,
        color: Option<String>,
        request: SandboxPermissionRequest,
    ) -> Option<u64> {
        if request.worker_name != from || self.has_request(from, &request.request_id) {
            return None;
        }
        let host = request.host_pattern.host.clone();
        let pending = PendingPermission {
            key: 0,
            request_id: request.request_id.clone(),
            worker: from.to_string(),
            color: color.or_else(|| request.worker_color.clone()),
            tool_name: SANDBOX_TOOL_NAME.to_string(),
            description: format!("Allow network access to {host}"),
            input: json!({ "host": host }),
            suggestions: Vec::new(),
            source: PermissionSource::Inbox,
            in_part: None,
            host: None,
        };
        let whole = WholeInput {
            digest: String::new(),
            fallback: None,
        };
        Some(self.push(pending, Requester::Sandbox { request }, whole))
    }

    /// Removes and returns the request with this key; `None` when it was answered (or never
    /// existed), so a second answer does nothing.
    pub fn take(&mut self, key: u64) -> Option<QueuedPermission> {
        let at = self.items.iter().position(|q| q.pending.key == key)?;
        self.items.remove(at)
    }

    /// Forgets the bridge request `ask_id` (its asker went away). True when one was removed.
    pub fn withdraw(&mut self, ask_id: u64) -> bool {
        let before = self.items.len();
        self.items.retain(
            |q| !matches!(&q.requester, Requester::Bridge { ask_id: a, .. } if *a == ask_id),
        );
        before != self.items.len()
    }

    /// Forgets bridge requests whose asker is gone. True when any was removed.
    pub fn prune_closed(&mut self) -> bool {
        let before = self.items.len();
        self.items.retain(
            |q| !matches!(&q.requester, Requester::Bridge { reply, .. } if reply.is_closed()),
        );
        before != self.items.len()
    }

    /// Removes every request of a teammate that left (its bridge asks see `LeadGone`).
    pub fn remove_worker(&mut self, worker: &str) -> usize {
        let before = self.items.len();
        self.items.retain(|q| q.pending.worker != worker);
        before - self.items.len()
    }

    /// Says which host the teammate of request `key` runs on (`None`: the lead's).
    pub fn set_host(&mut self, key: u64, host: Option<String>) {
        if let Some(q) = self.items.iter_mut().find(|q| q.pending.key == key) {
            q.pending.host = host;
        }
    }

    /// The queue as the dialog shows it, oldest first.
    pub fn views(&self) -> Vec<PendingPermission> {
        self.items.iter().map(|q| q.pending.clone()).collect()
    }

    /// Does a request of `worker` wait here?
    pub fn has_worker(&self, worker: &str) -> bool {
        self.items.iter().any(|q| q.pending.worker == worker)
    }

    /// How many requests each worker has waiting.
    pub fn waiting_by_worker(&self) -> HashMap<String, usize> {
        let mut out = HashMap::new();
        for q in &self.items {
            *out.entry(q.pending.worker.clone()).or_insert(0) += 1;
        }
        out
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// What the dialog shows of `request` (bounded: `lead::shown`), what an answer binds to, and
/// the whole input's text when it is shown only in part (it is then taken out of `request`,
/// whose input is left `null`: nothing keeps it in memory).
fn pending_for(
    worker: &str,
    color: Option<String>,
    request: &mut PermissionRequest,
    source: PermissionSource,
) -> (PendingPermission, WholeInput, Option<String>) {
    let whole = WholeInput::of(request);
    let size = shown::json_len(&request.input);
    let (input, in_part, text) = if size > shown::INPUT_MAX {
        let head = shown::value_head(&request.input, shown::INPUT_MAX);
        let text = serde_json::to_string(&request.input).unwrap_or_default();
        request.input = serde_json::Value::Null;
        let part = shown::InPart {
            bytes: size as u64,
            full_at: None,
        };
        (head, Some(part), Some(text))
    } else {
        (request.input.clone(), None, None)
    };
    // A rule too large to read is not offered (cutting it would change what it allows).
    let suggestions = request
        .suggestions()
        .into_iter()
        .filter(|s| shown::json_len(s) <= shown::SUGGESTION_MAX)
        .take(16)
        .collect();
    let pending = PendingPermission {
        key: 0,
        request_id: request.request_id.clone(),
        worker: worker.to_string(),
        color,
        tool_name: request.tool_name.clone(),
        description: shown::text_head(&request.description, shown::DESCRIPTION_MAX),
        input,
        suggestions,
        source,
        in_part,
        host: None,
    };
    (pending, whole, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::PermissionUpdate;
    use crate::protocol::frames::HostPattern;
    use crate::protocol::permission::PermissionRule;

    fn request(id: &str, worker: &str, tool_use: Option<&str>) -> PermissionRequest {
        PermissionRequest {
            request_id: id.into(),
            agent_id: worker.into(),
            tool_name: "Bash".into(),
            tool_use_id: tool_use.map(str::to_string),
            description: "d".into(),
            input: json!({"command": "ls"}),
            permission_suggestions: vec![],
        }
    }

    #[test]
    fn fifo_across_feeds_and_single_answer() {
        let mut q = PermissionQueue::new();
        let (a, _) = q
            .push_inbox("w1", None, request("p1", "w1", Some("t1")))
            .unwrap();
        let (tx, _rx) = oneshot::channel();
        let (b, _) = q.push_bridge(
            7,
            Asking {
                worker: "w2".into(),
                color: None,
                request: request("p2", "w2", None),
            },
            tx,
        );
        let c = q
            .push_sandbox(
                "w3",
                None,
                SandboxPermissionRequest {
                    request_id: "sandbox-1".into(),
                    worker_id: "w3@t".into(),
                    worker_name: "w3".into(),
                    worker_color: Some("green".into()),
                    host_pattern: HostPattern {
                        host: "example.com".into(),
                    },
                    created_at: 1,
                },
            )
            .unwrap();
        let keys: Vec<u64> = q.views().iter().map(|p| p.key).collect();
        assert_eq!(keys, vec![a, b, c]);
        assert!(q.take(a).is_some());
        assert!(q.take(a).is_none());
        assert!(q.withdraw(7));
        let sandbox = q.take(c).unwrap();
        match sandbox.answer(&PermissionDecision::AllowOnce) {
            Answer::Inbox {
                to,
                frame: Frame::SandboxPermissionResponse(r),
            } => {
                assert_eq!(to, "w3");
                assert!(r.allow);
                assert_eq!(r.host, "example.com");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(q.is_empty());
    }

    #[test]
    fn spoofed_and_repeated_requests_are_dropped() {
        let mut q = PermissionQueue::new();
        assert!(
            q.push_inbox("mallory", None, request("p1", "w1", None))
                .is_none()
        );
        assert!(
            q.push_inbox("w1", None, request("p1", "w1", None))
                .is_some()
        );
        assert!(
            q.push_inbox("w1", None, request("p1", "w1", None))
                .is_none()
        );
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn answers_are_bound_and_always_allow_adds_a_session_rule() {
        let req = request("p1", "w1", Some("toolu_9"));
        let whole = WholeInput::of(&req);
        let r = permission_response(&req, &whole, &PermissionDecision::AllowAlways(vec![]));
        let bound = r.approved_request.clone().unwrap();
        assert_eq!(bound.input_digest, req.input_digest());
        let updates = r.response.unwrap().permission_updates.unwrap();
        // The command's prefix, never the whole tool.
        assert_eq!(
            updates,
            vec![PermissionUpdate::allow_session(PermissionRule {
                tool_name: "Bash".into(),
                rule_content: Some("ls:*".into())
            })]
        );
        let r = permission_response(
            &req,
            &whole,
            &PermissionDecision::Deny {
                feedback: Some("use cargo check".into()),
            },
        );
        assert_eq!(r.error.as_deref(), Some("use cargo check"));
        assert_eq!(r.tool_use_id.as_deref(), Some("toolu_9"));
    }

    #[test]
    fn a_huge_input_is_shown_in_part_and_the_answer_binds_the_whole() {
        let mut q = PermissionQueue::new();
        let mut req = request("p1", "w1", Some("toolu_1"));
        req.input = json!({"command": format!("echo {}", "x".repeat(3 * 1024 * 1024))});
        let digest = req.input_digest();
        let (key, whole) = q.push_inbox("w1", None, req.clone()).unwrap();
        let whole = whole.expect("the whole input to keep");
        assert_eq!(whole.text, serde_json::to_string(&req.input).unwrap());
        let view = &q.views()[0];
        assert!(shown::json_len(&view.input) < 2 * shown::INPUT_MAX);
        assert_eq!(
            view.in_part.as_ref().unwrap().bytes,
            whole.text.len() as u64
        );
        let queued = q.take(key).unwrap();
        match queued.answer(&PermissionDecision::AllowOnce) {
            Answer::Inbox {
                frame: Frame::PermissionResponse(r),
                ..
            } => {
                assert!(r.matches(&req), "bound to the whole request");
                assert_eq!(r.approved_request.unwrap().input_digest, digest);
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
