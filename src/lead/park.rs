//! Park and resume at a usage limit: the state machine, on plain times (epoch milliseconds),
//! with no clock and no I/O of its own (`lead::controller::park` drives it and does what its
//! steps say). When a teammate hits a usage or rate limit with a reset time and the person
//! opted in (`/limits resume on`, config `resume-after-limit`), the team is *parked*: every
//! teammate is put in a queue (the one that hit the limit first: its work stopped mid-way),
//! and no message or assignment from the lead starts a turn until its teammate is resumed. At
//! the reset plus [`MARGIN`] the first is resumed, then one every [`STAGGER`], so a team that
//! hits the limit again does it with one teammate, not all of them at once (a new limit seen
//! meanwhile parks the team again, whoever is left or was resumed). A cut-off (`/limits
//! resume-until 02:00`, config `resume-until`) stops a resume that would start past it: the
//! team stays parked until the person resumes it (`/limits resume now`) or turns resuming off.

use std::collections::VecDeque;

use chrono::{NaiveTime, TimeZone};

/// How long after the reset the first teammate is resumed: clocks differ, and a request sent
/// on the very second of the reset can still be refused.
pub const MARGIN_MS: u64 = 5_000;
/// [`MARGIN_MS`] as a duration, for the documentation.
pub const MARGIN: std::time::Duration = std::time::Duration::from_millis(MARGIN_MS);
/// The time between two resumed teammates.
pub const STAGGER_MS: u64 = 5_000;
/// [`STAGGER_MS`] as a duration.
pub const STAGGER: std::time::Duration = std::time::Duration::from_millis(STAGGER_MS);

/// What the person chose.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParkSettings {
    /// Park the team at a limit and resume it at the reset.
    pub resume: bool,
    /// No resume starts past this local clock time (its next occurrence after the park began).
    pub until: Option<NaiveTime>,
}

/// Why a parked team does not resume by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The resume would start at `resume_at_ms`, past the cut-off at `cutoff_ms`.
    CutOff { resume_at_ms: u64, cutoff_ms: u64 },
}

/// Where the team is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ParkState {
    /// Not parked: messages and assignments go out as they come.
    #[default]
    Running,
    /// Parked: nothing starts a turn; `queue` is resumed in its order.
    Parked {
        /// When the limit resets (epoch ms), and who hit it.
        reset_ms: u64,
        by: String,
        /// When the first teammate is resumed.
        resume_at_ms: u64,
        /// The cut-off in force for this park (epoch ms).
        cutoff_ms: Option<u64>,
        queue: Vec<String>,
        /// Not resuming by itself, and why.
        stopped: Option<Stopped>,
    },
    /// Resuming: `queue` is still parked, its head resumed at `next_at_ms`.
    Resuming {
        reset_ms: u64,
        queue: VecDeque<String>,
        next_at_ms: u64,
        cutoff_ms: Option<u64>,
        /// How many were resumed, and how many there were (for the notes).
        done: usize,
        of: usize,
    },
}

/// What a limit did to the team.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Limited {
    /// Resuming is off: nothing parked (the lead only says when the limit resets).
    NotParked,
    /// The team is parked now.
    Parked {
        resume_at_ms: u64,
        stopped: Option<Stopped>,
    },
    /// Already parked: the reset moved later (or `who` joined the front of the queue).
    Extended { resume_at_ms: u64 },
    /// Already parked, and this limit changes nothing.
    Known,
}

/// One thing the lead does now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParkStep {
    /// Resume this teammate (`number` of `of`): deliver what was held for it, and tell it to
    /// go on when the limit stopped its work.
    Resume {
        name: String,
        number: usize,
        of: usize,
    },
    /// Every parked teammate was resumed: the park is over.
    Done,
    /// The resume stopped at the cut-off; the team stays parked.
    CutOff(Stopped),
}

/// The park of one team.
#[derive(Debug, Clone, Default)]
pub struct Park {
    pub settings: ParkSettings,
    pub state: ParkState,
}

/// The next time `until` (local clock) comes after `after_ms`.
pub fn next_clock_ms(until: NaiveTime, after_ms: u64) -> Option<u64> {
    let after = chrono::DateTime::from_timestamp_millis(i64::try_from(after_ms).ok()?)?
        .with_timezone(&chrono::Local);
    let mut day = after.date_naive();
    for _ in 0..3 {
        if let Some(at) = chrono::Local
            .from_local_datetime(&day.and_time(until))
            .earliest()
            && at.timestamp_millis() > after_ms as i64
        {
            return Some(at.timestamp_millis() as u64);
        }
        day = day.succ_opt()?;
    }
    None
}

