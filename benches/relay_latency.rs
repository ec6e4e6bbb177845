//! Relay latency benchmark, run by hand (needs root for the ssh set-up: it makes a test host, a
//! network namespace with its own sshd and user; without root only the loopback rows run):
//! `cargo bench --bench relay_latency` (a release build), or `cargo build --bench
//! relay_latency` and run `target/debug/deps/relay_latency-*` (a debug build, much quicker to
//! build; the figures in docs/DESIGN.md "The relay" come from one).
//!
//! Measured: remote delivery through teamlead's link, sent as the lead server sends to a
//! remote teammate: `ping-N` handed to the link (`HostLink::hand_off`: into its outbox and onto
//! the link at once), then appended to the lead's own copy of the member's inbox (which the
//! link does not send again). The link carries it to that member's inbox on the host, where a
//! responder (a process of the host's user, woken by the inbox's file events, as a teammate
//! there reads it) appends `pong-N` to the lead's inbox on the host; the link carries it back.
//! Three figures per round, one clock, from the hand-off: *there* (→ in the host's inbox),
//! *round trip* (→ the reply handed to the lead as its end of the link reads it,
//! `Link::on_lead_entry`, which is when the lead server's drain has it) and *in file* (→ the
//! reply in the lead's inbox, appended by the link after that). p50/p99/max over `ROUNDS` one at a time, in
//! these set-ups (each ssh row first measures its transport's own round trip, a line echoed by
//! `cat` over the same master, and says whether the goal, round trip p99 ≤ that RTT + 10 ms,
//! is met):
//!
//! 1. **real ssh**: a test host (`tests/support/hosts_common`), the lead server's own
//!    `HostLink` (the relay started over teamlead's ssh master, the route and team file sent);
//! 2. **loopback pipes**: a lead's `Link` (driven with the same hand-off) and a relay in this
//!    process over a pair of OS pipes, no ssh: the link's own cost (file events wake each side;
//!    the appends on the host and the lead's append of the reply dominate it);
//! 3. **loopback pipes, 10 ms each way (emulated)**: the pipes go through a thread that holds
//!    each chunk 10 ms before passing it on;
//! 4. **real ssh, 10 ms each way (delaying proxy)**: as 1, with ssh's `ProxyCommand` this
//!    bench's own binary in proxy mode ([`PROXY`]): it connects to the host's sshd and holds
//!    every chunk 10 ms in each direction, so ssh's handshakes, the master's session opens and
//!    every frame of the link pay the delay. This kernel has no `tc netem` (sch_netem), so the
//!    issue's "netem delay 10 ms each way" is emulated on the TCP stream instead of its
//!    packets (no effect on TCP's own windows and retransmissions; none happen on a veth).
//!
//! Plain std timing, one machine.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "../tests/support/cli_common/mod.rs"]
mod cli_common;
#[path = "../tests/support/hosts_common/mod.rs"]
mod hosts_common;
#[path = "../tests/support/programs/mod.rs"]
#[allow(dead_code)]
mod programs;

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, inbox};
use teamlead_relay::{DriverOptions, Identity, Link, RelayOptions, drive_with, run_stdio};

use hosts_common::link::{LINK_ID, LinkRig, TEAM, gid_of};
use teamlead::backend::hosts::link::{HostLink, LinkSpec};

