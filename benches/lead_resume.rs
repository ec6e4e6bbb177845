//! Resume benchmark, run by hand: `cargo bench --bench lead_resume` (needs tmux).
//! A lead on a private tmux server spawns 20 pane teammates (`teamlead teammate`), leaves with
//! the team kept (`/detach`: its flock goes, the teammates keep running in their grace period),
//! then a new lead starts on the team and adopts it. Measured: from `Lead::start` to the
//! "Resumed the team" note (probe, flock, 20 adoptions, re-queue, inbox), five rounds. Goal:
//! ≤ 500 ms. Plain std timing, one machine.

use std::time::{Duration, Instant};

use teamlead::backend::detect::BackendChoice;
use teamlead::backend::terminals::PaneChoice;
use teamlead::lead::contract::{LeadCommand, LeadEvent, TranscriptItem, ViewTarget};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::protocol::BackendKind;
use teamlead::store::Home;
use tokio::sync::mpsc;

const TEAMMATES: usize = 20;
const ROUNDS: usize = 5;

fn main() {
    // The teammates wait for their lead between rounds (passed on by the lead).
    // SAFETY: set before any thread of this process starts.
    unsafe { std::env::set_var("TEAMLEAD_LEAD_GRACE_MS", "120000") };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    println!("teamlead resume benchmark (one machine, {TEAMMATES} pane teammates)\n");
    runtime.block_on(resume());
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

async fn next_event(events: &mut mpsc::Receiver<LeadEvent>) -> LeadEvent {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("an event within a minute")
        .expect("the lead is running")
}

/// Waits for a system note containing `needle`; returns it.
async fn note(events: &mut mpsc::Receiver<LeadEvent>, needle: &str) -> String {
    loop {
        if let LeadEvent::Transcript(TranscriptItem::System { text }) = next_event(events).await
            && text.contains(needle)
        {
            return text;
        }
    }
}

fn options(home: &Home, cwd: &std::path::Path) -> LeadOptions {
    let mut opts = LeadOptions::new(home.clone(), cwd)
        .with_team("resume-bench")
        .with_backend(BackendChoice::Panes(PaneChoice::private(
            BackendKind::Tmux,
            "tmux",
        )))
        .with_quit_timeout(Duration::from_secs(5));
    opts.teammate_binary = Some(env!("CARGO_BIN_EXE_teamlead").into());
    opts
}

async fn resume() {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());

    let (handle, mut events) = Lead::start(options(&home, cwd.path())).expect("first lead");
    let spawn_start = Instant::now();
    for i in 0..TEAMMATES {
        let text = format!("/spawn t{i} stand by");
        handle
            .commands
            .send(LeadCommand::Submit {
                target: ViewTarget::Lead,
                text,
            })
            .await
            .expect("lead");
        note(&mut events, &format!("Spawned t{i}:")).await;
    }
    println!(
        "spawned {TEAMMATES} pane teammates in {}",
        ms(spawn_start.elapsed())
    );
    let (mut handle, mut events) = (handle, events);
    let mut times = Vec::new();
    for round in 0..ROUNDS {
        handle
            .commands
            .send(LeadCommand::Detach)
            .await
            .expect("lead");
        while next_event(&mut events).await != LeadEvent::Exited {}
        let start = Instant::now();
        let (next, mut next_events) = Lead::start(options(&home, cwd.path())).expect("resume");
        let text = note(&mut next_events, "Resumed the team").await;
        let took = start.elapsed();
        assert!(
            !text.contains("Not running"),
            "every teammate re-bound: {text}"
        );
        assert_eq!(text.matches(" (%").count(), TEAMMATES, "{text}");
        println!("round {}: resumed in {}", round + 1, ms(took));
        times.push(took);
        (handle, events) = (next, next_events);
    }
    times.sort();
    println!(
        "\nresume of {TEAMMATES} pane teammates: median {}, worst {} (goal ≤ 500 ms)",
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
    handle.commands.send(LeadCommand::Quit).await.expect("lead");
    while next_event(&mut events).await != LeadEvent::Exited {}
}
