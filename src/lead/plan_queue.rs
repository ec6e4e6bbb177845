//! The plan queue: `plan_approval_request`s waiting for the human, oldest first, each answered
//! at most once, and the `plan_approval_response` for a decision.

use std::collections::VecDeque;

use super::contract::{PendingPlan, PlanDecision};
use crate::protocol::PermissionMode;
use crate::protocol::frames::{PlanApprovalRequest, PlanApprovalResponse, plan_digest};
use crate::protocol::time::now_iso;

/// The FIFO of plans waiting for approval.
#[derive(Debug, Default)]
pub struct PlanQueue {
    items: VecDeque<(PendingPlan, PlanApprovalRequest)>,
}

impl PlanQueue {
    pub fn new() -> PlanQueue {
        PlanQueue::default()
    }

    /// Queues a plan from `from`; `false` when the same request is queued already.
    pub fn push(
        &mut self,
        from: &str,
        color: Option<String>,
        request: PlanApprovalRequest,
    ) -> bool {
        if self
            .items
            .iter()
            .any(|(p, _)| p.request_id == request.request_id)
        {
            return false;
        }
        let pending = PendingPlan {
            request_id: request.request_id.clone(),
            from: from.to_string(),
            color,
            plan: request.plan_content.clone(),
        };
        self.items.push_back((pending, request));
        true
    }

    /// Removes and returns the plan with this request id (at most once).
    pub fn take(&mut self, request_id: &str) -> Option<(PendingPlan, PlanApprovalRequest)> {
        let at = self
            .items
            .iter()
            .position(|(p, _)| p.request_id == request_id)?;
        self.items.remove(at)
    }

    /// Removes every plan of a teammate that left.
    pub fn remove_worker(&mut self, worker: &str) -> usize {
        let before = self.items.len();
        self.items.retain(|(p, _)| p.from != worker);
        before - self.items.len()
    }

    pub fn views(&self) -> Vec<PendingPlan> {
        self.items.iter().map(|(p, _)| p.clone()).collect()
    }

    /// Is a plan of this worker waiting?
    pub fn has_worker(&self, worker: &str) -> bool {
        self.items.iter().any(|(p, _)| p.from == worker)
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The `plan_approval_response` for a decision. An approval carries the mode to continue in
/// (`plan` maps to `default`) and the digest of the approved plan.
pub fn plan_response(
    request: &PlanApprovalRequest,
    decision: &PlanDecision,
) -> PlanApprovalResponse {
    match decision {
        PlanDecision::Approve { mode } => PlanApprovalResponse {
            request_id: request.request_id.clone(),
            approved: true,
            feedback: None,
            timestamp: now_iso(),
            permission_mode: Some(PermissionMode::for_teammate(*mode)),
            plan_digest: Some(plan_digest(&request.plan_content)),
        },
        PlanDecision::Reject { feedback } => PlanApprovalResponse {
            request_id: request.request_id.clone(),
            approved: false,
            feedback: Some(feedback.clone()).filter(|f| !f.trim().is_empty()),
            timestamp: now_iso(),
            permission_mode: None,
            plan_digest: Some(plan_digest(&request.plan_content)),
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
        assert!(plans.push("planner", None, req.clone()));
        assert!(!plans.push("planner", None, req.clone()));
        let (_, req) = plans.take("plan_approval-1@planner@t").unwrap();
        assert!(plans.take("plan_approval-1@planner@t").is_none());
        let r = plan_response(
            &req,
            &PlanDecision::Approve {
                mode: PermissionMode::Plan,
            },
        );
        assert_eq!(r.permission_mode, Some(PermissionMode::Default));
        assert_eq!(r.plan_digest, Some(plan_digest("1. do it")));
    }
}
