//! Pane teammates, measured by hand: `cargo bench --bench pane_spawn`.
//! - time from spawn (create the tmux pane, write the prompt, start `teamlead teammate`) to the
//!   teammate's first `idle_notification` in the lead's inbox, over several spawns;
//! - RSS of one idle `teamlead teammate` process.
//!
//! Uses a private tmux server (`-L`) that is killed at the end.

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

fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
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
    for i in 0..SPAWNS {
        let name = format!("bench-{i}");
        team::add_member(&home, TEAM, Member::new(&name, TEAM, &cwd)).unwrap();
        let mut request = SpawnRequest::new(&name, work.path());
        request.prompt = Some("say hello".into());
        let start = Instant::now();
        rt.block_on(executor.spawn(request)).expect("spawn");
        let deadline = start + Duration::from_secs(20);
        while idle_count(&home, &name) == 0 {
            assert!(
                Instant::now() < deadline,
                "no idle_notification from {name}"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
        times.push(start.elapsed());
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("spawn → first idle_notification ({SPAWNS} teammates in a private tmux server):");
    println!(
        "  min {:.1} ms   median {:.1} ms   max {:.1} ms",
        ms(times[0]),
        ms(times[times.len() / 2]),
        ms(times[times.len() - 1])
    );

    // RSS of one idle teammate process: the child of the pane's shell.
    std::thread::sleep(Duration::from_secs(2));
    let pane = executor.pane_of("bench-0").unwrap();
    let pane_pid = tmux
        .server
        .run(&["display-message", "-p", "-t", &pane, "#{pane_pid}"])
        .unwrap();
    let children = Command::new("pgrep")
        .args(["-P", &pane_pid])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).to_string())
        .unwrap_or_default();
    let pids: Vec<u32> = std::iter::once(pane_pid.parse().unwrap())
        .chain(children.lines().filter_map(|l| l.trim().parse().ok()))
        .collect();
    for pid in pids {
        let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmd.contains("teammate") && !cmd.starts_with("sh") {
            println!(
                "RSS of one idle `teamlead teammate` (pid {pid}): {} KiB",
                rss_kib(pid).unwrap_or(0)
            );
        }
    }
    let _ = tmux.server.kill_server();
}
