//! 100 idle in-process teammates must cost little: no thread per teammate (they are tokio
//! tasks), a few KiB of memory each, and almost no CPU while idle (a 1 s safety poll of two
//! `stat`s, no busy polling). Prints the measured figures.

use crate::agent_common;

use std::time::{Duration, Instant};

use agent_common::{Policy, RecordingAsker, TestTeam, wait_for};
use teamlead::agent::{EngineKind, TeammateEventKind, metrics, spawn_in_process};
use teamlead::protocol::PermissionMode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_idle_teammates_cost_little() {
    const COUNT: usize = 100;
    let team = TestTeam::new(&[]);
    let asker = RecordingAsker::new(Policy::Approve);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();

    let threads_before = metrics::threads().unwrap_or(0);
    let rss_before = metrics::rss_kib().unwrap_or(0);
    let mut handles = Vec::new();
    for i in 0..COUNT {
        let mut config = team.config(&format!("idle-{i}"), PermissionMode::Default);
        config.poll_interval = Duration::from_secs(1);
        handles.push(spawn_in_process(
            config,
            EngineKind::Shell.engine(),
            asker.shared(),
            tx.clone(),
        ));
    }
    // Every teammate has started and looked at its (empty) inbox and task list once.
    let mut started = 0;
    wait_for("every teammate to start", 20, || {
        while let Ok(event) = rx.try_recv() {
            if matches!(event.kind, TeammateEventKind::Log { ref text, .. } if text.contains("started in"))
            {
                started += 1;
            }
        }
        (started == COUNT).then_some(())
    })
    .await;

    // A measurement window (not a wait for a condition): idle teammates must stay idle.
    let cpu_before = metrics::cpu_ticks().unwrap_or(0);
    let window = Duration::from_secs(3);
    let start = Instant::now();
    tokio::time::sleep(window).await;
    let elapsed = start.elapsed();
    let cpu_ticks = metrics::cpu_ticks().unwrap_or(0).saturating_sub(cpu_before);
    let cpu_ms = cpu_ticks * 1000 / metrics::ticks_per_second();

    let threads_after = metrics::threads().unwrap_or(0);
    let rss_after = metrics::rss_kib().unwrap_or(0);
    eprintln!(
        "{COUNT} idle teammates: threads {threads_before} -> {threads_after}, RSS {rss_before} KiB -> {rss_after} KiB (+{} KiB, {} KiB each), CPU {cpu_ms} ms in {:.1} s",
        rss_after.saturating_sub(rss_before),
        rss_after.saturating_sub(rss_before) / COUNT as u64,
        elapsed.as_secs_f64()
    );
    assert!(
        threads_after < threads_before + 20,
        "threads grew from {threads_before} to {threads_after}"
    );
    assert!(
        rss_after.saturating_sub(rss_before) < 32 * 1024,
        "RSS grew by {} KiB",
        rss_after.saturating_sub(rss_before)
    );
    assert!(
        cpu_ms < 600,
        "idle teammates used {cpu_ms} ms of CPU in {elapsed:?}"
    );
    assert_eq!(asker.count(), 0);

    for h in &handles {
        h.kill();
    }
    for h in &handles {
        tokio::time::timeout(Duration::from_secs(10), h.join())
            .await
            .expect("teammate ends");
    }
}