const ROUNDS: usize = 300;
/// The proxy mode's environment variable: the delay each way in ms (`ProxyCommand` runs this
/// binary with it, and the host and port as arguments).
const PROXY: &str = "TEAMLEAD_BENCH_PROXY_DELAY_MS";
/// The responder's environment variable: the host home it answers in.
const RESPONDER: &str = "TEAMLEAD_BENCH_RESPONDER";
const MEMBER: &str = "alice";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Wakes a waiter when one inbox file changes (inotify, as a teammate's own inbox watcher):
/// the waits below look at an inbox when it was replaced, not on a timer, and find a text by
/// its bytes rather than parsing the whole array each time, so neither the figures nor the
/// machine's two cores pay for the bench's own readers (they took most of the CPU a round
/// trip used when they parsed whole inboxes every millisecond).
struct InboxWatch {
    _watcher: notify::RecommendedWatcher,
    changes: std::sync::mpsc::Receiver<()>,
    path: std::path::PathBuf,
}

impl InboxWatch {
    fn new(home: &Home, member: &str) -> InboxWatch {
        use notify::Watcher as _;
        let dir = home.inboxes_dir(TEAM).unwrap();
        // Made by whoever watches first (in the ssh set-up, made and given to the host's user
        // before anyone watches).
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{member}.json"));
        let (tx, changes) = std::sync::mpsc::channel();
        let file = path.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                // Not the reads (an open or close of the file for reading, as each waiter's
                // own look is): they would wake every waiter again, each look waking the next.
                if event.is_ok_and(|e| {
                    !matches!(
                        e.kind,
                        notify::EventKind::Access(_) | notify::EventKind::Other
                    ) && e.paths.contains(&file)
                }) {
                    let _ = tx.send(());
                }
            })
            .unwrap();
        watcher
            .watch(&dir, notify::RecursiveMode::NonRecursive)
            .unwrap();
        InboxWatch {
            _watcher: watcher,
            changes,
            path,
        }
    }

    /// Whether the inbox holds an entry whose text is `text` (its JSON string, quotes
    /// included, among the file's bytes: the texts here are plain `ping-N`/`pong-N`).
    fn holds(&self, text: &str) -> bool {
        let quoted = format!("\"{text}\"");
        std::fs::read_to_string(&self.path).is_ok_and(|inbox| inbox.contains(&quoted))
    }

    /// When the inbox held `text`: looked at now and after each change of the file (and every
    /// 50 ms, in case an event was missed), for up to 10 s.
    fn until(&self, text: &str) -> Instant {
        self.within(text, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("{text} did not arrive in 10 s"))
    }

    /// [`InboxWatch::until`] for up to `limit`; `None` when it did not come.
    fn within(&self, text: &str, limit: Duration) -> Option<Instant> {
        let end = Instant::now() + limit;
        loop {
            while self.changes.try_recv().is_ok() {}
            if self.holds(text) {
                return Some(Instant::now());
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let _ = self
                .changes
                .recv_timeout(left.min(Duration::from_millis(50)));
        }
    }
}

/// The responder: `ping-N` in the member's inbox is answered with `pong-N` to the lead, in
/// order, each as soon as the inbox that holds it is there; it ends when no ping came for a
/// minute (its row is over).
fn respond(home: &Home) {
    let watch = InboxWatch::new(home, MEMBER);
    for n in 0.. {
        if watch
            .within(&format!("ping-{n}"), Duration::from_secs(60))
            .is_none()
        {
            return;
        }
        inbox::append(
            home,
            TEAM,
            "team-lead",
            &InboxEntry::new(MEMBER, format!("pong-{n}")),
        )
        .unwrap();
    }
}

/// `ROUNDS` round trips from `lead_home` to `host_home` and back; prints the figures and
/// returns the round trip's p99.
fn measure(
    label: &str,
    hand_off: impl Fn(InboxEntry),
    handed_in: &std::sync::mpsc::Receiver<(String, Instant)>,
    lead_home: &Home,
    host_home: &Home,
) -> Duration {
    // Warm-up: the route is through and both sides poll.
    let host_watch = InboxWatch::new(host_home, MEMBER);
    let lead_watch = InboxWatch::new(lead_home, "team-lead");
    let mut there = Vec::with_capacity(ROUNDS);
    let mut round = Vec::with_capacity(ROUNDS);
    let mut in_file = Vec::with_capacity(ROUNDS);
    for n in 0..ROUNDS + 10 {
        let ping = format!("ping-{n}");
        let pong = format!("pong-{n}");
        // As the lead sends to a remote teammate: handed to the link, then its own copy
        // appended (which the link does not send again).
        let entry = InboxEntry::new("team-lead", ping.clone());
        let sent = Instant::now();
        hand_off(entry.clone());
        inbox::append(lead_home, TEAM, MEMBER, &entry).unwrap();
        let arrived = host_watch.until(&ping);
        // The reply as the lead's end of the link hands it to the lead, then in its inbox.
        let back = loop {
            let (text, at) = handed_in
                .recv_timeout(Duration::from_secs(10))
                .unwrap_or_else(|_| panic!("{pong} was not handed in within 10 s"));
            if text == pong {
                break at;
            }
        };
        let filed = lead_watch.until(&pong);
        if n >= 10 {
            there.push(arrived - sent);
            round.push(back - sent);
            in_file.push(filed - sent);
        }
    }
    round.sort();
    let p99 = percentile(&round, 0.99);
    for (what, mut v) in [
        ("there     ", there),
        ("round trip", round),
        ("  in file ", in_file),
    ] {
        v.sort();
        println!(
            "{label:<38} {what}  p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms",
            percentile(&v, 0.5).as_secs_f64() * 1e3,
            percentile(&v, 0.99).as_secs_f64() * 1e3,
            v[v.len() - 1].as_secs_f64() * 1e3,
        );
    }
    p99
}

/// Copies `from` to `to`, each chunk held `delay` after it was read (two threads: one reads,
/// one writes when each chunk is due, so the delay is a latency, not a throughput cap). Ends
/// when either side does; the writer's end is then shut (`on_end`).
fn delay_copy<R, W>(
    mut from: R,
    mut to: W,
    delay: Duration,
    on_end: impl FnOnce(W) + Send + 'static,
) -> std::thread::JoinHandle<()>
where
    R: Read + Send + 'static,
    W: Write + Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0
                || tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
            {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if to.write_all(&bytes).and_then(|()| to.flush()).is_err() {
                break;
            }
        }
        on_end(to);
    })
}

