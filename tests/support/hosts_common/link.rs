//! The link over real OpenSSH to a test host, driven from the test as the lead server drives
//! it: the lead's end (`teamlead_relay::Link::lead` + `drive`) over the standard input and
//! output of `ssh … teamlead relay --stdio`, started through `backend::hosts::Connection::command`
//! (teamlead's own ssh master), reconnecting whenever a connection ends. Two homes: the lead's
//! (the test's) and the host's (`~/.claude` of the host's login user, another directory). The
//! host's writers are real processes of the host's user (this test executable re-run as a child
//! under its uid), so the relay there finds inboxes it may read and swap, as a `claude` teammate
//! on that host would leave them.

use std::os::unix::process::CommandExt;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use teamlead::backend::hosts::probe::remote_teamlead_env;
use teamlead::backend::hosts::{Connection, Connector, Deadlines};
use teamlead::config::HostConfig;
use teamlead_protocol::InboxEntry;
use teamlead_protocol::store::{Home, inbox};
use teamlead_relay::{DriverOptions, Event, Identity, Link, drive};
use teamlead_test_support::store::{ChildJob, child_command};

use super::{HostSetup, TestHost, TestLead, processes_where};

pub const TEAM: &str = "crew";
pub const LINK_ID: &str = "7b1e2c3d-0000-4000-8000-0000000c4a05";
/// The members that run on the host (the lead's copies of their inboxes go there).
pub const HOSTED: [&str; 2] = ["alice", "bob"];
/// What the host's writers write to: the lead, and a member of a third host (both go to the
/// lead's side).
pub const TO_LEAD: [&str; 2] = ["team-lead", "carol"];
/// The group of a test host's user (its `/etc/passwd` line: `nogroup`).
pub fn gid_of(user: &str) -> u32 {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&user))
        .map(|f| f[3].parse().unwrap())
        .unwrap_or_else(|| panic!("{user} is not in /etc/passwd"))
}

/// A lead and one host with teamlead installed, trusted both ways, and the connection to it.
pub struct LinkRig {
    pub lead: TestLead,
    pub host: TestHost,
    pub connection: Connection,
    pub lead_home: Home,
    pub host_home: Home,
}

impl LinkRig {
    pub fn start() -> LinkRig {
        LinkRig::start_with(Vec::new())
    }

    /// [`LinkRig::start`], with more `ssh -o` options for the host (`Key=Value` each: a
    /// bench's `ProxyCommand` that delays the connection's bytes).
    pub fn start_with(options: Vec<String>) -> LinkRig {
        let lead = TestLead::new();
        let host = TestHost::start(HostSetup::default());
        lead.trust(&host);
        host.give_teamlead();
        let control = lead.control_dir();
        std::fs::create_dir_all(&control).unwrap();
        std::fs::set_permissions(
            &control,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let connector = Connector {
            control_dir: control,
            ssh_config: Some(lead.ssh_config()),
            deadlines: Deadlines::default(),
        };
        let connection = connector.connection(&HostConfig {
            name: "h".into(),
            destination: host.destination(),
            port: None,
            options,
            dir: None,
            home: None,
            claude: None,
            forward_model: false,
        });
        let lead_home = Home::new(lead.home.home());
        let host_home = Home::new(host.home().join(".claude"));
        LinkRig {
            lead,
            host,
            connection,
            lead_home,
            host_home,
        }
    }

    /// The lead's end, running (and reconnecting) on a thread of its own.
    pub fn run_lead(&self) -> LeadSide {
        let mut link = Link::lead(
            self.lead_home.clone(),
            TEAM,
            LINK_ID,
            Identity::this_build(env!("CARGO_PKG_VERSION")),
        )
        .unwrap();
        let hosted: Vec<String> = HOSTED.iter().map(|m| m.to_string()).collect();
        link.set_hosted(&hosted).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(LinkLog::default()));
        let connection = self.connection.clone();
        let (stop2, log2) = (stop.clone(), log.clone());
        let thread = std::thread::spawn(move || lead_loop(link, &connection, &stop2, &log2));
        LeadSide {
            stop,
            log,
            thread: Some(thread),
        }
    }

