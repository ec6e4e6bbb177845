//! `teamlead teammate`: the teammate runtime as its own process (a pane teammate). The same loop
//! as in-process teammates, with everything through the file mailbox: permission requests go to
//! the lead's inbox ([`MailboxAsker`]); the file watcher wakes it; it shows who it is and what it
//! does in its pane ([`display`]); it exits after `shutdown_approved`, on SIGINT/SIGTERM/SIGHUP,
//! and within seconds when the lead's liveness lock shows the lead is gone.

pub mod display;

use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::agent::events::{EventSink, StopReason, TeammateEvent};
use crate::agent::mailbox_asker::MailboxAsker;
use crate::agent::runtime::{Controls, TeammateConfig, run_teammate};
use crate::store::{self, Home};
use crate::watch::{self, WatchOptions, WatchScope};

/// How often the lead's liveness lock is checked (the teammate exits within 3 s of the lead).
pub const LEAD_CHECK_EVERY: Duration = Duration::from_millis(500);

/// Is the lead known to be gone? Only a teamlead lead leaves a liveness file; a team without
/// one (a Claude Code lead) is never judged dead from here.
pub fn lead_gone(home: &Home, team: &str) -> bool {
    let has_file = home.lead_lock_path(team).is_ok_and(|p| p.exists());
    has_file && !store::liveness::is_lead_alive(home, team)
}

/// Runs the teammate until it stops; its pane display goes to `out`.
pub async fn run(config: TeammateConfig, out: Box<dyn Write + Send>) -> StopReason {
    let controls = Controls::new();
    let asker = MailboxAsker::new(
        &config.home,
        &config.team,
        &config.name,
        config.color.as_deref(),
    )
    .with_wake(controls.wake.clone());

    // Wake on every change in the team's directories (inbox writes, task changes).
    let (_watcher, changes) = match WatchScope::team(&config.home, &config.team)
        .ok()
        .and_then(|scope| watch::watch(&scope, &WatchOptions::default()).ok())
    {
        Some((watcher, changes)) => (Some(watcher), Some(changes)),
        None => (None, None),
    };
    if let Some(mut changes) = changes {
        let wake = controls.clone();
        tokio::spawn(async move {
            while changes.recv().await.is_some() {
                wake.wake();
            }
        });
    }

    // The lead's liveness.
    let stop_on_lead_gone = controls.clone();
    let (home, team) = (config.home.clone(), config.team.clone());
    let (gone_tx, mut gone_rx) = mpsc::unbounded_channel::<()>();
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(LEAD_CHECK_EVERY);
        loop {
            tick.tick().await;
            if stop_on_lead_gone.stop.is_cancelled() {
                return;
            }
            if lead_gone(&home, &team) {
                let _ = gone_tx.send(());
                stop_on_lead_gone.stop();
                return;
            }
        }
    });

    // Signals stop it like a kill.
    let stop_on_signal = controls.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut int), Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) else {
            return;
        };
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
            _ = hup.recv() => {}
        }
        stop_on_signal.stop();
    });

    let (tx, mut rx) = mpsc::unbounded_channel::<TeammateEvent>();
    let mut screen = display::PaneDisplay::new(&config, out);
    screen.draw();
    let sink = EventSink::new(&config.name, tx);
    let runner = tokio::spawn(run_teammate(config, Arc::new(asker), sink, controls));
    while let Some(event) = rx.recv().await {
        screen.apply(&event.kind);
        if gone_rx.try_recv().is_ok() {
            screen.note("the team lead is gone: exiting");
        }
        screen.draw();
    }
    let reason = runner
        .await
        .unwrap_or_else(|_| StopReason::Failed("the teammate task panicked".into()));
    store::lock::release_all_held();
    reason
}
