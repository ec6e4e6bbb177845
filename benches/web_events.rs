//! Web view benchmark, run by hand in release:
//! `cargo build --release --bench web_events`, then `target/release/deps/web_events-* --bench`.
//! The real binary runs `teamlead serve --web` on a temporary home (its own process, as a user
//! runs it); this process is a teammate and the pages. Measured:
//! 1. From a message appended to the lead's inbox (the store's lock-compatible append, as a
//!    teammate's process does) to its transcript event arriving at a page's server-sent events
//!    (`/api/events`, read over plain HTTP/1.1), p50 and p99 over 1,000 messages sent one at a
//!    time: with one page, then with 10 pages (the last of the 10 to get each). A screen
//!    attached over the team's socket (as `teamlead attach` is) gets the same events: the
//!    page's time less the screen's is what the web view adds to the screen's path.
//! 2. The lead server's memory (VmRSS of its process): just started, after the first 1,000
//!    messages (their page closed), with 10 pages attached (each has its snapshot), and after
//!    1,000 more messages to the 10. Plain std timing, one machine.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use teamlead::lead::contract::{LeadEvent, TranscriptItem};
use teamlead::protocol::{InboxEntry, Member};
use teamlead::server::client;
use teamlead::server::wire::{ClientMsg, ServerMsg};
use teamlead::store::{self, Home};

const MESSAGES: usize = 1_000;
const PAGES: usize = 10;
const TEAM: &str = "bench";
const WAIT: Duration = Duration::from_secs(60);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

/// `teamlead serve --web` in its own session; killed (with its teammates) on drop.
struct Server {
    child: Child,
}

impl Drop for Server {
    fn drop(&mut self) {
        // SAFETY: a signal to the server's own process group.
        unsafe {
            libc::kill(-(self.child.id() as i32), libc::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

fn vm_rss_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS")
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Polls `cond` until it holds, at most `WAIT`.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn start_server(root: &Path) -> (Server, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home")
        .arg(root.join("home"))
        .args(["serve", "--team", TEAM, "--backend", "in-process", "--web"])
        .current_dir(root.join("work"))
        .env("TEAMLEAD_RUNTIME_DIR", root.join("run"))
        .env("TEAMLEAD_LOG_DIR", root.join("logs"))
        .env("TEAMLEAD_CONFIG", root.join("none.toml"))
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for var in [
        "CLAUDE_CONFIG_DIR",
        "TEAMLEAD_HOME",
        "TMUX",
        "TMUX_PANE",
        "TEAMLEAD_NO_SERVER",
        "XDG_RUNTIME_DIR",
    ] {
        cmd.env_remove(var);
    }
    // SAFETY: setsid is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start teamlead serve --web");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let link = loop {
        let line = lines.next().expect("the login link").expect("a line");
        if let Some(link) = line
            .split_whitespace()
            .find(|w| w.starts_with("http://") && w.contains("/login?token="))
        {
            break link.to_string();
        }
    };
    // The rest of stdout, read until the server ends.
    std::thread::spawn(move || lines.for_each(drop));
    (Server { child }, link)
}

/// Sends one request and returns the response's head and the open stream.
fn request(host: &str, path: &str, cookie: Option<&str>) -> (String, BufReader<TcpStream>) {
    let mut stream = TcpStream::connect(host).expect("connect");
    let mut req = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\n");
    if let Some(c) = cookie {
        req.push_str(&format!("Cookie: {c}\r\n"));
    }
    req.push_str("\r\n");
    stream.write_all(req.as_bytes()).expect("send");
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a header line");
        if line == "\r\n" || line.is_empty() {
            break;
        }
        head.push_str(&line);
    }
    (head, reader)
}

/// Logs in with the one-time link: the session cookie.
fn login(link: &str) -> (String, String) {
    let rest = link.strip_prefix("http://").expect("an http link");
    let (host, path) = rest.split_once('/').expect("a path");
    let (head, _) = request(host, &format!("/{path}"), None);
    let cookie = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("set-cookie")
                .then(|| v.trim().to_string())
        })
        .expect("a session cookie");
    let cookie = cookie.split(';').next().unwrap().to_string();
    (host.to_string(), cookie)
}

