//! Builds what the UI shows from what the lead knows: [`TeammateView`]s from the team file, the
//! task list, the runtime and idle reports ([`Tracking`]), the approvals waiting per teammate
//! and the shutdowns sent; and [`TaskView`]s from the task files.

use std::collections::{HashMap, VecDeque};

use super::contract::{TaskView, TeammateStatus, TeammateView};
use crate::protocol::{Member, Task, TaskStatus, TeamFile};

/// How many one-liners of a teammate's recent messages are kept.
pub const RECENT_MESSAGES: usize = 5;

/// What a teammate was last seen doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activity {
    /// Nothing heard yet: `isActive` in the team file decides.
    #[default]
    Unknown,
    Working,
    Idle {
        since_ms: u64,
    },
    /// Its runtime ended (the member may still be listed).
    Exited,
}

/// What the lead tracks about one teammate besides the team file.
#[derive(Debug, Clone, Default)]
pub struct Tracking {
    pub activity: Activity,
    /// The time (its frame's own, bounded by the lead's clock) of the latest thing it sent.
    pub last_acted_ms: Option<u64>,
    /// Its host's link is down: (host, since epoch ms).
    pub unreachable: Option<(String, u64)>,
    /// The `requestId` of the shutdown the lead sent, while it waits for the answer.
    pub shutdown_request: Option<String>,
    /// When that shutdown was asked (epoch ms, for the elapsed time shown).
    pub shutdown_since_ms: Option<u64>,
    /// When the lead stops waiting for it (`shutdown-timeout`): it then says how to force the
    /// shutdown, or kills the teammate when `shutdown_force` is set.
    pub shutdown_deadline: Option<tokio::time::Instant>,
    /// `/shutdown NAME --force` (or the config's `shutdown-force`).
    pub shutdown_force: bool,
    /// The last few messages it sent, as one-liners (oldest first).
    pub recent: VecDeque<String>,
    /// Its runtime ended without shutting down (the status shown), until it is respawned.
    pub stopped: Option<String>,
    /// What its model used, as its last idle notification reported (pane teammates).
    pub usage: Option<crate::protocol::frames::ReportedUsage>,
    /// `isActive` as last read from the team file.
    last_is_active: Option<bool>,
    /// An in-process teammate: its runtime's events (`Working`, `Idle`) say when its turns
    /// start and end, in order, so neither a read of the team file nor its idle notification
    /// (through the lead's inbox), either of which can be a turn behind, changes its activity.
    pub events_drive: bool,
    /// The lead wrote this `claude` teammate's `isActive: true` itself before it delivered an
    /// entry (`controller::files`), and the client has shown no turn of its own since: a
    /// `true` in the team file is then the lead's word, not a turn.
    pub lead_mark: Option<LeadMark>,
    /// The mode the lead last set with a `mode_set_request`, until a request shows the
    /// teammate has not applied it (`controller::mode_sync`).
    pub mode_sent: Option<crate::protocol::PermissionMode>,
    /// A mode the lead asked a `claude` teammate for and the teammate does not report yet
    /// (`controller::mode_keys`): shown beside the mode in force, never instead of it.
    pub mode_requested: Option<crate::protocol::PermissionMode>,
    /// A mode a `claude` teammate was seen to take (or took on the lead's answer) and the
    /// lead recorded, with the mode it left: its own stale write of the mode it left is put
    /// right (`controller::mode_keys`).
    pub mode_held: Option<HeldMode>,
    /// A `claude` teammate's session transcript, read a little more each time
    /// (`controller::claude_facts`).
    pub transcript:
        Option<std::sync::Arc<std::sync::Mutex<crate::store::claude_transcript::TranscriptMeter>>>,
    /// The model its transcript says it runs (when the team file names none).
    pub model_seen: Option<String>,
    /// A `claude` teammate's usage by model, each message priced by its own model and tier
    /// (its transcript's).
    pub ledger: Option<crate::protocol::pricing::Ledger>,
    /// Its model was not offered the task tools (told once; assignments go as plain text).
    pub no_task_tools: bool,
    /// Until when (epoch ms) a `claude` teammate's rate or usage limit holds, as its transcript
    /// says (`controller::claude_facts`).
    pub rate_limited_until: Option<u64>,
    /// How many frames for the lead its transcript said were not delivered, as told so far
    /// (`controller::claude_facts`).
    pub undelivered_told: u64,
    /// The text of the last plain message it sent the lead (a final answer repeating it is
    /// not shown twice).
    pub last_message: Option<String>,
    /// When a `claude` teammate was started, until it is seen starting its first turn (or
    /// was reported as not starting it).
    pub awaiting_first_turn: Option<tokio::time::Instant>,
    /// The prompt of its own client a `claude` teammate's pane waits on, as last read
    /// (`controller::client_prompts`).
    pub client_prompt: Option<crate::lead::client_prompt::ClientPrompt>,
    /// How many of its turns the lead saw end: an off-loop wait for the next one (a plan
    /// verdict held until the turn that asked for it has ended, `controller::incoming`).
    pub turn_ends: TurnEnds,
}

