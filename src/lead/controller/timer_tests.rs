//! The lead's timers under tokio's paused time: the `/quit` deadline (a teammate that never
//! answers is killed when it passes, not before; one that answers in time is not killed) and
//! the safety poll (a change no file event announced is seen within its period, with and
//! without a file watcher). The lead runs on temporary files with a watcher that reports
//! nothing (or none at all), so every change it sees came from the poll, at a known virtual
//! time.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::state::Controller;
use super::{LeadOptions, QUIT_TIMEOUT, SAFETY_POLL, SAFETY_POLL_WATCHED};
use crate::lead::bridge::LeaderBridge;
use crate::lead::contract::{LeadCommand, LeadEvent, TranscriptItem};
use crate::protocol::frames::{Frame, ShutdownApproved};
use crate::protocol::time::now_iso;
use crate::protocol::{InboxEntry, LEAD_NAME, Member};
use crate::store::{self, Home};
use crate::watch::ChangeEvent;

/// Longer than any wait of these tests, in virtual time.
const DEADLINE: Duration = Duration::from_secs(120);

/// What the lead learns of file changes.
enum Watching {
    /// No watcher: the safety poll is how changes are seen.
    None,
    /// A watcher that misses every event.
    Deaf,
}

/// A lead on temporary files, driven by commands, read through its events.
struct TestLead {
    home: Home,
    team: String,
    commands: mpsc::Sender<LeadCommand>,
    events: mpsc::Receiver<LeadEvent>,
    seen: Vec<LeadEvent>,
    _deaf: Option<mpsc::UnboundedSender<ChangeEvent>>,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

impl TestLead {
    async fn start(team: &str, watching: Watching) -> TestLead {
        let home_dir = tempfile::tempdir().expect("temp home");
        let cwd = tempfile::tempdir().expect("temp cwd");
        let home = Home::new(home_dir.path());
        let opts = LeadOptions::new(home.clone(), cwd.path()).with_team(team);
        let (commands, commands_rx) = mpsc::channel(256);
        let (events_tx, events) = mpsc::channel(4096);
        let (bridge, bridge_rx) = LeaderBridge::new();
        let (controller, mut channels) =
            Controller::create(opts, bridge, bridge_rx, commands_rx, events_tx)
                .expect("lead starts");
        let team = controller.team_name().to_string();
        // The real watcher's receiver is dropped here: its thread ends and tells nobody.
        let deaf = match watching {
            Watching::None => {
                channels.changes = None;
                None
            }
            Watching::Deaf => {
                let (tx, rx) = mpsc::unbounded_channel();
                channels.changes = Some(rx);
                Some(tx)
            }
        };
        tokio::spawn(controller.run(channels));
        let mut lead = TestLead {
            home,
            team,
            commands,
            events,
            seen: Vec::new(),
            _deaf: deaf,
            _dirs: (home_dir, cwd),
        };
        lead.wait_for("Started", |e| matches!(e, LeadEvent::Started { .. }))
            .await;
        lead
    }

    async fn send(&self, command: LeadCommand) {
        self.commands.send(command).await.expect("lead alive");
    }

    /// The next event matching `pred` (earlier ones are kept in `seen`).
    async fn wait_for(&mut self, what: &str, pred: impl Fn(&LeadEvent) -> bool) -> LeadEvent {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let event = tokio::time::timeout_at(deadline, self.events.recv())
                .await
                .unwrap_or_else(|_| panic!("timed out waiting for {what}; seen: {:#?}", self.seen))
                .unwrap_or_else(|| panic!("the lead ended while waiting for {what}"));
            self.seen.push(event.clone());
            if pred(&event) {
                return event;
            }
        }
    }

    /// Every event sent so far, without waiting.
    fn take_sent(&mut self) {
        while let Ok(event) = self.events.try_recv() {
            self.seen.push(event);
        }
    }

    fn saw_note(&self, needle: &str) -> bool {
        self.seen.iter().any(|e| is_note(e, needle))
    }

