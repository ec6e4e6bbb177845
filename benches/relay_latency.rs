//! Relay latency benchmark, run by hand (needs root for the ssh set-up: it makes a test host, a
//! network namespace with its own sshd and user; without root only the loopback rows run):
//! `cargo bench --bench relay_latency` (a release build), or `cargo build --bench
//! relay_latency` and run `target/debug/deps/relay_latency-*` (a debug build, much quicker to
//! build; the figures in docs/DESIGN.md "The relay" come from one).
//!
//! Measured: remote delivery through teamlead's link. The lead's end (`Link::lead` + `drive`,
//! as the lead server runs it) appends `ping-N` to its copy of a remote member's inbox; the
//! link carries it to that member's inbox on the host, where a responder (a process of the
//! host's user, polling the inbox every millisecond, as a teammate there would read it) appends
//! `pong-N` to the lead's inbox on the host; the link carries it back. Two figures per round,
//! one clock: *there* (appended on the lead's side → in the host's inbox) and *round trip*
//! (→ the reply in the lead's inbox). p50/p99/max over `ROUNDS` one at a time, in two set-ups:
//!
//! 1. **real ssh**: a test host (`tests/support/hosts_common`), `teamlead relay --stdio` started
//!    over teamlead's own ssh master with `backend::hosts::Connection::command`;
//! 2. **loopback pipes**: the same two ends in this process over a pair of OS pipes, no ssh:
//!    the link's own cost (the 50 ms inbox poll of each side dominates it);
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
use teamlead_relay::{DriverOptions, Identity, Link, RelayOptions, drive, run_stdio};

use hosts_common::link::{LINK_ID, LinkRig, TEAM, gid_of};

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

fn texts(home: &Home, member: &str) -> Vec<String> {
    inbox::read(home, TEAM, member)
        .map(|r| r.entries.into_iter().map(|e| e.text).collect())
        .unwrap_or_default()
}

/// The responder: every `ping-N` in the member's inbox is answered with `pong-N` to the lead.
fn respond(home: &Home) -> ! {
    let mut answered = 0;
    loop {
        let pings: Vec<String> = texts(home, MEMBER)
            .into_iter()
            .filter(|t| t.starts_with("ping-"))
            .collect();
        for ping in &pings[answered.min(pings.len())..] {
            let pong = ping.replacen("ping", "pong", 1);
            inbox::append(home, TEAM, "team-lead", &InboxEntry::new(MEMBER, pong)).unwrap();
        }
        answered = answered.max(pings.len());
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Polls `cond` every 500 µs for up to 10 s; when it held.
fn until(cond: impl Fn() -> bool) -> Instant {
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        if cond() {
            return Instant::now();
        }
        assert!(Instant::now() < end, "nothing arrived in 10 s");
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// `ROUNDS` round trips from `lead_home` to `host_home` and back; prints the figures.
fn measure(label: &str, lead_home: &Home, host_home: &Home) {
    // Warm-up: the route is through and both sides poll.
    let mut there = Vec::with_capacity(ROUNDS);
    let mut round = Vec::with_capacity(ROUNDS);
    for n in 0..ROUNDS + 10 {
        let ping = format!("ping-{n}");
        let pong = format!("pong-{n}");
        let sent = Instant::now();
        inbox::append(
            lead_home,
            TEAM,
            MEMBER,
            &InboxEntry::new("team-lead", ping.clone()),
        )
        .unwrap();
        let arrived = until(|| texts(host_home, MEMBER).contains(&ping));
        let back = until(|| texts(lead_home, "team-lead").contains(&pong));
        if n >= 10 {
            there.push(arrived - sent);
            round.push(back - sent);
        }
    }
    for (what, mut v) in [("there     ", there), ("round trip", round)] {
        v.sort();
        println!(
            "{label:<38} {what}  p50 {:>7.1} ms  p99 {:>7.1} ms  max {:>7.1} ms",
            percentile(&v, 0.5).as_secs_f64() * 1e3,
            percentile(&v, 0.99).as_secs_f64() * 1e3,
            v[v.len() - 1].as_secs_f64() * 1e3,
        );
    }
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
    let options = DriverOptions {
        stop: Some(stop.clone()),
        ..DriverOptions::default()
    };
    let lead = std::thread::spawn(move || {
        let _ = drive(&mut link, lead_in, lead_out, &options, |_| {});
    });
    let responder_home = host_home.clone();
    std::thread::spawn(move || respond(&responder_home));
    measure(label, &lead_home, &host_home);
    stop.store(true, Ordering::Relaxed);
    let _ = lead.join();
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
    std::os::unix::fs::chown(root, Some(rig.host.uid), Some(gid)).unwrap();
    let mut responder = std::process::Command::new(std::env::current_exe().unwrap())
        .env(RESPONDER, root)
        .uid(rig.host.uid)
        .gid(gid)
        .current_dir("/")
        .stdin(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lead = rig.run_lead();
    assert!(
        lead.wait_for(Duration::from_secs(20), |l| l.is_up()),
        "the link never came up"
    );
    measure(label, &rig.lead_home, &rig.host_home);
    lead.stop();
    let _ = responder.kill();
    let _ = responder.wait();
}

fn main() {
    if let Some(home) = std::env::var_os(RESPONDER) {
        respond(&Home::new(std::path::PathBuf::from(home)));
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
