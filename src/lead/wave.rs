//! A wave of finished work, told as one line. Teammates report each task they complete in
//! their idle notification; instead of one "is idle (completed task #3)" line per teammate
//! per turn (and one synthetic turn per report for the lead model), completions are gathered
//! while they keep coming and told together once the team has been quiet for [`QUIET`]:
//! `3 done in 4m12s (#2 #3 #4) · #5 unblocked, assigned to counter`.

use std::collections::{BTreeSet, HashMap};

use crate::protocol::{Task, TaskStatus};

/// How long after the last completion the wave is told.
pub const QUIET_MS: u64 = 2_000;

/// Completions gathered since the last digest.
#[derive(Debug, Default)]
pub struct Wave {
    /// Task ids completed in this wave, in the order reported.
    done: Vec<String>,
    /// When the wave's work began (the earliest of its tasks seen in progress, else its
    /// first completion), and when its last completion came.
    began_ms: Option<u64>,
    last_ms: u64,
    /// When each task was first seen in progress.
    started_ms: HashMap<String, u64>,
}

/// A wave ready to be told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaveDone {
    pub done: Vec<String>,
    pub elapsed_ms: u64,
}

impl Wave {
    /// The task list as read at `now_ms`: tasks in progress start their clock.
    pub fn observe(&mut self, tasks: &[Task], now_ms: u64) {
        for t in tasks {
            if t.status == TaskStatus::InProgress {
                self.started_ms.entry(t.id.clone()).or_insert(now_ms);
            }
        }
    }

    /// Task `id` was reported completed at `now_ms`.
    pub fn completed(&mut self, id: &str, now_ms: u64) {
        if self.done.iter().any(|d| d == id) {
            return;
        }
        let began = self.started_ms.remove(id).unwrap_or(now_ms);
        self.began_ms = Some(self.began_ms.map_or(began, |b| b.min(began)));
        self.done.push(id.to_string());
        self.last_ms = now_ms;
    }

    /// When the wave is to be told (epoch ms), if one is gathering.
    pub fn due_ms(&self) -> Option<u64> {
        (!self.done.is_empty()).then_some(self.last_ms + QUIET_MS)
    }

    /// The wave, if one gathered, ending it.
    pub fn take(&mut self, now_ms: u64) -> Option<WaveDone> {
        if self.done.is_empty() {
            return None;
        }
        let elapsed_ms = now_ms.saturating_sub(self.began_ms.unwrap_or(now_ms));
        self.began_ms = None;
        Some(WaveDone {
            done: std::mem::take(&mut self.done),
            elapsed_ms,
        })
    }
}

/// `3 done in 4m12s (#2 #3 #4) · #5 unblocked, assigned to counter · #6 unblocked`: what the
/// wave finished and which tasks it unblocked (pending tasks whose blockers are all completed
/// now, one of them in this wave), with their owners.
pub fn digest_line(wave: &WaveDone, tasks: &[Task]) -> String {
    let ids: Vec<String> = wave.done.iter().map(|id| format!("#{id}")).collect();
    let mut line = format!(
        "{} done in {} ({})",
        wave.done.len(),
        humane_ms(wave.elapsed_ms),
        ids.join(" ")
    );
    let completed: BTreeSet<&str> = tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
        .map(|t| t.id.as_str())
        .chain(wave.done.iter().map(String::as_str))
        .collect();
    for t in tasks {
        let unblocked = t.status == TaskStatus::Pending
            && !t.blocked_by.is_empty()
            && t.blocked_by.iter().all(|b| completed.contains(b.as_str()))
            && t.blocked_by.iter().any(|b| wave.done.contains(b));
        if !unblocked {
            continue;
        }
        match &t.owner {
            Some(owner) => line.push_str(&format!(" · #{} unblocked, assigned to {owner}", t.id)),
            None => line.push_str(&format!(" · #{} unblocked", t.id)),
        }
    }
    line
}

/// `4m12s`, `12s`, `1h03m`.
fn humane_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: TaskStatus, blocked_by: &[&str], owner: Option<&str>) -> Task {
        let mut t = Task::new(id, format!("task {id}"), "");
        t.status = status;
        t.blocked_by = blocked_by.iter().map(|b| b.to_string()).collect();
        t.owner = owner.map(str::to_string);
        t
    }

    #[test]
    fn a_wave_is_told_once_with_what_it_unblocked() {
        let mut wave = Wave::default();
        let tasks = vec![
            task("2", TaskStatus::InProgress, &[], Some("alpha")),
            task("3", TaskStatus::InProgress, &[], Some("beta")),
        ];
        wave.observe(&tasks, 1_000);
        wave.completed("2", 200_000);
        wave.completed("3", 253_000);
        wave.completed("3", 254_000);
        assert_eq!(wave.due_ms(), Some(253_000 + QUIET_MS));
        let done = wave.take(255_000).expect("a wave");
        assert_eq!(done.done, vec!["2", "3"]);
        let after = vec![
            task("2", TaskStatus::Completed, &[], Some("alpha")),
            task("3", TaskStatus::Completed, &[], Some("beta")),
            task("5", TaskStatus::Pending, &["2", "3"], Some("counter")),
            task("6", TaskStatus::Pending, &["3"], None),
            task("7", TaskStatus::Pending, &["3", "9"], None),
            task("9", TaskStatus::Pending, &[], None),
        ];
        assert_eq!(
            digest_line(&done, &after),
            "2 done in 4m14s (#2 #3) · #5 unblocked, assigned to counter · #6 unblocked"
        );
        assert_eq!(wave.take(300_000), None);
        assert_eq!(wave.due_ms(), None);
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(humane_ms(12_400), "12s");
        assert_eq!(humane_ms(252_000), "4m12s");
        assert_eq!(humane_ms(3_780_000), "1h03m");
    }
}