    /// A pane teammate the test plays itself (the lead has no runtime for it).
    fn add_pane_member(&self, name: &str) {
        let mut m = Member::new(name, &self.team, "/");
        m.tmux_pane_id = "%7".to_string();
        m.backend_type = Some("tmux".to_string());
        store::add_member(&self.home, &self.team, m).expect("add member");
    }

    async fn wait_member(&mut self, name: &str) {
        self.wait_for(
            &format!("{name} in the team"),
            |e| matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == name)),
        )
        .await;
    }

    fn to_lead(&self, entry: &InboxEntry) {
        store::inbox::append(&self.home, &self.team, LEAD_NAME, entry).expect("append");
    }

    /// The id of the shutdown request in `name`'s inbox, once it is written.
    async fn shutdown_request_of(&self, name: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let found = store::inbox::read(&self.home, &self.team, name)
                .ok()
                .into_iter()
                .flat_map(|inbox| inbox.entries)
                .find_map(|e| match e.parse_frame() {
                    Some(Frame::ShutdownRequest(r)) => Some(r.request_id),
                    _ => None,
                });
            if let Some(id) = found {
                return id;
            }
            assert!(Instant::now() < deadline, "no shutdown request for {name}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

fn is_note(event: &LeadEvent, needle: &str) -> bool {
    matches!(event, LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains(needle))
}

#[tokio::test(start_paused = true)]
async fn quit_kills_a_teammate_that_never_answers_when_the_deadline_passes_and_not_before() {
    let mut lead = TestLead::start("quit-silent", Watching::None).await;
    lead.add_pane_member("ghost");
    lead.wait_member("ghost").await;

    let asked_at = Instant::now();
    lead.send(LeadCommand::Quit).await;
    lead.wait_for("the shutdown requests", |e| {
        is_note(e, "Asking 1 teammate(s) to shut down")
    })
    .await;
    assert!(!lead.shutdown_request_of("ghost").await.is_empty());

    tokio::time::sleep_until(asked_at + QUIT_TIMEOUT - Duration::from_millis(1)).await;
    lead.take_sent();
    assert!(
        !lead.saw_note("did not shut down in time"),
        "killed before the deadline: {:#?}",
        lead.seen
    );
    assert!(!lead.seen.iter().any(|e| matches!(e, LeadEvent::Exited)));

    lead.wait_for("the kill", |e| {
        is_note(
            e,
            "Killing 1 teammate(s) that did not shut down in time: ghost",
        )
    })
    .await;
    let killed_after = asked_at.elapsed();
    assert!(
        killed_after >= QUIT_TIMEOUT && killed_after < QUIT_TIMEOUT + Duration::from_millis(100),
        "killed {killed_after:?} after /quit"
    );
    lead.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
        .await;
    assert!(
        store::read_team(&lead.home, &lead.team).is_err(),
        "team kept"
    );
}

#[tokio::test(start_paused = true)]
async fn quit_does_not_kill_a_teammate_that_answers_before_the_deadline() {
    let mut lead = TestLead::start("quit-answered", Watching::None).await;
    lead.add_pane_member("worker");
    lead.wait_member("worker").await;

    let asked_at = Instant::now();
    lead.send(LeadCommand::Quit).await;
    let request_id = lead.shutdown_request_of("worker").await;
    lead.to_lead(&InboxEntry::frame(
        "worker",
        &Frame::ShutdownApproved(ShutdownApproved {
            request_id,
            from: "worker".to_string(),
            timestamp: now_iso(),
            pane_id: Some("%7".to_string()),
            backend_type: Some("tmux".to_string()),
        }),
    ));

    lead.wait_for("Exited", |e| matches!(e, LeadEvent::Exited))
        .await;
    let done_after = asked_at.elapsed();
    assert!(
        done_after < QUIT_TIMEOUT,
        "the quit waited {done_after:?} for an answered teammate"
    );
    assert!(lead.saw_note("worker has shut down"), "{:#?}", lead.seen);
    assert!(
        !lead.saw_note("did not shut down in time"),
        "an answered teammate was killed: {:#?}",
        lead.seen
    );
}

/// A message written to the lead's inbox with no file event is shown within `period`.
async fn a_message_is_seen_within(watching: Watching, period: Duration) {
    let mut lead = TestLead::start("safety", watching).await;
    lead.add_pane_member("worker");
    lead.wait_member("worker").await;

    let written_at = Instant::now();
    lead.to_lead(&InboxEntry::new("worker", "the parser is done"));
    lead.wait_for("the message", |e| {
        matches!(e, LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) if text.contains("the parser is done"))
    })
    .await;
    let seen_after = written_at.elapsed();
    // Not at once (nothing announced it) and no later than one period.
    assert!(
        seen_after > Duration::ZERO && seen_after <= period,
        "seen {seen_after:?} after it was written (period {period:?})"
    );
}

#[tokio::test(start_paused = true)]
async fn without_a_watcher_the_safety_poll_sees_a_change_within_its_period() {
    a_message_is_seen_within(Watching::None, SAFETY_POLL).await;
}

#[tokio::test(start_paused = true)]
async fn a_missed_file_event_is_caught_by_the_watched_safety_poll() {
    a_message_is_seen_within(Watching::Deaf, SAFETY_POLL_WATCHED).await;
}

/// `/shutdown` of a teammate that does not answer: shown as shutting down since the ask, the
/// lead says how to force it when `shutdown-timeout` passes (not before), and `--force` kills
/// it then.
#[tokio::test(start_paused = true)]
async fn a_shutdown_that_does_not_end_is_told_at_the_timeout_and_forced_with_force() {
    use super::SHUTDOWN_TIMEOUT;
    use crate::lead::contract::{TeammateStatus, ViewTarget};
    let mut lead = TestLead::start("shutdown-slow", Watching::None).await;
    lead.add_pane_member("busy");
    lead.add_pane_member("stuck");
    lead.wait_member("stuck").await;
    let submit = |text: &str| LeadCommand::Submit {
        target: ViewTarget::Lead,
        text: text.to_string(),
    };

    let asked_at = Instant::now();
    lead.send(submit("/shutdown busy")).await;
    lead.wait_for("busy shutting down", |e| {
        matches!(e, LeadEvent::Team(t) if t.iter().any(|v| v.name == "busy" && matches!(v.status, TeammateStatus::ShuttingDown { since_ms } if since_ms > 0)))
    })
    .await;
    tokio::time::sleep_until(asked_at + SHUTDOWN_TIMEOUT - Duration::from_millis(1)).await;
    lead.take_sent();
    assert!(!lead.saw_note("has not shut down"), "{:#?}", lead.seen);
    lead.wait_for("the hint", |e| {
        is_note(
            e,
            "busy has not shut down after 30s (it may be mid-turn): /kill busy stops it now, or /shutdown busy --force kills it if it does not end.",
        )
    })
    .await;
    let told_after = asked_at.elapsed();
    assert!(
        told_after >= SHUTDOWN_TIMEOUT
            && told_after < SHUTDOWN_TIMEOUT + Duration::from_millis(100),
        "told {told_after:?} after /shutdown"
    );
    // Told once; still a member, still shutting down.
    let team = store::read_team(&lead.home, &lead.team).unwrap();
    assert!(team.member("busy").is_some());

    // --force: killed when the timeout passes.
    let forced_at = Instant::now();
    lead.send(submit("/shutdown stuck --force")).await;
    lead.wait_for("the forced kill", |e| {
        is_note(e, "stuck has not shut down after 30s: killing it (forced).")
    })
    .await;
    let killed_after = forced_at.elapsed();
    assert!(
        killed_after >= SHUTDOWN_TIMEOUT
            && killed_after < SHUTDOWN_TIMEOUT + Duration::from_millis(100),
        "killed {killed_after:?} after /shutdown --force"
    );
    lead.wait_for(
        "stuck gone",
        |e| matches!(e, LeadEvent::Team(t) if !t.iter().any(|v| v.name == "stuck")),
    )
    .await;
    assert!(
        lead.seen
            .iter()
            .filter(|e| is_note(e, "busy has not shut down"))
            .count()
            == 1
    );
}