/// A count of a teammate's turn ends, shared with off-loop waits.
#[derive(Debug, Clone, Default)]
pub struct TurnEnds(std::sync::Arc<std::sync::atomic::AtomicU64>);

impl TurnEnds {
    /// How many were seen so far.
    pub fn count(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn bump(&self) {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Waits (polling, without holding a thread) until more than `seen` turns ended, at most
    /// `within`: whether one did.
    pub async fn wait_past(&self, seen: u64, within: std::time::Duration) -> bool {
        let deadline = tokio::time::Instant::now() + within;
        while self.count() <= seen {
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        true
    }
}

/// A mode the lead recorded for a `claude` teammate, and the mode it left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldMode {
    pub mode: crate::protocol::PermissionMode,
    pub left: crate::protocol::PermissionMode,
}

/// The lead's own `isActive: true` for an idle `claude` teammate (docs/DESIGN.md, "The lead
/// marks an idle claude teammate active before it delivers"). It stands until the client shows
/// a turn of its own: its transcript begins a turn, it sends something, or it writes
/// `isActive: false` (its turn ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeadMark {
    /// When the lead decided to write it (epoch ms): what the client does from then on is its
    /// answer to it.
    pub at_ms: u64,
    /// Its write is done (until then a `false` read is the turn before's end, not this one's).
    pub written: bool,
    /// A `true` was read while the write was on its way (the client's own if the lead's write
    /// found the file not idle and wrote nothing).
    pub true_seen: bool,
    /// The teammate was told as not starting a turn on it.
    pub reported: bool,
}

impl Tracking {
    /// Records a message one-liner, keeping the last [`RECENT_MESSAGES`].
    pub fn remember(&mut self, line: String) {
        self.recent.push_back(line);
        while self.recent.len() > RECENT_MESSAGES {
            self.recent.pop_front();
        }
    }

    /// Follows `isActive` changes in the team file: `true` → working, `false` → idle; a `true`
    /// the lead wrote itself ([`LeadMark`]) is not a turn. Returns whether the client ended a
    /// turn the lead had not seen start (its `false` after the lead's mark: a turn ran).
    pub fn observe_is_active(&mut self, is_active: Option<bool>, now_ms: u64) -> bool {
        if is_active == self.last_is_active {
            return false;
        }
        self.last_is_active = is_active;
        let ended_unseen = is_active == Some(false)
            && match self.lead_mark.as_mut() {
                Some(mark) if mark.written => self.lead_mark.take().is_some(),
                Some(mark) => {
                    mark.true_seen = false;
                    false
                }
                None => false,
            };
        if self.activity == Activity::Exited || self.events_drive {
            return false;
        }
        match is_active {
            Some(true) => match self.lead_mark.as_mut() {
                Some(mark) => mark.true_seen = true,
                None => self.activity = Activity::Working,
            },
            Some(false) if !matches!(self.activity, Activity::Idle { .. }) => {
                self.went_idle(now_ms)
            }
            _ => {}
        }
        ended_unseen
    }

