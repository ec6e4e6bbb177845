//! Lead benchmark, run by hand: `cargo bench --bench lead_latency`.
//! 1. Latency from a message appended to the lead's inbox by another thread (the store's
//!    lock-compatible append, as another process would) to its `Transcript` event, p50 and p99
//!    over 1,000 messages sent one at a time.
//! 2. Memory (VmRSS of this process) with 100 idle in-process teammates, 0.5 s after the spawn
//!    burst and at rest (the burst's blocking threads gone: the pool's keep-alive), and how
//!    long spawning them and quitting take. Plain std timing, one machine.
//!
//! `BENCH_PROBE=1` also prints where a message's time goes, step by step (`lead_latency_probe`);
//! `BENCH_ONLY=teammates` runs the second part alone (to trace or profile a spawn burst).

use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, TeammateStatus, TranscriptItem, ViewTarget,
};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::protocol::{InboxEntry, Member};
use teamlead::store::{self, Home};
use tokio::sync::mpsc;

mod lead_latency_probe;

const MESSAGES: usize = 1_000;
const TEAMMATES: usize = 100;

fn main() {
    // `BENCH_LOG=<filter>`: the lead's log on standard error (to find a slow step).
    // `BENCH_PROBE=1`: where each message's time goes (the lead's probe marks).
    if std::env::var_os("BENCH_PROBE").is_some() {
        lead_latency_probe::install();
    } else if let Ok(filter) = std::env::var("BENCH_LOG") {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_writer(std::io::stderr)
            .init();
    }
    // What a teamlead process does at its start (`cli::main`), and the lead's own runtime:
    // its malloc arenas and bounded blocking pool, as shipped.
    teamlead::lead::runtime::limit_malloc_arenas();
    let runtime = teamlead::lead::runtime::build().expect("runtime");
    println!("teamlead lead benchmark (one machine)\n");
    // `BENCH_ONLY=teammates`: only the second part (to trace a spawn burst alone).
    if std::env::var("BENCH_ONLY").as_deref() != Ok("teammates") {
        runtime.block_on(message_latency());
    }
    runtime.block_on(idle_teammates_memory());
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

async fn next_event(events: &mut mpsc::Receiver<LeadEvent>) -> LeadEvent {
    tokio::time::timeout(Duration::from_secs(60), events.recv())
        .await
        .expect("an event within a minute")
        .expect("the lead is running")
}

async fn quit(commands: &mpsc::Sender<LeadCommand>, events: &mut mpsc::Receiver<LeadEvent>) {
    commands.send(LeadCommand::Quit).await.expect("lead");
    while next_event(events).await != LeadEvent::Exited {}
}

async fn message_latency() {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());
    let opts = LeadOptions::new(home.clone(), cwd.path())
        .with_team("bench")
        .with_quit_timeout(Duration::from_millis(200));
    let (handle, mut events) = Lead::start(opts).expect("lead");
    let team = handle.team.clone();
    let mut writer = Member::new("writer", &team, &cwd.path().to_string_lossy());
    writer.tmux_pane_id = "%1".into();
    store::add_member(&home, &team, writer).expect("member");

    // The writer thread appends message i once told to, and reports when the append returned.
    let (go_tx, go_rx) = std_mpsc::channel::<usize>();
    let (sent_tx, sent_rx) = std_mpsc::channel::<(usize, Instant, Instant)>();
    let writer_home = home.clone();
    let writer_team = team.clone();
    let thread = std::thread::spawn(move || {
        while let Ok(i) = go_rx.recv() {
            let entry = InboxEntry::new("writer", format!("bench message {i}"));
            let before = Instant::now();
            store::inbox::append(&writer_home, &writer_team, "team-lead", &entry).expect("append");
            let _ = sent_tx.send((i, before, Instant::now()));
        }
    });

    let mut from_append_start = Vec::with_capacity(MESSAGES);
    let mut from_on_disk = Vec::with_capacity(MESSAGES);
    let mut windows = Vec::with_capacity(MESSAGES);
    for i in 0..MESSAGES {
        go_tx.send(i).expect("writer");
        let wanted = format!("bench message {i}");
        loop {
            if let LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) =
                next_event(&mut events).await
                && text == wanted
            {
                break;
            }
        }
        let arrived = Instant::now();
        let (n, before, after) = sent_rx.recv().expect("writer");
        assert_eq!(n, i);
        from_append_start.push(arrived - before);
        from_on_disk.push(arrived.saturating_duration_since(after));
        windows.push(lead_latency_probe::Window {
            start: before,
            returned: after,
            arrived,
        });
    }
    drop(go_tx);
    thread.join().expect("writer thread");
    from_append_start.sort();
    from_on_disk.sort();
    println!("message → Transcript event, {MESSAGES} messages one at a time:");
    for (label, samples) in [
        ("from the start of the append", &from_append_start),
        ("from the append's return (on disk)", &from_on_disk),
    ] {
        println!(
            "  {label:<36} p50 {:>9}  p99 {:>9}  max {:>9}",
            ms(percentile(samples, 0.50)),
            ms(percentile(samples, 0.99)),
            ms(*samples.last().expect("samples"))
        );
    }
    if std::env::var_os("BENCH_PROBE").is_some() {
        lead_latency_probe::report(&windows);
    }
    quit(&handle.commands, &mut events).await;
    println!();
}