    /// Kills the relay processes on the host; how many there were.
    pub fn kill_relay(&self) -> usize {
        let uid = self.host.uid.to_string();
        let pids = processes_where(|status, cmdline| {
            cmdline.contains("relay --stdio")
                && status
                    .lines()
                    .find(|l| l.starts_with("Uid:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .is_some_and(|u| u == uid)
        });
        for pid in &pids {
            // SAFETY: a signal to a relay of this test's host user.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        pids.len()
    }

    /// What runs for this link now, for a failure's message: the host user's processes (the
    /// relays, sshd's sessions) and the ssh processes on this test's control socket, each
    /// with its state (`/proc/PID/stat`) and command line, then the last lines of sshd's log.
    /// The last `n` lines of the newest teamlead log of the host's user (the relays write
    /// there: `$XDG_STATE_HOME/teamlead/`, by default under `~/.local/state`).
    fn relay_log_tail(&self, n: usize) -> String {
        let dir = self.host.home().join(".local/state/teamlead");
        let newest = std::fs::read_dir(&dir).ok().and_then(|d| {
            d.flatten()
                .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
                .max()
                .map(|(_, p)| p)
        });
        let Some(path) = newest else {
            return format!("(no log in {})", dir.display());
        };
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(n)..].join("\n")
    }

    pub fn diagnose(&self) -> String {
        let uid = self.host.uid.to_string();
        let control = self.connection.control.display().to_string();
        let pids = processes_where(|status, cmdline| {
            let of_host = status
                .lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .is_some_and(|u| u == uid);
            of_host || (cmdline.starts_with("ssh") && cmdline.contains(&control))
        });
        pids.iter()
            .map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let state = stat
                    .rsplit_once(") ")
                    .and_then(|(_, rest)| rest.split_whitespace().next())
                    .unwrap_or("?")
                    .to_string();
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
                format!(
                    "{pid} {state} {}",
                    cmdline.chars().take(160).collect::<String>()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\nthe relays' log on the host, last lines:\n"
            + &self.relay_log_tail(30)
            + "\nsshd's last lines:\n"
            + &self
                .host
                .sshd_log()
                .lines()
                .rev()
                .take(12)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n")
    }

    /// Kills teamlead's ssh master for the host (not its clients); how many there were.
    pub fn kill_master(&self) -> usize {
        let control = self.connection.control.display().to_string();
        let pids = processes_where(|_, cmdline| {
            cmdline.starts_with("ssh") && cmdline.contains(&control) && cmdline.contains(" -N ")
        });
        for pid in &pids {
            // SAFETY: the ssh master started for this test's control socket.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        pids.len()
    }
}

/// What the lead's end saw, with the times.
#[derive(Debug, Default)]
pub struct LinkLog {
    /// Each time both hellos were through.
    pub ups: Vec<Instant>,
    /// Each time a connection ended, and how.
    pub downs: Vec<(Instant, String)>,
    /// Connections that could not be started (ssh said why).
    pub failed_starts: Vec<(Instant, String)>,
    /// Entries from the host appended to the lead's inboxes.
    pub delivered: usize,
}

impl LinkLog {
    /// Whether a connection is open now.
    pub fn is_up(&self) -> bool {
        self.ups.len() > self.downs.len()
    }
}

/// The lead's end on its thread; stopped on drop.
pub struct LeadSide {
    stop: Arc<AtomicBool>,
    pub log: Arc<Mutex<LinkLog>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl LeadSide {
    pub fn with_log<T>(&self, f: impl FnOnce(&LinkLog) -> T) -> T {
        f(&self.log.lock().unwrap())
    }

    /// Waits for `cond` on the log, polling, until `deadline`; whether it held.
    pub fn wait_for(&self, within: Duration, cond: impl Fn(&LinkLog) -> bool) -> bool {
        let end = Instant::now() + within;
        loop {
            if self.with_log(&cond) {
                return true;
            }
            if Instant::now() >= end {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
    }
}

impl Drop for LeadSide {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Connects, drives until the connection ends, and connects again, until `stop`: what the lead
/// server does for a host (backoff capped at 250 ms here, so reconnects are measured, not
/// waited for).
fn lead_loop(
    mut link: Link,
    connection: &Connection,
    stop: &Arc<AtomicBool>,
    log: &Mutex<LinkLog>,
) {
    let options = DriverOptions {
        stop: Some(stop.clone()),
        ..DriverOptions::default()
    };
    let mut backoff = Duration::from_millis(20);
    while !stop.load(Ordering::Relaxed) {
        let started = connection
            .command(&remote_teamlead_env(
                None,
                None,
                // The relay's own log on the host at debug, for `LinkRig::diagnose`.
                &[(
                    "TEAMLEAD_LOG".to_string(),
                    "teamlead_relay=debug,teamlead=info".to_string(),
                )],
                &["relay", "--stdio"],
            ))
            .map_err(|e| e.to_string())
            .and_then(|mut cmd| {
                cmd.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| e.to_string())
            });
        let mut child: Child = match started {
            Ok(child) => child,
            Err(e) => {
                log.lock().unwrap().failed_starts.push((Instant::now(), e));
                std::thread::sleep(backoff);
                backoff = (backoff * 2).min(Duration::from_millis(250));
                continue;
            }
        };
        let reader = child.stdout.take().unwrap();
        let mut writer = TimedWriter {
            inner: child.stdin.take().unwrap(),
            written: 0,
            longest: Duration::ZERO,
            last: None,
        };
        // What ssh and the relay said, read as it comes (a full pipe would stop them).
        let said = child.stderr.take().map(|mut err| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut err, &mut text);
                text
            })
        });
        let ended = drive(
            &mut link,
            reader,
            &mut writer,
            &options,
            |event| match event {
                Event::Up(_) => log.lock().unwrap().ups.push(Instant::now()),
                Event::Delivered { .. } => log.lock().unwrap().delivered += 1,
                _ => {}
            },
        );
        // When the lead's end saw the connection end, not when ssh was reaped after it.
        let ended_at = Instant::now();
        let _ = child.kill();
        let _ = child.wait();
        let said = said
            .and_then(|t| t.join().ok())
            .map(|t| t.lines().rev().take(8).collect::<Vec<_>>().join(" | "))
            .unwrap_or_default();
        let wrote = format!(
            " [wrote {} bytes; longest write {:?}; last write began {:?} before the end]",
            writer.written,
            writer.longest,
            writer.last.map(|t| ended_at.duration_since(t))
        );
        let mut log = log.lock().unwrap();
        if log.is_up() {
            log.downs.push((ended_at, format!("{ended:?}{wrote}")));
            backoff = Duration::from_millis(20);
        } else {
            log.failed_starts.push((
                ended_at,
                format!("before the hello: {ended:?}: {said}{wrote}"),
            ));
            drop(log);
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_millis(250));
        }
    }
}

/// Writers that append real inbox entries until stopped; each returns how many it wrote.
pub struct Writers {
    stop: Arc<AtomicBool>,
    pub written: Arc<AtomicUsize>,
    threads: Vec<std::thread::JoinHandle<Vec<String>>>,
}

impl Writers {
    /// Stops them; every text they wrote.
    pub fn finish(mut self) -> Vec<String> {
        self.stop.store(true, Ordering::Relaxed);
        self.threads
            .drain(..)
            .flat_map(|t| t.join().unwrap())
            .collect()
    }
}

/// `n` threads in this process appending `lead-w<w>-<i>` to the lead's copies of the hosted
/// members' inboxes, in turn, with pauses of `pause` ms.
pub fn lead_writers(home: &Home, n: usize, pause: std::ops::Range<u64>, seed: u64) -> Writers {
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let threads = (0..n)
        .map(|w| {
            let (home, stop, written, pause) =
                (home.clone(), stop.clone(), written.clone(), pause.clone());
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed + w as u64);
                let mut texts = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    let text = format!("lead-w{w}-{}", texts.len());
                    let to = HOSTED[texts.len() % HOSTED.len()];
                    inbox::append(&home, TEAM, to, &InboxEntry::new("team-lead", text.clone()))
                        .unwrap();
                    texts.push(text);
                    written.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(rng.random_range(pause.clone())));
                }
                texts
            })
        })
        .collect();
    Writers {
        stop,
        written,
        threads,
    }
}

