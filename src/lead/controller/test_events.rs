//! What the controller's own tests share: a controller started on temporary files
//! ([`TestLead`]), and what they wait for in its event stream (the next event that matches,
//! with a deadline and what was awaited in the failure; a lead's note holding a text).

use std::time::Duration;

use tokio::sync::mpsc;

use crate::lead::contract::{LeadEvent, TranscriptItem};

/// The next event for which `pred` holds, within 30 s (`what` names it when none comes).
pub(super) async fn next_matching(
    events: &mut mpsc::Receiver<LeadEvent>,
    what: &str,
    pred: impl Fn(&LeadEvent) -> bool,
) -> LeadEvent {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let event = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
            .expect("the lead runs");
        if pred(&event) {
            return event;
        }
    }
}

/// Whether `e` is a note of the lead's holding `needle`.
pub(super) fn note_with(e: &LeadEvent, needle: &str) -> bool {
    matches!(e, LeadEvent::Transcript(TranscriptItem::System { text }) if text.contains(needle))
}

/// A controller on temporary files, running, that knows `alpha` as a `claude` teammate it
/// started with the session `session` (its transcript is then read by name); the test plays
/// the teammates. `set` adjusts the options first.
pub(super) struct TestLead {
    pub home: crate::store::Home,
    pub team: String,
    pub commands: mpsc::Sender<crate::lead::contract::LeadCommand>,
    pub events: mpsc::Receiver<LeadEvent>,
    /// The home and working directory: removed when dropped (keep it bound).
    pub dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// A controller created on temporary files and not running yet, with what drives it.
pub(super) struct Created {
    pub controller: super::state::Controller,
    pub channels: super::state::Channels,
    pub home: crate::store::Home,
    pub commands: mpsc::Sender<crate::lead::contract::LeadCommand>,
    pub events: mpsc::Receiver<LeadEvent>,
    /// The home and working directory: removed when dropped (keep it bound).
    pub dirs: (tempfile::TempDir, tempfile::TempDir),
}

/// A controller of `team` on temporary files (`set` adjusts the options first), not running.
pub(super) fn create(team: &str, set: impl FnOnce(&mut super::LeadOptions)) -> Created {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = crate::store::Home::new(home_dir.path());
    let mut opts = super::LeadOptions::new(home.clone(), cwd.path()).with_team(team);
    set(&mut opts);
    let (commands, commands_rx) = mpsc::channel(256);
    let (events_tx, events) = mpsc::channel(4096);
    let (bridge, bridge_rx) = crate::lead::bridge::LeaderBridge::new();
    let (controller, channels) =
        super::state::Controller::create(opts, bridge, bridge_rx, commands_rx, events_tx)
            .expect("lead");
    Created {
        controller,
        channels,
        home,
        commands,
        events,
        dirs: (home_dir, cwd),
    }
}

impl TestLead {
    pub(super) fn start(
        team: &str,
        session: &str,
        set: impl FnOnce(&mut super::LeadOptions),
    ) -> TestLead {
        let Created {
            mut controller,
            channels,
            home,
            commands,
            events,
            dirs,
        } = create(team, set);
        let team = controller.team_name().to_string();
        controller.record.started(
            "alpha",
            crate::store::TeammateRecord {
                claude: true,
                session_id: Some(session.to_string()),
                base: None,
            },
        );
        tokio::spawn(controller.run(channels));
        TestLead {
            home,
            team,
            commands,
            events,
            dirs,
        }
    }
}

/// `alpha` as a `claude` teammate in tmux pane `%7`, working in `cwd` (its member entry, to
/// adjust and add).
pub(super) fn alpha_in_a_pane(team: &str, cwd: &str) -> crate::protocol::Member {
    let mut alpha = crate::protocol::Member::new("alpha", team, cwd);
    alpha.tmux_pane_id = "%7".to_string();
    alpha.backend_type = Some("tmux".to_string());
    alpha
}
