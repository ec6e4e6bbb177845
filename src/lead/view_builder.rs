//! Builds what the UI shows from what the lead knows: [`TeammateView`]s from the team file, the
//! task list, the runtime and idle reports ([`Tracking`]), the approvals waiting per teammate
//! and the shutdowns sent; and [`TaskView`]s from the task files.

use std::collections::HashMap;

use super::contract::{TaskView, TeammateStatus, TeammateView};
use crate::protocol::{Member, Task, TaskStatus, TeamFile};

use super::tracking::{Activity, Tracking};

/// The status shown for a member.
pub fn status_of(member: &Member, tracking: Option<&Tracking>, waiting: bool) -> TeammateStatus {
    if let Some(how) = tracking.and_then(|t| t.stopped().map(str::to_string)) {
        return TeammateStatus::Stopped { how };
    }
    let activity = tracking.map(Tracking::activity).unwrap_or_default();
    if activity == Activity::Exited {
        return TeammateStatus::Gone;
    }
    if let Some((host, since_ms)) = tracking.and_then(|t| t.unreachable().cloned()) {
        return TeammateStatus::Unreachable { host, since_ms };
    }
    if let Some(t) = tracking.filter(|t| t.shutdown().is_waiting()) {
        return TeammateStatus::ShuttingDown {
            since_ms: t.shutdown().since_ms().unwrap_or(0),
        };
    }
    if let Some(prompt) = tracking.and_then(|t| t.client().prompt()) {
        return TeammateStatus::OnClientPrompt {
            title: prompt.title.clone(),
            choices: prompt.choices.clone(),
        };
    }
    if waiting {
        return TeammateStatus::WaitingForApproval;
    }
    match activity {
        Activity::Working => TeammateStatus::Working,
        Activity::Idle { since_ms } => TeammateStatus::Idle { since_ms },
        Activity::Exited => TeammateStatus::Gone,
        Activity::Unknown if member.is_active == Some(false) => TeammateStatus::Idle {
            since_ms: member.joined_at,
        },
        Activity::Unknown => TeammateStatus::Working,
    }
}

/// Does `owner` name this member (by name or agent id)?
fn owned_by(task: &Task, member: &Member) -> bool {
    task.owner
        .as_deref()
        .is_some_and(|o| o == member.name || o == member.agent_id)
}

/// One teammate's view.
pub fn teammate_view(
    team: &TeamFile,
    member: &Member,
    tasks: &[Task],
    tracking: Option<&Tracking>,
    waiting: bool,
) -> TeammateView {
    let mut owned: Vec<&Task> = tasks
        .iter()
        .filter(|t| !t.is_internal() && owned_by(t, member))
        .collect();
    owned.sort_by_key(|t| t.numeric_id());
    let current_task = owned
        .iter()
        .find(|t| t.status == TaskStatus::InProgress)
        .map(|t| (t.id.clone(), t.subject.clone()));
    let hidden = team
        .hidden_pane_ids
        .as_ref()
        .is_some_and(|ids| !member.tmux_pane_id.is_empty() && ids.contains(&member.tmux_pane_id));
    TeammateView {
        name: member.name.clone(),
        agent_id: member.agent_id.clone(),
        color: member.color.clone(),
        status: status_of(member, tracking, waiting),
        mode: member.permission_mode(),
        backend: member.backend_kind(),
        pane_id: member.tmux_pane_id.clone(),
        host: crate::backend::hosts::remote::member_host(member).map(str::to_string),
        hidden,
        model: member
            .model
            .clone()
            .or_else(|| tracking.and_then(|t| t.claude().model().map(str::to_string))),
        cwd: member.cwd.clone(),
        worktree: member.worktree_path.clone(),
        prompt: member.prompt.clone(),
        plan_mode_required: member.plan_mode_required == Some(true),
        current_task,
        owned_tasks: owned
            .iter()
            .map(|t| {
                (
                    t.id.clone(),
                    t.subject.clone(),
                    t.status.as_str().to_string(),
                )
            })
            .collect(),
        recent_messages: tracking
            .map(|t| t.recent().iter().cloned().collect())
            .unwrap_or_default(),
        usage: None,
        mode_requested: tracking
            .and_then(|t| t.modes().requested())
            .filter(|m| *m != member.permission_mode()),
        rate_limited_until: tracking
            .and_then(Tracking::rate_limited_until)
            .filter(|until| *until > crate::protocol::time::now_ms()),
        parked: None,
        messages: Vec::new(),
        unread_since: None,
        over_budget: None,
        budget_micros: None,
        costs_nothing: false,
    }
}