    /// Its turn ended (seen at `since_ms`).
    pub fn went_idle(&mut self, since_ms: u64) {
        self.activity = Activity::Idle { since_ms };
        self.turn_ends.bump();
    }

    /// The lead is about to write `isActive: true` for this teammate before a delivery, unless
    /// a mark of its stands or it has exited: whether it should. The store writes only over a
    /// `false` in the file (the client's own word that it went idle), so the lead's copy,
    /// which can be a moment behind the file, does not decide.
    pub fn mark_before_delivery(&mut self, now_ms: u64) -> bool {
        if self.lead_mark.is_some() || self.activity == Activity::Exited {
            return false;
        }
        self.lead_mark = Some(LeadMark {
            at_ms: now_ms,
            written: false,
            true_seen: false,
            reported: false,
        });
        true
    }

    /// The lead's write is done: `wrote` false means the file was not idle and nothing was
    /// written, so the mark goes (a `true` read meanwhile was the client's: a turn).
    pub fn mark_written(&mut self, wrote: bool) {
        if wrote {
            if let Some(mark) = self.lead_mark.as_mut() {
                mark.written = true;
            }
            return;
        }
        if let Some(mark) = self.lead_mark.take()
            && mark.true_seen
            && self.activity != Activity::Exited
        {
            self.activity = Activity::Working;
        }
    }

