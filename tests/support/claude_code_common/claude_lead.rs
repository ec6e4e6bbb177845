//! A real Claude Code LEAD (issue 11): `claude` itself, with agent teams enabled, in a pane of a
//! private tmux server, its scripted model creating a team and a teammate. teamlead only looks
//! at that team from the outside (`inspect`, `monitor`, `clean`), so the scene has no teamlead
//! lead. Also here: a digest of a whole directory tree (names, modes, contents), to prove that
//! those commands change nothing, and `teamlead` runs whose logs go to a scratch directory
//! outside every tree that is checked.
//!
//! The lead gets `CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1` but not `CLAUDECODE=1`: 2.1.45 refuses
//! to start with it ("cannot be launched inside another Claude Code session"); Claude Code sets
//! it itself for the teammates it starts.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::{
    Client, ModelServer, Rule, TestTmux, WAIT, Workspace, client_env, client_markers, kill_clients,
    processes_with_env, wait_until, write_claude_json,
};

/// How long the scene's files and the model must stay untouched to count as quiet.
pub const QUIET: Duration = Duration::from_millis(2000);

/// A Claude Code lead in the first pane of a private tmux server.
pub struct ClaudeLead {
    pub client: Client,
    /// `home()` is the lead's `CLAUDE_CONFIG_DIR` (and teamlead's `--home`), `work()` its cwd.
    pub ws: Workspace,
    pub user_home: tempfile::TempDir,
    /// teamlead's logs and the monitors' output: outside every checked tree.
    pub scratch: tempfile::TempDir,
    pub model: ModelServer,
    pub tmux: TestTmux,
    /// The lead's pane.
    pub pane: String,
    pub started: Instant,
    monitors: Vec<Child>,
}

impl Drop for ClaudeLead {
    fn drop(&mut self) {
        for mut child in self.monitors.drain(..) {
            let _ = child.kill();
            let _ = child.wait();
        }
        // The clients first, with SIGKILL: one that gets the server's hang-up saves its
        // `.claude.json` on the way out and would recreate the temporary HOME once removed.
        let clients = client_markers(self.ws.home(), self.user_home.path());
        kill_clients(&clients);
        self.keep_for_debugging();
        let _ = self.tmux.run(&["kill-server"]);
        kill_clients(&clients);
    }
}

impl ClaudeLead {
    /// Prepares the scene (files, model server scripted by `rules(team)`, where `team` is the
    /// name a 2.1.45 lead should give its team); nothing runs before [`ClaudeLead::launch`].
    pub fn new(client: &Client, prefix: &str, rules: impl FnOnce(&str) -> Vec<Rule>) -> ClaudeLead {
        let ws = Workspace::new(prefix);
        let user_home = tempfile::tempdir().expect("temp HOME");
        let scratch = tempfile::tempdir().expect("scratch directory");
        let model = ModelServer::start(rules(&ws.team));
        write_claude_json(ws.home(), ws.work());
        ClaudeLead {
            client: client.clone(),
            ws,
            user_home,
            scratch,
            model,
            tmux: TestTmux::named(format!("tl-cc-lead-{}", uuid::Uuid::new_v4().simple())),
            pane: String::new(),
            started: Instant::now(),
            monitors: Vec::new(),
        }
    }