fn vm_rss_kib() -> Option<u64> {
    status_field("VmRSS:")
}

/// The process's threads now (the runtime's workers and its blocking pool).
fn threads() -> Option<u64> {
    status_field("Threads:")
}

fn status_field(name: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

async fn idle_teammates_memory() {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());
    let opts = LeadOptions::new(home, cwd.path())
        .with_team("bench-rss")
        .with_quit_timeout(Duration::from_secs(10));
    let (handle, mut events) = Lead::start(opts).expect("lead");
    while !matches!(next_event(&mut events).await, LeadEvent::Team(_)) {}
    let before = vm_rss_kib();
    let threads_before = threads();
    let started = Instant::now();
    for i in 0..TEAMMATES {
        handle
            .commands
            .send(LeadCommand::Submit {
                target: ViewTarget::Lead,
                text: format!("/spawn mate-{i} \"wait for work\""),
            })
            .await
            .expect("lead");
    }
    loop {
        if let LeadEvent::Team(team) = next_event(&mut events).await
            && team.len() == TEAMMATES
            && team
                .iter()
                .all(|t| matches!(t.status, TeammateStatus::Idle { .. }))
        {
            break;
        }
    }
    let spawned_in = started.elapsed();
    // Let allocations settle, then read.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let burst = (vm_rss_kib(), threads());
    // At rest: the spawn burst's blocking threads gone (the pool's keep-alive), at most 5 s.
    let rest_by = Instant::now() + Duration::from_secs(5);
    while threads() > threads_before.map(|t| t + 8) && Instant::now() < rest_by {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = vm_rss_kib();
    println!("{TEAMMATES} idle in-process teammates:");
    println!("  spawned and idle in {}", ms(spawned_in));
    if let (Some(b), (Some(a), Some(t))) = (before, burst) {
        println!(
            "  0.5 s after the spawn burst: +{:.1} MiB, {:.1} KiB per teammate, {t} threads",
            a.saturating_sub(b) as f64 / 1024.0,
            a.saturating_sub(b) as f64 / TEAMMATES as f64
        );
    }
    match (before, after) {
        (Some(b), Some(a)) => println!(
            "  VmRSS before {:.1} MiB, after {:.1} MiB: +{:.1} MiB, {:.1} KiB per teammate",
            b as f64 / 1024.0,
            a as f64 / 1024.0,
            a.saturating_sub(b) as f64 / 1024.0,
            a.saturating_sub(b) as f64 / TEAMMATES as f64
        ),
        _ => println!("  VmRSS is not available on this system"),
    }
    if let (Some(b), Some(a)) = (threads_before, threads()) {
        println!("  threads before {b}, after {a}");
    }
    let quitting = Instant::now();
    // Where the time goes: the first and the last teammate seen gone (or stopped with the
    // session), then the end.
    handle.commands.send(LeadCommand::Quit).await.expect("lead");
    let (mut first_gone, mut all_gone) = (None, None);
    loop {
        match next_event(&mut events).await {
            LeadEvent::Exited => break,
            LeadEvent::Team(team) => {
                let running = team
                    .iter()
                    .filter(|t| {
                        !matches!(
                            t.status,
                            TeammateStatus::Gone | TeammateStatus::Stopped { .. }
                        )
                    })
                    .count();
                if running < TEAMMATES && first_gone.is_none() {
                    first_gone = Some(quitting.elapsed());
                }
                if running == 0 && all_gone.is_none() {
                    all_gone = Some(quitting.elapsed());
                }
            }
            _ => {}
        }
    }
    println!(
        "  /quit with {TEAMMATES} teammates took {} (first gone at {}, all gone at {})",
        ms(quitting.elapsed()),
        first_gone.map(ms).unwrap_or_else(|| "-".into()),
        all_gone.map(ms).unwrap_or_else(|| "-".into()),
    );
}
