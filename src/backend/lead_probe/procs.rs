//! A bounded, never-blocking snapshot of this machine's process table from `/proc`: for each
//! process its parent, name, arguments, working directory, start time, the value of a
//! `--parent-session-id` argument and every UUID its command line or (when readable: the
//! user's own processes) its environment mentions. Reading `/proc/<pid>/cmdline` can hang on a
//! process stuck in the kernel, so the scan runs on its own thread and the caller stops waiting
//! at a deadline: a scan that did not finish says so ([`ProcTable::complete`]), and nothing may
//! be concluded from the absence of a process in it.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a scan may take before the caller stops waiting.
pub const SCAN_DEADLINE: Duration = Duration::from_millis(1500);
/// The most processes one scan looks at.
const MAX_PROCS: usize = 32_768;
/// The most bytes read of a command line or an environment.
const MAX_CMDLINE: u64 = 32 * 1024;
const MAX_ENVIRON: u64 = 64 * 1024;
/// The most arguments kept per process, and the most characters per argument.
const MAX_ARGS: usize = 64;
const MAX_ARG_CHARS: usize = 512;
/// The most UUIDs kept per process.
const MAX_UUIDS: usize = 64;
/// A snapshot younger than this is reused (inspect probes every team of a home in a row).
const REUSE_FOR: Duration = Duration::from_millis(1000);

/// One process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcInfo {
    pub pid: u32,
    pub ppid: u32,
    /// The kernel's name for it (`comm`, at most 15 bytes).
    pub comm: String,
    /// Its arguments (bounded).
    pub argv: Vec<String>,
    /// Its working directory, when readable.
    pub cwd: Option<PathBuf>,
    /// When it started, in epoch milliseconds (to the second).
    pub start_ms: Option<u64>,
    /// The value after `--parent-session-id` (a teammate's lead session).
    pub parent_session: Option<String>,
    /// Every UUID (lower-case) in its command line or readable environment.
    pub uuids: HashSet<String>,
}

impl ProcInfo {
    /// Is this a Claude Code process (the native `claude` binary, or node running its cli.js)?
    pub fn is_claude(&self) -> bool {
        let base = |s: &str| {
            Path::new(s)
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string()
        };
        let argv0 = self.argv.first().map(|a| base(a)).unwrap_or_default();
        if self.comm.starts_with("claude") || argv0.starts_with("claude") {
            return true;
        }
        (self.comm == "node" || argv0 == "node")
            && self.argv.iter().skip(1).any(|a| a.contains("claude"))
    }

    /// A short description for evidence: `pid 123 (claude --agent-id …)`.
    pub fn describe(&self) -> String {
        let mut args: Vec<&str> = self.argv.iter().map(String::as_str).take(6).collect();
        if args.is_empty() {
            args.push(&self.comm);
        }
        let mut text = args.join(" ");
        if text.chars().count() > 120 {
            text = text.chars().take(119).collect::<String>() + "…";
        } else if self.argv.len() > 6 {
            text.push_str(" …");
        }
        format!("pid {} ({text})", self.pid)
    }
}

/// A snapshot of the process table.
#[derive(Debug, Clone, Default)]
pub struct ProcTable {
    pub procs: Vec<ProcInfo>,
    /// Every process was looked at in time. When false, a missing process proves nothing.
    pub complete: bool,
    /// Why the scan is incomplete, if it is.
    pub incomplete_why: Option<String>,
}