/// A page's event stream on its own thread: reports `(page, n, when)` for each
/// `bench message n` that arrives, and `(page, usize::MAX, when)` for its first event (the
/// snapshot). Ends when the server closes the stream.
fn page(
    index: usize,
    host: &str,
    cookie: &str,
    out: mpsc::Sender<(usize, usize, Instant)>,
) -> TcpStream {
    let (head, mut reader) = request(host, "/api/events", Some(cookie));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let stream = reader.get_ref().try_clone().expect("clone the stream");
    std::thread::spawn(move || {
        let mut pending = String::new();
        let mut first = true;
        loop {
            // One chunk of the body (or what came, unchunked).
            let mut body = Vec::new();
            if chunked {
                let mut size = String::new();
                if reader.read_line(&mut size).unwrap_or(0) == 0 {
                    return;
                }
                let Ok(n) = usize::from_str_radix(size.trim(), 16) else {
                    return;
                };
                if n == 0 {
                    return;
                }
                body.resize(n + 2, 0);
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                body.truncate(n);
            } else {
                let mut buf = [0u8; 65536];
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(k) => body.extend_from_slice(&buf[..k]),
                }
            }
            let now = Instant::now();
            pending.push_str(&String::from_utf8_lossy(&body));
            while let Some(end) = pending.find('\n') {
                let line: String = pending.drain(..=end).collect();
                let Some(data) = line.strip_prefix("data:") else {
                    continue;
                };
                if first {
                    first = false;
                    let _ = out.send((index, usize::MAX, now));
                }
                let mut rest = data;
                while let Some(at) = rest.find("bench message ") {
                    rest = &rest[at + "bench message ".len()..];
                    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                    if rest[digits.len()..].starts_with('"')
                        && let Ok(n) = digits.parse()
                    {
                        let _ = out.send((index, n, now));
                    }
                }
            }
        }
    });
    stream
}

/// A screen attached over the team's socket on its own thread: reports `(n, when)` for each
/// `bench message n` that reaches it.
fn screen(socket: PathBuf, out: mpsc::Sender<(usize, Instant)>) {
    let (ready_tx, ready) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let mut conn = client::connect(&socket, TEAM).await.expect("connect");
            conn.send(&ClientMsg::Attach { transcripts: true })
                .await
                .expect("attach");
            let _ = ready_tx.send(());
            while let Ok(Some(msg)) = conn.recv().await {
                if let ServerMsg::Event(LeadEvent::Transcript(TranscriptItem::Teammate {
                    text,
                    ..
                })) = msg
                    && let Some(n) = text
                        .strip_prefix("bench message ")
                        .and_then(|d| d.parse().ok())
                {
                    let _ = out.send((n, Instant::now()));
                }
            }
        });
    });
    ready.recv_timeout(WAIT).expect("the screen attached");
}

/// Appends messages `from..from + MESSAGES` one at a time, each once every page and the
/// screen got the one before: from the start of each append to the last page's arrival, and
/// from the screen's arrival to the last page's (negative counts as zero), each sorted.
fn run(
    home: &Home,
    from: usize,
    pages: usize,
    arrivals: &mpsc::Receiver<(usize, usize, Instant)>,
    screen: &mpsc::Receiver<(usize, Instant)>,
) -> (Vec<Duration>, Vec<Duration>) {
    let mut times = Vec::with_capacity(MESSAGES);
    let mut after_screen = Vec::with_capacity(MESSAGES);
    for n in from..from + MESSAGES {
        let entry = InboxEntry::new("writer", format!("bench message {n}"));
        let before = Instant::now();
        store::inbox::append(home, TEAM, "team-lead", &entry).expect("append");
        let mut got = vec![false; pages];
        let mut last = before;
        while got.iter().any(|g| !g) {
            let (p, m, at) = arrivals
                .recv_timeout(WAIT)
                .expect("the message on every page");
            if m == n && !got[p] {
                got[p] = true;
                last = last.max(at);
            }
        }
        let on_screen = loop {
            let (m, at) = screen
                .recv_timeout(WAIT)
                .expect("the message on the screen");
            if m == n {
                break at;
            }
        };
        times.push(last - before);
        after_screen.push(last.saturating_duration_since(on_screen));
    }
    times.sort();
    after_screen.sort();
    (times, after_screen)
}