/// `02:00` as a clock time.
pub fn parse_clock(text: &str) -> Option<NaiveTime> {
    NaiveTime::parse_from_str(text.trim(), "%H:%M").ok()
}

impl Park {
    pub fn new(settings: ParkSettings) -> Park {
        Park {
            settings,
            state: ParkState::Running,
        }
    }

    /// Is the team parked (or resuming)?
    pub fn active(&self) -> bool {
        !matches!(self.state, ParkState::Running)
    }

    /// Does the park hold what the lead sends `name` (it is still parked: in the queue, which
    /// is every teammate that ran when the team was parked, less those resumed)?
    pub fn holds(&self, name: &str) -> bool {
        match &self.state {
            ParkState::Running => false,
            ParkState::Parked { queue, .. } => queue.iter().any(|n| n == name),
            ParkState::Resuming { queue, .. } => queue.iter().any(|n| n == name),
        }
    }

    /// When the limit of the current park resets (epoch ms).
    pub fn reset_ms(&self) -> Option<u64> {
        match &self.state {
            ParkState::Running => None,
            ParkState::Parked { reset_ms, .. } | ParkState::Resuming { reset_ms, .. } => {
                Some(*reset_ms)
            }
        }
    }

    /// When `name` is resumed (epoch ms; `None`: not parked, or not by itself).
    pub fn resume_of(&self, name: &str) -> Option<u64> {
        match &self.state {
            ParkState::Running => None,
            ParkState::Parked {
                resume_at_ms,
                queue,
                stopped,
                ..
            } => {
                let at = queue.iter().position(|n| n == name)?;
                stopped
                    .is_none()
                    .then(|| resume_at_ms + STAGGER_MS * at as u64)
            }
            ParkState::Resuming {
                queue, next_at_ms, ..
            } => {
                let at = queue.iter().position(|n| n == name)?;
                Some(next_at_ms + STAGGER_MS * at as u64)
            }
        }
    }

    /// When something is due next (epoch ms).
    pub fn due_ms(&self) -> Option<u64> {
        match &self.state {
            ParkState::Running => None,
            ParkState::Parked {
                resume_at_ms,
                stopped: None,
                ..
            } => Some(*resume_at_ms),
            ParkState::Parked { .. } => None,
            ParkState::Resuming { next_at_ms, .. } => Some(*next_at_ms),
        }
    }

    /// `who` hit a limit that resets at `reset_ms`; `team` is every teammate that runs (in
    /// the order they are resumed after `who`).
    pub fn limit(&mut self, who: &str, reset_ms: u64, now_ms: u64, team: &[String]) -> Limited {
        if !self.settings.resume {
            return Limited::NotParked;
        }
        let resume_at = reset_ms.max(now_ms) + MARGIN_MS;
        match &mut self.state {
            ParkState::Parked {
                reset_ms: known,
                resume_at_ms,
                queue,
                cutoff_ms,
                stopped,
                ..
            } => {
                let front = queue.first().is_some_and(|n| n == who);
                if reset_ms <= *known && (front || queue.iter().any(|n| n == who)) {
                    return Limited::Known;
                }
                if reset_ms > *known {
                    *known = reset_ms;
                    *resume_at_ms = resume_at;
                    *stopped = cut_off(*cutoff_ms, resume_at);
                }
                queue.retain(|n| n != who);
                queue.insert(0, who.to_string());
                Limited::Extended {
                    resume_at_ms: *resume_at_ms,
                }
            }
            _ => {
                // Running, or resuming: a new limit parks everyone again, `who` first.
                let cutoff_ms = match &self.state {
                    ParkState::Resuming { cutoff_ms, .. } => *cutoff_ms,
                    _ => self.settings.until.and_then(|u| next_clock_ms(u, now_ms)),
                };
                let mut queue = vec![who.to_string()];
                queue.extend(team.iter().filter(|n| *n != who).cloned());
                let stopped = cut_off(cutoff_ms, resume_at);
                self.state = ParkState::Parked {
                    reset_ms,
                    by: who.to_string(),
                    resume_at_ms: resume_at,
                    cutoff_ms,
                    queue,
                    stopped: stopped.clone(),
                };
                Limited::Parked {
                    resume_at_ms: resume_at,
                    stopped,
                }
            }
        }
    }