impl ProcTable {
    /// A fresh snapshot, or one taken less than a second ago.
    pub fn shared() -> Arc<ProcTable> {
        static CACHE: Mutex<Option<(Instant, Arc<ProcTable>)>> = Mutex::new(None);
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, table)) = cache.as_ref()
            && at.elapsed() < REUSE_FOR
        {
            return table.clone();
        }
        let table = Arc::new(ProcTable::scan(SCAN_DEADLINE));
        *cache = Some((Instant::now(), table.clone()));
        table
    }

    /// Scans `/proc`, waiting at most `deadline`.
    pub fn scan(deadline: Duration) -> ProcTable {
        let (tx, rx) = std::sync::mpsc::channel::<Option<ProcInfo>>();
        let spawned = std::thread::Builder::new()
            .name("teamlead-proc-scan".into())
            .spawn(move || {
                let boot_ms = boot_time_ms();
                let ticks = clock_ticks();
                let Ok(entries) = std::fs::read_dir("/proc") else {
                    return;
                };
                let mut seen = 0;
                for entry in entries.flatten() {
                    let Some(pid) = entry
                        .file_name()
                        .to_str()
                        .and_then(|n| n.parse::<u32>().ok())
                    else {
                        continue;
                    };
                    seen += 1;
                    if seen > MAX_PROCS {
                        return;
                    }
                    if let Some(info) = read_proc(pid, boot_ms, ticks)
                        && tx.send(Some(info)).is_err()
                    {
                        return;
                    }
                }
                let _ = tx.send(None);
            });
        if let Err(e) = spawned {
            return ProcTable {
                procs: Vec::new(),
                complete: false,
                incomplete_why: Some(format!("cannot start the process scan: {e}")),
            };
        }
        let end = Instant::now() + deadline;
        let mut table = ProcTable::default();
        loop {
            match rx.recv_timeout(end.saturating_duration_since(Instant::now())) {
                Ok(Some(info)) => table.procs.push(info),
                Ok(None) => {
                    table.complete = true;
                    break;
                }
                Err(RecvTimeoutError::Timeout) => {
                    table.incomplete_why = Some(format!(
                        "the process scan did not finish within {} ms",
                        deadline.as_millis()
                    ));
                    break;
                }
                Err(RecvTimeoutError::Disconnected) => {
                    table.incomplete_why = Some(format!(
                        "the process table could not be read in full (/proc unreadable or more than {MAX_PROCS} processes)"
                    ));
                    break;
                }
            }
        }
        table
    }

    /// The process with this pid, if the scan saw it.
    pub fn get(&self, pid: u32) -> Option<&ProcInfo> {
        self.procs.iter().find(|p| p.pid == pid)
    }

    /// `pid` and every process below it.
    pub fn tree(&self, pid: u32) -> Vec<&ProcInfo> {
        let mut out: Vec<&ProcInfo> = self.get(pid).into_iter().collect();
        let mut i = 0;
        while i < out.len() && out.len() < 4096 {
            let parent = out[i].pid;
            out.extend(
                self.procs
                    .iter()
                    .filter(|p| p.ppid == parent && p.pid != parent),
            );
            i += 1;
        }
        out
    }
}

/// The state, parent and start time of one process, from `/proc/<pid>/stat` (`None` when it is
/// gone or a zombie).
pub fn stat(pid: u32) -> Option<(u32, Option<u64>, String)> {
    parse_stat(
        &read_bounded(&format!("/proc/{pid}/stat"), 4096)?,
        boot_time_ms(),
        clock_ticks(),
    )
}

fn parse_stat(
    bytes: &[u8],
    boot_ms: Option<u64>,
    ticks: u64,
) -> Option<(u32, Option<u64>, String)> {
    let text = String::from_utf8_lossy(bytes);
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let rest: Vec<&str> = text.get(close + 1..)?.split_whitespace().collect();
    // rest[0] is the state (field 3), rest[1] the parent (field 4), rest[19] the start (22).
    if rest.first().is_none_or(|s| *s == "Z" || *s == "X") {
        return None;
    }
    let ppid = rest.get(1)?.parse().ok()?;
    let start_ms = rest
        .get(19)
        .and_then(|s| s.parse::<u64>().ok())
        .and_then(|t| boot_ms.map(|b| b + t * 1000 / ticks.max(1)));
    Some((ppid, start_ms, comm))
}

fn read_proc(pid: u32, boot_ms: Option<u64>, ticks: u64) -> Option<ProcInfo> {
    let dir = format!("/proc/{pid}");
    let (ppid, start_ms, comm) =
        parse_stat(&read_bounded(&format!("{dir}/stat"), 4096)?, boot_ms, ticks)?;
    let cmdline = read_bounded(&format!("{dir}/cmdline"), MAX_CMDLINE).unwrap_or_default();
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .take(MAX_ARGS)
        .map(|a| {
            String::from_utf8_lossy(a)
                .chars()
                .take(MAX_ARG_CHARS)
                .collect()
        })
        .collect();
    let parent_session = parent_session_of(&cmdline);
    let mut uuids = HashSet::new();
    collect_uuids(&cmdline, &mut uuids);
    if let Some(environ) = read_bounded(&format!("{dir}/environ"), MAX_ENVIRON) {
        collect_uuids(&environ, &mut uuids);
    }
    Some(ProcInfo {
        pid,
        ppid,
        comm,
        argv,
        cwd: std::fs::read_link(format!("{dir}/cwd")).ok(),
        start_ms,
        parent_session,
        uuids,
    })
}

