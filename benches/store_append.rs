//! Store benchmark, run by hand: `cargo bench --bench store_append`.
//! Append latency (p50/p99) and throughput with 1, 8 and 32 concurrent writer processes,
//! drain latency, and append cost as the inbox grows to 10,000 entries. Plain std timing;
//! the writer processes are this executable re-run with `--child-append`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use teamlead::protocol::InboxEntry;
use teamlead::store::{DeliveryLog, Home, inbox, lock};

const TEAM: &str = "bench";
const TO: &str = "team-lead";

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child-append") {
        child_append(&args[i + 1..]);
        return;
    }
    println!("teamlead store benchmark (release build, one machine; times per operation)\n");
    let mut rows = Vec::new();
    rows.push(lock_only());
    for (writers, per_writer) in [(1, 800), (8, 100), (32, 25), (64, 15)] {
        let row = concurrent_appends(writers, per_writer);
        print_table(std::slice::from_ref(&row));
        rows.push(row);
    }
    for size in [100, 1_000, 5_000, 10_000] {
        rows.push(append_at_size(size));
    }
    for size in [10, 100, 1_000] {
        rows.push(drain(size));
    }
    print_table(&rows);
}

struct Row {
    what: String,
    samples: Vec<Duration>,
    throughput: Option<f64>,
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<54} {:>7} {:>10} {:>10} {:>10} {:>12}",
        "operation", "n", "p50 ms", "p99 ms", "max ms", "msgs/s"
    );
    println!("{}", "-".repeat(108));
    for row in rows {
        let mut s = row.samples.clone();
        s.sort();
        println!(
            "{:<54} {:>7} {:>10} {:>10} {:>10} {:>12}",
            row.what,
            s.len(),
            ms(percentile(&s, 0.50)),
            ms(percentile(&s, 0.99)),
            ms(s.last().copied().unwrap_or_default()),
            row.throughput
                .map(|t| format!("{t:.0}"))
                .unwrap_or_else(|| "-".into())
        );
    }
}

fn fresh_home() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = Home::new(dir.path().join("home"));
    (dir, home)
}

fn lock_only() -> Row {
    let (dir, _home) = fresh_home();
    let target = dir.path().join("file.json");
    let mut samples = Vec::new();
    for _ in 0..2_000 {
        let t = Instant::now();
        let g = lock::acquire(&target, lock::DEFAULT_LOCK_TIMEOUT).expect("lock");
        drop(g);
        samples.push(t.elapsed());
    }
    Row {
        what: "lock acquire + release (uncontended)".into(),
        samples,
        throughput: None,
    }
}

/// A writer process: appends `count` messages, prints each append's latency in ns.
fn child_append(args: &[String]) {
    let [home, count, prefix] = args else {
        eprintln!("usage: --child-append HOME COUNT PREFIX");
        std::process::exit(2);
    };
    let home = Home::new(Path::new(home));
    let count: usize = count.parse().expect("count");
    let mut out = String::new();
    for i in 0..count {
        let entry = InboxEntry::new(prefix, format!("{prefix}-{i}"));
        let t = Instant::now();
        if let Err(e) = inbox::append(&home, TEAM, TO, &entry) {
            eprintln!("append: {e}");
            std::process::exit(1);
        }
        out.push_str(&format!("{}\n", t.elapsed().as_nanos()));
    }
    print!("{out}");
}

fn concurrent_appends(writers: usize, per_writer: usize) -> Row {
    let (_dir, home) = fresh_home();
    let exe = std::env::current_exe().expect("current exe");
    let started = Instant::now();
    let children: Vec<_> = (0..writers)
        .map(|w| {
            Command::new(&exe)
                .arg("--child-append")
                .arg(&home.root)
                .arg(per_writer.to_string())
                .arg(format!("w{w}"))
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn writer")
        })
        .collect();
    let mut samples = Vec::new();
    for mut child in children {
        let stdout = child.stdout.take().expect("stdout");
        for line in BufReader::new(stdout).lines() {
            let ns: u64 = line.expect("line").trim().parse().expect("ns");
            samples.push(Duration::from_nanos(ns));
        }
        if !child.wait().expect("wait").success() {
            eprintln!("{writers} writers: a writer failed (its error is above)");
        }
    }
    let wall = started.elapsed();
    let total = writers * per_writer;
    let read = inbox::read(&home, TEAM, TO).expect("read");
    assert_eq!(read.entries.len(), total, "lost or duplicated messages");
    Row {
        what: format!("append, {writers:>2} writer process(es) x {per_writer} (0→{total} entries)"),
        samples,
        throughput: Some(total as f64 / wall.as_secs_f64()),
    }
}

fn prefill(home: &Home, n: usize) {
    let batch: Vec<InboxEntry> = (0..n)
        .map(|i| {
            InboxEntry::new(
                "filler",
                format!("filler message {i} with some typical length text"),
            )
        })
        .collect();
    inbox::append_many(home, TEAM, TO, &batch).expect("prefill");
}

fn append_at_size(size: usize) -> Row {
    let (_dir, home) = fresh_home();
    prefill(&home, size);
    let mut samples = Vec::new();
    let n = 100;
    let started = Instant::now();
    for i in 0..n {
        let entry = InboxEntry::new("w", format!("message {i}"));
        let t = Instant::now();
        inbox::append(&home, TEAM, TO, &entry).expect("append");
        samples.push(t.elapsed());
    }
    let wall = started.elapsed();
    let bytes = std::fs::metadata(home.inbox_path(TEAM, TO).expect("path"))
        .map(|m| m.len())
        .unwrap_or(0);
    Row {
        what: format!(
            "append, 1 writer, inbox at {size} entries ({} KiB)",
            bytes / 1024
        ),
        samples,
        throughput: Some(n as f64 / wall.as_secs_f64()),
    }
}

fn drain(size: usize) -> Row {
    let (_dir, home) = fresh_home();
    let log_path = home.delivery_log_path(TEAM, TO).expect("log path");
    let mut log = DeliveryLog::open(&log_path).expect("log");
    let mut samples = Vec::new();
    let rounds = 20;
    for _ in 0..rounds {
        prefill(&home, size);
        let t = Instant::now();
        let drained = inbox::drain_unread(&home, TEAM, TO, &mut log).expect("drain");
        samples.push(t.elapsed());
        assert_eq!(drained.delivered.len(), size);
    }
    let busy: f64 = samples.iter().map(Duration::as_secs_f64).sum();
    Row {
        what: format!("drain {size} unread entries (log fsync + rewrite)"),
        samples,
        throughput: Some((rounds * size) as f64 / busy),
    }
}
