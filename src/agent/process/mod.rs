//! `teamlead teammate`: the teammate runtime as its own process (a pane teammate). The same loop
//! as in-process teammates, with everything through the file mailbox: permission requests go to
//! the lead's inbox ([`MailboxAsker`]); the file watcher wakes it; it shows who it is and what it
//! does in its pane ([`display`]); it exits after `shutdown_approved`, on SIGINT/SIGTERM/SIGHUP,
//! and when the lead's liveness lock has shown the lead gone for a whole grace period
//! ([`lead_grace`], 30 s unless `TEAMLEAD_LEAD_GRACE_MS` says otherwise): a lead that comes back
//! on the team within it (a restart after a crash, `/quit --keep`) finds it running and
//! re-binds it; after it, nothing of the team is left running. A teammate whose team is gone
//! (its `config.json` missing on two checks in a row: the directory was removed under it)
//! exits at once, whatever its lead does.

pub mod display;
pub mod guard;
mod lead_watch;

use lead_watch::LeadWatch;

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use crate::agent::engines::EngineKind;
use crate::agent::events::{EventSink, StopReason, TeammateEvent};
use crate::agent::mailbox_asker::MailboxAsker;
use crate::agent::runtime::{Controls, TeammateConfig, run_teammate};
use crate::store::{self, Home};
use crate::watch::{self, WatchOptions, WatchScope};

/// How often the lead's liveness lock is checked.
pub const LEAD_CHECK_EVERY: Duration = Duration::from_millis(500);

/// How long a teammate waits for a lead to come back by default.
pub const LEAD_GRACE: Duration = Duration::from_secs(30);

/// How long a teammate waits for a lead to come back: `TEAMLEAD_LEAD_GRACE_MS` (the lead
/// passes its own value to the teammates it starts), else [`LEAD_GRACE`].
pub fn lead_grace() -> Duration {
    std::env::var("TEAMLEAD_LEAD_GRACE_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
        .unwrap_or(LEAD_GRACE)
}

/// Is the lead known to be gone? Only a teamlead lead leaves a liveness file; a team without
/// one (a Claude Code lead) is never judged dead from here.
pub fn lead_gone(home: &Home, team: &str) -> bool {
    let has_file = home.lead_lock_path(team).is_ok_and(|p| p.exists());
    has_file && !store::liveness::is_lead_alive(home, team)
}

/// Runs the teammate, its turns done by an engine of `engine`, until it stops; its pane
/// display goes to `out`.
/// Does a change of `path` concern the teammate loop? Only its own inbox and the task list
/// are read when it wakes.
fn wakes_the_loop(path: &Path, inbox: Option<&Path>, tasks: Option<&Path>) -> bool {
    Some(path) == inbox || tasks.is_some_and(|t| path.starts_with(t))
}

pub async fn run(
    config: TeammateConfig,
    engine: EngineKind,
    out: Box<dyn Write + Send>,
) -> StopReason {
    let controls = Controls::new();
    let asker = MailboxAsker::new(
        &config.home,
        &config.team,
        &config.name,
        config.color.as_deref(),
    )
    .with_wake(controls.wake.clone());

    // Wake on a change of what the loop reads: the own inbox and the task list. Not on the
    // rest of the team's files (other inboxes, the lead's): every wake reads the inbox and
    // the tasks again, so waking every teammate on every teammate's write cost a team the
    // square of its size.
    let (_watcher, changes) = match WatchScope::team(&config.home, &config.team)
        .ok()
        .and_then(|scope| watch::watch(&scope, &WatchOptions::default()).ok())
    {
        Some((watcher, changes)) => (Some(watcher), Some(changes)),
        None => (None, None),
    };
    if let Some(mut changes) = changes {
        let wake = controls.clone();
        let inbox = config.home.inbox_path(&config.team, &config.name).ok();
        let tasks = config.home.tasks_dir(&config.team).ok();
        tokio::spawn(async move {
            while let Some(change) = changes.recv().await {
                if wakes_the_loop(&change.path, inbox.as_deref(), tasks.as_deref()) {
                    wake.wake();
                }
            }
        });
    }

    // The lead's liveness: gone for a whole grace period ends the teammate.
    let (home, team) = (config.home.clone(), config.team.clone());
    let (gone_tx, mut gone_rx) = mpsc::unbounded_channel::<LeadWatch>();
    let check = move || {
        let (home, team) = (home.clone(), team.clone());
        async move {
            tokio::task::spawn_blocking(move || {
                (
                    lead_gone(&home, &team),
                    store::team::team_gone(&home, &team),
                )
            })
            .await
            .unwrap_or((false, false))
        }
    };
    tokio::spawn(lead_watch::watch_lead(
        check,
        lead_grace(),
        gone_tx,
        controls.clone(),
    ));

    // SIGUSR1 stops the current turn only (the lead's `/interrupt` and `/steer`:
    // `backend::turn_signal`), installed before the first turn.
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut usr1) = signal(SignalKind::user_defined1()) {
            let turn = controls.clone();
            tokio::spawn(async move {
                while usr1.recv().await.is_some() {
                    turn.interrupt_turn();
                }
            });
        }
    }

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
    let runner = tokio::spawn(run_teammate(
        config,
        engine.engine(),
        Arc::new(asker),
        sink,
        controls,
    ));
    // A pane that is resized (another pane split beside it) may lose what was drawn in it:
    // Zellij keeps the bottom rows of a pane that shrinks. Draw it again.
    let mut resized =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()).ok();
    loop {
        tokio::select! {
            event = rx.recv() => match event {
                Some(event) => screen.apply(&event.kind),
                None => break,
            },
            Some(watch) = gone_rx.recv() => screen.note(watch.to_string()),
            Some(()) = async {
                match resized.as_mut() {
                    Some(signal) => signal.recv().await,
                    None => std::future::pending().await,
                }
            } => {}
        }
        screen.draw();
    }
    let reason = runner
        .await
        .unwrap_or_else(|_| StopReason::Failed("the teammate task panicked".into()));
    store::lock::release_all_held();
    reason
}

#[cfg(test)]
mod tests {
    use super::wakes_the_loop;
    use std::path::Path;

    /// The own inbox and the tasks wake the loop; another member's inbox, the lead's, the team
    /// file and the lead's own files do not (each wake reads the inbox and the tasks again).
    #[test]
    fn only_the_own_inbox_and_the_tasks_wake_the_loop() {
        let inbox = Path::new("/h/teams/t/inboxes/al.json");
        let tasks = Path::new("/h/tasks/t");
        let wakes = |p: &str| wakes_the_loop(Path::new(p), Some(inbox), Some(tasks));
        assert!(wakes("/h/teams/t/inboxes/al.json"));
        assert!(wakes("/h/tasks/t/3.json"));
        assert!(wakes("/h/tasks/t"));
        assert!(!wakes("/h/teams/t/inboxes/bo.json"));
        assert!(!wakes("/h/teams/t/inboxes/team-lead.json"));
        assert!(!wakes("/h/teams/t/config.json"));
        assert!(!wakes("/h/teams/t/.teamlead/session.json"));
        assert!(!wakes("/h/tasks/t2/1.json"));
    }
}
