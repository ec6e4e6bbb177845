//! Last-resort clean-up when the lead itself panics: its executor stops every teammate it runs
//! (killing their panes and its private tmux server), so a crash leaves no orphan panes or
//! servers behind. The team's files (tasks, unread messages) are kept, as after any crash: the
//! next lead on the team resumes it and offers to respawn the teammates. The lead registers its
//! executor at start; the panic paths call [`run`] (the binary's panic hook for the main
//! thread, the controller task's unwind guard for the lead). Graceful quits clear the
//! registration when done.

use std::sync::{Arc, Mutex};

use crate::backend::executor::TeammateExecutor;
use crate::store::Home;

struct Owned {
    team: String,
    executor: Arc<dyn TeammateExecutor>,
}

static OWNED: Mutex<Option<Owned>> = Mutex::new(None);

fn with<R>(f: impl FnOnce(&mut Option<Owned>) -> R) -> R {
    let mut guard = OWNED.lock().unwrap_or_else(|e| e.into_inner());
    f(&mut guard)
}

/// The lead of `team` runs its teammates through `executor`.
pub fn register(_home: &Home, team: &str, executor: Arc<dyn TeammateExecutor>) {
    with(|o| {
        *o = Some(Owned {
            team: team.to_string(),
            executor,
        })
    });
}

/// The lead finished (quit, or left the team to the next lead): nothing left to do.
pub fn unregister() {
    with(|o| *o = None);
}

/// Stops every teammate of the registered executor. Runs once.
pub fn run() {
    let Some(owned) = with(|o| o.take()) else {
        return;
    };
    owned.executor.emergency_stop();
    tracing::error!(
        "the lead crashed: its teammates were stopped; team {} is kept for the next lead",
        owned.team
    );
}
