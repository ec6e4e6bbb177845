//! The harness of the Claude Code conformance suite: the client versions under test (installed
//! by `.ci/run` into `tests/interop/node_modules`), a scene per scenario (a temporary
//! `CLAUDE_CONFIG_DIR` that is also teamlead's home, a temporary `HOME`, the scripted model
//! server, and the real `teamlead --agent claude` lead in a pane of a private tmux server whose
//! environment points every `claude` at the model server), and the screen and file checks the
//! scenarios share. Nothing outlives a scene: the reaper kills what is left on drop.

#![allow(dead_code)]

pub(crate) use crate::model_server;
pub(crate) use crate::panes_common;

use teamlead_test_support::keys::{Key, Keyboard};

pub mod claude_lead;
pub mod keys;
pub mod steering;
mod version;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

pub use keys::PermissionAnswer;
pub use model_server::{Act, ModelServer, Rule};
pub use panes_common::{
    Reaper, TestTmux, Workspace, alive, pane_infos, processes, sh_quote, sigkill, wait_until,
};
pub use version::{Client, clients_or_skip};
// The whole matrix, for `benches/steer.rs`.
#[allow(unused_imports)]
pub use version::CLIENTS;

/// How long a wait on a real `claude` may take before the scenario fails (node cold starts on a
/// busy 2-core machine are slow).
pub const WAIT: Duration = Duration::from_secs(60);

/// The API key the clients send (only its last 20 characters matter, for `.claude.json`).
pub const API_KEY: &str = "sk-ant-conformance-0123456789abcdefghij";

