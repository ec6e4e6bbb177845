//! The plan queue: `plan_approval_request`s waiting for the human, oldest first, each answered
//! at most once, and the `plan_approval_response` for a decision.

use std::collections::VecDeque;

use super::contract::{PendingPlan, PlanDecision};
use super::shown;
use crate::protocol::PermissionMode;
use crate::protocol::frames::{PlanApprovalRequest, PlanApprovalResponse, plan_digest};
use crate::protocol::time::now_iso;

/// The FIFO of plans waiting for approval.
#[derive(Debug, Default)]
pub struct PlanQueue {
    items: VecDeque<QueuedPlan>,
}

/// One plan waiting: what the dialog shows, the request to answer, and the digest of the whole
/// plan (a plan shown in part is not kept in memory: its file holds it).
#[derive(Debug)]
pub struct QueuedPlan {
    pub pending: PendingPlan,
    pub request: PlanApprovalRequest,
    pub digest: String,
    /// How many of its sender's turn ends the lead had seen when it came: the turn that asked
    /// has ended once the count has moved past it.
    pub turn_ends_seen: u64,
}

impl PlanQueue {
    pub fn new() -> PlanQueue {
        PlanQueue::default()
    }

    /// Queues a plan from `from`; `false` when the same request is queued already.
    /// Queues a plan from `from`. `None` when the same request is queued already; else
    /// whether it was shown in part: then its whole text and digest, for the caller to keep in a
    /// file ([`PlanQueue::kept_at`]).
    pub fn push(
        &mut self,
        from: &str,
        color: Option<String>,
        mut request: PlanApprovalRequest,
    ) -> Option<Option<(String, String)>> {
        if self
            .items
            .iter()
            .any(|q| q.request.request_id == request.request_id)
        {
            return None;
        }
        let digest = plan_digest(&request.plan_content);
        let whole = request.plan_content.len();
        let (plan, in_part, text) = if whole > shown::PLAN_MAX {
            let head = shown::text_head(&request.plan_content, shown::PLAN_MAX);
            let text = std::mem::take(&mut request.plan_content);
            let part = shown::InPart {
                bytes: whole as u64,
                full_at: None,
            };
            (head, Some(part), Some((text, digest.clone())))
        } else {
            (request.plan_content.clone(), None, None)
        };
        let pending = PendingPlan {
            request_id: request.request_id.clone(),
            from: from.to_string(),
            color,
            plan,
            in_part,
            host: None,
        };
        self.items.push_back(QueuedPlan {
            pending,
            request,
            digest,
            turn_ends_seen: 0,
        });
        Some(text)
    }

    /// Says which host the teammate of plan `request_id` runs on (`None`: the lead's).
    pub fn set_host(&mut self, request_id: &str, host: Option<String>) {
        if let Some(q) = self
            .items
            .iter_mut()
            .find(|q| q.pending.request_id == request_id)
        {
            q.pending.host = host;
        }
    }

    /// Says how many of its sender's turn ends the lead had seen when plan `request_id` came.
    pub fn set_turn_ends_seen(&mut self, request_id: &str, seen: u64) {
        if let Some(q) = self
            .items
            .iter_mut()
            .find(|q| q.pending.request_id == request_id)
        {
            q.turn_ends_seen = seen;
        }
    }

    /// Says where the whole text of plan `request_id` is kept (`None`: it could not be).
    pub fn kept_at(&mut self, request_id: &str, path: Option<String>) {
        if let Some(q) = self
            .items
            .iter_mut()
            .find(|q| q.request.request_id == request_id)
            && let Some(part) = &mut q.pending.in_part
        {
            part.full_at = path;
        }
    }

    /// Removes and returns the plan with this request id (at most once).
    pub fn take(&mut self, request_id: &str) -> Option<QueuedPlan> {
        let at = self
            .items
            .iter()
            .position(|q| q.request.request_id == request_id)?;
        self.items.remove(at)
    }

    /// Removes every plan of a teammate that left.
    pub fn remove_worker(&mut self, worker: &str) -> usize {
        let before = self.items.len();
        self.items.retain(|q| q.pending.from != worker);
        before - self.items.len()
    }

    pub fn views(&self) -> Vec<PendingPlan> {
        self.items.iter().map(|q| q.pending.clone()).collect()
    }

    /// Is a plan of this worker waiting?
    pub fn has_worker(&self, worker: &str) -> bool {
        self.items.iter().any(|q| q.pending.from == worker)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The `plan_approval_response` for a decision. An approval carries the mode to continue in
/// (`plan` maps to `default`) and `digest`, the digest of the whole plan.
pub fn plan_response(
    request: &PlanApprovalRequest,
    digest: &str,
    decision: &PlanDecision,
) -> PlanApprovalResponse {
    match decision {
        PlanDecision::Approve { mode } => PlanApprovalResponse {
            request_id: request.request_id.clone(),
            approved: true,
            feedback: None,
            timestamp: now_iso(),
            permission_mode: Some(PermissionMode::for_teammate(*mode)),
            plan_digest: Some(digest.to_string()),
        },
        PlanDecision::Reject { feedback } => PlanApprovalResponse {
            request_id: request.request_id.clone(),
            approved: false,
            feedback: Some(feedback.clone()).filter(|f| !f.trim().is_empty()),
            timestamp: now_iso(),
            permission_mode: None,
            plan_digest: Some(digest.to_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_answers_carry_mode_and_digest() {
        let req = PlanApprovalRequest {
            from: "planner".into(),
            timestamp: now_iso(),
            plan_file_path: String::new(),
            plan_content: "1. do it".into(),
            request_id: "plan_approval-1@planner@t".into(),
        };
        let mut plans = PlanQueue::new();
        assert_eq!(plans.push("planner", None, req.clone()), Some(None));
        assert!(plans.push("planner", None, req.clone()).is_none());
        let q = plans.take("plan_approval-1@planner@t").unwrap();
        assert!(plans.take("plan_approval-1@planner@t").is_none());
        let r = plan_response(
            &q.request,
            &q.digest,
            &PlanDecision::Approve {
                mode: PermissionMode::Plan,
            },
        );
        assert_eq!(r.permission_mode, Some(PermissionMode::Default));
        assert_eq!(r.plan_digest, Some(plan_digest("1. do it")));
    }
}
