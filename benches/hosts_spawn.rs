//! Teammates on other hosts, spawned and idle, run by hand (needs root: each host is a network
//! namespace with its own sshd and login user, `tests/support/hosts_common`):
//! `cargo build --bench hosts_spawn`, then run `target/debug/deps/hosts_spawn-*` (a debug
//! build; `cargo bench --bench hosts_spawn` for a release one).
//!
//! Measured, against a real lead server (`teamlead serve`, driven with `teamlead ctl` as a
//! person or a script would):
//!
//! 1. **spawn → first idle**, local and remote: `/spawn NAME [--host box] "…"` of teamlead's
//!    own shell teammate until `ctl status --json` shows it idle after its first turn, five
//!    of each one after the other, and the link's round trip (`hosts list` through the live
//!    master) beside them (issue 29's goal: remote ≤ 1.5 × local + RTT).
//! 2. **100 teammates on 4 hosts**: 25 spawned on each of four test hosts (one after the
//!    other, as `ctl` sends them), the time until all are idle; then the lead server's CPU
//!    (user + system, all its threads) and resident memory over 10 s of an idle team, and
//!    those of its ssh children (masters and the relays' sessions).
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

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hosts_common::{HostSetup, TestHost, TestLead};

const TEAM: &str = "bench";

struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn ctl(lead: &TestLead, args: &[&str]) -> String {
    let mut full = vec!["ctl", TEAM];
    full.extend_from_slice(args);
    let out = lead
        .cmd()
        .args(&full)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "ctl {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each teammate's status word in `ctl status --json`.
fn statuses(lead: &TestLead) -> Vec<(String, String)> {
    let v: serde_json::Value = serde_json::from_str(&ctl(lead, &["status", "--json"])).unwrap();
    v["teammates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap_or("").to_string(),
                        t["status"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

fn wait_idle(lead: &TestLead, names: &[String], limit: Duration) {
    let end = Instant::now() + limit;
    loop {
        let all = statuses(lead);
        if names
            .iter()
            .all(|n| all.iter().any(|(m, s)| m == n && s == "idle"))
        {
            return;
        }
        assert!(Instant::now() < end, "not idle in {limit:?}: {all:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn spawn(lead: &TestLead, name: &str, host: Option<&str>) {
    let on = host.map(|h| format!(" --host {h}")).unwrap_or_default();
    let out = ctl(
        lead,
        &[&format!(
            "/spawn {name}{on} --mode bypassPermissions \"```sh\necho {name}-ready\n```\""
        )],
    );
    assert!(out.contains("Spawned"), "{out}");
}

fn serve(lead: &TestLead, work: &std::path::Path) -> Serve {
    let mut cmd = lead.std_cmd();
    cmd.args(["serve", "--team", TEAM, "--backend", "in-process"])
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let serve = Serve(cmd.spawn().unwrap());
    let end = Instant::now() + Duration::from_secs(30);
    while !lead
        .cmd()
        .args(["ctl", TEAM, "status"])
        .output()
        .unwrap()
        .status
        .success()
    {
        assert!(Instant::now() < end, "the lead server did not answer");
        std::thread::sleep(Duration::from_millis(50));
    }
    serve
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// CPU ticks (user + system) and resident KiB of a process.
fn usage(pid: u32) -> (u64, u64) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = f.get(11).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    (ticks, rss)
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')
                        .and_then(|(_, r)| r.split_whitespace().nth(1).map(str::to_string))
                })
                .and_then(|pp| pp.parse::<u32>().ok())
                == Some(pid)
        })
        .collect()
}

fn spawn_to_idle() {
    let lead = TestLead::new();
    let host = TestHost::start(HostSetup::default());
    lead.trust(&host);
    lead.add_host("box", &host);
    host.give_teamlead();
    let work = tempfile::tempdir().unwrap();
    let _serve = serve(&lead, work.path());
    let mut rtt = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let out = lead.cmd().args(["hosts", "list"]).output().unwrap();
        assert!(out.status.success());
        rtt.push(t.elapsed());
    }
    let mut local = Vec::new();
    let mut remote = Vec::new();
    for n in 0..5 {
        for (kind, host) in [("local", None), ("remote", Some("box"))] {
            let name = format!("{kind}{n}");
            let t = Instant::now();
            spawn(&lead, &name, host);
            wait_idle(&lead, std::slice::from_ref(&name), Duration::from_secs(60));
            if host.is_some() {
                remote.push(t.elapsed());
            } else {
                local.push(t.elapsed());
            }
        }
    }
    let (l, r, link) = (median(local), median(remote), median(rtt));
    println!(
        "spawn -> first idle (median of 5): local {:.0} ms, remote {:.0} ms; \
         `hosts list` through the master {:.0} ms; goal 1.5 x local + RTT = {:.0} ms",
        ms(l),
        ms(r),
        ms(link),
        1.5 * ms(l) + ms(link)
    );
    let _ = lead.cmd().args(["ctl", TEAM, "/quit"]).output();
}

fn hundred_on_four_hosts() {
    let lead = TestLead::new();
    let hosts: Vec<TestHost> = (0..4)
        .map(|_| TestHost::start(HostSetup::default()))
        .collect();
    for (i, host) in hosts.iter().enumerate() {
        lead.trust(host);
        lead.add_host(&format!("h{i}"), host);
        host.give_teamlead();
    }
    let work = tempfile::tempdir().unwrap();
    let serve = serve(&lead, work.path());
    let started = Instant::now();
    let mut names = Vec::new();
    for n in 0..25 {
        for i in 0..4 {
            let name = format!("t{i}x{n}");
            spawn(&lead, &name, Some(&format!("h{i}")));
            names.push(name);
        }
    }
    let spawned = started.elapsed();
    wait_idle(&lead, &names, Duration::from_secs(300));
    let idle = started.elapsed();
    println!(
        "100 teammates on 4 hosts: spawned in {:.1} s ({:.0} ms each), all idle after {:.1} s",
        spawned.as_secs_f64(),
        ms(spawned) / 100.0,
        idle.as_secs_f64()
    );
    // Settle, then 10 s of an idle team.
    std::thread::sleep(Duration::from_secs(5));
    let pid = serve.0.id();
    let kids = children(pid);
    let (t0, _) = usage(pid);
    let k0: u64 = kids.iter().map(|k| usage(*k).0).sum();
    std::thread::sleep(Duration::from_secs(10));
    let (t1, rss) = usage(pid);
    let k1: u64 = kids.iter().map(|k| usage(*k).0).sum();
    let krss: u64 = kids.iter().map(|k| usage(*k).1).sum();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    println!(
        "idle 10 s: lead server CPU {:.1} % of a core, RSS {} MiB; its {} children (ssh) CPU {:.1} %, RSS {} MiB",
        (t1 - t0) as f64 / hz / 10.0 * 100.0,
        rss / 1024,
        kids.len(),
        (k1 - k0) as f64 / hz / 10.0 * 100.0,
        krss / 1024
    );
    let _ = lead.cmd().args(["ctl", TEAM, "/quit"]).output();
}

fn main() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        println!("hosts_spawn: skipped (test hosts need root: namespaces, sshd, useradd)");
        return;
    }
    println!("teamlead on other hosts: spawn and idle\n");
    spawn_to_idle();
    hundred_on_four_hosts();
}
