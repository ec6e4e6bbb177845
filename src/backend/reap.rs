//! Teammates known by their processes, not by their panes' titles (Claude Code retitles its
//! pane: `✳ general-purpose`). A teammate process names itself on its command line:
//! `--agent-id <name>@<team>` (a `claude`, a `teamlead teammate`, or the `teamlead guard` that
//! runs in front of a `claude`: node's `cli.js` client sets its process title to `claude`,
//! which hides its arguments, so the guard's are the ones that stay readable). Which home it
//! belongs to is read from the guard's `--home`, else its environment (`TEAMLEAD_HOME`, else
//! `CLAUDE_CONFIG_DIR`, else `$HOME/.claude`). What is found here is stopped as whole trees:
//! SIGTERM to every process of the tree (taken before any signal, so children that lose their
//! parent are still known), SIGKILL to what is left after a short wait.

use std::path::Path;
use std::time::{Duration, Instant};

use super::lead_probe::procs::{self, ProcInfo, ProcTable};
use super::terminals::tmux::teammate_panes::shell_words;

/// How long a stopped tree gets between SIGTERM and SIGKILL.
pub const TERM_WAIT: Duration = Duration::from_secs(2);
/// How long [`stop_trees`] waits, after SIGKILL, for the processes to be gone.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Does a process belong to a home?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HomeMatch {
    Yes,
    No,
    /// Its environment cannot be read (another user's process).
    Unknown,
}

/// The words of a process's command line: its arguments, or the words of the string a
/// `sh -c` runs.
pub fn words(p: &ProcInfo) -> Vec<String> {
    let shell = p
        .argv
        .first()
        .and_then(|a| Path::new(a).file_name())
        .and_then(|n| n.to_str())
        .is_some_and(|n| matches!(n, "sh" | "bash" | "dash" | "zsh"));
    if shell
        && p.argv.get(1).map(String::as_str) == Some("-c")
        && let Some(line) = p.argv.get(2)
    {
        return shell_words(line);
    }
    p.argv.clone()
}

/// The value of `flag` in `words` (`--flag value` or `--flag=value`), the first one.
pub fn flag_value(words: &[String], flag: &str) -> Option<String> {
    let eq = format!("{flag}=");
    words.iter().enumerate().find_map(|(i, w)| {
        if w == flag {
            words.get(i + 1).cloned()
        } else {
            w.strip_prefix(&eq).map(str::to_string)
        }
    })
}

/// The agent id a process names (`--agent-id`).
pub fn agent_id(p: &ProcInfo) -> Option<String> {
    flag_value(&words(p), "--agent-id")
}

/// Is this process a `teamlead guard` (its second word is `guard` and it has `--home`)?
fn guard_home(words: &[String]) -> Option<String> {
    (words.get(1).map(String::as_str) == Some("guard"))
        .then(|| flag_value(words, "--home"))
        .flatten()
}

fn same_path(a: &str, b: &Path) -> bool {
    Path::new(a.trim_end_matches('/')) == b || Path::new(a) == b
}

/// Does `p` belong to the home at `root`?
pub fn home_of(p: &ProcInfo, root: &Path) -> HomeMatch {
    if let Some(home) = guard_home(&words(p)) {
        return if same_path(&home, root) {
            HomeMatch::Yes
        } else {
            HomeMatch::No
        };
    }
    let Ok(environ) = std::fs::read(format!("/proc/{}/environ", p.pid)) else {
        return HomeMatch::Unknown;
    };
    let var = |key: &str| {
        let prefix = format!("{key}=");
        environ
            .split(|b| *b == 0)
            .filter_map(|kv| std::str::from_utf8(kv).ok())
            .find_map(|kv| kv.strip_prefix(&prefix).map(str::to_string))
            .filter(|v| !v.is_empty())
    };
    let home = var("TEAMLEAD_HOME")
        .or_else(|| var("CLAUDE_CONFIG_DIR"))
        .or_else(|| var("HOME").map(|h| format!("{}/.claude", h.trim_end_matches('/'))));
    match home {
        Some(h) if same_path(&h, root) => HomeMatch::Yes,
        Some(_) => HomeMatch::No,
        None => HomeMatch::Unknown,
    }
}

/// This process and its ancestors: never stopped.
fn ourselves(table: &ProcTable) -> Vec<u32> {
    let mut out = vec![std::process::id()];
    let mut at = std::process::id();
    for _ in 0..64 {
        match table.get(at).map(|p| p.ppid) {
            Some(parent) if parent > 1 && !out.contains(&parent) => {
                out.push(parent);
                at = parent;
            }
            _ => break,
        }
    }
    out
}

/// Processes of `root`'s home (or of unknown home, when `unknown_counts`) that name `agent`
/// (`name@team`) on their command line, except this process and its ancestors.
pub fn agent_processes<'t>(
    table: &'t ProcTable,
    root: &Path,
    agent: &str,
    unknown_counts: bool,
) -> Vec<&'t ProcInfo> {
    let skip = ourselves(table);
    table
        .procs
        .iter()
        .filter(|p| !skip.contains(&p.pid))
        .filter(|p| agent_id(p).as_deref() == Some(agent))
        .filter(|p| match home_of(p, root) {
            HomeMatch::Yes => true,
            HomeMatch::Unknown => unknown_counts,
            HomeMatch::No => false,
        })
        .collect()
}

