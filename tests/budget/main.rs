//! The counted budgets (issue 31's regression guard): not a timed test but counts, compared
//! with figures recorded in `tests/budget/budgets.toml` that a change must update on purpose.
//!
//! - **Bytes held per idle in-process teammate**: the lead's live heap (every allocation minus
//!   every free, counted by this binary's global allocator) with `TEAMMATES` idle in-process
//!   teammates, less the live heap before they were spawned, divided by their number.
//! - **Allocations of one delivery**: how many allocations the process makes from a message
//!   appended to the lead's inbox (the append included) to its transcript event, the fewest
//!   over `DELIVERIES` deliveries (the fewest, because the lead's timers may allocate in the
//!   same window; they only ever add).
//! - **Allocations of one delivery with `WAITING` entries waiting**: the same, while the
//!   lead's inbox holds that many entries it took and has not removed yet (a stream of frames
//!   that never lets the inbox go quiet): a take that parsed every waiting entry again made
//!   this figure grow with the inbox; it must stay that of a delivery into a short one.
//!
//! A figure over its budget by more than [`TOLERANCE`] fails; one far under it asks for the
//! budget to be lowered (so the next growth is caught from the new figure). Its own binary
//! (`harness = false`, run by `cargo test`) so that no other test allocates in the same
//! process. Record new figures with `TEAMLEAD_BUDGET_RECORD=1 cargo test --test budget`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use teamlead::lead::contract::{
    LeadCommand, LeadEvent, TeammateStatus, TranscriptItem, ViewTarget,
};
use teamlead::lead::{Lead, LeadOptions};
use teamlead::protocol::{InboxEntry, Member};
use teamlead::store::{self, Home};
use tokio::sync::mpsc;

/// Counts every allocation and the bytes live.
struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicI64 = AtomicI64::new(0);

// SAFETY: every call goes to the system allocator with the caller's layout; the counters are
// plain atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on unchanged.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        LIVE.fetch_add(new_size as i64 - layout.size() as i64, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const TEAMMATES: usize = 40;
const DELIVERIES: usize = 20;
/// Entries waiting in the lead's inbox for the third figure.
const WAITING: usize = 300;
/// How far over its budget a figure may be before the check fails.
const TOLERANCE: f64 = 0.15;
/// Under this share of its budget, the budget is too loose to catch a 20 % growth.
const LOOSE: f64 = 0.80;
const WAIT: Duration = Duration::from_secs(60);

/// The recorded budgets.
#[derive(serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
struct Budgets {
    /// Heap bytes held per idle in-process teammate.
    teammate_bytes: u64,
    /// Allocations from one message's append to its transcript event.
    delivery_allocs: u64,
    /// The same with `WAITING` taken entries still in the lead's inbox.
    delivery_allocs_waiting: u64,
}

fn budgets_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/budget/budgets.toml")
}

