//! 100 idle in-process teammates must cost little: no thread per teammate (they are tokio
//! tasks) and almost no CPU while idle (a 1 s safety poll of two `stat`s, no busy polling).
//! Only this test's own runtime is measured (its threads, recorded as they start, and their
//! CPU time from `/proc/self/task`): the fast suite runs other tests in the same process at the
//! same time, and their threads and CPU once made this fail (2.5 s of the process's CPU in the
//! window on a loaded machine). The heap each teammate holds is a counted budget in a process
//! of its own (`tests/budget`). Prints the measured figures.

use crate::agent_common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use agent_common::{Policy, RecordingAsker, TestTeam, wait_for};
use teamlead::agent::{EngineKind, TeammateEventKind, metrics, spawn_in_process};
use teamlead::protocol::PermissionMode;

/// The threads of the runtime made by [`own_runtime`] (workers and blocking pool), by id.
type Tids = Arc<Mutex<Vec<libc::pid_t>>>;

/// A runtime like `#[tokio::test(flavor = "multi_thread", worker_threads = 2)]`'s that records
/// each thread it starts.
fn own_runtime(tids: &Tids) -> tokio::runtime::Runtime {
    let record = tids.clone();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .on_thread_start(move || {
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::gettid() };
            record.lock().unwrap().push(tid);
        })
        .build()
        .unwrap()
}

/// The CPU ticks (user + system) of those of `tids` still alive, and how many are alive.
fn cpu_of(tids: &Tids) -> (u64, usize) {
    let mut ticks = 0;
    let mut alive = 0;
    for tid in tids.lock().unwrap().iter() {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/self/task/{tid}/stat")) else {
            continue;
        };
        // Fields after the command name's closing parenthesis: utime is the 12th, stime the 13th.
        let rest = &stat[stat.rfind(')').unwrap() + 1..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        ticks += fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        alive += 1;
    }
    (ticks, alive)
}

#[test]
fn a_hundred_idle_teammates_cost_little() {
    let tids = Tids::default();
    own_runtime(&tids).block_on(idle_teammates(tids.clone()));
}

async fn idle_teammates(tids: Tids) {
    const COUNT: usize = 100;
    let team = TestTeam::new(&[]);
    let asker = RecordingAsker::new(Policy::Approve);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();

    let threads_before = cpu_of(&tids).1;
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
    let (cpu_before, _) = cpu_of(&tids);
    let window = Duration::from_secs(3);
    let start = Instant::now();
    tokio::time::sleep(window).await;
    let elapsed = start.elapsed();
    let (cpu_after, threads_after) = cpu_of(&tids);
    let cpu_ms = cpu_after.saturating_sub(cpu_before) * 1000 / metrics::ticks_per_second();
    eprintln!(
        "{COUNT} idle teammates: this runtime's threads {threads_before} -> {threads_after}, their CPU {cpu_ms} ms in {:.1} s",
        elapsed.as_secs_f64()
    );
    assert!(
        threads_after < threads_before + 20,
        "threads grew from {threads_before} to {threads_after}"
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
