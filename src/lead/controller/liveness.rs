//! Honest liveness: a dedicated task asks the session's executor every [`LIVENESS_EVERY`]
//! whether each teammate still runs (the terminal calls run on the blocking pool, never on the
//! controller's loop) and sends the reports to the loop. A teammate whose process exited,
//! crashed, whose pane closed, or that never started is marked stopped with what happened
//! (`exited (127: claude not found)`, `crashed (…)`, `closed`) and the last lines of its pane;
//! its unfinished tasks go back to pending with no owner; the user is told once, with
//! `/respawn NAME`. A teammate that was asked to shut down and left is simply removed.

use std::time::Duration;

use tokio::sync::mpsc;

use super::drain::After;
use super::incoming::gone_note;
use super::state::{Controller, Phase};
use super::store_worker::Lane;
use crate::backend::executor::{LivenessReport, TeammateExecutor};
use crate::protocol::Task;
use crate::store::tasks::TaskList;

/// How often the executor is asked while it has teammates.
pub const LIVENESS_EVERY: Duration = Duration::from_millis(500);
/// How long the poller sleeps while the executor has no teammate at all (a spawn or an
/// adoption wakes it at once): an idle lead does not wake twice a second for nothing.
pub const LIVENESS_IDLE: Duration = Duration::from_secs(10);

/// Frees the unfinished tasks of each of `owners` (on the blocking pool): those it freed,
/// sorted, and what could not be done.
fn unassign(list: &TaskList, owners: &[String]) -> (Vec<Task>, Vec<String>) {
    let mut unassigned: Vec<Task> = Vec::new();
    let mut problems = Vec::new();
    for owner in owners {
        match list.unassign_owner(owner) {
            Ok(tasks) => unassigned.extend(tasks),
            Err(e) => problems.push(format!("Could not unassign the tasks of {owner}: {e}")),
        }
    }
    unassigned.sort_by_key(Task::numeric_id);
    (unassigned, problems)
}

/// Starts the task that polls `executor`; reports arrive on the returned receiver until it is
/// dropped. `wake` (notified after a teammate starts) ends an idle sleep early.
pub fn spawn_poller(
    executor: std::sync::Arc<dyn TeammateExecutor>,
    wake: std::sync::Arc<tokio::sync::Notify>,
) -> mpsc::Receiver<Vec<LivenessReport>> {
    let (tx, rx) = mpsc::channel(2);
    let ask = move || {
        let executor = executor.clone();
        async move { executor.liveness().await }
    };
    tokio::spawn(poll(ask, wake, tx));
    rx
}

/// The poller's loop: `ask` every [`LIVENESS_EVERY`] while it reports teammates, every
/// [`LIVENESS_IDLE`] (or at a `wake`) while it reports none; reports where a teammate is not
/// running go to `tx`. Ends when `tx`'s receiver is dropped.
async fn poll<F, Fut>(
    mut ask: F,
    wake: std::sync::Arc<tokio::sync::Notify>,
    tx: mpsc::Sender<Vec<LivenessReport>>,
) where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Vec<LivenessReport>>,
{
    let mut wait = LIVENESS_EVERY;
    loop {
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = wake.notified() => {}
        }
        if tx.is_closed() {
            return;
        }
        let reports = ask().await;
        wait = if reports.is_empty() {
            LIVENESS_IDLE
        } else {
            LIVENESS_EVERY
        };
        if reports.iter().all(|r| r.liveness.is_running()) {
            continue;
        }
        if tx.send(reports).await.is_err() {
            return;
        }
    }
}

impl Controller {
    /// Reports of the liveness poller.
    pub fn on_liveness(&mut self, reports: Vec<LivenessReport>) {
        if self.phase != Phase::Running {
            return;
        }
        let not_running: Vec<String> = reports
            .iter()
            .filter(|r| !r.liveness.is_running())
            .map(|r| r.name.clone())
            .collect();
        self.check_first_turns(&not_running);
        let fresh: Vec<LivenessReport> = reports
            .into_iter()
            .filter(|r| !r.liveness.is_running())
            .filter(|r| {
                // A teammate whose host is unreachable is never judged: it is kept as it was.
                self.roster
                    .get(&r.name)
                    .is_none_or(|t| t.stopped().is_none() && t.unreachable().is_none())
            })
            .collect();
        if fresh.is_empty() {
            return;
        }
        // A teammate that shut down wrote its `shutdown_approved` before it exited: the
        // reports wait for a drain of the lead's inbox (off the loop).
        self.drain.request(After::Liveness(fresh));
    }