/// `n` writers on the host: each a thread starting, in turn, a process of the host's user that
/// appends `batch` entries `host-w<w>-b<b>-<i>` to one of [`TO_LEAD`] in the host's home, then
/// pausing `pause` ms.
pub fn host_writers(
    rig: &LinkRig,
    n: usize,
    batch: usize,
    pause: std::ops::Range<u64>,
    seed: u64,
) -> Writers {
    let stop = Arc::new(AtomicBool::new(false));
    let written = Arc::new(AtomicUsize::new(0));
    let root = rig.host_home.root.clone();
    let uid = rig.host.uid;
    let gid = gid_of(&rig.host.user);
    // The host's home, as its user would have it.
    std::fs::create_dir_all(&root).unwrap();
    std::os::unix::fs::chown(&root, Some(uid), Some(gid)).unwrap();
    let threads = (0..n)
        .map(|w| {
            let (root, stop, written, pause) =
                (root.clone(), stop.clone(), written.clone(), pause.clone());
            std::thread::spawn(move || {
                let mut rng = rand::rngs::StdRng::seed_from_u64(seed + w as u64);
                let mut texts = Vec::new();
                let mut b = 0;
                while !stop.load(Ordering::Relaxed) {
                    let prefix = format!("host-w{w}-b{b}");
                    let to = TO_LEAD[b % TO_LEAD.len()];
                    let from = format!("host-w{w}");
                    let mut cmd = child_command(ChildJob::Append {
                        home: &root,
                        team: TEAM,
                        to,
                        from: &from,
                        count: batch,
                        prefix: &prefix,
                    });
                    cmd.uid(uid).gid(gid).current_dir("/");
                    let out = cmd.output().unwrap();
                    assert!(
                        out.status.success(),
                        "a host writer failed: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    texts.extend((0..batch).map(|i| format!("{prefix}-{i}")));
                    written.fetch_add(batch, Ordering::Relaxed);
                    b += 1;
                    std::thread::sleep(Duration::from_millis(rng.random_range(pause.clone())));
                }
                texts
            })
        })
        .collect();
    Writers {
        stop,
        written,
        threads,
    }
}

/// Every text in `members`' inboxes of `home` (a missing inbox is empty).
pub fn texts(home: &Home, members: &[&str]) -> Vec<String> {
    members
        .iter()
        .flat_map(|m| {
            inbox::read(home, TEAM, m)
                .map(|r| r.entries)
                .unwrap_or_default()
        })
        .map(|e| e.text)
        .collect()
}

/// Sent against arrived, one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub sent: usize,
    pub delivered: usize,
    pub duplicated: usize,
    pub lost: usize,
    /// Texts that arrived and nobody sent.
    pub unknown: usize,
}

pub fn tally(sent: &[String], arrived: &[String]) -> Tally {
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for t in arrived {
        *seen.entry(t.as_str()).or_default() += 1;
    }
    let mut tally = Tally {
        sent: sent.len(),
        delivered: 0,
        duplicated: 0,
        lost: 0,
        unknown: 0,
    };
    for t in sent {
        match seen.remove(t.as_str()) {
            None => tally.lost += 1,
            Some(n) => {
                tally.delivered += 1;
                tally.duplicated += n - 1;
            }
        }
    }
    tally.unknown = seen.len();
    tally
}

/// A random pick in `range` ms.
pub fn random_ms(rng: &mut impl Rng, range: std::ops::Range<u64>) -> Duration {
    Duration::from_millis(rng.random_range(range))
}

/// The lead's output to ssh, timed: how much went out, the longest single write, and when the
/// last began (a write that blocks is the link's output backing up).
struct TimedWriter<W> {
    inner: W,
    written: usize,
    longest: Duration,
    last: Option<Instant>,
}

impl<W: std::io::Write> std::io::Write for TimedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let start = Instant::now();
        self.last = Some(start);
        let n = self.inner.write(buf)?;
        self.longest = self.longest.max(start.elapsed());
        self.written += n;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