    /// What is due at `now_ms`: at most one step per call (call again until it says nothing).
    pub fn tick(&mut self, now_ms: u64) -> Option<ParkStep> {
        match &mut self.state {
            ParkState::Running => None,
            // Stopped at the cut-off: only `/limits resume now` goes on.
            ParkState::Parked {
                stopped: Some(_), ..
            } => None,
            ParkState::Parked { resume_at_ms, .. } if now_ms < *resume_at_ms => None,
            ParkState::Parked {
                reset_ms,
                cutoff_ms,
                queue,
                ..
            } => {
                let queue: VecDeque<String> = std::mem::take(queue).into();
                let of = queue.len();
                self.state = ParkState::Resuming {
                    reset_ms: *reset_ms,
                    queue,
                    next_at_ms: now_ms,
                    cutoff_ms: *cutoff_ms,
                    done: 0,
                    of,
                };
                self.tick(now_ms)
            }
            ParkState::Resuming { next_at_ms, .. } if now_ms < *next_at_ms => None,
            ParkState::Resuming {
                reset_ms,
                queue,
                next_at_ms,
                cutoff_ms,
                done,
                of,
            } => {
                if let Some(stop) = cut_off(*cutoff_ms, now_ms) {
                    let queue: Vec<String> = std::mem::take(queue).into();
                    self.state = ParkState::Parked {
                        reset_ms: *reset_ms,
                        by: queue.first().cloned().unwrap_or_default(),
                        resume_at_ms: now_ms,
                        cutoff_ms: *cutoff_ms,
                        queue,
                        stopped: Some(stop.clone()),
                    };
                    return Some(ParkStep::CutOff(stop));
                }
                match queue.pop_front() {
                    Some(name) => {
                        *done += 1;
                        *next_at_ms = now_ms + STAGGER_MS;
                        let step = ParkStep::Resume {
                            name,
                            number: *done,
                            of: *of,
                        };
                        if queue.is_empty() {
                            // The last one: the park is over once it is resumed.
                            self.state = ParkState::Running;
                        }
                        Some(step)
                    }
                    None => {
                        self.state = ParkState::Running;
                        Some(ParkStep::Done)
                    }
                }
            }
        }
    }

    /// The person resumes the team now (`/limits resume now`): cut-off or not, the queue is
    /// resumed from now, staggered as at a reset. `false`: nothing is parked.
    pub fn resume_now(&mut self, now_ms: u64) -> bool {
        let ParkState::Parked {
            reset_ms, queue, ..
        } = &mut self.state
        else {
            return false;
        };
        let queue: VecDeque<String> = std::mem::take(queue).into();
        let of = queue.len();
        self.state = ParkState::Resuming {
            reset_ms: *reset_ms,
            queue,
            next_at_ms: now_ms,
            cutoff_ms: None,
            done: 0,
            of,
        };
        true
    }

    /// Ends the park at once (resuming turned off): the teammates still parked.
    pub fn release(&mut self) -> Vec<String> {
        match std::mem::take(&mut self.state) {
            ParkState::Running => Vec::new(),
            ParkState::Parked { queue, .. } => queue,
            ParkState::Resuming { queue, .. } => queue.into(),
        }
    }

    /// The teammates still parked, in the order they are resumed.
    pub fn queue(&self) -> Vec<String> {
        match &self.state {
            ParkState::Running => Vec::new(),
            ParkState::Parked { queue, .. } => queue.clone(),
            ParkState::Resuming { queue, .. } => queue.iter().cloned().collect(),
        }
    }

    /// A new cut-off (`None`: none) from `now_ms`: a park under way takes it at once.
    pub fn set_until(&mut self, until: Option<NaiveTime>, now_ms: u64) {
        self.settings.until = until;
        let cutoff = until.and_then(|u| next_clock_ms(u, now_ms));
        match &mut self.state {
            ParkState::Running => {}
            ParkState::Parked {
                cutoff_ms,
                stopped,
                resume_at_ms,
                ..
            } => {
                *cutoff_ms = cutoff;
                *stopped = cut_off(cutoff, *resume_at_ms);
            }
            ParkState::Resuming { cutoff_ms, .. } => *cutoff_ms = cutoff,
        }
    }
}

/// The cut-off's stop for a resume at `resume_at`, when it is past `cutoff_ms`.
fn cut_off(cutoff_ms: Option<u64>, resume_at: u64) -> Option<Stopped> {
    let cutoff = cutoff_ms?;
    (resume_at > cutoff).then_some(Stopped::CutOff {
        resume_at_ms: resume_at,
        cutoff_ms: cutoff,
    })
}

#[cfg(test)]
#[path = "park_tests.rs"]
mod tests;