    /// The reports of [`Controller::on_liveness`], once the lead's inbox was drained.
    pub fn on_liveness_drained(&mut self, fresh: Vec<LivenessReport>) {
        if self.phase != Phase::Running {
            return;
        }
        // Reports that waited side by side for the same drain are told once; a teammate
        // whose host became unreachable meanwhile is kept.
        let fresh: Vec<LivenessReport> = fresh
            .into_iter()
            .filter(|r| {
                self.roster
                    .get(&r.name)
                    .is_none_or(|t| t.stopped().is_none() && t.unreachable().is_none())
            })
            .collect();
        for report in fresh {
            let name = report.name.clone();
            if self.cache.file().member(&name).is_none() {
                self.forget_runtime(&name);
                continue;
            }
            let asked = self
                .roster
                .get(&name)
                .is_some_and(|t| t.shutdown().is_waiting());
            if asked {
                self.forget_runtime(&name);
                self.remove_teammate(&name, "has shut down");
                continue;
            }
            let status = report.liveness.to_string();
            let tracking = self.roster.entry(&name);
            tracking.stop(status.clone());
            self.permissions.remove_worker(&name);
            self.plans.remove_worker(&name);
            // Told once its tasks are free (in the task lane, off the loop).
            let whose = name.clone();
            self.unassign_tasks_then(&whose, move |c, unassigned| {
                let mut text = gone_note(&name, &status, &unassigned);
                if !report.tail.is_empty() {
                    text.push_str("\nIts pane's last lines:");
                    for line in &report.tail {
                        text.push_str(&format!("\n  {}", crate::protocol::inbox::clip(line, 200)));
                    }
                }
                text.push_str(&format!("\n/respawn {name} starts it again."));
                c.note(text);
            });
        }
    }

    /// Marks `name` stopped with `status` (no note) and frees its tasks (awaited, in the task
    /// lane); returns how many.
    pub async fn mark_stopped(&mut self, name: &str, status: &str) -> usize {
        self.roster.entry(name).stop(status.to_string());
        self.permissions.remove_worker(name);
        self.plans.remove_worker(name);
        let (list, owners) = (self.task_list.clone(), self.owner_ids(name));
        let (unassigned, problems) = self
            .store
            .wait(Lane::Tasks, move |_| unassign(&list, &owners))
            .await
            .unwrap_or_default();
        for problem in problems {
            self.note(problem);
        }
        self.reload_tasks();
        unassigned.len()
    }

    /// Sets each unfinished task of `name` (by name or agent id) back to pending with no
    /// owner, in the task lane; `then` gets them on the loop, and the copy is re-read.
    pub fn unassign_tasks_then(
        &mut self,
        name: &str,
        then: impl FnOnce(&mut Controller, Vec<Task>) + Send + 'static,
    ) {
        let (list, owners) = (self.task_list.clone(), self.owner_ids(name));
        self.store.submit(
            Lane::Tasks,
            move |_| unassign(&list, &owners),
            move |c, (unassigned, problems)| {
                for problem in problems {
                    c.note(problem);
                }
                c.reload_tasks();
                then(c, unassigned)
            },
        );
    }

    /// The owner values `name`'s tasks may carry: its name and its agent id.
    fn owner_ids(&self, name: &str) -> Vec<String> {
        let agent_id = self.cache.file().member(name).map(|m| m.agent_id.clone());
        std::iter::once(name.to_string()).chain(agent_id).collect()
    }

    /// The executor lets go of a teammate that left (in the background: it may close a pane).
    pub fn forget_runtime(&self, name: &str) {
        let executor = self.given.executor().clone();
        let name = name.to_string();
        tokio::spawn(async move { executor.release(&name).await });
    }
}

#[cfg(test)]
mod tests {
    //! The poller's periods under tokio's paused time.

    use std::sync::{Arc, Mutex};

    use tokio::time::Instant;

