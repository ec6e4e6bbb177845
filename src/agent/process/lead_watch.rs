//! The teammate process watching its lead: every [`LEAD_CHECK_EVERY`] it asks whether the
//! lead is gone (its liveness lock says so) and whether the team is gone (its `config.json`
//! missing); a lead gone for a whole grace period, or a team missing on two checks in a row,
//! stops the teammate. What it sees is told to the pane as a [`LeadWatch`].

use std::future::Future;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::LEAD_CHECK_EVERY;
use crate::agent::runtime::Controls;

/// What the teammate tells its pane about its lead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeadWatch {
    Gone(Duration),
    Back,
    Exiting,
    TeamGone,
}

impl std::fmt::Display for LeadWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LeadWatch::Gone(grace) => write!(
                f,
                "the team lead is gone: waiting {} s for a lead to come back",
                grace.as_secs()
            ),
            LeadWatch::Back => f.write_str("a team lead is back"),
            LeadWatch::Exiting => f.write_str("no team lead came back: exiting"),
            LeadWatch::TeamGone => {
                f.write_str("the team is gone (its files were removed): exiting")
            }
        }
    }
}

/// Runs until the teammate stops: `check` answers (lead gone, team gone); what changes is
/// sent to `tell`; a lead gone for `grace` or a team gone twice in a row stops `controls`.
pub async fn watch_lead<F, Fut>(
    mut check: F,
    grace: Duration,
    tell: mpsc::UnboundedSender<LeadWatch>,
    controls: Controls,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = (bool, bool)>,
{
    let mut tick = tokio::time::interval(LEAD_CHECK_EVERY);
    let mut gone_since: Option<Instant> = None;
    let mut team_missing = 0;
    loop {
        tick.tick().await;
        if controls.stop.is_cancelled() {
            return;
        }
        let (gone, no_team) = check().await;
        team_missing = if no_team { team_missing + 1 } else { 0 };
        if team_missing >= 2 {
            let _ = tell.send(LeadWatch::TeamGone);
            controls.stop();
            return;
        }
        match (gone, gone_since) {
            (true, None) => {
                gone_since = Some(Instant::now());
                let _ = tell.send(LeadWatch::Gone(grace));
            }
            (false, Some(_)) => {
                gone_since = None;
                let _ = tell.send(LeadWatch::Back);
            }
            _ => {}
        }
        if gone_since.is_some_and(|since| since.elapsed() >= grace) {
            let _ = tell.send(LeadWatch::Exiting);
            controls.stop();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    //! The grace period on tokio's paused clock.

    use std::sync::{Arc, Mutex};

    use super::*;

    const GRACE: Duration = Duration::from_secs(30);

    /// What the checks answer from now on: (lead gone, team gone).
    type World = Arc<Mutex<(bool, bool)>>;

    struct Watched {
        world: World,
        told: mpsc::UnboundedReceiver<LeadWatch>,
        controls: Controls,
    }

    impl Watched {
        fn start() -> Watched {
            let world: World = Arc::new(Mutex::new((false, false)));
            let (tx, told) = mpsc::unbounded_channel();
            let controls = Controls::new();
            let seen = world.clone();
            let check = move || {
                let now = *seen.lock().unwrap();
                async move { now }
            };
            tokio::spawn(watch_lead(check, GRACE, tx, controls.clone()));
            Watched {
                world,
                told,
                controls,
            }
        }

        fn set(&self, lead_gone: bool, team_gone: bool) {
            *self.world.lock().unwrap() = (lead_gone, team_gone);
        }

        fn told(&mut self) -> Vec<LeadWatch> {
            std::iter::from_fn(|| self.told.try_recv().ok()).collect()
        }
    }

    /// Lets the watcher run until just after its next check.
    async fn next_check() {
        tokio::time::sleep(LEAD_CHECK_EVERY).await;
    }

    #[tokio::test(start_paused = true)]
    async fn a_lead_gone_for_the_whole_grace_period_stops_the_teammate_then_and_not_before() {
        let mut w = Watched::start();
        tokio::time::sleep(Duration::from_millis(10)).await;
        w.set(true, false);
        next_check().await;
        assert_eq!(w.told(), [LeadWatch::Gone(GRACE)]);
        // The check that saw it gone ran LEAD_CHECK_EVERY ago at most: its time is the last tick.
        let seen_gone = Instant::now() - Duration::from_millis(10);

        tokio::time::sleep_until(seen_gone + GRACE - Duration::from_millis(1)).await;
        assert!(
            !w.controls.stop.is_cancelled(),
            "stopped before the grace ended"
        );
        assert!(w.told().is_empty());

        w.controls.stop.cancelled().await;
        assert_eq!(seen_gone.elapsed(), GRACE);
        assert_eq!(w.told(), [LeadWatch::Exiting]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_lead_back_within_the_grace_keeps_the_teammate() {
        let mut w = Watched::start();
        tokio::time::sleep(Duration::from_millis(10)).await;
        w.set(true, false);
        tokio::time::sleep(GRACE - Duration::from_secs(1)).await;
        w.set(false, false);
        next_check().await;
        assert_eq!(w.told(), [LeadWatch::Gone(GRACE), LeadWatch::Back]);

        // Gone again: a fresh grace period, counted from then.
        w.set(true, false);
        tokio::time::sleep(GRACE - Duration::from_secs(1)).await;
        assert!(!w.controls.stop.is_cancelled());
        w.set(false, false);
        tokio::time::sleep(GRACE * 3).await;
        assert!(!w.controls.stop.is_cancelled());
        assert_eq!(w.told(), [LeadWatch::Gone(GRACE), LeadWatch::Back]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_team_missing_on_two_checks_in_a_row_stops_the_teammate_at_once() {
        let mut w = Watched::start();
        tokio::time::sleep(Duration::from_millis(10)).await;
        // Missing once (a rewrite in progress) is not enough.
        w.set(false, true);
        next_check().await;
        w.set(false, false);
        next_check().await;
        assert!(!w.controls.stop.is_cancelled());

        let removed_at = Instant::now();
        w.set(false, true);
        w.controls.stop.cancelled().await;
        assert!(removed_at.elapsed() <= LEAD_CHECK_EVERY * 2);
        assert_eq!(w.told(), [LeadWatch::TeamGone]);
    }
}
