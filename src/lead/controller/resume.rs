//! Starting on a team that outlived its lead. The start-up decision ([`open_team`]): a new team
//! is created; a teamlead team whose lead `lead_probe` proves dead is *adopted*, never deleted
//! (its liveness flock is taken first: it is the arbiter when several leads start at once, and
//! the losers are told the team has a running lead); a team whose lead runs, may run, or that
//! is not teamlead's is refused. Adoption ([`Controller::resume`]), once the controller runs:
//! the previous session's pane server is taken over, every pane teammate still running is
//! re-bound through the executor (on its host for a remote one), the others (in-process teammates die with their lead) are
//! listed with `/respawn NAME`, their tasks go back to pending, permission and plan requests
//! the previous lead received and never answered are queued again, and the unread messages of
//! the lead's inbox are delivered (once: the delivery log de-duplicates), and the teammate
//! worktrees the record lists become this lead's to retire at `/quit`. One note says what was
//! found and what was done.

use super::LeadError;
use super::state::Controller;
use crate::backend::executor::AdoptRequest;
use crate::lead::poller::{LeadIncoming, classify};
use crate::protocol::frames::Frame;
use crate::protocol::{BackendKind, InboxEntry, LEAD_NAME, PermissionMode, TeamFile};
use crate::store::delivery::DeliveryTail;
use crate::store::{self, Home, LeadLiveness, SessionRecord, StoreError};

/// What the previous lead of an adopted team left.
#[derive(Debug)]
pub(crate) struct Previous {
    pub lead_pid: Option<u32>,
    pub record: Option<SessionRecord>,
}