/// A one-way pipe whose bytes each wait `delay` in a thread before they go on.
fn delayed_pipe(delay: Duration) -> (std::io::PipeReader, std::io::PipeWriter) {
    let (first_r, first_w) = std::io::pipe().unwrap();
    if delay.is_zero() {
        return (first_r, first_w);
    }
    let (last_r, last_w) = std::io::pipe().unwrap();
    delay_copy(first_r, last_w, delay, drop);
    (last_r, first_w)
}

/// Proxy mode (ssh's `ProxyCommand`): connects to `host port` and carries the bytes both ways
/// between the connection and this process's standard input and output, each chunk `delay`
/// late; exits when either side ends.
fn proxy(delay: Duration) -> ! {
    let mut args = std::env::args().skip(1);
    let (Some(host), Some(port)) = (args.next(), args.next()) else {
        eprintln!("proxy mode: HOST PORT expected");
        std::process::exit(2);
    };
    let stream = match std::net::TcpStream::connect((host.as_str(), port.parse().unwrap_or(22))) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("proxy mode: {host}:{port}: {e}");
            std::process::exit(1);
        }
    };
    let _ = stream.set_nodelay(true);
    let up = delay_copy(
        std::io::stdin(),
        stream.try_clone().unwrap(),
        delay,
        |s: std::net::TcpStream| {
            let _ = s.shutdown(std::net::Shutdown::Write);
        },
    );
    let down = delay_copy(stream, std::io::stdout(), delay, drop);
    let _ = down.join();
    let _ = up.join();
    std::process::exit(0);
}

/// The lead's and the relay's ends in this process, over pipes delayed `delay` each way.
fn loopback(label: &str, delay: Duration) {
    let lead_dir = tempfile::tempdir().unwrap();
    let host_dir = tempfile::tempdir().unwrap();
    let lead_home = Home::new(lead_dir.path());
    let host_home = Home::new(host_dir.path());
    let (relay_in, lead_out) = delayed_pipe(delay);
    let (lead_in, relay_out) = delayed_pipe(delay);
    let relay_home = host_home.clone();
    std::thread::spawn(move || {
        let options = RelayOptions {
            version: env!("CARGO_PKG_VERSION").into(),
            poll: teamlead_relay::driver::DEFAULT_POLL,
        };
        let _ = run_stdio(&relay_home, relay_in, relay_out, &options);
    });
    let stop = Arc::new(AtomicBool::new(false));
    let mut link = Link::lead(
        lead_home.clone(),
        TEAM,
        LINK_ID,
        Identity::this_build(env!("CARGO_PKG_VERSION")),
    )
    .unwrap();
    link.set_hosted(&[MEMBER.to_string()]).unwrap();
    let (handed_tx, handed_in) = std::sync::mpsc::channel();
    link.on_lead_entry(move |e| {
        let _ = handed_tx.send((e.text, Instant::now()));
    });
    let nudge = teamlead_relay::driver::Nudge::default();
    let options = DriverOptions {
        stop: Some(stop.clone()),
        nudge: Some(nudge.clone()),
        ..DriverOptions::default()
    };
    // The lead server's hand-off (`HostLink::hand_off`): entries queued, the driver woken, and
    // its `between` step sends them.
    let (handed, to_send) = std::sync::mpsc::channel::<InboxEntry>();
    let lead = std::thread::spawn(move || {
        let between = |link: &mut Link| {
            let entries: Vec<InboxEntry> = to_send.try_iter().collect();
            link.send_entries(MEMBER, &entries)
        };
        let _ = drive_with(&mut link, lead_in, lead_out, &options, |_| {}, between);
    });
    let responder_home = host_home.clone();
    std::thread::spawn(move || respond(&responder_home));
    let hand_off = |entry| {
        handed.send(entry).unwrap();
        nudge.nudge();
    };
    measure(label, hand_off, &handed_in, &lead_home, &host_home);
    stop.store(true, Ordering::Relaxed);
    let _ = lead.join();
}