fn report(label: &str, times: &[Duration]) {
    println!(
        "  {label:<24} p50 {:>9}  p99 {:>9}  max {:>9}",
        ms(percentile(times, 0.50)),
        ms(percentile(times, 0.99)),
        ms(*times.last().expect("times"))
    );
}

fn main() {
    println!("teamlead web view benchmark (one machine; the release binary's serve --web)\n");
    let root = tempfile::Builder::new()
        .prefix("tl-web-bench-")
        .tempdir()
        .expect("temp dir");
    for d in ["home", "work", "logs"] {
        std::fs::create_dir(root.path().join(d)).expect("mkdir");
    }
    let (server, link) = start_server(root.path());
    let pid = server.child.id();
    let home = Home::new(root.path().join("home"));
    wait_for("the team", || {
        root.path()
            .join("home/teams")
            .join(TEAM)
            .join("config.json")
            .exists()
    });
    let mut writer = Member::new("writer", TEAM, &root.path().join("work").to_string_lossy());
    writer.tmux_pane_id = "%1".into();
    store::add_member(&home, TEAM, writer).expect("member");
    let run_dir = root.path().join("run");
    wait_for("the server's socket", || {
        std::fs::read_dir(&run_dir)
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "sock"))
    });
    let socket = std::fs::read_dir(&run_dir)
        .expect("the runtime directory")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "sock"))
        .expect("the socket");
    let (screen_tx, on_screen) = mpsc::channel();
    screen(socket, screen_tx);
    let (host, cookie) = login(&link);
    let rss_started = vm_rss_kib(pid);

    // One page.
    let (tx, arrivals) = mpsc::channel();
    let one = page(0, &host, &cookie, tx);
    let (p, m, _) = arrivals.recv_timeout(WAIT).expect("the snapshot");
    assert_eq!((p, m), (0, usize::MAX));
    let (single, single_web) = run(&home, 0, 1, &arrivals, &on_screen);
    let _ = one.shutdown(std::net::Shutdown::Both);
    drop(arrivals);
    let rss_none = vm_rss_kib(pid);

    // Ten pages.
    let (tx, arrivals) = mpsc::channel();
    let pages: Vec<TcpStream> = (0..PAGES)
        .map(|i| page(i, &host, &cookie, tx.clone()))
        .collect();
    drop(tx);
    let mut snapshots = 0;
    while snapshots < PAGES {
        let (_, m, _) = arrivals.recv_timeout(WAIT).expect("a snapshot");
        if m == usize::MAX {
            snapshots += 1;
        }
    }
    let rss_ten = vm_rss_kib(pid);
    let (ten, ten_web) = run(&home, MESSAGES, PAGES, &arrivals, &on_screen);
    let rss_ten_after = vm_rss_kib(pid);
    for p in &pages {
        let _ = p.shutdown(std::net::Shutdown::Both);
    }

    println!("inbox append → the page's server-sent event, {MESSAGES} messages one at a time:");
    report("one page", &single);
    report(&format!("{PAGES} pages (the last)"), &ten);
    println!("the same event, the screen's arrival → the page's:");
    report("one page", &single_web);
    report(&format!("{PAGES} pages (the last)"), &ten_web);
    println!();
    println!("the lead server's VmRSS:");
    println!("  just started, no page         {}", mib(rss_started));
    println!("  after {MESSAGES} messages, no page  {}", mib(rss_none));
    println!(
        "  {PAGES} pages attached            {} (+{} for {PAGES} pages)",
        mib(rss_ten),
        mib(rss_ten.saturating_sub(rss_none))
    );
    println!(
        "  {PAGES} pages, {MESSAGES} more messages  {}",
        mib(rss_ten_after)
    );
    drop(server);
}
