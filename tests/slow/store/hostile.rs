//! The hostile-input suite: every category of broken or hostile home (`hostile_common::corpus`)
//! against every read-side command, as a table run in parallel batches. Each case must end
//! before its deadline (killed and failed otherwise), never panic, print no raw control,
//! C1, bidi or invisible character, change no file unless its output says it wrote, and name
//! the problem when the command meets it (`inspect` always lists it). `monitor` is started,
//! the home is made hostile under it, and it must keep reporting; the lead session runs in a
//! PTY (`hostile_lead`). The real binary, temporary homes, never `~/.claude`.

use crate::hostile_common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use hostile_common::corpus::{CMDS, Category, Cmd, categories, tasks_dir, team_dir};
use hostile_common::tree::{changes, fingerprint};
use hostile_common::{RUN_DEADLINE, Reaper, Sandbox, TEAM, panicked, parallel, raw_control, run};

/// Worker threads per table (the machine has 2 cores; the binary mostly waits on files).
const WORKERS: usize = 3;

/// Runs one (category, command) case; the reasons it fails, if any.
fn cli_case(cat: &Category, cmd: Cmd) -> (Vec<String>, Duration) {
    let sandbox = Sandbox::seeded();
    let home = sandbox.home();
    (cat.build)(&home);
    let before = fingerprint(&home);
    let out = run(sandbox.cmd(&cmd.args()), RUN_DEADLINE);
    let after = fingerprint(&home);
    let mut fails = Vec::new();
    let text = out.text();
    match out.code {
        None => fails.push(format!("hang: killed after {RUN_DEADLINE:?}")),
        Some(0) | Some(1) => {}
        Some(c) => fails.push(format!("exit code {c}")),
    }
    if let Some(p) = panicked(&out) {
        fails.push(format!("panic: {p}"));
    }
    if let Some(c) = raw_control(&out.stdout) {
        fails.push(format!("raw control on stdout: {c}"));
    }
    if let Some(c) = raw_control(&out.stderr) {
        fails.push(format!("raw control on stderr: {c}"));
    }
    let mut allowed = if out.code == Some(0) {
        cmd.may_change()
    } else {
        Vec::new()
    };
    // A stale lock directory is taken over by the protocol: allowed when the output says so.
    if text.contains("stale lock directory") && text.contains("taken over") {
        let locks: Vec<_> = allowed
            .iter()
            .map(|p| std::path::PathBuf::from(format!("{}.lock", p.display())))
            .collect();
        allowed.extend(locks);
    }
    for (path, was, now) in changes(&before, &after) {
        if !allowed.iter().any(|a| path.starts_with(a)) {
            fails.push(format!(
                "changed {} ({was} → {now}) without saying so",
                path.display()
            ));
        }
    }
    let is_inspect = matches!(cmd, Cmd::Inspect | Cmd::InspectTeam | Cmd::InspectJson);
    if is_inspect && out.code == Some(1) {
        fails.push("inspect could not make its report (exit 1)".into());
    }
    if cmd == Cmd::InspectJson
        && out.code == Some(0)
        && serde_json::from_slice::<serde_json::Value>(&out.stdout).is_err()
    {
        fails.push("--json output is not JSON".into());
    }
    if let Some(needle) = cat.needle
        && cat.met.contains(&cmd)
        && !text.contains(needle)
    {
        fails.push(format!("the problem is not named (no {needle:?})"));
    }
    if !fails.is_empty() {
        let shown: String = text.chars().take(600).collect();
        fails.push(format!("output: {shown:?}"));
    }
    (fails, out.elapsed)
}

fn report(what: &str, results: &[(String, Vec<String>)], started: Instant) {
    let failed: Vec<_> = results.iter().filter(|(_, f)| !f.is_empty()).collect();
    let wall = started.elapsed();
    println!(
        "{what}: {} cases, {} failed, wall {:.1} s, {:.0} ms per case ({WORKERS} workers)",
        results.len(),
        failed.len(),
        wall.as_secs_f64(),
        wall.as_secs_f64() * 1000.0 / results.len().max(1) as f64
    );
    for (case, fails) in &failed {
        println!("FAIL {case}");
        for f in fails.iter() {
            println!("    {f}");
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} {what} cases failed (see above)",
        failed.len(),
        results.len()
    );
}

/// Every category × every command of the table.
#[test]
fn hostile_homes_against_every_command() {
    let started = Instant::now();
    let mut jobs = Vec::new();
    for (i, _) in categories().iter().enumerate() {
        for cmd in CMDS {
            jobs.push((i, cmd));
        }
    }
    let results = parallel(jobs, WORKERS, |(i, cmd)| {
        let cats = categories();
        let cat = &cats[i];
        let (fails, elapsed) = cli_case(cat, cmd);
        (
            format!("{} × {} ({} ms)", cat.name, cmd.name(), elapsed.as_millis()),
            fails,
        )
    });
    assert!(
        results.len() >= 100,
        "the table has {} cases",
        results.len()
    );
    report("command table", &results, started);
}

