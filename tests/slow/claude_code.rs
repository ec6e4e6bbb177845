//! The conformance suite against real Claude Code clients (issue 11): every scenario runs
//! against every client of the matrix (2.1.45 and the newest release, installed by `.ci/run`),
//! with teamlead as the lead (the real binary, `--agent claude`, in a private tmux server) and
//! `claude` as pane teammates, all talking to the scripted model server on loopback. Test
//! names end in the client's label, so a failure says which version broke.

mod claude_lead;
mod client_prompt;
mod drift;
mod first_turn;
mod frames;
mod limits;
mod marks;
mod messages;
mod modes;
mod permissions;
mod plan;
mod resume;
mod review;
mod shutdown;
mod steer;
mod tasks;

/// One test per scenario and client: `<scenario>_v2_1_45` and `<scenario>_latest`; `latest
/// #[ignore = …]` (or `v2_1_45 #[ignore = …]`) after an entry ignores that client's test
/// (with the reason).
macro_rules! matrix {
    ($($scenario:path => $name:ident $(, v2_1_45 #[$old:meta])? $(, latest #[$latest:meta])?;)*) => {
        mod v2_1_45 {
            $(#[test] $(#[$old])? fn $name() { if let Some(c) = crate::claude_code_common::clients_or_skip("2.1.45") { $scenario(&c) } })*
        }
        mod latest {
            $(#[test] $(#[$latest])? fn $name() { if let Some(c) = crate::claude_code_common::clients_or_skip("latest") { $scenario(&c) } })*
        }
    };
}

matrix! {
    crate::claude_code::messages::prompt_and_message_round_trip => prompt_and_message_round_trip;
    crate::claude_code::messages::ledger_receipts => ledger_receipts;
    crate::claude_code::permissions::answers_from_the_queue => permissions_answered_from_the_queue;
    crate::claude_code::plan::plan_approvals => plan_approvals;
    crate::claude_code::modes::cycle_from_the_teams_dialog => mode_cycle_from_the_teams_dialog;
    crate::claude_code::modes::tighten_and_loosen_by_slash => mode_tighten_and_loosen_by_slash;
    crate::claude_code::tasks::assigned_tasks_are_claimed_and_completed => tasks_claimed_and_completed;
    crate::claude_code::shutdown::shutdown_and_kill => shutdown_and_kill;
    crate::claude_code::drift::tools_and_frames_match_the_record => drift_of_tools_and_frames;
    crate::claude_code::first_turn::spawn_right_after_shutdown => first_turn_after_a_shutdown;
    crate::claude_code::first_turn::first_prompt_runs_bash => first_turn_that_asks;
    crate::claude_code::steer::interrupt_a_busy_teammate => interrupt_a_busy_teammate;
    crate::claude_code::steer::an_interrupted_task_is_held => an_interrupted_task_is_held;
    crate::claude_code::steer::steer_a_busy_teammate => steer_a_busy_teammate;
    crate::claude_code::steer::steer_an_idle_teammate => steer_an_idle_teammate;
    crate::claude_code::resume::reaped_outside_tmux => reaped_outside_tmux;
    crate::claude_code::resume::clean_orphans_outside_tmux => clean_orphans_outside_tmux;
    crate::claude_code::shutdown::quit_with_several_teammates => quit_with_several_teammates;
    crate::claude_code::claude_lead::only_read_while_it_runs => claude_code_lead_only_read_while_it_runs;
    crate::claude_code::resume::lead_killed_and_started_again => resume_after_lead_sigkill;
    crate::claude_code::resume::reaped_after_the_grace_period => reaped_after_lead_sigkill;
    crate::claude_code::resume::clean_orphans_at_once => clean_orphans_after_lead_sigkill;
    crate::claude_code::review::files_written_without_a_worktree => review_lists_files_written_without_a_worktree;
    crate::claude_code::client_prompt::stuck_on_the_bypass_warning => stuck_on_the_bypass_warning;
    crate::claude_code::client_prompt::root_refuses_bypass_once => root_refuses_bypass_once;
    crate::claude_code::tasks::completion_said_at_once => task_completion_said_at_once;
    // With a model that answers at once, 2.1.45 lost a permission request that followed a
    // message in the same turn: its own turn-start isActive write tore config.json under the
    // request's read. The lead now marks an idle claude teammate active before delivering
    // (docs/PROTOCOL.md §4, docs/DESIGN.md), so the client makes no such write.
    crate::claude_code::frames::frames_at_once => frames_at_once_never_lost_silently;
    crate::claude_code::frames::frames_with_latency => frames_with_latency_never_lost_silently;
    crate::claude_code::frames::a_permission_request_lost_on_the_way_is_shown => lost_permission_request_shown;
    crate::claude_code::marks::leads_own_mark_is_not_a_turn => leads_own_mark_is_not_a_turn;
    crate::claude_code::limits::resume_at_the_reset => park_and_resume_at_the_reset;
    crate::claude_code::limits::two_own_and_two_claude_parked_and_resumed => park_two_own_and_two_claude;
}
