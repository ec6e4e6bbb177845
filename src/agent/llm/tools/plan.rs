//! SubmitPlan: in plan mode the model writes its plan and submits it; the teammate sends a
//! `plan_approval_request` to the lead and the call waits for the answer (the runtime's plan
//! handshake). Approved: the mode switches (to the answer's `permissionMode`) and the model is
//! told to carry the plan out. Rejected: the model gets the lead's feedback. A shutdown asked
//! while it waits ends the turn.

use serde::Deserialize;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{TurnState, parse, permit_team, spec};
use crate::agent::llm::agent_loop::{Call, Control, ToolOutput};
use crate::agent::llm::conversation::ToolSpec;
use crate::agent::runtime::plan_approval::{PlanDecision, seek_plan_approval};
use crate::agent::runtime::teammate::Teammate;
use crate::protocol::PermissionMode;

pub fn specs() -> Vec<ToolSpec> {
    vec![spec(
        "SubmitPlan",
        "In plan mode: submits your plan (markdown: what you will change and run, step by \
         step) to the team lead and waits for the decision. Until a plan is approved you may \
         only read (Read, Glob, Grep, TaskList, TaskGet) and send messages.",
        json!({
            "type": "object",
            "properties": {
                "plan": {"type": "string", "description": "The plan, in markdown"}
            },
            "required": ["plan"]
        }),
    )]
}

#[derive(Debug, Deserialize)]
struct PlanInput {
    plan: String,
}

pub(super) async fn submit_plan(
    tm: &mut Teammate,
    call: &Call,
    state: &mut TurnState,
    cancel: &CancellationToken,
) -> ToolOutput {
    let input: PlanInput = match parse(call) {
        Ok(i) => i,
        Err(out) => return out,
    };
    if let Err(out) = permit_team(tm, call, true, state, cancel).await {
        return out;
    }
    if tm.gate.mode() != PermissionMode::Plan {
        return ToolOutput::ok(format!(
            "You are not in plan mode (your mode is {}): no approval is needed, go ahead.",
            tm.gate.mode()
        ));
    }
    if input.plan.trim().is_empty() {
        return ToolOutput::error("The plan is empty.");
    }
    let decision = seek_plan_approval(tm, input.plan.trim(), cancel).await;
    tm.events
        .send(crate::agent::events::TeammateEventKind::Working {
            task: state.task.clone(),
        });
    match decision {
        PlanDecision::Approved(mode) => ToolOutput::ok(format!(
            "team-lead approved your plan. Your permission mode is now {mode}: carry the plan out."
        )),
        PlanDecision::LeftPlanMode(mode) => ToolOutput::ok(format!(
            "team-lead took you out of plan mode (your mode is now {mode}): no approval is needed, go ahead."
        )),
        PlanDecision::Rejected(feedback) => ToolOutput::error(format!(
            "team-lead rejected your plan: {feedback}\nYou are still in plan mode. Revise the plan and submit it again, or ask team-lead with SendMessage."
        )),
        PlanDecision::Interrupted => ToolOutput::interrupted(),
        PlanDecision::Shutdown(request) => ToolOutput {
            content: "team-lead asked you to shut down.".to_string(),
            is_error: true,
            control: Some(Control::Shutdown(Box::new(request))),
        },
        PlanDecision::Failed(why) => {
            ToolOutput::error(format!("The plan could not be submitted: {why}"))
        }
    }
}