/// Processes of `root`'s home that belong to a teammate of `team` (`--agent-id <x>@<team>` or
/// `--team-name <team>`), except this process and its ancestors.
pub fn team_processes<'t>(table: &'t ProcTable, root: &Path, team: &str) -> Vec<&'t ProcInfo> {
    let skip = ourselves(table);
    let suffix = format!("@{team}");
    table
        .procs
        .iter()
        .filter(|p| !skip.contains(&p.pid))
        .filter(|p| {
            let w = words(p);
            flag_value(&w, "--agent-id").is_some_and(|a| a.ends_with(&suffix))
                || flag_value(&w, "--team-name").as_deref() == Some(team)
        })
        .filter(|p| home_of(p, root) == HomeMatch::Yes)
        .collect()
}

/// Does the tree below `pid` (itself included) hold a process naming `agent`?
pub fn tree_names(table: &ProcTable, pid: u32, agent: &str) -> bool {
    table
        .tree(pid)
        .iter()
        .any(|p| agent_id(p).as_deref() == Some(agent))
}

/// One process to stop, with its start time (a pid reused meanwhile is left alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Target {
    pid: u32,
    start: Option<u64>,
}

impl Target {
    fn alive(&self) -> bool {
        procs::stat(self.pid).is_some_and(|(_, start, _)| start == self.start)
    }

    fn signal(&self, sig: i32) {
        if self.pid <= 1 || self.pid > i32::MAX as u32 || !self.alive() {
            return;
        }
        // SAFETY: kill(2) with a positive pid and a valid signal number has no memory effects.
        unsafe {
            libc::kill(self.pid as i32, sig);
        }
    }
}

/// Stops `roots` and everything below them: SIGTERM, then SIGKILL to what is still there after
/// `wait` (polled). Never this process or its ancestors. Returns how many processes it signalled.
pub fn stop_trees(table: &ProcTable, roots: &[u32], wait: Duration) -> usize {
    let skip = ourselves(table);
    let mut targets: Vec<Target> = Vec::new();
    for root in roots {
        for p in table.tree(*root) {
            if !skip.contains(&p.pid) && !targets.iter().any(|t| t.pid == p.pid) {
                targets.push(Target {
                    pid: p.pid,
                    start: p.start_ms,
                });
            }
        }
    }
    stop_targets(&targets, wait, &mut |_| {});
    targets.len()
}

/// SIGTERM to every target, a wait of up to `wait` (calling `tick` between looks, e.g. to reap
/// children), then SIGKILL to every target still there.
fn stop_targets(targets: &[Target], wait: Duration, tick: &mut dyn FnMut(&[Target])) {
    if targets.is_empty() {
        return;
    }
    for t in targets {
        t.signal(libc::SIGTERM);
    }
    let end = Instant::now() + wait;
    loop {
        tick(targets);
        if !targets.iter().any(Target::alive) || Instant::now() >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for t in targets {
        t.signal(libc::SIGKILL);
    }
    // SIGKILL is not instant on a loaded machine: wait (bounded) until they are gone, so that
    // what the caller reports as stopped is stopped when it returns.
    let end = Instant::now() + KILL_WAIT;
    loop {
        tick(targets);
        if !targets.iter().any(Target::alive) || Instant::now() >= end {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops every process below `pid` (not `pid` itself), as [`stop_trees`] does, calling `tick`
/// while it waits. Descendants that appear meanwhile (a subreaper gets the orphans of its
/// tree) are killed too, once.
pub fn stop_descendants(pid: u32, wait: Duration, tick: &mut dyn FnMut()) {
    let below = |table: &ProcTable| -> Vec<Target> {
        table
            .tree(pid)
            .into_iter()
            .filter(|p| p.pid != pid)
            .map(|p| Target {
                pid: p.pid,
                start: p.start_ms,
            })
            .collect()
    };
    let first = below(&ProcTable::scan(procs::SCAN_DEADLINE));
    stop_targets(&first, wait, &mut |_| tick());
    let late = below(&ProcTable::scan(procs::SCAN_DEADLINE));
    for t in &late {
        t.signal(libc::SIGKILL);
    }
    tick();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proc_with(argv: &[&str]) -> ProcInfo {
        ProcInfo {
            pid: 42,
            ppid: 1,
            comm: "x".into(),
            argv: argv.iter().map(|s| s.to_string()).collect(),
            cwd: None,
            start_ms: None,
            parent_session: None,
            uuids: Default::default(),
        }
    }

    #[test]
    fn agent_ids_are_read_from_arguments_and_shell_strings() {
        let guard = proc_with(&[
            "/bin/teamlead",
            "guard",
            "--home",
            "/h",
            "--agent-id",
            "al@t1",
            "--",
            "claude",
            "--agent-id",
            "al@t1",
        ]);
        assert_eq!(agent_id(&guard).as_deref(), Some("al@t1"));
        assert_eq!(guard_home(&words(&guard)).as_deref(), Some("/h"));
        assert_eq!(home_of(&guard, Path::new("/h")), HomeMatch::Yes);
        assert_eq!(home_of(&guard, Path::new("/other")), HomeMatch::No);
        let shell = proc_with(&[
            "sh",
            "-c",
            "cd '/w x' && env A=1 /bin/teamlead teammate --agent-id=bo@t2 --team-name t2",
        ]);
        assert_eq!(agent_id(&shell).as_deref(), Some("bo@t2"));
        assert_eq!(
            flag_value(&words(&shell), "--team-name").as_deref(),
            Some("t2")
        );
        assert_eq!(agent_id(&proc_with(&["claude"])), None);
    }
}
