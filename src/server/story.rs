//! The story of a team, as `teamlead ctl T events` prints it: one [`StoryEvent`] per thing
//! that happened (a message, a permission request and its answer, a plan, a teammate started,
//! idle, exited or crashed, a task changed, usage), derived from the controller's events by
//! comparing each snapshot with the one before. The hub keeps the latest [`STORY_KEPT`], at
//! most [`STORY_BYTES`] of them.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::lead::contract::{
    LeadEvent, PendingPermission, PendingPlan, PermissionDecision, TeammateStatus, TranscriptItem,
};

/// How many story events the server keeps for `events` without `--follow`.
pub const STORY_KEPT: usize = 20_000;
/// And at most this many bytes of them (as JSON): a teammate's long messages cannot make the
/// story hold more than this.
pub const STORY_BYTES: usize = 32 * 1024 * 1024;

/// One thing that happened, numbered in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoryEvent {
    pub seq: u64,
    /// Epoch milliseconds.
    pub at_ms: u64,
    #[serde(flatten)]
    pub kind: StoryKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StoryKind {
    Started {
        team: String,
        backend: String,
    },
    /// What a person or a script typed to the lead.
    Input {
        text: String,
    },
    /// A message between the lead and a teammate.
    Message {
        from: String,
        to: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        summary: Option<String>,
    },
    /// A message the lead sent got further (`queued`, `delivered`, `read`, `acted`,
    /// `failed`: `lead::ledger`); `id` is the ledger's, `to` the teammate.
    Receipt {
        id: u64,
        to: String,
        state: crate::lead::ledger::Receipt,
    },
    /// The lead model's answer.
    Lead {
        text: String,
    },
    /// A note of teamlead's (outcomes of commands, problems, hook decisions).
    Note {
        text: String,
    },
    /// A protocol notice from a teammate (idle, shutdown, …) as a one-liner.
    Frame {
        from: String,
        line: String,
    },
    PermissionRequest {
        id: u64,
        request_id: String,
        teammate: String,
        tool: String,
        description: String,
        input: Value,
    },
    PermissionAnswer {
        id: u64,
        request_id: String,
        teammate: String,
        tool: String,
        /// `allow`, `allow_always`, `deny`, or `answered` (by the lead itself: a policy
        /// hook, a mode, a quit).
        decision: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        feedback: Option<String>,
    },
    PlanRequest {
        request_id: String,
        from: String,
    },
    PlanAnswer {
        request_id: String,
        from: String,
    },
    /// A teammate appeared (`started`), changed status, or left the team (`removed`).
    Teammate {
        name: String,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        detail: Option<String>,
    },
    Task {
        id: String,
        subject: String,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none", default)]
        owner: Option<String>,
    },
    /// What the lead model used so far.
    Usage {
        input_tokens: u64,
        output_tokens: u64,
    },
    /// The lead has finished.
    Exited,
}

/// A teammate status as one word (what `ctl wait --teammate N --status S` compares), and
/// its detail (why it stopped).
pub fn status_word(status: &TeammateStatus) -> (&'static str, Option<String>) {
    match status {
        TeammateStatus::Working => ("working", None),
        TeammateStatus::WaitingForApproval => ("waiting", None),
        TeammateStatus::OnClientPrompt { title, .. } => (
            "waiting",
            Some(format!("on its client's prompt in its pane: {title}")),
        ),
        TeammateStatus::Idle { .. } => ("idle", None),
        TeammateStatus::ShuttingDown { .. } => ("shutting-down", None),
        TeammateStatus::Gone => ("gone", None),
        TeammateStatus::Unreachable { host, .. } => {
            ("unreachable", Some(format!("the link to {host} is down")))
        }
        TeammateStatus::Stopped { how } => ("stopped", Some(how.clone())),
    }
}

/// Every word [`status_word`] says.
pub const STATUS_WORDS: [&str; 7] = [
    "unreachable",
    "working",
    "waiting",
    "idle",
    "shutting-down",
    "gone",
    "stopped",
];