/// Where the canary goes: a new task in a real task directory, else a new inbox.
fn write_canary(home: &std::path::Path) -> bool {
    let real_dir = |p: &std::path::Path| {
        std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
            && std::fs::symlink_metadata(p.parent().unwrap()).is_ok_and(|m| m.is_dir())
    };
    let tasks = tasks_dir(home);
    if real_dir(&tasks) {
        let task = r#"{"id":"990","subject":"canary","description":"","status":"pending","blocks":[],"blockedBy":[]}"#;
        std::fs::write(tasks.join("990.json"), task).unwrap();
        return true;
    }
    let inboxes = team_dir(home).join("inboxes");
    if real_dir(&inboxes) && real_dir(&team_dir(home)) {
        std::fs::write(inboxes.join("canary.json"), "[]").unwrap();
        return true;
    }
    false
}

fn monitor_case(cat: &Category) -> (Vec<String>, Duration) {
    let sandbox = Sandbox::seeded();
    let home = sandbox.home();
    let start = Instant::now();
    let mut cmd = sandbox.cmd(&["monitor", TEAM]);
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = Reaper(cmd.spawn().expect("spawn monitor"));
    let (tx, rx) = mpsc::channel::<String>();
    let stdout = child.0.stdout.take().unwrap();
    let raw = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let raw_in = raw.clone();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = Vec::new();
        while reader.read_until(b'\n', &mut line).is_ok_and(|n| n > 0) {
            raw_in.lock().unwrap().extend_from_slice(&line);
            let _ = tx.send(String::from_utf8_lossy(&line).into_owned());
            line.clear();
        }
    });
    let stderr = child.0.stderr.take().unwrap();
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut BufReader::new(stderr), &mut buf);
        buf
    });
    let mut fails = Vec::new();
    let mut seen = String::new();
    let wait_for = |needles: &[&str], seen: &mut String, limit: Duration| -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if needles.iter().any(|n| seen.contains(n)) {
                return true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => seen.push_str(&line),
                Err(_) => return false,
            }
        }
    };
    if !wait_for(&["monitoring "], &mut seen, Duration::from_secs(10)) {
        fails.push("monitor did not start".into());
    } else {
        (cat.build)(&home);
        let canary = write_canary(&home);
        let before = fingerprint(&home);
        if canary && !wait_for(&["990", "canary"], &mut seen, Duration::from_secs(6)) {
            fails.push("monitor stopped reporting after the hostile change (hang?)".into());
        }
        if let Ok(Some(status)) = child.0.try_wait() {
            fails.push(format!("monitor exited on its own: {status}"));
        }
        let _ = child.0.kill();
        let _ = child.0.wait();
        for (path, was, now) in changes(&before, &fingerprint(&home)) {
            fails.push(format!(
                "monitor changed {} ({was} → {now})",
                path.display()
            ));
        }
    }
    let _ = child.0.kill();
    let _ = child.0.wait();
    let stderr = err.join().unwrap_or_default();
    let stdout = raw.lock().unwrap().clone();
    let out = hostile_common::Run {
        stdout,
        stderr,
        code: Some(0),
        elapsed: start.elapsed(),
    };
    if let Some(p) = panicked(&out) {
        fails.push(format!("panic: {p}"));
    }
    if let Some(c) = raw_control(&out.stdout) {
        fails.push(format!("raw control on stdout: {c}"));
    }
    if let Some(c) = raw_control(&out.stderr) {
        fails.push(format!("raw control on stderr: {c}"));
    }
    if !fails.is_empty() {
        let shown: String = out.text().chars().take(600).collect();
        fails.push(format!("output: {shown:?}"));
    }
    (fails, out.elapsed)
}

/// `monitor TEAM` while the team is made hostile under it: it keeps reporting (a canary task
/// written after the change shows up), prints nothing raw and changes nothing.
#[test]
fn monitor_survives_hostile_changes() {
    let started = Instant::now();
    let live: Vec<usize> = categories()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.live)
        .map(|(i, _)| i)
        .collect();
    let results = parallel(live, WORKERS, |i| {
        let cats = categories();
        let (fails, elapsed) = monitor_case(&cats[i]);
        (
            format!("{} × monitor ({} ms)", cats[i].name, elapsed.as_millis()),
            fails,
        )
    });
    report("monitor", &results, started);
}
