//! Shared helpers of the lead tests: a lead session on a temporary home and working directory,
//! waiting for events with a deadline, and reading the files a user would look at.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, PendingPermission, TaskView, TeammateView, TranscriptItem,
};
use teamlead::lead::{Lead, LeadHandle, LeadOptions};
use teamlead::protocol::frames::Frame;
use teamlead::protocol::{InboxEntry, Member};
use teamlead::store::{self, Home};
use tokio::sync::mpsc;

/// How long a wait may take before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(20);

/// A running lead on a temporary home.
pub struct Session {
    pub home_dir: tempfile::TempDir,
    pub cwd: tempfile::TempDir,
    pub home: Home,
    pub team: String,
    pub handle: LeadHandle,
    pub events: mpsc::Receiver<LeadEvent>,
    /// Every event received so far.
    pub seen: Vec<LeadEvent>,
}

impl Session {
    /// Starts a lead for team `team`.
    pub async fn start(team: &str) -> Session {
        Session::start_with(team, |opts| opts).await
    }

    /// Starts a lead for team `team` with options `set` changes.
    pub async fn start_with(team: &str, set: impl FnOnce(LeadOptions) -> LeadOptions) -> Session {
        let home_dir = tempfile::tempdir().expect("temp home");
        let cwd = tempfile::tempdir().expect("temp cwd");
        let home = Home::new(home_dir.path());
        let opts = set(LeadOptions::new(home.clone(), cwd.path())
            .with_team(team)
            .with_quit_timeout(Duration::from_secs(2)));
        let (handle, events) = Lead::start(opts).expect("lead starts");
        let team = handle.team.clone();
        let mut s = Session {
            home_dir,
            cwd,
            home,
            team,
            handle,
            events,
            seen: Vec::new(),
        };
        s.wait_for("Started", |e| matches!(e, LeadEvent::Started { .. }))
            .await;
        s
    }

    pub async fn send(&self, command: LeadCommand) {
        self.handle
            .commands
            .send(command)
            .await
            .expect("lead alive");
    }

    pub async fn submit(&self, text: &str) {
        self.send(LeadCommand::Submit {
            target: teamlead::lead::contract::ViewTarget::Lead,
            text: text.to_string(),
        })
        .await;
    }

