//! Pane teammates, measured by hand: `cargo bench --bench pane_spawn`.
//! - time from spawn (create the tmux pane, write the prompt, start `teamlead teammate`) to the
//!   teammate's first `idle_notification` in the lead's inbox, over several spawns, and how
//!   much of it the spawn call itself took (the rest is the teammate's start and first turn);
//! - the memory of the idle `teamlead teammate` processes: RSS, PSS and private pages (one, and
//!   the mean of all).
//!
//! Uses a private tmux server (`-L`) that is killed at the end.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use teamlead::backend::PaneBackend;
use teamlead::backend::executor::{SpawnRequest, TeammateExecutor};
use teamlead::backend::launch::TeammateProgram;
use teamlead::backend::pane_executor::PaneExecutor;
use teamlead::backend::terminals::tmux::TmuxBackend;
use teamlead::protocol::frames::Frame;
use teamlead::protocol::{Member, TeamFile};
use teamlead::store::{Home, inbox, team};

const TEAM: &str = "bench-team";
const SPAWNS: usize = 8;

fn teamlead_binary() -> String {
    // The release binary next to this bench executable (target/release/teamlead).
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().and_then(Path::parent).unwrap();
    let bin = dir.join("teamlead");
    assert!(
        bin.exists(),
        "build the binary first: cargo build --release (looked for {})",
        bin.display()
    );
    bin.to_string_lossy().into_owned()
}

fn idle_count(home: &Home, from: &str) -> usize {
    inbox::read(home, TEAM, "team-lead")
        .map(|r| {
            r.entries
                .iter()
                .filter(|e| e.from == from)
                .filter(|e| matches!(e.parse_frame(), Some(Frame::IdleNotification(_))))
                .count()
        })
        .unwrap_or(0)
}

/// One process's memory, in KiB, from `/proc/PID/smaps_rollup`: `Rss` (every page it maps,
/// the binary's code shared with every other teamlead process included), `Pss` (shared pages
/// divided among the processes that map them) and its private pages (`Private_Clean` +
/// `Private_Dirty`: what the machine gets back when it ends).
#[derive(Debug, Default, Clone, Copy)]
struct Memory {
    rss: u64,
    pss: u64,
    private: u64,
    anon: u64,
}

fn memory_kib(pid: u32) -> Option<Memory> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let field = |name: &str| -> u64 {
        rollup
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    Some(Memory {
        rss: field("Rss:"),
        pss: field("Pss:"),
        private: field("Private_Clean:") + field("Private_Dirty:"),
        anon: field("Anonymous:"),
    })
}

/// The `teamlead teammate` process of `name`'s pane (the pane's shell or its child).
fn teammate_pid(tmux: &TmuxBackend, executor: &PaneExecutor, name: &str) -> Option<u32> {
    let pane = executor.pane_of(name).ok()?;
    let pane_pid = tmux
        .server
        .run(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .ok()?;
    let children = Command::new("pgrep")
        .args(["-P", &pane_pid])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    std::iter::once(pane_pid.trim().parse().ok()?)
        .chain(children.lines().filter_map(|l| l.trim().parse().ok()))
        .find(|pid| {
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmd.contains("teammate") && !cmd.starts_with("sh")
        })
}

fn main() {
    let home_dir = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let home = Home::new(home_dir.path());
    let cwd = work.path().to_string_lossy().into_owned();
    team::create_team(&home, &TeamFile::new(TEAM, None, &cwd)).unwrap();

    let socket = format!("teamlead-bench-{}", std::process::id());
    let tmux = Arc::new(TmuxBackend::private(&socket));
    let backend: Arc<dyn PaneBackend> = tmux.clone();
    let executor = PaneExecutor::new(
        &home,
        TEAM,
        backend,
        TeammateProgram::Teamlead {
            binary: teamlead_binary(),
            engine: "shell".into(),
        },
        None,
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut times = Vec::new();
    let mut returned = Vec::new();
    for i in 0..SPAWNS {
        let name = format!("bench-{i}");
        team::add_member(&home, TEAM, Member::new(&name, TEAM, &cwd)).unwrap();
        let mut request = SpawnRequest::new(&name, work.path());
        request.prompt = Some("say hello".into());
        let start = Instant::now();
        rt.block_on(executor.spawn(request)).expect("spawn");
        returned.push(start.elapsed());
        let deadline = start + Duration::from_secs(20);
        // The lead's inbox is read again only when it changed (every write renames a new file
        // into place), looked at every
        // quarter millisecond (a 2 ms poll added a millisecond on average to every figure).
        let lead_inbox = home.inbox_path(TEAM, "team-lead").unwrap();
        let mut seen = None;
        loop {
            let now = std::fs::metadata(&lead_inbox)
                .ok()
                .map(|m| (m.ino(), m.len(), m.modified().ok()));
            if now != seen {
                seen = now;
                if idle_count(&home, &name) > 0 {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "no idle_notification from {name}"
            );
            std::thread::sleep(Duration::from_micros(250));
        }
        times.push(start.elapsed());
    }
    times.sort();
    returned.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("spawn → first idle_notification ({SPAWNS} teammates in a private tmux server):");
    println!(
        "  min {:.1} ms   median {:.1} ms   max {:.1} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );
    println!(
        "  of which the spawn call (pane made and styled, recorded, prompt written, command started): median {:.1} ms",
        ms(returned[returned.len() / 2])
    );

    // The memory of the idle teammate processes: the child of each pane's shell.
    std::thread::sleep(Duration::from_secs(2));
    let all: Vec<(u32, Memory)> = (0..SPAWNS)
        .filter_map(|i| teammate_pid(&tmux, &executor, &format!("bench-{i}")))
        .filter_map(|pid| Some((pid, memory_kib(pid)?)))
        .collect();
    if let Some((pid, one)) = all.first() {
        println!(
            "one idle `teamlead teammate` (pid {pid}): RSS {} KiB, PSS {} KiB, private {} KiB, anonymous {} KiB",
            one.rss, one.pss, one.private, one.anon
        );
    }
    if !all.is_empty() {
        let n = all.len() as u64;
        let sum = |f: fn(&Memory) -> u64| all.iter().map(|(_, m)| f(m)).sum::<u64>() / n;
        println!(
            "mean of {n} idle teammates: RSS {} KiB, PSS {} KiB, private {} KiB, anonymous {} KiB",
            sum(|m| m.rss),
            sum(|m| m.pss),
            sum(|m| m.private),
            sum(|m| m.anon)
        );
        println!(
            "  (RSS counts the binary's pages every teamlead process shares; PSS divides them; private is what one more teammate costs)"
        );
    }
    let _ = tmux.server.kill_server();
}