/// Every teammate's view, in team-file order. `waiting` names the teammates with a permission
/// or plan request in the queues.
pub fn team_views(
    team: &TeamFile,
    tasks: &[Task],
    tracking: &HashMap<String, Tracking>,
    waiting: &dyn Fn(&str) -> bool,
) -> Vec<TeammateView> {
    team.teammates()
        .map(|m| teammate_view(team, m, tasks, tracking.get(&m.name), waiting(&m.name)))
        .collect()
}

/// The task list as the UI shows it, by id.
pub fn task_views(tasks: &[Task]) -> Vec<TaskView> {
    let completed = |id: &str| {
        tasks
            .iter()
            .find(|t| t.id == id)
            .is_none_or(|t| t.status == TaskStatus::Completed)
    };
    let mut sorted: Vec<&Task> = tasks.iter().collect();
    sorted.sort_by_key(|t| (t.numeric_id(), t.id.clone()));
    sorted
        .into_iter()
        .map(|t| TaskView {
            id: t.id.clone(),
            subject: t.subject.clone(),
            status: t.status.as_str().to_string(),
            owner: t.owner.clone(),
            blocked_by: t
                .blocked_by
                .iter()
                .filter(|b| !completed(b))
                .cloned()
                .collect(),
            internal: t.is_internal(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::tracking::RECENT_MESSAGES;

    fn team() -> TeamFile {
        let mut team = TeamFile::new("t", None, "/w");
        let mut m = Member::new("builder", "t", "/w");
        m.backend_type = Some("in-process".into());
        m.tmux_pane_id = "in-process".into();
        m.mode = Some("acceptEdits".into());
        m.color = Some("red".into());
        team.members.push(m);
        team
    }

    #[test]
    fn status_precedence() {
        let team = team();
        let m = team.member("builder").unwrap();
        let mut t = Tracking::default();
        assert_eq!(status_of(m, Some(&t), false), TeammateStatus::Working);
        t.observe_is_active(Some(false), 42);
        assert_eq!(
            status_of(m, Some(&t), false),
            TeammateStatus::Idle { since_ms: 42 }
        );
        assert_eq!(
            status_of(m, Some(&t), true),
            TeammateStatus::WaitingForApproval
        );
        let later = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
        t.shutdown_mut()
            .begin("shutdown-1@builder".into(), 0, later, false);
        assert_eq!(
            status_of(m, Some(&t), true),
            TeammateStatus::ShuttingDown { since_ms: 0 }
        );
        t.exited();
        assert_eq!(status_of(m, Some(&t), true), TeammateStatus::Gone);
    }

    #[test]
    fn views_show_tasks_mode_and_recent_messages() {
        let team = team();
        let mut a = Task::new("1", "build", "");
        a.owner = Some("builder".into());
        a.status = TaskStatus::InProgress;
        let mut b = Task::new("2", "test", "");
        b.blocked_by = vec!["1".into()];
        b.owner = Some("builder@t".into());
        let tasks = vec![b, a];
        let mut tracking = HashMap::new();
        let mut tr = Tracking::default();
        for i in 0..7 {
            tr.remember(format!("line {i}"));
        }
        tracking.insert("builder".to_string(), tr);
        let views = team_views(&team, &tasks, &tracking, &|_| false);
        assert_eq!(views.len(), 1);
        let v = &views[0];
        assert_eq!(v.mode, crate::protocol::PermissionMode::AcceptEdits);
        assert_eq!(v.current_task, Some(("1".into(), "build".into())));
        assert_eq!(v.owned_tasks.len(), 2);
        assert_eq!(
            v.recent_messages.first().map(String::as_str),
            Some("line 2")
        );
        assert_eq!(v.recent_messages.len(), RECENT_MESSAGES);
        let tv = task_views(&tasks);
        assert_eq!(tv[0].id, "1");
        assert_eq!(tv[1].blocked_by, vec!["1".to_string()]);
    }

    #[test]
    fn a_rate_limit_shows_until_it_resets() {
        let team = team();
        let m = team.member("builder").unwrap();
        let now = crate::protocol::time::now_ms();
        let mut t = Tracking::default();
        t.set_rate_limited_until(Some(now + 60_000));
        let view = |t: &Tracking| teammate_view(&team, m, &[], Some(t), false);
        assert_eq!(view(&t).rate_limited_until, Some(now + 60_000));
        t.set_rate_limited_until(Some(now.saturating_sub(1_000)));
        assert_eq!(view(&t).rate_limited_until, None, "past: no longer limited");
    }
}