    /// Waits for the next event matching `pred` (earlier events are kept in `seen`).
    pub async fn wait_for(&mut self, what: &str, pred: impl Fn(&LeadEvent) -> bool) -> LeadEvent {
        let deadline = tokio::time::Instant::now() + DEADLINE;
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| {
                    panic!("timed out waiting for {what}; seen: {:#?}", self.tail())
                })
                .unwrap_or_else(|| panic!("the lead ended while waiting for {what}"));
            self.seen.push(event.clone());
            if pred(&event) {
                return event;
            }
        }
    }

    /// Like [`Session::wait_for`], but an event already seen counts too.
    pub async fn seen_or_wait(
        &mut self,
        what: &str,
        pred: impl Fn(&LeadEvent) -> bool,
    ) -> LeadEvent {
        if let Some(e) = self.seen.iter().find(|e| pred(e)) {
            return e.clone();
        }
        self.wait_for(what, pred).await
    }

    /// The last events seen (what a failure shows).
    pub fn tail(&self) -> Vec<&LeadEvent> {
        self.seen.iter().rev().take(30).rev().collect()
    }

    /// Waits for a `Permissions` snapshot that satisfies `pred`.
    pub async fn wait_permissions(
        &mut self,
        what: &str,
        pred: impl Fn(&[PendingPermission]) -> bool,
    ) -> Vec<PendingPermission> {
        // The current queue (the last one seen) counts: a request may arrive before the note
        // of the answer that let the teammate go on.
        let latest = self.seen.iter().rev().find_map(|e| match e {
            LeadEvent::Permissions(p) => Some(p.clone()),
            _ => None,
        });
        if let Some(queue) = latest.filter(|p| pred(p)) {
            return queue;
        }
        match self
            .wait_for(what, |e| matches!(e, LeadEvent::Permissions(p) if pred(p)))
            .await
        {
            LeadEvent::Permissions(p) => p,
            _ => unreachable!(),
        }
    }

    /// Waits until the current `Team` snapshot (the last one seen, or a later one) satisfies
    /// `pred`.
    pub async fn wait_team(
        &mut self,
        what: &str,
        pred: impl Fn(&[TeammateView]) -> bool,
    ) -> Vec<TeammateView> {
        let latest = self.seen.iter().rev().find_map(|e| match e {
            LeadEvent::Team(t) => Some(t.clone()),
            _ => None,
        });
        if let Some(team) = latest.filter(|t| pred(t)) {
            return team;
        }
        match self
            .wait_for(what, |e| matches!(e, LeadEvent::Team(t) if pred(t)))
            .await
        {
            LeadEvent::Team(t) => t,
            _ => unreachable!(),
        }
    }

    /// Waits until the current `Tasks` snapshot (the last one seen, or a later one) satisfies
    /// `pred` (the lead re-reads the task list off its loop, so the snapshot may come before
    /// the note of the command that changed it).
    pub async fn wait_tasks(
        &mut self,
        what: &str,
        pred: impl Fn(&[TaskView]) -> bool,
    ) -> Vec<TaskView> {
        let latest = self.seen.iter().rev().find_map(|e| match e {
            LeadEvent::Tasks(t) => Some(t.clone()),
            _ => None,
        });
        if let Some(tasks) = latest.filter(|t| pred(t)) {
            return tasks;
        }
        match self
            .wait_for(what, |e| matches!(e, LeadEvent::Tasks(t) if pred(t)))
            .await
        {
            LeadEvent::Tasks(t) => t,
            _ => unreachable!(),
        }
    }

    /// A system note containing `needle` (seen already, or the next); returns its text.
    pub async fn wait_note(&mut self, needle: &str) -> String {
        match self
            .seen_or_wait(&format!("a note with {needle:?}"), |e| {
                matches!(e, LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains(needle))
            })
            .await
        {
            LeadEvent::Transcript(TranscriptItem::System { text }) => text,
            _ => unreachable!(),
        }
    }

    /// A teammate's plain message (a synthetic turn) whose text contains `needle` (seen already,
    /// or the next).
    pub async fn wait_turn(&mut self, needle: &str) -> TranscriptItem {
        match self
            .seen_or_wait(&format!("a turn with {needle:?}"), |e| {
                matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) if text.contains(needle))
            })
            .await
        {
            LeadEvent::Transcript(item) => item,
            _ => unreachable!(),
        }
    }

    /// Adds a pane teammate the test plays itself (no runtime here).
    /// Adds a pane teammate to `config.json` (as Claude Code's spawn does), then waits until
    /// the lead's team shows it: what a test sends next comes from a member the lead knows, as
    /// a teammate's first message comes after its spawn.
    pub async fn add_pane_member(&mut self, name: &str, pane: &str, mode: &str) {
        let mut m = Member::new(name, &self.team, &self.cwd.path().to_string_lossy());
        m.tmux_pane_id = pane.to_string();
        m.backend_type = Some("tmux".to_string());
        m.color = Some("green".to_string());
        m.mode = Some(mode.to_string());
        store::add_member(&self.home, &self.team, m).expect("add member");
        self.wait_team(&format!("{name} in the lead's team"), |t| {
            t.iter().any(|v| v.name == name)
        })
        .await;
    }

    /// Appends to the lead's inbox as `from` would.
    pub fn to_lead(&self, entry: &InboxEntry) {
        store::inbox::append(&self.home, &self.team, "team-lead", entry).expect("append");
    }

    /// The frames in `member`'s inbox.
    pub fn frames_in(&self, member: &str) -> Vec<(InboxEntry, Frame)> {
        store::inbox::read(&self.home, &self.team, member)
            .expect("read inbox")
            .entries
            .into_iter()
            .filter_map(|e| e.parse_frame().map(|f| (e, f)))
            .collect()
    }

    pub fn team_dir(&self) -> PathBuf {
        self.home.team_dir(&self.team).expect("team dir")
    }

    pub fn tasks_dir(&self) -> PathBuf {
        self.home.tasks_dir(&self.team).expect("tasks dir")
    }

    /// Quits and waits for `Exited`.
    pub async fn quit(&mut self) {
        self.send(LeadCommand::Quit).await;
        self.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
            .await;
    }
}

/// Polls `cond` until it holds or the deadline passes.
pub async fn eventually(what: &str, cond: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + DEADLINE;
    while !cond() {
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Does `path` exist?
pub fn exists(path: &Path) -> bool {
    path.exists()
}
