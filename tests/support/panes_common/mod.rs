//! Shared helpers of the acceptance tests of pane teammates run by the real lead binary: a
//! temporary home and working directory, the lead in a pane of a private test tmux server or in
//! a pseudo-terminal outside tmux, reading panes (titles, border formats), the processes of a
//! team from /proc, the files a user would look at, `teamlead clean --orphans`, a guard that
//! leaves no lead, teammate, tmux server or socket file behind, and the three teammates every
//! pane backend's test spawns first (`three.rs`).

#![allow(dead_code)]

pub(crate) use teamlead_test_support::tmux;

mod three;

pub use three::{THREE, spawn_three};

use teamlead_test_support::keys::{Key, Keyboard};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use std::time::Duration;

pub use tmux::TestTmux;

pub use crate::pty_harness::{PtyLead, PtyLeadBuilder};

/// How long any single wait may take before the test fails.
pub const WAIT: Duration = Duration::from_secs(20);
/// Teammates must be gone this soon after their lead is SIGKILLed.
pub const EXIT_AFTER_LEAD_DIES: Duration = Duration::from_secs(3);

/// The pane border format the lead gives a teammate of this tmux color.
pub fn border_format(color: &str) -> String {
    format!("#[fg={color},bold] #{{@teamlead-name}} #[default]")
}

/// A team name no other test (or earlier run) uses, so processes can be found by it.
pub fn unique_team(prefix: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}-{}", &id[..8])
}

/// The tests' one poll with a deadline.
#[allow(unused_imports)]
pub use teamlead_test_support::wait::wait_until;

/// Single-quotes a word for `sh`.
pub fn sh_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', "'\"'\"'"))
}

// ---------------------------------------------------------------------------------------------
// Files a user would look at.

/// A temporary home and working directory for one lead session.
pub struct Workspace {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    /// The tmux socket directory (`TMUX_TMPDIR`) of the PTY leads' private servers and of
    /// `clean --orphans`: private, so a sweep in one test never judges another test's server.
    pub sockets: tempfile::TempDir,
    pub team: String,
    /// How long the leads' teammates wait for a lead to come back
    /// (`TEAMLEAD_LEAD_GRACE_MS`); 0 unless a test needs the grace period.
    pub lead_grace_ms: u64,
    /// More variables for the lead's environment (PTY leads).
    pub lead_env: Vec<(String, String)>,
    /// More arguments for the lead (PTY leads), after `--home H --team T`.
    pub lead_args: Vec<String>,
}