/// The story so far and what it compares new snapshots with.
#[derive(Debug, Default)]
pub struct Story {
    seq: u64,
    kept: VecDeque<(usize, StoryEvent)>,
    /// The bytes of `kept` (as JSON).
    kept_bytes: usize,
    team: BTreeMap<String, (&'static str, Option<String>)>,
    tasks: BTreeMap<String, (String, Option<String>)>,
    permissions: BTreeMap<u64, PendingPermission>,
    plans: BTreeMap<String, PendingPlan>,
    /// Answers clients sent, by queue key, until the request leaves the queue.
    decisions: HashMap<u64, (String, Option<String>)>,
}

impl Story {
    /// A client answered request `key` this way.
    pub fn note_decision(&mut self, key: u64, decision: &PermissionDecision) {
        let (word, feedback) = match decision {
            PermissionDecision::AllowOnce => ("allow", None),
            PermissionDecision::AllowAlways(_) => ("allow_always", None),
            PermissionDecision::Deny { feedback } => ("deny", feedback.clone()),
        };
        self.decisions.insert(key, (word.to_string(), feedback));
    }

    /// The events kept, oldest first.
    pub fn history(&self) -> impl Iterator<Item = &StoryEvent> {
        self.kept.iter().map(|(_, e)| e)
    }

    /// Takes one controller event into account; returns the story events it makes.
    pub fn observe(&mut self, event: &LeadEvent, now_ms: u64) -> Vec<StoryEvent> {
        let kinds = self.kinds_of(event);
        kinds
            .into_iter()
            .map(|kind| {
                self.seq += 1;
                let e = StoryEvent {
                    seq: self.seq,
                    at_ms: now_ms,
                    kind,
                };
                let size = crate::lead::shown::json_len(&e);
                self.kept_bytes += size;
                self.kept.push_back((size, e.clone()));
                while self.kept.len() > STORY_KEPT
                    || (self.kept_bytes > STORY_BYTES && self.kept.len() > 1)
                {
                    if let Some((gone, _)) = self.kept.pop_front() {
                        self.kept_bytes -= gone;
                    }
                }
                e
            })
            .collect()
    }

