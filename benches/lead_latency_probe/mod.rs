//! Where one message's time goes (`BENCH_PROBE=1`): the lead marks each step of a message's
//! way with a `trace` event of target `teamlead::probe` (the watcher's events sent, the loop
//! told, the drain's thread woken and its read done, the result on the loop); this layer
//! keeps when each mark came, and [`report`] prints, for the messages of the latency run, the
//! median and p99 of the time between consecutive steps.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, Layer};

/// The steps in the order a message passes them.
pub const STEPS: [&str; 5] = [
    "watch.sent",
    "loop.changes",
    "drain.woken",
    "drain.taken",
    "loop.drained",
];

static MARKS: Mutex<Vec<(Instant, &'static str)>> = Mutex::new(Vec::new());

/// Records the probe's marks.
pub struct Probe;

struct Message(Option<&'static str>);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let text = format!("{value:?}");
            self.0 = STEPS.iter().copied().find(|s| *s == text);
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for Probe {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        if event.metadata().target() != "teamlead::probe" {
            return;
        }
        let at = Instant::now();
        let mut message = Message(None);
        event.record(&mut message);
        if let Some(step) = message.0 {
            MARKS.lock().unwrap().push((at, step));
        }
    }
}

/// Installs the probe (with `filter` for the log, when one is given too).
pub fn install() {
    use tracing_subscriber::prelude::*;
    tracing_subscriber::registry()
        .with(
            Probe.with_filter(
                tracing_subscriber::filter::Targets::new()
                    .with_target("teamlead::probe", tracing::Level::TRACE),
            ),
        )
        .init();
}

/// One message: when its append started and returned, and when its event arrived.
pub struct Window {
    pub start: Instant,
    pub returned: Instant,
    pub arrived: Instant,
}

/// Prints the median and p99 of each leg, for the messages whose every step was marked.
pub fn report(windows: &[Window]) {
    let marks = MARKS.lock().unwrap().clone();
    let legs = STEPS.len() + 2;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); legs];
    let mut whole = 0;
    let mut missing = vec![0usize; STEPS.len()];
    for w in windows {
        let inside: Vec<&(Instant, &str)> = marks
            .iter()
            .filter(|(at, _)| *at >= w.start && *at <= w.arrived)
            .collect();
        // Each step's last mark before the next step's: walk back from the arrival.
        let mut times = vec![w.arrived];
        let mut bound = w.arrived;
        for step in STEPS.iter().rev() {
            let Some((at, _)) = inside
                .iter()
                .rev()
                .find(|(at, s)| s == step && *at <= bound)
            else {
                break;
            };
            times.push(*at);
            bound = *at;
        }
        if times.len() != STEPS.len() + 1 {
            missing[times.len() - 1] += 1;
            continue;
        }
        times.push(w.start);
        times.reverse();
        whole += 1;
        for (leg, pair) in times.windows(2).enumerate() {
            samples[leg].push(pair[1] - pair[0]);
        }
        samples[legs - 1].push(w.returned - w.start);
    }
    println!(
        "where a message's time goes ({whole} of {} messages with every step marked):",
        windows.len()
    );
    for (step, n) in STEPS.iter().rev().zip(&missing) {
        if *n > 0 {
            println!("  ({n} with no {step} mark before the later steps)");
        }
    }
    let mut names: Vec<String> = vec![format!("append start → {}", STEPS[0])];
    for pair in STEPS.windows(2) {
        names.push(format!("{} → {}", pair[0], pair[1]));
    }
    names.push(format!("{} → transcript event", STEPS[STEPS.len() - 1]));
    names.push("(append start → append returned)".into());
    for (name, mut s) in names.into_iter().zip(samples) {
        if s.is_empty() {
            continue;
        }
        s.sort();
        let p = |q: f64| s[(((s.len() - 1) as f64) * q).round() as usize];
        println!(
            "  {name:<36} p50 {:>8.3} ms  p99 {:>8.3} ms",
            p(0.5).as_secs_f64() * 1e3,
            p(0.99).as_secs_f64() * 1e3
        );
    }
}