/// Environment of every process in the scene's tmux server (the lead and its teammates).
pub fn client_env(scene_home: &Path, user_home: &Path, base_url: &str) -> Vec<(String, String)> {
    let s = |p: &Path| p.to_string_lossy().into_owned();
    [
        ("CLAUDE_CONFIG_DIR", s(scene_home)),
        ("HOME", s(user_home)),
        ("XDG_STATE_HOME", s(&user_home.join(".local/state"))),
        ("XDG_CONFIG_HOME", s(&user_home.join(".config"))),
        ("TERM", "xterm-256color".into()),
        ("ANTHROPIC_BASE_URL", base_url.into()),
        ("ANTHROPIC_API_KEY", API_KEY.into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("ENABLE_TOOL_SEARCH", "false".into()),
        (
            "CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL",
            "1".into(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Writes `<config dir>/.claude.json`: onboarding done, the API key approved, `cwd` trusted.
pub fn write_claude_json(config_dir: &Path, cwd: &Path) {
    let key_tail = &API_KEY[API_KEY.len() - 20..];
    let project = serde_json::json!({"hasTrustDialogAccepted": true,
        "hasCompletedProjectOnboarding": true, "allowedTools": []});
    let mut projects = serde_json::Map::new();
    projects.insert(cwd.to_string_lossy().into_owned(), project.clone());
    if let Ok(real) = cwd.canonicalize() {
        projects.insert(real.to_string_lossy().into_owned(), project);
    }
    let doc = serde_json::json!({"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
        "customApiKeyResponses": {"approved": [key_tail], "rejected": []},
        "projects": projects});
    std::fs::write(config_dir.join(".claude.json"), doc.to_string()).expect("write .claude.json");
}

/// One scenario against one client: files, model server, tmux server with the lead.
pub struct Scene {
    pub client: Client,
    pub ws: Workspace,
    pub user_home: tempfile::TempDir,
    pub model: ModelServer,
    pub tmux: TestTmux,
    /// The lead's pane.
    pub pane: String,
    pub lead_pid: u32,
    pub started: Instant,
    // Dropped first (fields drop in order): kills whatever is left.
    reaper: Option<Reaper>,
}

impl Drop for Scene {
    fn drop(&mut self) {
        // The clients first, with SIGKILL: a client that gets the server's hang-up saves its
        // `.claude.json` on the way out and would recreate the temporary HOME once removed.
        let clients = client_markers(self.ws.home(), self.user_home.path());
        kill_clients(&clients);
        drop(self.reaper.take());
        self.keep_for_debugging();
        let _ = self.tmux.run(&["kill-server"]);
        kill_clients(&clients);
    }
}

/// The environment entries that mark a Claude Code client of a scene (its config directory,
/// its HOME).
pub fn client_markers(scene_home: &Path, user_home: &Path) -> Vec<String> {
    vec![
        format!("CLAUDE_CONFIG_DIR={}", scene_home.display()),
        format!("HOME={}", user_home.display()),
    ]
}

/// Running processes (not this one) whose environment holds one of `markers`.
pub fn processes_with_env(markers: &[String]) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id() && alive(*pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| {
                env.split(|b| *b == 0)
                    .any(|var| markers.iter().any(|m| var == m.as_bytes()))
            })
        })
        .collect()
}

/// SIGKILLs every process marked by `markers` until none is left (up to 5 s).
pub fn kill_clients(markers: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with_env(markers);
        if left.is_empty() || Instant::now() > deadline {
            return;
        }
        for pid in left {
            sigkill(pid);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

impl Scene {
    /// A scene whose lead runs `teamlead --agent claude` plus `lead_args`.
    pub fn start(client: &Client, prefix: &str, rules: Vec<Rule>, lead_args: &[&str]) -> Scene {
        Scene::start_where(client, prefix, rules, lead_args, None, &[])
    }

    /// [`Scene::start`] with `env` added to the environment of every process of the scene's
    /// tmux server (the lead and its teammates).
    pub fn start_with_env(
        client: &Client,
        prefix: &str,
        rules: Vec<Rule>,
        env: &[(&str, &str)],
    ) -> Scene {
        Scene::start_where(client, prefix, rules, &[], None, env)
    }

    /// [`Scene::start`] with `lead_args` and `env` (see [`Scene::start_with_env`]).
    pub fn start_where_env(
        client: &Client,
        prefix: &str,
        rules: Vec<Rule>,
        lead_args: &[&str],
        env: &[(&str, &str)],
    ) -> Scene {
        Scene::start_where(client, prefix, rules, lead_args, None, env)
    }

    /// A scene whose lead does not know it runs inside tmux (`TMUX` unset): its teammates go
    /// to a private tmux server of its own (`teamlead-<pid>` in the scene's `TMUX_TMPDIR`).
    /// `grace_ms`: the grace period its teammates get (`TEAMLEAD_LEAD_GRACE_MS` in the lead's
    /// environment, passed on to each teammate's command line).
    pub fn start_outside(
        client: &Client,
        prefix: &str,
        rules: Vec<Rule>,
        grace_ms: Option<u64>,
    ) -> Scene {
        Scene::start_where(client, prefix, rules, &[], Some(grace_ms), &[])
    }

    fn start_where(
        client: &Client,
        prefix: &str,
        rules: Vec<Rule>,
        lead_args: &[&str],
        outside: Option<Option<u64>>,
        env: &[(&str, &str)],
    ) -> Scene {
        let ws = Workspace::new(prefix);
        let user_home = tempfile::tempdir().expect("temp HOME");
        let model = ModelServer::start(rules);
        write_claude_json(ws.home(), ws.work());
        let launcher = client.launcher(user_home.path());
        let tmux = TestTmux::named(format!("tl-cc-{}", uuid::Uuid::new_v4().simple()));
        // The lead looks for tmux servers earlier sessions left behind (`teamlead-<pid>`
        // sockets) when it starts: it gets a private socket directory, so it never judges
        // another test's servers. (Its own server is reached through `TMUX`.)
        let tmux_tmpdir = user_home.path().join("tmux-tmpdir");
        std::fs::create_dir_all(&tmux_tmpdir).expect("the lead's tmux socket directory");
        let mut words = vec![
            "exec".to_string(),
            "env".to_string(),
            match outside {
                Some(Some(grace)) => format!("-u TMUX -u TMUX_PANE TEAMLEAD_LEAD_GRACE_MS={grace}"),
                Some(None) => "-u TMUX -u TMUX_PANE".to_string(),
                None => String::new(),
            },
            format!(
                "TEAMLEAD_CONFIG={}",
                sh_quote(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"))
            ),
            sh_quote(&format!("TMUX_TMPDIR={}", tmux_tmpdir.display())),
            // The default server mode: the pane's program is a screen on a `teamlead serve`
            // process of its own; the socket lives in the scene's HOME.
            sh_quote(&format!(
                "TEAMLEAD_RUNTIME_DIR={}",
                user_home.path().join("run").display()
            )),
            // The lead's log, whose last lines a failure shows (`Scene::explain`).
            sh_quote(&format!(
                "TEAMLEAD_LOG_DIR={}",
                user_home.path().join("logs").display()
            )),
            sh_quote(env!("CARGO_BIN_EXE_teamlead")),
            "--home".into(),
            sh_quote(&ws.home().to_string_lossy()),
            "--team".into(),
            ws.team.clone(),
            "--agent".into(),
            "claude".into(),
        ];
        words.extend(lead_args.iter().map(|a| sh_quote(a)));
        let mut cmd = Command::new("tmux");
        cmd.args(["-L", &tmux.socket, "-f", "/dev/null"])
            .args(["new-session", "-d", "-s", "main", "-x", "220", "-y", "50"])
            .arg("-c")
            .arg(ws.work())
            .arg(words.join(" "));
        for var in [
            "TMUX",
            "TMUX_PANE",
            "TEAMLEAD_HOME",
            "ANTHROPIC_AUTH_TOKEN",
            "CLAUDECODE",
            "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS",
        ] {
            cmd.env_remove(var);
        }
        cmd.envs(client_env(ws.home(), user_home.path(), &model.base_url()))
            .env("TEAMLEAD_CLAUDE_BIN", &launcher)
            .envs(env.iter().copied());
        let out = cmd.output().expect("run tmux");
        assert!(
            out.status.success(),
            "start the scene's tmux server: {}",
            String::from_utf8_lossy(&out.stderr)
        );
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
        let mut reaper = Reaper::new(&ws);
        let lead_pid: u32 = pid.parse().expect("pid");
        reaper.lead_pid = Some(lead_pid);
        let scene = Scene {
            client: client.clone(),
            ws,
            user_home,
            model,
            pane: pane.to_string(),
            lead_pid,
            tmux,
            started: Instant::now(),
            reaper: Some(reaper),
        };
        scene.wait_screen("the lead's screen", |s| s.contains("shift+tab to cycle"));
        scene
    }

    /// With `TEAMLEAD_CC_KEEP=DIR`, a failed scene (every scene with `TEAMLEAD_CC_KEEP_ALL=1`)
    /// leaves a copy of its homes and the model's
    /// requests in `DIR/<team>/` for a developer to read.
    fn keep_for_debugging(&self) {
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
        for (from, name) in [(self.ws.home(), "home"), (self.user_home.path(), "user")] {
            let _ = Command::new("cp")
                .arg("-a")
                .arg(from)
                .arg(target.join(name))
                .status();
        }
    }

    pub fn screen(&self) -> String {
        self.tmux.capture(&self.pane)
    }

    /// What the scene looks like, for failure messages.
    pub fn explain(&self) -> String {
        let panes: Vec<String> = pane_infos(&self.tmux)
            .iter()
            .map(|p| format!("{} {} pid {}", p.id, p.title, p.pid))
            .collect();
        let mail: Vec<String> = self
            .ws
            .members()
            .iter()
            .filter(|m| *m != "team-lead")
            .flat_map(|m| {
                self.lead_mail(m)
                    .into_iter()
                    .map(move |t| format!("{m}: {t}"))
            })
            .map(|t| t.chars().take(200).collect())
            .collect();
        let mut out = format!(
            "client {}\nlead screen:\n{}\npanes: {panes:?}\nconfig: {}\nlead mail:\n{}\nmodel requests:\n{}",
            self.client.label,
            self.screen(),
            self.config(),
            mail.join("\n"),
            self.model.summary()
        );
        out.push_str(&other_panes(&self.tmux, &self.pane));
        out.push_str(&self.lead_log_tail(60));
        out
    }

    /// The last `lines` lines of the lead's log files (a failure's explanation: mode drives,
    /// refusals, errors).
    fn lead_log_tail(&self, lines: usize) -> String {
        let dir = self.user_home.path().join("logs");
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        files.sort();
        let mut out = String::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let all: Vec<&str> = text.lines().collect();
            let tail = &all[all.len().saturating_sub(lines)..];
            out.push_str(&format!(
                "\n--- lead log {}:\n{}",
                file.display(),
                tail.join("\n")
            ));
        }
        out
    }

    /// Waits for `cond`; the failure names the client and shows the scene.
    pub fn wait(&self, what: &str, cond: impl FnMut() -> bool) -> Duration {
        let what = format!("[{}] {what}", self.client.label);
        wait_until(&what, WAIT, cond, || self.explain())
    }

    /// Polls `cond` until it holds (`true`) or `within` has passed (`false`).
    pub fn wait_try(&self, within: Duration, cond: impl FnMut() -> bool) -> bool {
        teamlead_test_support::wait::poll_until(within, cond)
    }

    pub fn wait_screen(&self, what: &str, check: impl Fn(&str) -> bool) -> Duration {
        self.wait(what, || check(&self.screen()))
    }

    /// Sends tmux key names to the lead's pane.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", self.pane.as_str()];
        args.extend_from_slice(keys);
        self.tmux.run(&args).expect("send-keys");
    }

    pub fn type_text(&self, text: &str) {
        self.tmux
            .run(&["send-keys", "-t", &self.pane, "-l", text])
            .expect("send-keys -l");
    }

    /// `teamlead ctl <team> ARGS…` against the scene's lead server; its output.
    pub fn ctl(&self, args: &[&str]) -> std::process::Output {
        Command::new(env!("CARGO_BIN_EXE_teamlead"))
            .arg("--home")
            .arg(self.ws.home())
            .arg("ctl")
            .arg(&self.ws.team)
            .args(args)
            .env("TEAMLEAD_RUNTIME_DIR", self.user_home.path().join("run"))
            .env(
                "TEAMLEAD_CONFIG",
                concat!(env!("CARGO_MANIFEST_DIR"), "/tests/no-config.toml"),
            )
            .env_remove("TMUX")
            .env_remove("TEAMLEAD_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .stdin(std::process::Stdio::null())
            .output()
            .expect("run teamlead ctl")
    }

    /// Types a composer line, checked on the composer's row, and presses Enter
    /// ([`Keyboard::type_line`]).
    pub fn submit(&self, line: &str) {
        self.type_line(line);
    }

    /// config.json, parsed; retried briefly, since Claude Code writes it in place.
    pub fn config(&self) -> serde_json::Value {
        for _ in 0..10 {
            let config = self.ws.config();
            if !config.is_null() {
                return config;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        serde_json::Value::Null
    }

    /// A member's entry in config.json (`Null` when absent).
    pub fn member(&self, name: &str) -> serde_json::Value {
        self.config()["members"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["name"] == name).cloned())
            .unwrap_or(serde_json::Value::Null)
    }

    /// The running `claude` processes of this team's member `name`: those naming its agent id,
    /// and the process of its pane (Claude Code sets its process title to `claude`, which
    /// hides the arguments of a `node cli.js` teammate).
    pub fn teammate_pids(&self, name: &str) -> Vec<u32> {
        let id = format!("{name}@{}", self.ws.team);
        let mut pids: Vec<u32> = processes(|args| {
            args.iter().any(|a| a == &id) && !args.iter().any(|a| a == "teammate")
        })
        .into_iter()
        .map(|(pid, _)| pid)
        .collect();
        if let Some(pane) = self.member(name)["tmuxPaneId"].as_str()
            && let Some(info) = pane_infos(&self.tmux).into_iter().find(|p| p.id == pane)
            && info.pid != 0
            && panes_common::alive(info.pid)
            && !pids.contains(&info.pid)
        {
            pids.push(info.pid);
        }
        pids
    }

    /// `/spawn NAME ARGS…` and wait until its first turn has ended (the lead shows it idle).
    /// Returns the time from Enter to the first idle notification in the lead's log.
    pub fn spawn(&self, name: &str, args: &str) -> Duration {
        self.type_keys(&format!("/spawn {name} {args}"));
        let start = Instant::now();
        self.keys(&["Enter"]);
        self.wait_screen(&format!("`Spawned {name}`"), |s| {
            s.contains(&format!("Spawned {name}"))
        });
        self.wait(&format!("{name}'s first idle notification"), || {
            self.ws
                .lead_mail_from(name)
                .iter()
                .any(|t| t.contains("idle_notification"))
        });
        start.elapsed()
    }

    /// The texts `name` sent the lead (its inbox and the lead's delivery log), each once even
    /// while the lead is between logging an entry and removing it from the inbox.
    pub fn lead_mail(&self, name: &str) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        self.ws
            .lead_mail_from(name)
            .into_iter()
            .filter(|t| seen.insert(t.clone()))
            .collect()
    }

    /// How many idle notifications `name` has sent the lead.
    pub fn idles(&self, name: &str) -> usize {
        self.lead_mail(name)
            .iter()
            .filter(|t| t.contains("idle_notification"))
            .count()
    }

    /// The `permission_request` frames `name` has sent the lead, parsed.
    pub fn permission_requests(&self, name: &str) -> Vec<serde_json::Value> {
        self.lead_mail(name)
            .iter()
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(t).ok())
            .filter(|v| v["type"] == "permission_request")
            .collect()
    }

    /// Types `@name text` into the composer and sends it; returns the idle count before, for
    /// [`Scene::wait_turn_end`].
    pub fn say(&self, name: &str, text: &str) -> usize {
        let before = self.idles(name);
        self.submit(&format!("@{name} {text}"));
        before
    }

    /// Waits until `name` has gone idle again after `before` idle notifications.
    pub fn wait_turn_end(&self, name: &str, before: usize) {
        self.wait(&format!("{name}'s turn to end"), || {
            self.idles(name) > before
        });
    }

    /// Waits until the model gets a turn beginning with one of `needles` beyond the `seen`
    /// ones (see [`ModelServer::turns_on`]), then until `name`'s turn that carried it has
    /// ended. Seen while the model still "thinks" (its latency), so the idle count taken then
    /// excludes that turn's idle notification.
    pub fn wait_turn_on(&self, name: &str, needles: &[&str], seen: usize) {
        self.wait(&format!("a model turn on {needles:?}"), || {
            self.model.turns_on(needles) > seen
        });
        let before = self.idles(name);
        self.wait_turn_end(name, before);
    }

    /// Opens the teams dialog (footer badge, Enter) and `name`'s detail (Enter on its row, the
    /// first teammate's).
    pub fn open_detail(&self, name: &str) {
        self.keys(&["Down"]);
        self.wait_screen("the footer badge selected", |s| {
            s.contains("open the teams dialog")
        });
        self.keys(&["Enter"]);
        self.wait_screen("the teams dialog", |s| s.contains(&format!("❯ ● {name}")));
        self.keys(&["Enter"]);
        self.wait_screen(&format!("{name}'s detail"), |s| {
            s.contains(&format!("{name}@"))
        });
    }

    /// Opens the teams dialog (footer badge, Enter), waits until `name`'s row shows `mode`,
    /// and closes it again.
    pub fn wait_teams_dialog_mode(&self, name: &str, mode: &str) {
        self.keys(&["Down"]);
        self.wait_screen("the footer badge selected", |s| {
            s.contains("open the teams dialog")
        });
        self.keys(&["Enter"]);
        self.wait_screen(&format!("the teams dialog showing {name} in {mode}"), |s| {
            s.lines()
                .any(|l| l.contains(&format!("● {name}")) && l.contains(mode))
        });
        self.keys(&["Escape"]);
        // The footer's hint shows under the dialog too: wait for the dialog itself to go, or
        // the next keys reach tmux within its escape-time and turn Escape into Alt+key.
        self.wait_screen("the teams dialog closed", |s| {
            s.contains("shift+tab to cycle") && !s.contains("esc close") && !s.contains("❯ ●")
        });
    }

    /// The lead server's process (`teamlead serve` for this scene's home), once it runs.
    pub fn server_pid(&self) -> Option<u32> {
        let home = self.ws.home().to_string_lossy().into_owned();
        processes(|args| args.iter().any(|a| a == "serve") && args.iter().any(|a| a == &home))
            .into_iter()
            .map(|(pid, _)| pid)
            .next()
    }

    /// The pane of a member, from config.json.
    pub fn pane_of(&self, name: &str) -> String {
        self.ws.pane_of(name).unwrap_or_else(|| {
            panic!(
                "[{}] no pane for {name}\n{}",
                self.client.label,
                self.explain()
            )
        })
    }

    pub fn pane_exists(&self, pane: &str) -> bool {
        pane_infos(&self.tmux).iter().any(|p| p.id == pane)
    }

    /// A file of the working directory.
    pub fn work_file(&self, name: &str) -> PathBuf {
        self.ws.work().join(name)
    }

    /// Answers the permission dialog at the head of the queue (see [`keys`]).
    pub fn answer(&self, answer: PermissionAnswer) {
        keys::answer_permission(self, answer);
    }
}

impl Keyboard for Scene {
    fn screen(&self) -> String {
        Scene::screen(self)
    }
    fn type_text(&self, text: &str) {
        Scene::type_text(self, text);
    }
    fn press(&self, key: Key) {
        self.keys(&[&key.tmux_name()]);
    }
    fn explain(&self) -> String {
        Scene::explain(self)
    }
}

/// Every pane of `tmux` but `lead_pane`, with what it shows, for failure messages.
pub fn other_panes(tmux: &TestTmux, lead_pane: &str) -> String {
    pane_infos(tmux)
        .iter()
        .filter(|p| p.id != lead_pane)
        .map(|p| {
            format!(
                "\n--- pane {} ({}):\n{}",
                p.id,
                p.title,
                tmux.capture(&p.id)
            )
        })
        .collect()
}

/// Where a finished scene is kept for debugging: `TEAMLEAD_CC_KEEP`, when the scene failed
/// or `TEAMLEAD_CC_KEEP_ALL=1` asks for every scene.
pub fn keep_dir() -> Option<String> {
    let dir = std::env::var("TEAMLEAD_CC_KEEP").ok()?;
    let all = std::env::var("TEAMLEAD_CC_KEEP_ALL").is_ok_and(|v| v == "1");
    (all || std::thread::panicking()).then_some(dir)
}

/// Prints one timing line (shown with `--nocapture`; the report collects them).
pub fn timing(client: &Client, what: &str, took: Duration) {
    eprintln!("timing [{}] {what}: {} ms", client.label, took.as_millis());
}