    fn kinds_of(&mut self, event: &LeadEvent) -> Vec<StoryKind> {
        match event {
            LeadEvent::Started { team, backend, .. } => vec![StoryKind::Started {
                team: team.clone(),
                backend: backend.to_string(),
            }],
            LeadEvent::Transcript(item) => vec![transcript_kind(item)],
            LeadEvent::Receipt { id, to, state, .. } => vec![StoryKind::Receipt {
                id: *id,
                to: to.clone(),
                state: *state,
            }],
            LeadEvent::Team(team) => {
                let mut out = Vec::new();
                let mut now = BTreeMap::new();
                for t in team {
                    let (word, detail) = status_word(&t.status);
                    match self.team.get(&t.name) {
                        None => {
                            out.push(StoryKind::Teammate {
                                name: t.name.clone(),
                                status: "started".into(),
                                detail: None,
                            });
                            out.push(teammate(&t.name, word, &detail));
                        }
                        Some((w, d)) if *w != word || *d != detail => {
                            out.push(teammate(&t.name, word, &detail))
                        }
                        Some(_) => {}
                    }
                    now.insert(t.name.clone(), (word, detail));
                }
                for name in self.team.keys().filter(|n| !now.contains_key(*n)) {
                    out.push(teammate(name, "removed", &None));
                }
                self.team = now;
                out
            }
            LeadEvent::Tasks(tasks) => {
                let mut out = Vec::new();
                let mut now = BTreeMap::new();
                for t in tasks.iter().filter(|t| !t.internal) {
                    let state = (t.status.clone(), t.owner.clone());
                    if self.tasks.get(&t.id) != Some(&state) {
                        out.push(StoryKind::Task {
                            id: t.id.clone(),
                            subject: t.subject.clone(),
                            status: t.status.clone(),
                            owner: t.owner.clone(),
                        });
                    }
                    now.insert(t.id.clone(), state);
                }
                self.tasks = now;
                out
            }
            LeadEvent::Permissions(queue) => {
                let mut out = Vec::new();
                let now: BTreeMap<u64, PendingPermission> =
                    queue.iter().map(|p| (p.key, p.clone())).collect();
                for (key, p) in &self.permissions {
                    if !now.contains_key(key) {
                        let (decision, feedback) = self
                            .decisions
                            .remove(key)
                            .unwrap_or_else(|| ("answered".to_string(), None));
                        out.push(StoryKind::PermissionAnswer {
                            id: *key,
                            request_id: p.request_id.clone(),
                            teammate: p.worker.clone(),
                            tool: p.tool_name.clone(),
                            decision,
                            feedback,
                        });
                    }
                }
                for (key, p) in &now {
                    if !self.permissions.contains_key(key) {
                        out.push(StoryKind::PermissionRequest {
                            id: *key,
                            request_id: p.request_id.clone(),
                            teammate: p.worker.clone(),
                            tool: p.tool_name.clone(),
                            description: p.description.clone(),
                            input: p.input.clone(),
                        });
                    }
                }
                self.permissions = now;
                out
            }
            LeadEvent::Plans(queue) => {
                let mut out = Vec::new();
                let now: BTreeMap<String, PendingPlan> = queue
                    .iter()
                    .map(|p| (p.request_id.clone(), p.clone()))
                    .collect();
                for (id, p) in &self.plans {
                    if !now.contains_key(id) {
                        out.push(StoryKind::PlanAnswer {
                            request_id: id.clone(),
                            from: p.from.clone(),
                        });
                    }
                }
                for (id, p) in &now {
                    if !self.plans.contains_key(id) {
                        out.push(StoryKind::PlanRequest {
                            request_id: id.clone(),
                            from: p.from.clone(),
                        });
                    }
                }
                self.plans = now;
                out
            }
            LeadEvent::LeadUsage(u) => vec![StoryKind::Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }],
            LeadEvent::Exited => vec![StoryKind::Exited],
            LeadEvent::TeammateTranscript { .. }
            | LeadEvent::LeadMode(_)
            | LeadEvent::Busy(_)
            | LeadEvent::HandOverTerminal { .. }
            | LeadEvent::Barrier { .. }
            | LeadEvent::Review(_)
            | LeadEvent::ReviewFile { .. } => Vec::new(),
            LeadEvent::ReviewPr { .. }
            | LeadEvent::MergeQueue(_)
            | LeadEvent::Merged(_)
            | LeadEvent::WorktreesAtQuit(_) => Vec::new(),
        }
    }
}

fn teammate(name: &str, status: &str, detail: &Option<String>) -> StoryKind {
    StoryKind::Teammate {
        name: name.to_string(),
        status: status.to_string(),
        detail: detail.clone(),
    }
}

fn transcript_kind(item: &TranscriptItem) -> StoryKind {
    match item {
        TranscriptItem::User { text } | TranscriptItem::Ctl { text } => {
            StoryKind::Input { text: text.clone() }
        }
        TranscriptItem::ToTeammate { to, text, .. } => StoryKind::Message {
            from: crate::protocol::LEAD_NAME.to_string(),
            to: to.clone(),
            text: text.clone(),
            summary: None,
        },
        TranscriptItem::Lead { text } => StoryKind::Lead { text: text.clone() },
        TranscriptItem::Teammate {
            from,
            summary,
            text,
            ..
        } => StoryKind::Message {
            from: from.clone(),
            to: crate::protocol::LEAD_NAME.to_string(),
            text: text.clone(),
            summary: summary.clone(),
        },
        TranscriptItem::Frame { from, line, .. } => StoryKind::Frame {
            from: from.clone(),
            line: line.clone(),
        },
        TranscriptItem::System { text } => StoryKind::Note { text: text.clone() },
    }
}