/// `teamlead --home HOME send --team TEAM --to TO [--from FROM] TEXT`, as another process
/// writes to an inbox (never through the caller's `CLAUDE_CONFIG_DIR` or `TEAMLEAD_HOME`);
/// fails the test when it fails.
pub fn teamlead_send(home: &Path, team: &str, from: Option<&str>, to: &str, text: &str) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_teamlead"));
    cmd.arg("--home")
        .arg(home)
        .args(["send", "--team", team, "--to", to]);
    if let Some(from) = from {
        cmd.args(["--from", from]);
    }
    let out = cmd
        .arg(text)
        .env_remove("TEAMLEAD_HOME")
        .env_remove("CLAUDE_CONFIG_DIR")
        .output()
        .expect("run teamlead send");
    assert!(
        out.status.success(),
        "teamlead send failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A team's config.json, parsed: `Null` when missing, or when it does not parse for a second.
///
/// Claude Code's clients rewrite the file in place (2.1.45 opens it with `O_TRUNC` at a turn's
/// start; 2.1.330 and later write, then truncate): a read in that window sees a torn file. A
/// test reads again until it parses, as the lead's own readers do, instead of taking the torn
/// read for a team without members.
pub fn read_team_file(path: &Path) -> serde_json::Value {
    let mut parsed = serde_json::Value::Null;
    teamlead_test_support::wait::poll_until(
        Duration::from_secs(1),
        || match std::fs::read_to_string(path) {
            Err(_) => true,
            Ok(text) => serde_json::from_str(&text)
                .map(|value| parsed = value)
                .is_ok(),
        },
    );
    parsed
}

impl Workspace {
    pub fn new(prefix: &str) -> Workspace {
        Workspace {
            home: tempfile::tempdir().expect("temp home"),
            work: tempfile::tempdir().expect("temp working directory"),
            sockets: tempfile::tempdir().expect("temp tmux socket directory"),
            team: unique_team(prefix),
            lead_grace_ms: 0,
            lead_env: Vec::new(),
            lead_args: Vec::new(),
        }
    }

    pub fn home(&self) -> &Path {
        self.home.path()
    }

    pub fn work(&self) -> &Path {
        self.work.path()
    }

    /// `teamlead send` of `text` from `from` to `to` in this workspace's team, as another process
    /// writes to an inbox.
    pub fn send(&self, from: &str, to: &str, text: &str) {
        teamlead_send(self.home(), &self.team, Some(from), to, text);
    }

    /// The tmux socket directory of this workspace's leads (`TMUX_TMPDIR`).
    pub fn tmux_tmpdir(&self) -> &Path {
        self.sockets.path()
    }

    /// The private tmux server (`-L teamlead-<pid>`) of the lead `lead_pid` outside tmux.
    pub fn private_server(&self, lead_pid: u32) -> TestTmux {
        TestTmux::in_dir(format!("teamlead-{lead_pid}"), self.tmux_tmpdir())
    }

    pub fn team_dir(&self) -> PathBuf {
        self.home().join("teams").join(&self.team)
    }

    pub fn tasks_dir(&self) -> PathBuf {
        self.home().join("tasks").join(&self.team)
    }

    /// The team's config.json, parsed ([`read_team_file`]).
    pub fn config(&self) -> serde_json::Value {
        read_team_file(&self.team_dir().join("config.json"))
    }

    /// Names of the members in config.json, the lead included.
    pub fn members(&self) -> Vec<String> {
        self.config()["members"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .filter_map(|m| m["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The pane id config.json records for a member.
    pub fn pane_of(&self, name: &str) -> Option<String> {
        self.config()["members"]
            .as_array()?
            .iter()
            .find(|m| m["name"] == name)
            .and_then(|m| m["tmuxPaneId"].as_str().map(str::to_string))
    }

    /// `hiddenPaneIds` of config.json (empty when absent).
    pub fn hidden_pane_ids(&self) -> Vec<String> {
        self.config()["hiddenPaneIds"]
            .as_array()
            .map(|ids| {
                ids.iter()
                    .filter_map(|p| p.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A task file, parsed (`Null` when missing).
    pub fn task(&self, id: &str) -> serde_json::Value {
        std::fs::read_to_string(self.tasks_dir().join(format!("{id}.json")))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or(serde_json::Value::Null)
    }

    /// Texts of the messages `from` sent the lead: those still in its inbox and those the lead
    /// has delivered (its delivery log under `.teamlead/` keeps each entry).
    pub fn lead_mail_from(&self, from: &str) -> Vec<String> {
        let read = |path: PathBuf| std::fs::read_to_string(path).unwrap_or_default();
        let mut entries: Vec<serde_json::Value> = serde_json::from_str(&read(
            self.team_dir().join("inboxes").join("team-lead.json"),
        ))
        .unwrap_or_default();
        let log = read(
            self.team_dir()
                .join(".teamlead")
                .join("delivered-team-lead.jsonl"),
        );
        entries.extend(
            log.lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|record| record["entry"].clone()),
        );
        entries
            .iter()
            .filter(|e| e["from"] == from)
            .filter_map(|e| e["text"].as_str().map(str::to_string))
            .collect()
    }

    /// Every lock directory (`*.lock/`) anywhere under the home.
    pub fn lock_dirs(&self) -> Vec<PathBuf> {
        fn walk(dir: &Path, found: &mut Vec<PathBuf>) {
            let Ok(entries) = std::fs::read_dir(dir) else {
                return;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    if path.extension().is_some_and(|e| e == "lock") {
                        found.push(path.clone());
                    }
                    walk(&path, found);
                }
            }
        }
        let mut found = Vec::new();
        walk(self.home(), &mut found);
        found
    }

    /// Runs `teamlead --home H clean --orphans`; `tmux` is the value of `TMUX` to give it (the
    /// server it kills leftover panes on), `None` to run it outside tmux.
    pub fn clean_orphans(&self, tmux: Option<&str>) -> Output {
        self.clean_orphans_with(tmux, &[])
    }

    /// [`Workspace::clean_orphans`] with more variables (the terminal `clean` runs in).
    pub fn clean_orphans_with(&self, tmux: Option<&str>, env: &[(String, String)]) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home")
            .arg(self.home())
            .args(["clean", "--orphans"])
            .current_dir(self.work())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .env_remove("TMUX_PANE")
            .env("TMUX_TMPDIR", self.tmux_tmpdir());
        match tmux {
            Some(value) => cmd.env("TMUX", value),
            None => cmd.env_remove("TMUX"),
        };
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
        cmd.output().expect("run teamlead clean --orphans")
    }
}

// ---------------------------------------------------------------------------------------------
// Processes, from /proc.

/// The arguments of a process (empty when it is gone).
pub fn cmdline(pid: u32) -> Vec<String> {
    nul_separated(&format!("/proc/{pid}/cmdline"))
}

/// The environment of a process, as `K=V` entries (empty when it is gone).
pub fn environ(pid: u32) -> Vec<String> {
    nul_separated(&format!("/proc/{pid}/environ"))
}

/// A `/proc` file of NUL-separated entries.
fn nul_separated(path: &str) -> Vec<String> {
    std::fs::read(path)
        .map(|b| {
            b.split(|c| *c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// Is the process running (a zombie waiting to be reaped counts as gone)?
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
            .unwrap_or(false),
        Err(_) => false,
    }
}

/// Every running process whose arguments satisfy `matches`.
pub fn processes(matches: impl Fn(&[String]) -> bool) -> Vec<(u32, String)> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let args = cmdline(pid);
            (!args.is_empty() && matches(&args) && alive(pid)).then(|| (pid, args.join(" ")))
        })
        .collect()
}

/// The running `teamlead teammate` processes of `team`.
pub fn teammate_processes(team: &str) -> Vec<(u32, String)> {
    processes(|args| {
        args.iter().any(|a| a == "teammate")
            && args
                .windows(2)
                .any(|w| w[0] == "--team-name" && w[1] == team)
    })
}

/// Does a command line name this home or this team (tmux servers excepted: the test server's
/// command line names the lead it started)?
fn names_team(args: &[String], home: &str, team: &str) -> bool {
    let is_tmux = args
        .first()
        .is_some_and(|a| Path::new(a).file_name().is_some_and(|n| n == "tmux"));
    !is_tmux
        && args
            .iter()
            .any(|a| a.contains(home) || a == team || a.ends_with(&format!("@{team}")))
}

/// Every running process that names this home or this team on its command line (the lead,
/// its teammates, anything started for them).
pub fn processes_of(ws: &Workspace) -> Vec<(u32, String)> {
    let home = ws.home().to_string_lossy().into_owned();
    processes(|args| names_team(args, &home, &ws.team))
}

/// Sends SIGKILL to a process.
pub fn sigkill(pid: u32) {
    // SAFETY: kill(2) with a pid this test found for its own processes.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGKILL);
    }
}

// ---------------------------------------------------------------------------------------------
// tmux.

/// One pane as tmux lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneInfo {
    pub session: String,
    pub window: String,
    pub window_name: String,
    pub id: String,
    pub title: String,
    pub border_format: String,
    pub pid: u32,
}

/// Every pane of the server `tmux` (hidden ones included).
pub fn pane_infos(tmux: &TestTmux) -> Vec<PaneInfo> {
    const SEP: &str = "\u{1f}";
    let format = [
        "#{session_name}",
        "#{session_name}:#{window_index}",
        "#{window_name}",
        "#{pane_id}",
        "#{pane_title}",
        "#{pane-border-format}",
        "#{pane_pid}",
    ]
    .join(SEP);
    tmux.panes(&format)
        .iter()
        .filter_map(|line| {
            let f: Vec<&str> = line.split(SEP).collect();
            (f.len() == 7).then(|| PaneInfo {
                session: f[0].to_string(),
                window: f[1].to_string(),
                window_name: f[2].to_string(),
                id: f[3].to_string(),
                title: f[4].to_string(),
                border_format: f[5].to_string(),
                pid: f[6].parse().unwrap_or(0),
            })
        })
        .collect()
}

/// Is a server answering on this `-L` socket?
pub fn server_running(tmux: &TestTmux) -> bool {
    tmux.run(&["list-sessions"]).is_ok()
}

/// The `TMUX` value that points a tmux client at the server of `tmux`.
pub fn tmux_env_value(tmux: &TestTmux) -> String {
    format!("{},0,0", tmux.socket_path().display())
}

/// The lead running as the command of the first pane of a private test tmux server, so tmux
/// sets `TMUX`/`TMUX_PANE` for it and it splits its own pane.
pub struct TmuxLead {
    pub tmux: TestTmux,
    /// The lead's pane.
    pub pane: String,
    /// The lead process (`exec`ed by the pane's shell).
    pub pid: u32,
}

impl TmuxLead {
    /// Starts `teamlead --home H --team T` in a `width`×`height` window of a new private server.
    pub fn start(ws: &Workspace, width: u16, height: u16) -> TmuxLead {
        let tmux = TestTmux::named(format!("tl-test-{}", uuid::Uuid::new_v4().simple()));
        let command = format!(
            "exec env -u CLAUDE_CONFIG_DIR -u TEAMLEAD_HOME TEAMLEAD_NO_SERVER=1 TEAMLEAD_CONFIG={} TEAMLEAD_LEAD_GRACE_MS={} {} --home {} --team {}",
            sh_quote(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml")),
            ws.lead_grace_ms,
            sh_quote(env!("CARGO_BIN_EXE_teamlead")),
            sh_quote(&ws.home().to_string_lossy()),
            sh_quote(&ws.team),
        );
        let (w, h) = (width.to_string(), height.to_string());
        let work = ws.work().to_string_lossy().into_owned();
        tmux.run(&[
            "new-session",
            "-d",
            "-s",
            "main",
            "-x",
            &w,
            "-y",
            &h,
            "-c",
            &work,
            &command,
        ])
        .expect("start the test tmux server with the lead");
        // The user's other window, which outlives the lead.
        tmux.run(&["new-window", "-d", "-t", "main", "-n", "shell", "--", "cat"])
            .expect("a second window");
        let line = tmux
            .run(&[
                "display-message",
                "-p",
                "-t",
                "main",
                "#{pane_id} #{pane_pid}",
            ])
            .expect("the lead's pane");
        let (pane, pid) = line.split_once(' ').expect("pane id and pid");
        let lead = TmuxLead {
            pane: pane.to_string(),
            pid: pid.parse().expect("pane pid"),
            tmux,
        };
        wait_until(
            "the lead process to run teamlead",
            WAIT,
            || cmdline(lead.pid).iter().any(|a| a == "--home"),
            || format!("pane pid {} runs {:?}", lead.pid, cmdline(lead.pid)),
        );
        lead.wait_screen("the lead's screen", |s| s.contains("shift+tab to cycle"));
        lead
    }

    /// What the lead's pane shows.
    pub fn screen(&self) -> String {
        self.tmux.capture(&self.pane)
    }

    /// Waits until the lead's screen satisfies `check`.
    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        wait_until(
            what,
            WAIT,
            || check(&self.screen()),
            || format!("lead screen:\n{}", self.screen()),
        )
    }

    /// Sends tmux key names (`Enter`, `Down`, `M-Enter`, `y`, …) to the lead's pane.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.pane.as_str()];
        args.extend_from_slice(keys);
        self.tmux.run(&args).expect("send-keys");
    }

    /// Types `text` literally into the lead's pane.
    pub fn type_text(&self, text: &str) {
        self.tmux
            .run(&["send-keys", "-t", &self.pane, "-l", text])
            .expect("send-keys -l");
    }

    /// Types a one-line composer input, checked on the composer's row, and presses Enter
    /// ([`Keyboard::type_line`]).
    pub fn submit(&self, line: &str) {
        self.type_line(line);
    }

    /// The lead's window (`session:index`).
    pub fn window(&self) -> String {
        self.tmux
            .run(&[
                "display-message",
                "-p",
                "-t",
                &self.pane,
                "#{session_name}:#{window_index}",
            ])
            .expect("the lead's window")
    }
}

impl Keyboard for TmuxLead {
    fn screen(&self) -> String {
        TmuxLead::screen(self)
    }
    fn type_text(&self, text: &str) {
        TmuxLead::type_text(self, text);
    }
    fn press(&self, key: Key) {
        self.keys(&[&key.tmux_name()]);
    }
}

// ---------------------------------------------------------------------------------------------
// The lead in a pseudo-terminal, outside tmux.

impl Workspace {
    /// How the lead of this workspace starts in a `cols`×`rows` pseudo-terminal outside any
    /// multiplexer: `teamlead --home H --team T <lead_args>` in the working directory, with
    /// the grace period, the private tmux socket directory and `lead_env`.
    pub fn pty_lead(&self, cols: u16, rows: u16) -> PtyLeadBuilder {
        crate::pty_harness::lead(self.work())
            .home(self.home())
            .args(["--team", self.team.as_str()])
            .args(&self.lead_args)
            .env("TEAMLEAD_LEAD_GRACE_MS", self.lead_grace_ms.to_string())
            .env("TMUX_TMPDIR", self.tmux_tmpdir())
            .outside_multiplexers()
            .envs(self.lead_env.iter().map(|(k, v)| (k, v)))
            .size(cols, rows)
    }
}

// ---------------------------------------------------------------------------------------------
// Clean-up guard.

/// Leaves nothing behind whatever happens to the test: on drop it SIGKILLs the lead, kills the
/// lead's private server (`teamlead-<pid>`) and removes its socket file, and SIGKILLs every
/// process still naming the home or the team. Declare it after the lead and the test tmux
/// server so it drops first.
pub struct Reaper {
    pub home: String,
    pub team: String,
    pub lead_pid: Option<u32>,
    pub tmux_tmpdir: PathBuf,
}

impl Reaper {
    pub fn new(ws: &Workspace) -> Reaper {
        Reaper {
            home: ws.home().to_string_lossy().into_owned(),
            team: ws.team.clone(),
            lead_pid: None,
            tmux_tmpdir: ws.tmux_tmpdir().to_path_buf(),
        }
    }
}

impl Drop for Reaper {
    fn drop(&mut self) {
        if let Some(pid) = self.lead_pid {
            if alive(pid) && cmdline(pid).iter().any(|a| a == &self.home) {
                sigkill(pid);
            }
            // Dropping the handle kills the server and removes the socket file.
            drop(TestTmux::in_dir(
                format!("teamlead-{pid}"),
                &self.tmux_tmpdir,
            ));
        }
        let (home, team) = (self.home.clone(), self.team.clone());
        for (pid, _) in processes(|args| names_team(args, &home, &team)) {
            sigkill(pid);
        }
    }
}

/// The helpers' own checks (they run with the slow suite, which compiles them).
mod tests {
    use super::Workspace;

    /// A team file read while a client rewrites it in place (2.1.45's `O_TRUNC`, then the
    /// write) is read again until it parses, not taken for a team without the member.
    #[test]
    fn a_team_file_read_torn_is_read_again() {
        let ws = Workspace::new("torn");
        std::fs::create_dir_all(ws.team_dir()).unwrap();
        let path = ws.team_dir().join("config.json");
        std::fs::write(&path, "").unwrap();
        let writer = std::thread::spawn(move || {
            // The client's write lands a moment after the truncation.
            std::thread::sleep(std::time::Duration::from_millis(100));
            std::fs::write(
                &path,
                r#"{"members":[{"name":"worker","tmuxPaneId":"%3"}]}"#,
            )
            .unwrap();
        });
        assert_eq!(ws.pane_of("worker").as_deref(), Some("%3"));
        writer.join().unwrap();
    }
}