fn main() -> ExitCode {
    // `cargo test FILTER` passes its filter on: run only when it names this check.
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        println!("budget: test");
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    if !filters.is_empty() && !filters.iter().any(|f| "budget".contains(f.as_str())) {
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let measured = runtime.block_on(measure());
    let Budgets {
        teammate_bytes,
        delivery_allocs,
        delivery_allocs_waiting,
    } = measured;
    if std::env::var_os("TEAMLEAD_BUDGET_RECORD").is_some() {
        let text = format!(
            "# Recorded by `TEAMLEAD_BUDGET_RECORD=1 cargo test --test budget` (tests/budget/main.rs):\n\
             # a change that makes a figure grow by more than 15 % fails until this file is updated.\n{}",
            toml::to_string(&measured).expect("toml")
        );
        std::fs::write(budgets_path(), text).expect("write the budgets");
        println!(
            "budget: recorded {teammate_bytes} bytes per teammate, {delivery_allocs} allocations per delivery, {delivery_allocs_waiting} with {WAITING} entries waiting"
        );
        return ExitCode::SUCCESS;
    }
    let text = std::fs::read_to_string(budgets_path()).expect("tests/budget/budgets.toml");
    let budget: Budgets = toml::from_str(&text).expect("budgets.toml");
    let mut failed = false;
    for (what, now, allowed) in [
        (
            "heap bytes per idle in-process teammate",
            teammate_bytes,
            budget.teammate_bytes,
        ),
        (
            "allocations of one delivery",
            delivery_allocs,
            budget.delivery_allocs,
        ),
        (
            "allocations of one delivery with entries waiting",
            delivery_allocs_waiting,
            budget.delivery_allocs_waiting,
        ),
    ] {
        let ratio = now as f64 / allowed as f64;
        let verdict = if ratio > 1.0 + TOLERANCE {
            failed = true;
            "OVER BUDGET: find what grew, or record the new figure on purpose"
        } else if ratio < LOOSE {
            failed = true;
            "far under budget: record the new figure so the next growth is caught"
        } else {
            "ok"
        };
        println!(
            "budget: {what}: {now} (budget {allowed}, {:.0} %): {verdict}",
            ratio * 100.0
        );
    }
    if failed {
        println!("budget: record with `TEAMLEAD_BUDGET_RECORD=1 cargo test --test budget`");
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

async fn next_event(events: &mut mpsc::Receiver<LeadEvent>) -> LeadEvent {
    tokio::time::timeout(WAIT, events.recv())
        .await
        .expect("an event within a minute")
        .expect("the lead is running")
}

/// The live heap once it holds still: two reads 100 ms apart that differ by under 1 KiB
/// (a deadline of a minute).
async fn settled_live() -> i64 {
    let deadline = Instant::now() + WAIT;
    let mut last = LIVE.load(Ordering::Relaxed);
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = LIVE.load(Ordering::Relaxed);
        if (now - last).abs() < 1024 || Instant::now() > deadline {
            return now;
        }
        last = now;
    }
}

/// A field of `/proc/self/status` (figures that depend on the system allocator and the
/// kernel, so printed, never budgeted).
fn status_field(name: &str) -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .map(|v| v.trim().trim_end_matches(" kB").to_string())
}

async fn measure() -> Budgets {
    let home_dir = tempfile::tempdir().expect("temp home");
    let cwd = tempfile::tempdir().expect("temp cwd");
    let home = Home::new(home_dir.path());
    let opts = LeadOptions::new(home.clone(), cwd.path())
        .with_team("budget")
        .with_quit_timeout(Duration::from_secs(10));
    let (handle, mut events) = Lead::start(opts).expect("lead");
    let team = handle.team.clone();
    while !matches!(next_event(&mut events).await, LeadEvent::Team(_)) {}

    // Deliveries first, with no teammate: one writer's messages to the lead.
    let mut writer = Member::new("writer", &team, &cwd.path().to_string_lossy());
    writer.tmux_pane_id = "%1".into();
    store::add_member(&home, &team, writer).expect("member");
    // The first message makes the lead's inbox (a new inbox is written without its lock: fewer
    // allocations); the deliveries measured go into an inbox that is there.
    store::inbox::append(
        &home,
        &team,
        "team-lead",
        &InboxEntry::new("writer", "first"),
    )
    .expect("append");
    shown(&mut events, "first").await;
    let fewest = fewest_allocs(&home, &team, &mut events, "budget message", DELIVERIES).await;
    // A stream that never lets the inbox go quiet: many taken entries stay in it.
    let filler: Vec<InboxEntry> = (0..WAITING)
        .map(|i| InboxEntry::new("writer", format!("waiting {i}")))
        .collect();
    store::inbox::append_many(&home, &team, "team-lead", &filler).expect("append");
    shown(&mut events, &format!("waiting {}", WAITING - 1)).await;
    let fewest_waiting = fewest_allocs(&home, &team, &mut events, "with waiting", 5).await;

    // Then the idle teammates.
    let before = settled_live().await;
    println!(
        "budget: (for the record) before the teammates: {} threads, VmRSS {} KiB",
        status_field("Threads:").unwrap_or_default(),
        status_field("VmRSS:").unwrap_or_default()
    );
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
            && team.iter().filter(|t| t.name.starts_with("mate-")).count() == TEAMMATES
            && team
                .iter()
                .filter(|t| t.name.starts_with("mate-"))
                .all(|t| matches!(t.status, TeammateStatus::Idle { .. }))
        {
            break;
        }
    }
    let after = settled_live().await;
    let per_teammate = (after - before).max(0) as u64 / TEAMMATES as u64;
    println!(
        "budget: (for the record, not budgeted) with {TEAMMATES} idle teammates: {} threads, VmRSS {} KiB",
        status_field("Threads:").unwrap_or_default(),
        status_field("VmRSS:").unwrap_or_default()
    );
    if std::env::var_os("TEAMLEAD_BUDGET_THREADS").is_some() {
        let mut names: Vec<String> = std::fs::read_dir("/proc/self/task")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("comm")).ok())
            .map(|n| n.trim().to_string())
            .collect();
        names.sort();
        let mut counted: Vec<(String, usize)> = Vec::new();
        for n in names {
            match counted.last_mut() {
                Some((last, k)) if *last == n => *k += 1,
                _ => counted.push((n, 1)),
            }
        }
        println!("budget: threads by name: {counted:?}");
        // Do the extra threads stay? (tokio's blocking pool keeps an idle thread 10 s.)
        let deadline = Instant::now() + Duration::from_secs(20);
        let threads = || status_field("Threads:").and_then(|t| t.parse::<usize>().ok());
        while threads().unwrap_or(0) > 12 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        println!(
            "budget: 20 s later at most: {} threads, VmRSS {} KiB",
            status_field("Threads:").unwrap_or_default(),
            status_field("VmRSS:").unwrap_or_default()
        );
    }
    handle.commands.send(LeadCommand::Quit).await.expect("lead");
    while next_event(&mut events).await != LeadEvent::Exited {}
    Budgets {
        teammate_bytes: per_teammate,
        delivery_allocs: fewest,
        delivery_allocs_waiting: fewest_waiting,
    }
}

/// Waits for the transcript event of a teammate's message `wanted`.
async fn shown(events: &mut mpsc::Receiver<LeadEvent>, wanted: &str) {
    loop {
        if let LeadEvent::Transcript(TranscriptItem::Teammate { text, .. }) =
            next_event(events).await
            && text == wanted
        {
            return;
        }
    }
}

/// The fewest allocations of `n` deliveries (a message appended to the lead's inbox, then
/// waited for as its transcript event), each once the heap holds still.
async fn fewest_allocs(
    home: &Home,
    team: &str,
    events: &mut mpsc::Receiver<LeadEvent>,
    label: &str,
    n: usize,
) -> u64 {
    let mut fewest = u64::MAX;
    for i in 0..n {
        let wanted = format!("{label} {i}");
        settled_live().await;
        let before = ALLOCS.load(Ordering::Relaxed);
        store::inbox::append(
            home,
            team,
            "team-lead",
            &InboxEntry::new("writer", wanted.clone()),
        )
        .expect("append");
        shown(events, &wanted).await;
        fewest = fewest.min(ALLOCS.load(Ordering::Relaxed) - before);
    }
    fewest
}