    /// Starts `claude --permission-mode default <prompt>` as the lead.
    pub fn launch(&mut self, prompt: &str) {
        let launcher = self.client.launcher(self.scratch.path());
        let command = [
            "exec".to_string(),
            super::sh_quote(&launcher.to_string_lossy()),
            "--permission-mode".into(),
            "default".into(),
            super::sh_quote(prompt),
        ]
        .join(" ");
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &self.tmux.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-s", "main", "-x", "200", "-y", "50"])
            .arg("-c")
            .arg(self.ws.work())
            .arg(command);
        for var in [
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_HOME",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDECODE",
        ] {
            cmd.env_remove(var);
        }
        // The server's environment is every pane's: the teammates' panes get it too.
        cmd.envs(client_env(
            self.ws.home(),
            self.user_home.path(),
            &self.model.base_url(),
        ))
        .env("CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", "1");
        let out = cmd.output().expect("run tmux");
        assert!(
            out.status.success(),
            "start the Claude Code lead's tmux server: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.pane = self
            .tmux
            .run(&["display-message", "-p", "-t", "main", "#{pane_id}"])
            .expect("the lead's pane");
        self.started = Instant::now();
    }

    /// Every process of the scene: those whose environment names its `CLAUDE_CONFIG_DIR`.
    pub fn processes(&self) -> Vec<u32> {
        processes_with_env(&[format!("CLAUDE_CONFIG_DIR={}", self.ws.home().display())])
    }

    pub fn screen(&self) -> String {
        self.tmux.capture(&self.pane)
    }

    /// What the scene looks like, for failure messages.
    pub fn explain(&self) -> String {
        let mut out = format!(
            "client {}\nlead screen:\n{}\nteams: {:?}\nmodel requests:\n{}",
            self.client.label,
            self.screen(),
            self.teams(),
            self.model.summary()
        );
        for team in self.teams() {
            let config = std::fs::read_to_string(self.team_dir(&team).join("config.json"));
            out.push_str(&format!("\n--- {team}/config.json:\n{config:?}"));
        }
        out.push_str(&super::other_panes(&self.tmux, &self.pane));
        out
    }

    /// Waits for `cond`; the failure names the client and shows the scene.
    pub fn wait(&self, what: &str, cond: impl FnMut() -> bool) -> Duration {
        let what = format!("[{}] {what}", self.client.label);
        wait_until(&what, WAIT, cond, || self.explain())
    }

    pub fn team_dir(&self, team: &str) -> PathBuf {
        self.ws.home().join("teams").join(team)
    }

    /// The team directories of the home.
    pub fn teams(&self) -> Vec<String> {
        let mut teams: Vec<String> = std::fs::read_dir(self.ws.home().join("teams"))
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                    .filter_map(|e| e.file_name().to_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        teams.sort();
        teams
    }

    /// A team's config.json, parsed (`Null` while missing; a torn read is read again:
    /// [`crate::panes_common::read_team_file`]).
    pub fn config(&self, team: &str) -> serde_json::Value {
        crate::panes_common::read_team_file(&self.team_dir(team).join("config.json"))
    }

    /// The names of a team's members.
    pub fn members(&self, team: &str) -> Vec<String> {
        self.config(team)["members"]
            .as_array()
            .map(|ms| {
                ms.iter()
                    .filter_map(|m| m["name"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The trees a teamlead command must not change: the home, the user's `HOME` and the
    /// lead's working directory, without what Claude Code itself keeps appending to while it
    /// idles (2.1.45 writes its debug log to `<config dir>/debug/` every second).
    pub fn digest(&self) -> BTreeMap<String, String> {
        let mut all = BTreeMap::new();
        for (label, root, skip) in [
            ("home", self.ws.home(), "debug"),
            ("HOME", self.user_home.path(), ""),
            ("cwd", self.ws.work(), ""),
        ] {
            for (path, what) in tree_digest(root, skip) {
                all.insert(format!("{label}/{path}"), what);
            }
        }
        all
    }

    /// Waits until the digest and the model's request count have not changed for [`QUIET`]
    /// and the lead's boot canary has settled (see [`ClaudeLead::boot_canary_pending`]).
    pub fn wait_quiet(&self) -> Duration {
        let mut last = (self.digest(), self.model.requests().len());
        let mut since = Instant::now();
        self.wait("the scene to be quiet", || {
            let now = (self.digest(), self.model.requests().len());
            if now != last {
                last = now;
                since = Instant::now();
            }
            since.elapsed() >= QUIET && !self.boot_canary_pending()
        })
    }

    /// Newer clients arm a "fullscreen boot canary" at start (`fullscreenBootPending` in
    /// `.claude.json`, keyed by pid) and settle it, rewriting `.claude.json`, a fixed time
    /// (seconds) after their first frame — whatever the scene does meanwhile. Until then the
    /// lead's own files are not done changing.
    pub fn boot_canary_pending(&self) -> bool {
        std::fs::read_to_string(self.ws.home().join(".claude.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("fullscreenBootPending").cloned())
            .is_some_and(|p| p.as_object().is_some_and(|o| !o.is_empty()))
    }

    /// A `teamlead --home <home> ARGS…` command, its logs in the scratch directory, not inside
    /// any tmux. Its tmux socket directory is a private one (`TMUX_TMPDIR`), so `clean
    /// --orphans` judges only what this scenario made, never another test's private server.
    pub fn teamlead(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home")
            .arg(self.ws.home())
            .args(args)
            .current_dir(self.scratch.path())
            .env("TEAMLEAD_LOG_DIR", self.scratch.path().join("logs"))
            .env("XDG_STATE_HOME", self.scratch.path().join("state"))
            .env("TMUX_TMPDIR", self.scratch.path().join("tmux"))
            .env("NO_COLOR", "1");
        for var in [
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_HOME",
            "CLAUDE_CONFIG_DIR",
            "CLAUDECODE",
        ] {
            cmd.env_remove(var);
        }
        cmd
    }

    /// Runs a teamlead command to its end; it must succeed.
    pub fn run_teamlead(&self, args: &[&str]) -> Output {
        let out = self
            .teamlead(args)
            .stdin(Stdio::null())
            .output()
            .expect("run teamlead");
        assert!(
            out.status.success(),
            "[{}] teamlead {args:?} failed: {}\n{}",
            self.client.label,
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        out
    }

    /// Starts `teamlead monitor ARGS…` writing to a file of the scratch directory; returns the
    /// index to read and stop it with.
    pub fn start_monitor(&mut self, args: &[&str]) -> usize {
        let index = self.monitors.len();
        let out = std::fs::File::create(self.monitor_path(index)).expect("monitor output file");
        let mut full = vec!["monitor"];
        full.extend_from_slice(args);
        let child = self
            .teamlead(&full)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(Stdio::null())
            .spawn()
            .expect("start teamlead monitor");
        self.monitors.push(child);
        self.wait("the monitor's banner", || {
            self.monitor_output(index).contains("monitoring")
        });
        index
    }

    fn monitor_path(&self, index: usize) -> PathBuf {
        self.scratch.path().join(format!("monitor-{index}.txt"))
    }

    /// What monitor `index` printed so far.
    pub fn monitor_output(&self, index: usize) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(self.monitor_path(index)) {
            let _ = f.read_to_string(&mut text);
        }
        text
    }

    /// Stops monitor `index` with SIGINT (as Ctrl-C would) and waits for it to exit.
    pub fn stop_monitor(&mut self, index: usize) -> String {
        let pid = self.monitors[index].id();
        // SAFETY: kill(2) on a child this scene started and has not reaped.
        unsafe {
            libc::kill(pid as libc::pid_t, libc::SIGINT);
        }
        let child = &mut self.monitors[index];
        let mut exited = false;
        wait_until(
            "the monitor to stop on SIGINT",
            WAIT,
            || {
                exited = child.try_wait().ok().flatten().is_some();
                exited
            },
            String::new,
        );
        self.monitor_output(index)
    }

    /// With `TEAMLEAD_CC_KEEP=DIR`, a failed scene (every scene with `TEAMLEAD_CC_KEEP_ALL=1`)
    /// leaves its trees, the model's requests and the monitors' output in
    /// `DIR/<prefix>-<client>/`.
    fn keep_for_debugging(&self) {
        use super::keep_dir;
        let Some(dir) = keep_dir() else {
            return;
        };
        let target = Path::new(&dir).join(format!("{}-{}", self.ws.team, self.client.label));
        let _ = std::fs::create_dir_all(&target);
        let bodies: Vec<serde_json::Value> =
            self.model.requests().into_iter().map(|r| r.body).collect();
        let _ = std::fs::write(
            target.join("requests.json"),
            serde_json::to_string_pretty(&bodies).unwrap_or_default(),
        );
        for (from, name) in [
            (self.ws.home(), "home"),
            (self.user_home.path(), "user"),
            (self.scratch.path(), "scratch"),
        ] {
            let _ = Command::new("cp")
                .arg("-a")
                .arg(from)
                .arg(target.join(name))
                .status();
        }
    }
}

/// Every entry under `root` (not following links), by relative path: its type, permission
/// bits and content digest (a link's target). `skip` names a top-level directory left out.
pub fn tree_digest(root: &Path, skip: &str) -> BTreeMap<String, String> {
    fn walk(root: &Path, dir: &Path, skip: &str, out: &mut BTreeMap<String, String>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            if !skip.is_empty() && dir == root && rel == skip {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let mode = meta.permissions().mode();
            let what = if meta.is_dir() {
                walk(root, &path, skip, out);
                "dir".to_string()
            } else if meta.file_type().is_symlink() {
                format!("link {:?}", std::fs::read_link(&path).unwrap_or_default())
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                format!("file {:x}", Sha256::digest(&bytes))
            };
            out.insert(rel, format!("{mode:o} {what}"));
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, skip, &mut out);
    out
}

/// The entries two digests disagree on, one line each.
pub fn digest_diff(before: &BTreeMap<String, String>, after: &BTreeMap<String, String>) -> String {
    let mut lines = Vec::new();
    for (path, was) in before {
        match after.get(path) {
            None => lines.push(format!("removed {path} ({was})")),
            Some(now) if now != was => lines.push(format!("changed {path}: {was} -> {now}")),
            _ => {}
        }
    }
    for (path, now) in after {
        if !before.contains_key(path) {
            lines.push(format!("added {path} ({now})"));
        }
    }
    lines.join("\n")
}
