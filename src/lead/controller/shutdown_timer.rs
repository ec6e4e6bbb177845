//! A shutdown that does not end: `/shutdown NAME` starts a clock (shown as `shutting down
//! (42s)`); when `shutdown-timeout` (30 s by default) passes and the teammate is still there,
//! the lead says how to force it (`/kill NAME`), or kills it when the shutdown was forced
//! (`/shutdown NAME --force`, or `shutdown-force = true` in the config file). `/quit` has its
//! own, shorter deadline and is left alone.

use tokio::time::Instant;

use super::state::{Controller, Phase};

impl Controller {
    /// The earliest deadline of a shutdown still waited for.
    pub(super) fn next_shutdown_deadline(&self) -> Option<Instant> {
        if self.phase != Phase::Running {
            return None;
        }
        self.roster
            .iter()
            .map(|(_, t)| t)
            .filter_map(|t| t.shutdown().deadline())
            .min()
    }

    /// `--force` on the shutdowns just asked: of `name`, or of everyone asked.
    pub(super) fn force_shutdowns(&mut self, name: Option<&str>, force: bool) {
        if !force {
            return;
        }
        for (who, t) in self.roster.iter_mut() {
            if name.is_none_or(|n| n == who) {
                t.shutdown_mut().force();
            }
        }
    }

    /// Shutdowns past their deadline: told once, or escalated to a kill.
    pub(super) fn on_shutdown_overdue(&mut self) {
        let now = Instant::now();
        let mut overdue: Vec<(String, bool)> = self
            .roster
            .iter_mut()
            .filter_map(|(name, t)| Some((name.clone(), t.shutdown_mut().take_due(now)?)))
            .collect();
        overdue.sort();
        let waited = humane(self.settings.shutdown().wait);
        for (name, force) in overdue {
            if force {
                self.note(format!(
                    "{name} has not shut down after {waited}: killing it (forced)."
                ));
                self.kill(&name);
            } else {
                self.note(format!(
                    "{name} has not shut down after {waited} (it may be mid-turn): /kill {name} stops it now, or /shutdown {name} --force kills it if it does not end."
                ));
            }
        }
    }
}

/// `30s`, `2.5s`, `2m`.
fn humane(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}