/// The transport's own round trip over `connection` (its master, and the delaying proxy when
/// there is one): a line written to `cat` on the host and read back, 100 times; p50 and p99.
/// The latency goal is this plus 10 ms.
fn echo_rtt(connection: &teamlead::backend::hosts::Connection) -> (Duration, Duration) {
    use std::io::BufRead as _;
    let mut child = connection
        .command("cat")
        .unwrap()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut to = child.stdin.take().unwrap();
    let mut from = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut times = Vec::new();
    let mut line = String::new();
    for n in 0..110 {
        let sent = Instant::now();
        writeln!(to, "echo-{n}").unwrap();
        to.flush().unwrap();
        line.clear();
        from.read_line(&mut line).unwrap();
        if n >= 10 {
            times.push(sent.elapsed());
        }
    }
    drop(to);
    let _ = child.wait();
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

/// Over a test host's real sshd, each way `delay` late (a delaying `ProxyCommand`) unless zero.
fn over_ssh(label: &str, delay: Duration) {
    let options = if delay.is_zero() {
        Vec::new()
    } else {
        vec![format!(
            "ProxyCommand=env {PROXY}={} {} %h %p",
            delay.as_millis(),
            std::env::current_exe().unwrap().display()
        )]
    };
    let rig = LinkRig::start_with(options);
    let root = &rig.host_home.root;
    std::fs::create_dir_all(root).unwrap();
    let gid = gid_of(&rig.host.user);
    // The host's inboxes directory is the host user's, made before this process (root)
    // watches it: a directory root made there would refuse the relay's writes.
    let inboxes = rig.host_home.inboxes_dir(TEAM).unwrap();
    std::fs::create_dir_all(&inboxes).unwrap();
    for dir in inboxes.ancestors().take_while(|d| d.starts_with(root)) {
        std::os::unix::fs::chown(dir, Some(rig.host.uid), Some(gid)).unwrap();
        std::fs::set_permissions(dir, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    }
    let mut responder = std::process::Command::new(std::env::current_exe().unwrap())
        .env(RESPONDER, root)
        .uid(rig.host.uid)
        .gid(gid)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rtt = echo_rtt(&rig.connection);
    println!(
        "{label:<38} transport RTT (a line echoed by `cat` over the same master) p50 {:>5.1} ms  p99 {:>5.1} ms",
        rtt.0.as_secs_f64() * 1e3,
        rtt.1.as_secs_f64() * 1e3,
    );
    // The lead server's own end of the link (`HostLink`: the relay started over the master,
    // the route and team file sent, the hand-off), on a team of the lead's home.
    let mut team = teamlead_protocol::TeamFile::new(TEAM, None, "/w");
    team.members
        .push(teamlead_protocol::Member::new(MEMBER, TEAM, "/w"));
    teamlead_protocol::store::create_team(&rig.lead_home, &team).unwrap();
    let (handed_tx, handed_in) = std::sync::mpsc::channel();
    let spec = LinkSpec {
        connection: rig.connection.clone(),
        home: rig.lead_home.clone(),
        team: TEAM.to_string(),
        link: LINK_ID.to_string(),
        hosted: vec![MEMBER.to_string()],
        version: env!("CARGO_PKG_VERSION").to_string(),
        prices: serde_json::Value::Array(Vec::new()),
        lead_entries: Some(Arc::new(move |e: InboxEntry| {
            let _ = handed_tx.send((e.text, Instant::now()));
        })),
    };
    let mut lead = HostLink::start(spec, Arc::new(|_| {})).unwrap();
    let end = Instant::now() + Duration::from_secs(20);
    while !lead.is_up() {
        assert!(Instant::now() < end, "the link never came up");
        std::thread::sleep(Duration::from_millis(10));
    }
    let hand_off = |entry| lead.hand_off(MEMBER, entry);
    let p99 = measure(label, hand_off, &handed_in, &rig.lead_home, &rig.host_home);
    let goal = rtt.0 + Duration::from_millis(10);
    println!(
        "{label:<38} goal: round trip p99 <= RTT p50 + 10 ms = {:.1} ms: {}",
        goal.as_secs_f64() * 1e3,
        if p99 <= goal { "met" } else { "not met" }
    );
    lead.stop();
    let _ = responder.kill();
    let _ = responder.wait();
}

fn main() {
    if let Some(home) = std::env::var_os(RESPONDER) {
        respond(&Home::new(std::path::PathBuf::from(home)));
        std::process::exit(0);
    }
    if let Some(ms) = std::env::var(PROXY).ok().and_then(|v| v.parse().ok()) {
        proxy(Duration::from_millis(ms));
    }
    println!("teamlead relay latency ({ROUNDS} round trips each, one at a time)\n");
    loopback("loopback pipes (no ssh)", Duration::ZERO);
    loopback(
        "loopback pipes, 10 ms each way (emul.)",
        Duration::from_millis(10),
    );
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        over_ssh("real ssh (test host, no delay)", Duration::ZERO);
        over_ssh(
            "real ssh, 10 ms each way (proxy)",
            Duration::from_millis(10),
        );
    } else {
        println!("real ssh: skipped (a test host needs root: namespaces, sshd, useradd)");
    }
}