/// Creates the team, or adopts the one a dead teamlead lead left; takes the liveness lock.
pub(crate) fn open_team(
    home: &Home,
    team: &str,
    cwd: &str,
    lead_mode: PermissionMode,
) -> Result<(TeamFile, LeadLiveness, Option<Previous>), LeadError> {
    use crate::backend::lead_probe::{self, LeadStatus, Owner};
    if home.config_path(team)?.exists() {
        let probe = lead_probe::probe(home, team);
        match (probe.owner, &probe.status) {
            (Owner::Teamlead, LeadStatus::Dead { .. }) => {
                // A team file that cannot be read is refused before the flock is taken (which
                // writes this pid into the liveness file): nothing of the team is changed.
                if let Err(StoreError::Parse { path, detail }) = store::read_team(home, team) {
                    return Err(broken_team(home, team, &path, &detail));
                }
                // The flock decides who adopts: whoever holds it leads the team.
                let liveness = LeadLiveness::acquire(home, team)?;
                match store::read_team(home, team) {
                    Ok(_) => {
                        store::set_modes(home, team, &[(LEAD_NAME, lead_mode)])?;
                        let file = store::read_team(home, team)?;
                        let previous = Previous {
                            lead_pid: probe.recorded_pid,
                            record: SessionRecord::read(home, team),
                        };
                        return Ok((file, liveness, Some(previous)));
                    }
                    // Removed meanwhile (another lead adopted it and quit): start afresh.
                    Err(StoreError::NotFound { .. }) => drop(liveness),
                    // Never deleted nor rewritten here: the person is told what to do.
                    Err(StoreError::Parse { path, detail }) => {
                        return Err(broken_team(home, team, &path, &detail));
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            // The probe's evidence of a live lead (the flock held, a claimed live process) is
            // enough: another lead that has just won the flock has not yet written its pid.
            (Owner::Teamlead, LeadStatus::Alive { .. }) => {
                return Err(StoreError::LeadAlive {
                    team: team.to_string(),
                    pid: store::liveness::lead_pid(home, team),
                }
                .into());
            }
            (Owner::Teamlead, status) => {
                return Err(LeadError::TeamInUse {
                    team: team.to_string(),
                    why: status.evidence().first().cloned().unwrap_or_default(),
                });
            }
            (Owner::Other, _) => return Err(LeadError::ForeignTeam(team.to_string())),
        }
    }
    let mut file = TeamFile::new(team, None, cwd);
    if let Some(lead) = file.member_mut(LEAD_NAME) {
        lead.mode = Some(lead_mode.as_str().to_string());
    }
    store::create_team(home, &file)?;
    let liveness = LeadLiveness::acquire(home, team)?;
    Ok((file, liveness, None))
}

/// The refusal of a dead team whose team file cannot be read, saying what to do.
fn broken_team(home: &Home, team: &str, path: &std::path::Path, detail: &str) -> LeadError {
    let shown = path.strip_prefix(&home.root).unwrap_or(path);
    LeadError::BrokenTeam {
        team: team.to_string(),
        why: format!("{}: {detail}", shown.display()),
    }
}

impl Controller {
    /// Adopts the team the previous lead left (see the module header).
    pub async fn resume(&mut self, previous: Previous) {
        let record = previous.record.unwrap_or_default();
        self.record.adopt(record.teammates.clone());
        // Worktrees of earlier sessions are this lead's to retire at `/quit`, whether or not
        // their teammates are still in the team.
        for w in &record.worktrees {
            let path = std::path::PathBuf::from(&w.path);
            let worktree = crate::backend::worktree::Worktree {
                path,
                branch: w.branch.clone(),
                repo: std::path::PathBuf::from(&w.repo),
                host: None,
            };
            self.worktrees.adopt(&w.name, worktree);
        }
        let mut notes = Vec::new();
        if let Some(pane_session) = &record.pane_session {
            match self.given.executor().take_over(pane_session).await {
                Ok(true) => notes.push(format!(
                    "took over its panes' {}",
                    self.given.executor().session_label(pane_session)
                )),
                Ok(false) => {}
                Err(e) => notes.push(format!("could not take over its panes ({e})")),
            }
        }
        self.save_record();
        self.fresh_team().await;
        self.fresh_tasks().await;
        let members: Vec<(String, String, Option<BackendKind>, Option<String>)> = self
            .cache
            .file()
            .teammates()
            .map(|m| {
                let host = crate::backend::hosts::remote::member_host(m).map(str::to_string);
                (
                    m.name.clone(),
                    m.tmux_pane_id.clone(),
                    m.backend_kind(),
                    host,
                )
            })
            .collect();
        let mut adopted = Vec::new();
        let mut lost = Vec::new();
        for (name, pane_id, kind, host) in members {
            let why = match kind {
                // A teammate on another host is re-bound there, whatever this session runs.
                Some(k) if (k == self.given.kind() || host.is_some()) && k.is_pane() => {
                    let request = AdoptRequest {
                        name: name.clone(),
                        pane_id: pane_id.clone(),
                        host,
                    };
                    match self.given.executor().adopt(request).await {
                        Ok(_) => {
                            self.roster.entry(&name);
                            self.liveness_wake.notify_one();
                            adopted.push(format!("{name} ({pane_id})"));
                            continue;
                        }
                        Err(e) => e.to_string(),
                    }
                }
                Some(k) if !k.is_pane() => "in-process teammates end with their lead".to_string(),
                Some(k) => {
                    // Out of this session's reach: ask it to leave rather than run unled.
                    self.send_shutdown_request(
                        &name,
                        Some("the new lead cannot reach its pane"),
                        |_, _| {},
                    );
                    format!("it runs in {k} and this session runs {}", self.given.kind())
                }
                None => "its backend is unknown".to_string(),
            };
            lost.push((name, why));
        }
        let mut unassigned = 0;
        for (name, why) in &lost {
            unassigned += self
                .mark_stopped(name, &format!("did not survive: {why}"))
                .await;
        }
        self.fresh_tasks().await;
        let requeued = self.requeue_unanswered(&adopted_names(&adopted)).await;
        // The unread messages, before the loop starts (the drain still runs off this task).
        self.poll_inbox();
        let delivered = match self.drain.next().await {
            Some(drained) => {
                let count = drained.polled.incoming.len();
                self.on_drained(drained);
                count
            }
            None => 0,
        };
        let tasks = self
            .cache
            .tasks()
            .iter()
            .filter(|t| !t.is_internal())
            .count();
        let how = if record.kept {
            "left with /quit --keep".to_string()
        } else {
            match previous.lead_pid {
                Some(pid) => format!("its lead, pid {pid}, was gone"),
                None => "its lead was gone".to_string(),
            }
        };
        let mut text = format!(
            "Resumed the team `{}` ({how}): kept {tasks} task(s); delivered {delivered} unread message(s)",
            self.given.team()
        );
        if requeued > 0 {
            text.push_str(&format!(
                "; {requeued} request(s) still wait for your answer"
            ));
        }
        if !adopted.is_empty() {
            text.push_str(&format!("; re-bound {}", adopted.join(", ")));
        }
        for n in notes {
            text.push_str(&format!("; {n}"));
        }
        text.push('.');
        if !lost.is_empty() {
            let list: Vec<String> = lost.iter().map(|(n, why)| format!("{n} ({why})")).collect();
            text.push_str(&format!(
                "\nNot running: {}. {unassigned} task(s) went back to pending. /respawn NAME starts one again with its name, prompt, mode and worktree.",
                list.join(", ")
            ));
        }
        self.note(text);
    }

    /// Permission and plan requests of `names` the previous lead received (its delivery log)
    /// and never answered (no answer with that id in the teammate's inbox) are queued again.
    async fn requeue_unanswered(&mut self, names: &[String]) -> usize {
        if names.is_empty() {
            return 0;
        }
        let (team, names) = (self.given.team().to_string(), names.to_vec());
        let unanswered = self
            .store
            .read(move |home| unanswered_requests(home, &team, &names))
            .await
            .unwrap_or_default();
        let mut count = 0;
        for entry in unanswered {
            let incoming = classify(entry);
            if matches!(
                incoming,
                LeadIncoming::Permission { .. } | LeadIncoming::Plan { .. }
            ) {
                count += 1;
                self.on_incoming(incoming);
            }
        }
        count
    }
}

/// The permission and plan requests of `names` in the lead's delivery log that have no answer
/// with their id in the asker's inbox (read on the blocking pool).
fn unanswered_requests(home: &Home, team: &str, names: &[String]) -> Vec<InboxEntry> {
    let Ok(path) = home.delivery_log_path(team, LEAD_NAME) else {
        return Vec::new();
    };
    let mut tail = DeliveryTail::from_start(&path);
    let mut asked = Vec::new();
    while let Ok(read) = tail.read_new() {
        if read.records.is_empty() {
            break;
        }
        asked.extend(
            read.records
                .into_iter()
                .filter(|r| names.contains(&r.entry.from))
                .map(|r| r.entry),
        );
    }
    asked
        .into_iter()
        .filter(|entry| {
            let id = match entry.parse_frame() {
                Some(Frame::PermissionRequest(r)) => r.request_id,
                Some(Frame::PlanApprovalRequest(r)) => r.request_id,
                _ => return false,
            };
            let answered = store::inbox::read(home, team, &entry.from)
                .map(|inbox| inbox.entries.iter().any(|e| e.text.contains(&id)))
                .unwrap_or(true);
            !answered
        })
        .collect()
}

fn adopted_names(adopted: &[String]) -> Vec<String> {
    adopted
        .iter()
        .filter_map(|a| a.split(" (").next().map(str::to_string))
        .collect()
}