    /// The client showed a turn of its own at `at_ms` (its transcript began one, or it sent
    /// something): the lead's mark, if it is older, goes, and the `true` in the file is the
    /// teammate's at work. Returns whether a mark went.
    pub fn turn_seen(&mut self, at_ms: u64) -> bool {
        if self.lead_mark.is_none_or(|m| at_ms < m.at_ms) {
            return false;
        }
        self.lead_mark = None;
        if self.last_is_active == Some(true) && self.activity != Activity::Exited {
            self.activity = Activity::Working;
        }
        true
    }
}

/// The status shown for a member.
pub fn status_of(member: &Member, tracking: Option<&Tracking>, waiting: bool) -> TeammateStatus {
    if let Some(how) = tracking.and_then(|t| t.stopped.clone()) {
        return TeammateStatus::Stopped { how };
    }
    let activity = tracking.map(|t| t.activity).unwrap_or_default();
    if activity == Activity::Exited {
        return TeammateStatus::Gone;
    }
    if let Some((host, since_ms)) = tracking.and_then(|t| t.unreachable.clone()) {
        return TeammateStatus::Unreachable { host, since_ms };
    }
    if let Some(t) = tracking.filter(|t| t.shutdown_request.is_some()) {
        return TeammateStatus::ShuttingDown {
            since_ms: t.shutdown_since_ms.unwrap_or(0),
        };
    }
    if let Some(prompt) = tracking.and_then(|t| t.client_prompt.as_ref()) {
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
            .or_else(|| tracking.and_then(|t| t.model_seen.clone())),
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
            .map(|t| t.recent.iter().cloned().collect())
            .unwrap_or_default(),
        usage: None,
        mode_requested: tracking
            .and_then(|t| t.mode_requested)
            .filter(|m| *m != member.permission_mode()),
        rate_limited_until: tracking
            .and_then(|t| t.rate_limited_until)
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
        t.shutdown_request = Some("shutdown-1@builder".into());
        assert_eq!(
            status_of(m, Some(&t), true),
            TeammateStatus::ShuttingDown { since_ms: 0 }
        );
        t.activity = Activity::Exited;
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

    /// The lead's own `isActive: true` (its mark before a delivery) is not a turn: the status
    /// stays idle until the client shows one (a turn in its transcript or something it sent,
    /// not older than the mark), or its `false` says a turn ran and ended.
    #[test]
    fn the_leads_own_true_is_not_a_turn() {
        let idle = |t: &Tracking| matches!(t.activity, Activity::Idle { .. });
        let mut t = Tracking::default();
        t.observe_is_active(Some(false), 50);
        assert!(t.mark_before_delivery(100));
        assert!(!t.mark_before_delivery(101), "one mark at a time");
        assert!(
            !t.observe_is_active(Some(true), 110),
            "the lead's write read back"
        );
        t.mark_written(true);
        assert!(idle(&t), "the lead's true: still idle");
        assert!(!t.turn_seen(90), "a sign older than the mark");
        assert!(idle(&t) && t.lead_mark.is_some());
        assert!(t.turn_seen(120), "its transcript begins a turn");
        assert_eq!(t.activity, Activity::Working);
        assert!(t.lead_mark.is_none());
        // Its turn ends; marked again while its `false` is still on its way (the turn
        // before's end, read while the lead's write waits for it): no turn yet.
        t.observe_is_active(Some(true), 150);
        t.activity = Activity::Idle { since_ms: 160 };
        assert!(t.mark_before_delivery(170));
        assert!(
            !t.observe_is_active(Some(false), 180),
            "the turn before's end"
        );
        assert!(t.lead_mark.is_some());
        t.mark_written(true);
        t.observe_is_active(Some(true), 190);
        assert!(idle(&t), "the lead's true");
        assert!(
            t.observe_is_active(Some(false), 195),
            "its turn ran and ended"
        );
        // Marked again, and this time only its `false` is seen: a turn ran.
        t.observe_is_active(Some(false), 200);
        assert!(t.mark_before_delivery(300));
        t.observe_is_active(Some(true), 310);
        t.mark_written(true);
        assert!(t.observe_is_active(Some(false), 400), "a turn ran unseen");
        assert!(idle(&t) && t.lead_mark.is_none());
        // Marked, but the file was not idle (the client's own true came first): a turn.
        assert!(t.mark_before_delivery(500));
        t.observe_is_active(Some(true), 510);
        t.mark_written(false);
        assert_eq!(t.activity, Activity::Working);
        t.activity = Activity::Exited;
        assert!(!t.mark_before_delivery(600), "exited: no mark");
    }

    #[test]
    fn an_in_process_teammates_activity_follows_its_events_not_a_late_read_of_the_file() {
        let mut t = Tracking {
            events_drive: true,
            activity: Activity::Idle { since_ms: 1 },
            ..Tracking::default()
        };
        // Its turn before: the file said true; its Idle event came, then its new turn's
        // Working event; the read of the file that still says the turn before's false comes
        // last and changes nothing.
        t.observe_is_active(Some(true), 10);
        t.activity = Activity::Working;
        assert!(!t.observe_is_active(Some(false), 20));
        assert_eq!(t.activity, Activity::Working);
        // A teammate the file speaks for (a pane's) goes idle on the same read.
        let mut pane = Tracking::default();
        pane.observe_is_active(Some(true), 10);
        pane.observe_is_active(Some(false), 20);
        assert_eq!(pane.activity, Activity::Idle { since_ms: 20 });
    }

    #[test]
    fn a_rate_limit_shows_until_it_resets() {
        let team = team();
        let m = team.member("builder").unwrap();
        let now = crate::protocol::time::now_ms();
        let mut t = Tracking {
            rate_limited_until: Some(now + 60_000),
            ..Tracking::default()
        };
        let view = |t: &Tracking| teammate_view(&team, m, &[], Some(t), false);
        assert_eq!(view(&t).rate_limited_until, Some(now + 60_000));
        t.rate_limited_until = Some(now.saturating_sub(1_000));
        assert_eq!(view(&t).rate_limited_until, None, "past: no longer limited");
    }
}