    use super::*;
    use crate::backend::executor::Liveness;

    /// When each ask happened, and what the next asks answer.
    #[derive(Default)]
    struct Script {
        asked: Vec<Instant>,
        teammates: Vec<(String, Liveness)>,
    }

    fn start(
        script: &Arc<Mutex<Script>>,
    ) -> (
        mpsc::Receiver<Vec<LivenessReport>>,
        Arc<tokio::sync::Notify>,
    ) {
        let (tx, rx) = mpsc::channel(2);
        let wake = Arc::new(tokio::sync::Notify::new());
        let script = script.clone();
        let ask = move || {
            let mut s = script.lock().unwrap();
            s.asked.push(Instant::now());
            let reports: Vec<LivenessReport> = s
                .teammates
                .iter()
                .map(|(name, liveness)| LivenessReport {
                    name: name.clone(),
                    liveness: liveness.clone(),
                    tail: Vec::new(),
                })
                .collect();
            async move { reports }
        };
        tokio::spawn(poll(ask, wake.clone(), tx));
        (rx, wake)
    }

    fn gaps(asked: &[Instant]) -> Vec<Duration> {
        asked.windows(2).map(|w| w[1] - w[0]).collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_teammate_that_stops_is_reported_within_one_period() {
        let script = Arc::new(Mutex::new(Script {
            teammates: vec![("builder".into(), Liveness::Running)],
            ..Script::default()
        }));
        let (mut reports, _wake) = start(&script);
        tokio::time::sleep(LIVENESS_EVERY * 4 + Duration::from_millis(10)).await;
        // Running teammates are asked about every period, and nothing is reported.
        assert_eq!(gaps(&script.lock().unwrap().asked), vec![LIVENESS_EVERY; 3]);
        assert!(
            reports.try_recv().is_err(),
            "a running teammate was reported"
        );

        let stopped_at = Instant::now();
        script.lock().unwrap().teammates[0].1 = Liveness::Closed;
        let got = reports.recv().await.expect("a report");
        assert!(
            stopped_at.elapsed() <= LIVENESS_EVERY,
            "{:?}",
            stopped_at.elapsed()
        );
        assert_eq!(got[0].name, "builder");
        assert_eq!(got[0].liveness, Liveness::Closed);
    }

    #[tokio::test(start_paused = true)]
    async fn with_no_teammate_it_asks_rarely_until_woken() {
        let script = Arc::new(Mutex::new(Script::default()));
        let (_reports, wake) = start(&script);
        let started = Instant::now();
        tokio::time::sleep(LIVENESS_EVERY + LIVENESS_IDLE * 2 + Duration::from_millis(10)).await;
        {
            let s = script.lock().unwrap();
            assert_eq!(s.asked.first().map(|t| *t - started), Some(LIVENESS_EVERY));
            assert_eq!(gaps(&s.asked), vec![LIVENESS_IDLE; 2]);
        }

        // A teammate starts: the wake asks at once, and then every period again.
        script.lock().unwrap().teammates = vec![("builder".into(), Liveness::Running)];
        let woken_at = Instant::now();
        wake.notify_one();
        tokio::time::sleep(LIVENESS_EVERY * 2 + Duration::from_millis(10)).await;
        let s = script.lock().unwrap();
        let after: Vec<Duration> = s
            .asked
            .iter()
            .filter(|t| **t >= woken_at)
            .map(|t| *t - woken_at)
            .collect();
        assert_eq!(
            after,
            vec![Duration::ZERO, LIVENESS_EVERY, LIVENESS_EVERY * 2]
        );
    }

    #[tokio::test(start_paused = true)]
    async fn it_ends_when_the_receiver_is_dropped() {
        let script = Arc::new(Mutex::new(Script {
            teammates: vec![("builder".into(), Liveness::Running)],
            ..Script::default()
        }));
        let (reports, _wake) = start(&script);
        tokio::time::sleep(LIVENESS_EVERY + Duration::from_millis(10)).await;
        drop(reports);
        let asked = script.lock().unwrap().asked.len();
        tokio::time::sleep(LIVENESS_EVERY * 10).await;
        assert_eq!(script.lock().unwrap().asked.len(), asked);
    }
}