impl StoryKind {
    /// The event as one line of text (unescaped: the printer escapes).
    pub fn one_line(&self) -> String {
        match self {
            StoryKind::Started { team, backend } => format!("started team {team} ({backend})"),
            StoryKind::Input { text } => format!("> {text}"),
            StoryKind::Message { from, to, text, .. } => format!("{from} → {to}: {text}"),
            StoryKind::Receipt { id, to, state } => {
                format!("message #{id} to {to}: {}", state.as_str())
            }
            StoryKind::Lead { text } => format!("lead: {text}"),
            StoryKind::Note { text } => format!("note: {text}"),
            StoryKind::Frame { from, line } => format!("{from}: {line}"),
            StoryKind::PermissionRequest {
                id,
                teammate,
                tool,
                description,
                ..
            } => format!("permission #{id} asked by {teammate}: {tool} {description}"),
            StoryKind::PermissionAnswer {
                id,
                teammate,
                decision,
                feedback,
                ..
            } => match feedback {
                Some(f) => format!("permission #{id} of {teammate}: {decision} ({f})"),
                None => format!("permission #{id} of {teammate}: {decision}"),
            },
            StoryKind::PlanRequest { request_id, from } => {
                format!("plan {request_id} from {from} waits for approval")
            }
            StoryKind::PlanAnswer { request_id, from } => {
                format!("plan {request_id} from {from} answered")
            }
            StoryKind::Teammate {
                name,
                status,
                detail,
            } => match detail {
                Some(d) => format!("teammate {name}: {status} ({d})"),
                None => format!("teammate {name}: {status}"),
            },
            StoryKind::Task {
                id,
                subject,
                status,
                owner,
            } => match owner {
                Some(o) => format!("task #{id} {subject}: {status} ({o})"),
                None => format!("task #{id} {subject}: {status}"),
            },
            StoryKind::Usage {
                input_tokens,
                output_tokens,
            } => format!("lead usage: {input_tokens} in, {output_tokens} out"),
            StoryKind::Exited => "the lead has finished".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lead::contract::{PermissionSource, TaskView};

    fn perm(key: u64) -> PendingPermission {
        PendingPermission {
            key,
            request_id: format!("r{key}"),
            worker: "alpha".into(),
            color: None,
            tool_name: "Bash".into(),
            description: "run".into(),
            input: Value::Null,
            suggestions: vec![],
            source: PermissionSource::Bridge,
            in_part: None,
            host: None,
        }
    }

    #[test]
    fn requests_answers_and_task_changes_become_events_once() {
        let mut s = Story::default();
        assert_eq!(
            s.observe(&LeadEvent::Permissions(vec![perm(1)]), 1).len(),
            1
        );
        assert!(
            s.observe(&LeadEvent::Permissions(vec![perm(1)]), 2)
                .is_empty()
        );
        s.note_decision(
            1,
            &PermissionDecision::Deny {
                feedback: Some("no".into()),
            },
        );
        let answered = s.observe(&LeadEvent::Permissions(vec![]), 3);
        assert!(matches!(
            &answered[0].kind,
            StoryKind::PermissionAnswer { decision, feedback: Some(f), .. } if decision == "deny" && f == "no"
        ));
        let task = |status: &str| TaskView {
            id: "1".into(),
            subject: "s".into(),
            status: status.into(),
            owner: None,
            blocked_by: vec![],
            internal: false,
        };
        assert_eq!(
            s.observe(&LeadEvent::Tasks(vec![task("pending")]), 4).len(),
            1
        );
        assert!(
            s.observe(&LeadEvent::Tasks(vec![task("pending")]), 5)
                .is_empty()
        );
        assert_eq!(
            s.observe(&LeadEvent::Tasks(vec![task("completed")]), 6)
                .len(),
            1
        );
        let seqs: Vec<u64> = s.history().map(|e| e.seq).collect();
        assert_eq!(seqs, [1, 2, 3, 4]);
        let line = serde_json::to_string(s.history().next().unwrap()).unwrap();
        assert!(line.contains("\"kind\":\"permission_request\""), "{line}");
    }
}