/// The UUID after `--parent-session-id` in a command line, as its own argument, after `=`, or
/// inside a shell command string (`sh -c "… --parent-session-id '<uuid>' …"`).
fn parent_session_of(cmdline: &[u8]) -> Option<String> {
    const FLAG: &[u8] = b"--parent-session-id";
    let at = cmdline.windows(FLAG.len()).position(|w| w == FLAG)?;
    let rest = &cmdline[at + FLAG.len()..];
    let start = rest
        .iter()
        .position(|b| !matches!(b, b'\0' | b' ' | b'=' | b'\'' | b'"'))?;
    let mut found = HashSet::new();
    collect_uuids(rest.get(start..start + 36)?, &mut found);
    found.into_iter().next()
}

/// At most `limit` bytes of a file (`None` when it cannot be opened).
fn read_bounded(path: &str, limit: u64) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(limit).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Adds every UUID (`8-4-4-4-12` hex digits, not part of a longer run) in `bytes`.
pub fn collect_uuids(bytes: &[u8], out: &mut HashSet<String>) {
    const LEN: usize = 36;
    let is_hex = |b: u8| b.is_ascii_hexdigit();
    let mut i = 0;
    while i + LEN <= bytes.len() && out.len() < MAX_UUIDS {
        let w = &bytes[i..i + LEN];
        let shaped = w.iter().enumerate().all(|(k, b)| match k {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => is_hex(*b),
        });
        let before_ok = i == 0 || !is_hex(bytes[i - 1]);
        let after_ok = bytes.get(i + LEN).is_none_or(|b| !is_hex(*b));
        if shaped && before_ok && after_ok {
            out.insert(String::from_utf8_lossy(w).to_ascii_lowercase());
            i += LEN;
        } else {
            i += 1;
        }
    }
}

fn boot_time_ms() -> Option<u64> {
    let text = read_bounded("/proc/stat", 1 << 20)?;
    String::from_utf8_lossy(&text)
        .lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|s| s.trim().parse::<u64>().ok())
        .map(|s| s * 1000)
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_found_whole() {
        let mut set = HashSet::new();
        collect_uuids(
            b"claude\0--parent-session-id\0E23B487B-a9a6-4a80-973e-e7b065a092d3\0X=0e23b487b-a9a6-4a80-973e-e7b065a092d3",
            &mut set,
        );
        assert_eq!(
            set.into_iter().collect::<Vec<_>>(),
            vec!["e23b487b-a9a6-4a80-973e-e7b065a092d3".to_string()]
        );
    }

    #[test]
    fn parent_sessions_are_found_in_arguments_and_shell_strings() {
        let id = "e23b487b-a9a6-4a80-973e-e7b065a092d3";
        let argv = format!("claude\0--agent-id\0w@t\0--parent-session-id\0{id}\0--model\0m");
        assert_eq!(parent_session_of(argv.as_bytes()).as_deref(), Some(id));
        let shell = format!(
            "sh\0-c\0cd /w && env teamlead teammate --parent-session-id '{id}' --engine shell"
        );
        assert_eq!(parent_session_of(shell.as_bytes()).as_deref(), Some(id));
        assert_eq!(
            parent_session_of(format!("x --parent-session-id={id}").as_bytes()).as_deref(),
            Some(id)
        );
        assert_eq!(parent_session_of(b"x --parent-session-id"), None);
        assert_eq!(parent_session_of(b"x --parent-session-id nope"), None);
    }

    #[test]
    fn stat_lines_parse_with_odd_names() {
        let line = b"42 (a) b (c)) S 7 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 500 1000 10";
        let (ppid, start, comm) = parse_stat(line, Some(1_000_000), 100).unwrap();
        assert_eq!((ppid, comm.as_str()), (7, "a) b (c)"));
        assert_eq!(start, Some(1_000_000 + 5_000));
        assert!(parse_stat(b"42 (x) Z 7 0", None, 100).is_none());
    }

    #[test]
    fn this_process_is_in_the_table() {
        let table = ProcTable::scan(SCAN_DEADLINE);
        assert!(table.complete, "{:?}", table.incomplete_why);
        let me = table.get(std::process::id()).expect("this test is running");
        assert!(me.start_ms.is_some());
        assert!(!table.tree(me.pid).is_empty());
    }
}
