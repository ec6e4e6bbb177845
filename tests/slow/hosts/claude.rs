//! Real `claude` teammates on another host, and the model endpoint forwarded there (issue 29,
//! items 4, 5 and 7). The host is a network namespace with its own sshd and login user
//! (`hosts_common`); its HOME is prepared for Claude Code offline the way a person would set
//! up a build box (onboarding done, the working directory trusted, no key), and its `claude`
//! is the client of the matrix under test (`[hosts.box] claude`). The lead runs `serve` with
//! the scripted model server on its own loopback and the API key in its own environment; the
//! host opts in to the lead's model (`forward-model = true`), so the teammate can only reach
//! the model through the forward over teamlead's ssh master: the namespace has no route to
//! the lead's loopback.
//!
//! For each client: spawn to first idle; a Bash call's permission request answered from the
//! lead's queue (`ctl pending`/`approve`) and the command then run on the host, as the host's
//! user; a message round trip; a task given to it and a free one it claims, both completed with
//! Claude Code's own task tool on the host's list and shown completed at the lead; tightening its mode (acceptEdits → default, by Claude Code's own
//! mode key typed into its pane over ssh, confirmed by the lead) after which a Write asks
//! again; its usage (tokens, turns, model) shown by the lead from its transcript on the host;
//! the lead killed, the guard in front of the remote `claude` stops it on the host
//! after the grace, not before. Every model request carried the lead's key, and no file of the host's HOME and no
//! process of its user holds it. Then: teamlead's own `llm` teammate on the host answers
//! through the same forward, with no key on the host.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::claude_code_common::{Act, Client, ModelServer, Rule, clients_or_skip};
use crate::hosts_common::crew::{Serve, TEAM, chown_tree, host_processes, lead_tasks, wait_for};
use crate::hosts_common::{HostSetup, TestHost, TestLead, skip_unless_root};
use teamlead_test_support::git::git;

/// The lead's key: the model server checks every request carries it; the host must never see
/// it.
/// The lead's grace, passed on to its teammates on the host (and a `claude` teammate's guard).
const GRACE_MS: u64 = 8_000;

pub(crate) const SECRET: &str = "sk-ant-lead-only-0123456789abcdefghijklmn";

/// What Claude Code needs on the host to run offline (docs: running Claude Code offline).
pub(crate) const OFFLINE_ENV: &[(&str, &str)] = &[
    ("TERM", "xterm-256color"),
    ("DISABLE_TELEMETRY", "1"),
    ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ("DISABLE_AUTOUPDATER", "1"),
    ("ENABLE_TOOL_SEARCH", "false"),
    ("CLAUDE_CODE_DISABLE_OFFICIAL_MARKETPLACE_AUTOINSTALL", "1"),
];

/// A lead server with a host `box`, the model server on the lead's loopback and its key in
/// the lead's environment only.
struct Rig {
    lead: TestLead,
    host: TestHost,
    model: ModelServer,
    serve: Option<Serve>,
    /// The host's working directory for teammates.
    work: PathBuf,
    /// The lead server's working directory (a git repository when the test made one).
    lead_dir: tempfile::TempDir,
}

impl Rig {
    /// `host_keys`: more lines of `[hosts.box]`, made once the host is there; `serve_args`:
    /// more arguments of `serve`.
    fn start(host_keys: impl FnOnce(&TestHost) -> String, serve_args: &[&str]) -> Rig {
        Rig::start_in(tempfile::tempdir().unwrap(), host_keys, serve_args)
    }

    /// [`Rig::start`] with the lead server in `lead_dir`.
    fn start_in(
        lead_dir: tempfile::TempDir,
        host_keys: impl FnOnce(&TestHost) -> String,
        serve_args: &[&str],
    ) -> Rig {
        let lead = TestLead::new();
        let host = TestHost::start_with_env(HostSetup::default(), OFFLINE_ENV);
        lead.trust(&host);
        lead.add_host("box", &host);
        host.give_teamlead();
        let work = host.make_dir("work");
        let host_keys = host_keys(&host);
        let config = std::fs::read_to_string(lead.home.config()).unwrap();
        let config = config.replace(
            "[hosts.box]\n",
            &format!("[hosts.box]\ndir = \"~/work\"\n{host_keys}"),
        );
        std::fs::write(lead.home.config(), config).unwrap();
        let model = ModelServer::start(Vec::new());
        let mut cmd = lead.std_cmd();
        cmd.args(["serve", "--team", TEAM, "--backend", "in-process"])
            .args(serve_args)
            .env("TEAMLEAD_LEAD_GRACE_MS", GRACE_MS.to_string())
            .env("ANTHROPIC_BASE_URL", model.base_url())
            .env("ANTHROPIC_API_KEY", SECRET)
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("OPENAI_BASE_URL")
            .env_remove("OPENAI_API_KEY")
            .env_remove("TEAMLEAD_PROVIDER")
            .env_remove("TEAMLEAD_MODEL")
            .current_dir(lead_dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let serve = Serve(cmd.spawn().unwrap());
        let rig = Rig {
            lead,
            host,
            model,
            serve: Some(serve),
            work,
            lead_dir,
        };
        wait_for(
            "the lead server answers",
            Duration::from_secs(30),
            || rig.ctl(&["status"]).status.success(),
            || rig.log_tail(),
        );
        rig
    }

    fn ctl(&self, args: &[&str]) -> std::process::Output {
        let mut full = vec!["ctl", TEAM];
        full.extend_from_slice(args);
        self.lead
            .cmd()
            .args(&full)
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap()
    }

    fn ctl_ok(&self, args: &[&str]) -> String {
        let out = self.ctl(args);
        assert!(
            out.status.success(),
            "ctl {args:?}: {}\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            self.explain()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The team's story (`ctl events --json`), one event each.
    fn events(&self) -> Vec<serde_json::Value> {
        let out = self.ctl(&["--json", "events"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The texts of the messages `name` sent the lead.
    fn mail_from(&self, name: &str) -> Vec<String> {
        self.events()
            .iter()
            .filter(|e| e["kind"] == "message" && e["from"] == name && e["to"] == "team-lead")
            .filter_map(|e| e["text"].as_str().map(str::to_string))
            .collect()
    }

    /// Waits until `name` has sent the lead a message with `needle` (its events at the lead).
    fn wait_mail(&self, what: &str, within: Duration, name: &str, needle: &str) {
        wait_for(
            what,
            within,
            || self.mail_from(name).iter().any(|t| t.contains(needle)),
            || self.explain(),
        );
    }

    /// How many times `name` went idle.
    fn idles(&self, name: &str) -> usize {
        self.events()
            .iter()
            .filter(|e| e["kind"] == "teammate" && e["name"] == name && e["status"] == "idle")
            .count()
    }

    /// The permission requests waiting at the lead: `(id, teammate, tool)`.
    fn pending(&self) -> Vec<(u64, String, String)> {
        let out = self.ctl(&["--json", "pending"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["permissions"]
            .as_array()
            .map(|ps| {
                ps.iter()
                    .map(|p| {
                        (
                            p["id"].as_u64().unwrap_or(0),
                            format!(
                                "{}{}",
                                p["teammate"].as_str().unwrap_or(""),
                                p["host"]
                                    .as_str()
                                    .map(|h| format!(" · {h}"))
                                    .unwrap_or_default()
                            ),
                            p["tool"].as_str().unwrap_or("").to_string(),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Waits until `name` (on the host) asks for `tool` in the lead's queue; the request's id.
    fn asked(&self, what: &str, name: &str, tool: &str) -> u64 {
        let who = format!("{name} · box");
        let mut found = None;
        wait_for(
            &format!("{what} in the lead's queue"),
            Duration::from_secs(60),
            || {
                found = self
                    .pending()
                    .into_iter()
                    .find(|(_, w, t)| *w == who && t == tool)
                    .map(|(id, _, _)| id);
                found.is_some()
            },
            || format!("{}\npane:\n{}", self.explain(), self.pane(name)),
        );
        found.unwrap_or_default()
    }

    /// `name`'s entry of `ctl status --json`.
    fn status_of(&self, name: &str) -> serde_json::Value {
        let out = self.ctl(&["status", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["teammates"]
            .as_array()
            .and_then(|ts| ts.iter().find(|t| t["name"] == name).cloned())
            .unwrap_or_default()
    }

    /// The member entry of `name` in the lead's team file.
    fn member(&self, name: &str) -> serde_json::Value {
        let path = self.lead.home.home().join("teams/crew/config.json");
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(path).unwrap_or_default()).unwrap_or_default();
        v["members"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["name"] == name).cloned())
            .unwrap_or_default()
    }

    fn log_tail(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.lead.home.logs())
            .into_iter()
            .flatten()
            .flatten()
        {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            out += &format!(
                "\n--- {}:\n{}",
                entry.path().display(),
                lines[lines.len().saturating_sub(40)..].join("\n")
            );
        }
        out
    }

    /// The host's screen of `name`'s pane.
    fn pane(&self, name: &str) -> String {
        self.host_tmux(&format!("capture-pane -p -t ={name}:"))
    }

    /// `tmux ARGS` (words for `sh`) on the team's server on the host, as its user; what it
    /// printed.
    fn host_tmux(&self, args: &str) -> String {
        let out = std::process::Command::new("ip")
            .args(["netns", "exec", &self.host.ns, "su", "-s", "/bin/sh"])
            .arg(&self.host.user)
            .arg("-c")
            .arg(format!("tmux -L teamlead-{TEAM} {args} 2>&1"))
            .output();
        out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    fn explain(&self) -> String {
        format!(
            "lead mail: {:?}\nmodel: {}\nhost processes: {:?}{}{}",
            self.lead_mail_all(),
            self.model.summary(),
            host_processes(&self.host),
            self.log_tail(),
            self.host_tail()
        )
    }

    /// The host's copy of the lead's inbox and the ends of the logs there.
    fn host_tail(&self) -> String {
        let mut out = format!(
            "\n--- host's team-lead inbox: {}",
            std::fs::read_to_string(
                self.host
                    .home()
                    .join(".claude/teams/crew/inboxes/team-lead.json")
            )
            .unwrap_or_default()
        );
        let mut stack = vec![self.host.home().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.to_string_lossy().contains(".log") {
                    let text = std::fs::read_to_string(&path).unwrap_or_default();
                    let lines: Vec<&str> = text.lines().collect();
                    out += &format!(
                        "\n--- host {}:\n{}",
                        path.display(),
                        lines[lines.len().saturating_sub(30)..].join("\n")
                    );
                }
            }
        }
        out
    }

    fn lead_mail_all(&self) -> Vec<String> {
        self.events()
            .iter()
            .map(|e| e.to_string().chars().take(300).collect())
            .collect()
    }

    /// Every model request carried the lead's key (added by the lead's end of the forward);
    /// the host's HOME and its user's processes never held it.
    fn assert_key_stayed_home(&self) {
        let requests = self.model.requests();
        assert!(!requests.is_empty(), "the model was reached");
        for r in &requests {
            assert_eq!(
                r.header("x-api-key"),
                Some(SECRET),
                "a request without the lead's key"
            );
        }
        let found = grep_tree(self.host.home(), SECRET);
        assert!(found.is_empty(), "the key is on the host: {found:?}");
        for pid in self.host.user_processes() {
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&env).contains(SECRET)
                    && !String::from_utf8_lossy(&cmdline).contains(SECRET),
                "process {pid} of the host's user holds the key"
            );
        }
    }

    /// The lead server is killed (SIGKILL): its relay on the host ends, and the remote
    /// `claude`'s guard there stops it once the lead has been gone for the grace, and the
    /// team's tmux server ends with its last pane. How long that took.
    fn lead_dies(mut self, label: &str) -> Duration {
        assert!(
            host_processes(&self.host)
                .iter()
                .any(|p| p.contains(" guard --agent-id mate@crew -- ")),
            "[{label}] the remote claude runs behind the host's guard: {:?}",
            host_processes(&self.host)
        );
        if let Some(mut serve) = self.serve.take() {
            serve.kill();
        }
        let killed = Instant::now();
        wait_for(
            &format!("[{label}] the remote claude reaped after its lead died"),
            Duration::from_millis(GRACE_MS + 30_000),
            || {
                !host_processes(&self.host)
                    .iter()
                    .any(|p| p.contains("tmux") || p.contains("mate@crew"))
            },
            || format!("{:?}", host_processes(&self.host)),
        );
        killed.elapsed()
    }

    fn quit(mut self) {
        self.ctl_ok(&["/quit"]);
        if let Some(mut serve) = self.serve.take() {
            wait_for(
                "the lead server exits",
                Duration::from_secs(30),
                || serve.0.try_wait().ok().flatten().is_some(),
                String::new,
            );
        }
        wait_for(
            "nothing of the team left on the host",
            Duration::from_secs(20),
            || {
                !host_processes(&self.host)
                    .iter()
                    .any(|p| p.contains("tmux") || p.contains("claude") || p.contains("teammate"))
            },
            || format!("{:?}", host_processes(&self.host)),
        );
    }
}

/// The client of the matrix as the host's `claude` (a wrapper in the host's HOME for the node
/// one, readable and runnable by the host's user), and the lead's model forwarded to it: the
/// lines of its `[hosts.NAME]`.
pub(crate) fn claude_host_keys(host: &TestHost, client: &Client) -> String {
    let bin = host.make_dir("bin");
    let launcher = client.launcher(&bin);
    if launcher.starts_with(&bin) {
        std::os::unix::fs::chown(&launcher, Some(host.uid), None).unwrap();
    }
    format!(
        "forward-model = true\nclaude = \"{}\"\n",
        launcher.display()
    )
}

/// `scenario` with the client `label` of the matrix, when this runs as root (a test host needs
/// it) and the client is installed.
fn as_root_with(label: &str, scenario: fn(&Client)) {
    if skip_unless_root() {
        return;
    }
    if let Some(client) = clients_or_skip(label) {
        scenario(&client);
    }
}

/// Files under `root` whose bytes contain `needle`.
fn grep_tree(root: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && std::fs::read(&path)
                    .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

/// The host's HOME made ready for Claude Code offline: onboarding done and the working
/// directory trusted (no key: the forward carries the lead's).
pub(crate) fn prepare_claude_home(host: &TestHost, work: &Path) {
    let project = serde_json::json!({"hasTrustDialogAccepted": true,
        "hasCompletedProjectOnboarding": true, "allowedTools": []});
    let mut projects = serde_json::Map::new();
    projects.insert(work.to_string_lossy().into_owned(), project);
    let doc = serde_json::json!({"hasCompletedOnboarding": true, "theme": "dark",
        "numStartups": 5, "projects": projects});
    host.write_file(".claude.json", &doc.to_string());
    host.make_dir(".claude");
}

fn claude_on_a_host(client: &Client) {
    let label = client.label;
    let rig = Rig::start(
        |host| {
            prepare_claude_home(host, &host.home().join("work"));
            claude_host_keys(host, client)
        },
        &[],
    );

    // `hosts check` names the host's claude and its version, and what goes there.
    let check = rig
        .lead
        .cmd()
        .args(["hosts", "check", "box"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    let version = if label == "2.1.45" {
        "2.1.45"
    } else {
        "(Claude Code)"
    };
    assert!(
        said.lines()
            .any(|l| l.starts_with("ok    claude: ") && l.contains(version)),
        "[{label}] {said}"
    );
    assert!(
        said.contains("Claude Code teammates reach the model through the lead too"),
        "[{label}] {said}"
    );
    assert!(check.status.success(), "[{label}] {said}");

    let ran = rig.work.join("ran.txt");
    let wrote = rig.work.join("wrote.txt");
    rig.model
        .add(Rule::on("HC-IDLE", Act::Text("ready".into())));
    rig.model.add(Rule::seq(
        "HC-BASH",
        vec![
            Act::Bash {
                command: format!("echo ran-as-$(id -un) > {}", ran.display()),
                description: "write ran.txt".into(),
            },
            Act::Text("bash done".into()),
        ],
    ));
    rig.model.add(Rule::on(
        "HC-PING",
        Act::SendToLead {
            summary: "pong".into(),
            message: "HC-PONG from the host".into(),
        },
    ));
    rig.model.add(Rule::seq(
        "HC-WRITE",
        vec![
            Act::Write {
                path: wrote.display().to_string(),
                content: "w\n".into(),
            },
            Act::Text("write done".into()),
        ],
    ));

    // Spawn to first idle.
    let started = Instant::now();
    let out = rig
        .ctl_ok(&["/spawn mate --host box --agent claude --mode acceptEdits HC-IDLE start here"]);
    assert!(out.contains("Spawned mate"), "[{label}] {out}");
    let took = wait_for(
        &format!("[{label}] the remote claude's first idle"),
        Duration::from_secs(90),
        || rig.idles("mate") >= 1,
        || format!("{}\npane:\n{}", rig.explain(), rig.pane("mate")),
    );
    eprintln!(
        "[{label}] remote claude: spawn to first idle {:?} (ctl returned after {:?})",
        started.elapsed(),
        started.elapsed() - took
    );
    assert!(
        host_processes(&rig.host)
            .iter()
            .any(|p| p.contains("--agent-id mate@crew")),
        "[{label}] claude runs as the host's user"
    );

    // A permission request from the host, answered from the lead's queue.
    rig.ctl_ok(&["/msg @mate HC-BASH please"]);
    let id = rig.asked(&format!("[{label}] the Bash request"), "mate", "Bash");
    assert!(!ran.exists(), "[{label}] the command waited for its answer");
    rig.ctl_ok(&["approve", &id.to_string()]);
    wait_for(
        &format!("[{label}] the approved command ran on the host"),
        Duration::from_secs(60),
        || {
            std::fs::read_to_string(&ran)
                .is_ok_and(|t| t.trim() == format!("ran-as-{}", rig.host.user))
        },
        || format!("{}\npane:\n{}", rig.explain(), rig.pane("mate")),
    );

    // Its final answer (newer clients put it in their idle notification, which crosses the
    // link like any frame) is shown at the lead as its turn.
    if label != "2.1.45" {
        rig.wait_mail(
            &format!("[{label}] the remote claude's final answer at the lead"),
            Duration::from_secs(60),
            "mate",
            "bash done",
        );
    }

    // A message round trip.
    rig.ctl_ok(&["/msg @mate HC-PING"]);
    rig.wait_mail(
        &format!("[{label}] the answer to the message at the lead"),
        Duration::from_secs(60),
        "mate",
        "HC-PONG",
    );

    // The task list across the link: a task the lead gives it, and a free one it claims
    // itself, both marked in progress and completed with Claude Code's own task tool on the
    // host's copy of the list, and shown completed at the lead with their owner.
    let task_update = |id: &str, input: serde_json::Value| {
        let mut input = input;
        input["taskId"] = serde_json::json!(id);
        Act::Tool {
            name: "TaskUpdate".into(),
            input,
        }
    };
    let task_work = |id: &str, file: &str| {
        vec![
            task_update(
                id,
                serde_json::json!({"status": "in_progress", "owner": "mate"}),
            ),
            Act::Write {
                path: rig.work.join(file).display().to_string(),
                content: format!("task {id}\n"),
            },
            task_update(id, serde_json::json!({"status": "completed"})),
            Act::Text(format!("task {id} done")),
        ]
    };
    // Once each: a claim that names its owner makes Claude Code send that owner (itself) an
    // assignment of the task, whose subject names the rule again.
    rig.model
        .add(Rule::seq("HC-TASK-GIVEN", task_work("1", "given.txt")).once());
    rig.model
        .add(Rule::seq("HC-TASK-FREE", task_work("2", "claimed.txt")).once());
    let said = rig.ctl_ok(&["/task add HC-TASK-GIVEN build the thing"]);
    assert!(said.contains("#1"), "[{label}] {said}");
    rig.ctl_ok(&["/task assign 1 mate"]);
    let said = rig.ctl_ok(&["/task add HC-TASK-FREE test the thing"]);
    assert!(said.contains("#2"), "[{label}] {said}");
    // The next message once the first task is done (one turn answers one rule).
    wait_for(
        &format!("[{label}] the given task completed at the lead"),
        Duration::from_secs(90),
        || {
            lead_tasks(&rig.lead)
                .get("1")
                .is_some_and(|(s, _, _)| s == "completed")
        },
        || {
            format!(
                "{:?}\n{}\npane:\n{}",
                lead_tasks(&rig.lead),
                rig.explain(),
                rig.pane("mate")
            )
        },
    );
    rig.ctl_ok(&["/msg @mate HC-TASK-FREE is free: claim task 2 and do it"]);
    wait_for(
        &format!("[{label}] both tasks completed at the lead"),
        Duration::from_secs(90),
        || {
            let tasks = lead_tasks(&rig.lead);
            ["1", "2"].iter().all(|id| {
                tasks
                    .get(*id)
                    .is_some_and(|(s, o, _)| s == "completed" && o == "mate")
            })
        },
        || {
            format!(
                "{:?}\n{}\npane:\n{}",
                lead_tasks(&rig.lead),
                rig.explain(),
                rig.pane("mate")
            )
        },
    );
    assert!(
        rig.work.join("given.txt").exists() && rig.work.join("claimed.txt").exists(),
        "[{label}] the work of both tasks was done on the host"
    );

    // Its usage and cost, from its transcript on the host (read there by the relay): every
    // answer of the scripted model counts 1200 input and 40 output tokens.
    let mut usage = serde_json::Value::Null;
    wait_for(
        &format!("[{label}] the remote claude's usage at the lead"),
        Duration::from_secs(30),
        || {
            usage = rig.status_of("mate");
            usage["usage"]["output_tokens"].as_u64().unwrap_or(0) >= 80
                && usage["usage"]["turns"].as_u64().unwrap_or(0) >= 2
        },
        || format!("{}\n{}", rig.status_of("mate"), rig.explain()),
    );
    assert!(
        usage["usage"]["input_tokens"].as_u64().unwrap_or(0) >= 2400,
        "[{label}] {usage}"
    );
    assert!(usage["model"].is_string(), "[{label}] its model: {usage}");
    eprintln!(
        "[{label}] the remote claude's usage at the lead: {}",
        usage["usage"]
    );

    // The ledger's receipts of what the lead sent it: read on the host, they go past
    // delivered (the relay's read marks).
    let receipts = || -> Vec<String> {
        rig.events()
            .iter()
            .filter(|e| e["kind"] == "receipt" && e["to"] == "mate")
            .map(|e| e["state"].as_str().unwrap_or("").to_string())
            .collect()
    };
    wait_for(
        &format!("[{label}] a receipt of mate's messages past delivered"),
        Duration::from_secs(15),
        || {
            receipts()
                .iter()
                .any(|s| s == "read" || s == "turn started")
        },
        || format!("{:?}", receipts()),
    );
    eprintln!(
        "[{label}] receipts of the messages to mate: {:?}",
        receipts()
    );

    // Tightening: acceptEdits → default, by its own mode key over ssh; confirmed by the lead.
    let idles = rig.idles("mate");
    wait_for(
        &format!("[{label}] mate idle before its mode changes"),
        Duration::from_secs(30),
        || rig.idles("mate") >= idles && rig.pending().is_empty(),
        || rig.explain(),
    );
    rig.ctl_ok(&["/mode mate default"]);
    wait_for(
        &format!("[{label}] the lead confirms mate in default mode"),
        Duration::from_secs(60),
        || rig.member("mate")["mode"] == "default",
        || format!("{}\npane:\n{}", rig.explain(), rig.pane("mate")),
    );
    let pane = rig.pane("mate");
    assert!(
        !pane.contains("accept edits on"),
        "[{label}] the pane still shows acceptEdits:\n{pane}"
    );
    // In default mode a Write asks (in acceptEdits it would not).
    rig.ctl_ok(&["/msg @mate HC-WRITE now"]);
    let id = rig.asked(
        &format!("[{label}] the Write in default mode"),
        "mate",
        "Write",
    );
    rig.ctl_ok(&["approve", &id.to_string()]);
    wait_for(
        &format!("[{label}] the approved Write ran on the host"),
        Duration::from_secs(60),
        || wrote.exists(),
        || rig.explain(),
    );

    rig.assert_key_stayed_home();
    // Reaping after the lead dies: not before the grace, and nothing of it left there.
    let reaped = rig.lead_dies(label);
    eprintln!(
        "[{label}] remote claude reaped {reaped:?} after its lead was killed (grace {GRACE_MS} ms)"
    );
    assert!(
        reaped >= Duration::from_millis(GRACE_MS - 1_000),
        "[{label}] reaped before the grace: {reaped:?}"
    );
}

#[test]
fn a_claude_2_1_45_teammate_on_a_host() {
    as_root_with("2.1.45", claude_on_a_host);
}

#[test]
fn a_claude_latest_teammate_on_a_host() {
    as_root_with("latest", claude_on_a_host);
}

/// teamlead's own `llm` teammate on a host answers through the forwarded endpoint; the host
/// never has the key.
#[test]
fn an_llm_teammate_on_a_host_reaches_the_model_through_the_lead() {
    if skip_unless_root() {
        return;
    }
    let rig = Rig::start(|_| String::new(), &["--engine", "llm"]);
    rig.model.add(Rule::seq(
        "HL-ASK",
        vec![
            Act::SendToLead {
                summary: "the answer".into(),
                message: "HL-ANSWER-42 from the host".into(),
            },
            Act::Text("told the lead".into()),
        ],
    ));
    // A host without Claude Code: `hosts check` says so without failing, and `--agent claude`
    // there is refused with one line, nothing made.
    let check = rig
        .lead
        .cmd()
        .args(["hosts", "check", "box"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{said}");
    assert!(said.contains("ok    claude: none on the host"), "{said}");
    assert!(
        said.contains("credentials: none copied")
            && said.contains("the host's own Claude Code login"),
        "{said}"
    );
    let refused = rig.ctl(&["/spawn nope --host box --agent claude hello"]);
    let told = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        String::from_utf8_lossy(&refused.stderr)
    );
    assert!(
        told.contains("no Claude Code on box: install it there"),
        "{told}"
    );
    assert!(rig.member("nope").is_null(), "no member left behind");
    assert!(
        !host_processes(&rig.host)
            .iter()
            .any(|p| p.contains("nope@crew")),
        "nothing started on the host"
    );
    let out = rig.ctl_ok(&["/spawn thinker --host box HL-ASK what is the answer"]);
    assert!(out.contains("Spawned thinker"), "{out}");
    rig.wait_mail(
        "the llm teammate's answer at the lead",
        Duration::from_secs(60),
        "thinker",
        "HL-ANSWER-42",
    );
    // The host's ssh master dies: the next one (the link makes it) is asked for the same
    // forward, and the teammate reaches the model again at the address it was given.
    rig.model.add(Rule::seq(
        "HL-AGAIN",
        vec![
            Act::SendToLead {
                summary: "again".into(),
                message: "HL-SECOND-43 after a new master".into(),
            },
            Act::Text("told the lead again".into()),
        ],
    ));
    let old_masters = rig.lead.masters();
    assert!(!old_masters.is_empty(), "a master runs");
    for pid in &old_masters {
        // SAFETY: an ssh master this test's lead started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    wait_for(
        "a new master",
        Duration::from_secs(30),
        || {
            let now = rig.lead.masters();
            !now.is_empty() && now.iter().all(|p| !old_masters.contains(p))
        },
        || format!("{:?}", rig.lead.masters()),
    );
    rig.ctl_ok(&["/msg @thinker HL-AGAIN please"]);
    rig.wait_mail(
        "the llm teammate's second answer, through the new master's forward",
        Duration::from_secs(90),
        "thinker",
        "HL-SECOND-43",
    );

    // The host's teammate was pointed at the forward, not at the lead's loopback.
    let teammate = host_processes(&rig.host)
        .into_iter()
        .find(|p| p.contains("thinker@crew"))
        .unwrap_or_default();
    assert!(teammate.contains("--engine llm"), "{teammate}");
    rig.assert_key_stayed_home();
    rig.quit();
}

/// A `claude` teammate in a worktree made on its host (beside the repository the host's user
/// trusted in Claude Code, outside that folder), per client of the matrix: it starts, or
/// stops at its folder-trust dialog and is shown waiting there (never working) until the
/// person answers in its pane; it then works in the worktree, its commit asks in the lead's
/// queue, and its branch is reviewed and merged at the lead like any remote teammate's.
#[test]
fn a_claude_2_1_45_teammate_in_a_worktree_on_a_host() {
    as_root_with("2.1.45", claude_in_a_worktree_on_a_host);
}

#[test]
fn a_claude_latest_teammate_in_a_worktree_on_a_host() {
    as_root_with("latest", claude_in_a_worktree_on_a_host);
}

fn claude_in_a_worktree_on_a_host(client: &Client) {
    let label = client.label;
    let lead_dir = tempfile::tempdir().unwrap();
    let repo = lead_dir.path().to_path_buf();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.name", "Lead"]);
    git(&repo, &["config", "user.email", "lead@example.org"]);
    std::fs::write(repo.join("README"), "the project\n").unwrap();
    git(&repo, &["add", "README"]);
    git(&repo, &["commit", "-qm", "start"]);
    let rig = Rig::start_in(
        lead_dir,
        |host| {
            // The host's `dir` is a clone of the lead's repository, and the folder its user
            // trusted in Claude Code.
            let work = host.home().join("work");
            std::fs::remove_dir_all(&work).ok();
            git(
                Path::new("/"),
                &[
                    "clone",
                    "-q",
                    &repo.display().to_string(),
                    &work.display().to_string(),
                ],
            );
            git(&work, &["config", "user.name", "Host"]);
            git(&work, &["config", "user.email", "host@example.org"]);
            chown_tree(&work, host.uid);
            prepare_claude_home(host, &work);
            claude_host_keys(host, client)
        },
        &[],
    );
    let tree = rig.host.home().join("work-worktrees/crew-cw");
    rig.model
        .add(Rule::on("CW-IDLE", Act::Text("ready".into())));
    rig.model.add(Rule::seq(
        "CW-WORK",
        vec![
            Act::Write {
                path: tree.join("cw.txt").display().to_string(),
                content: "from the claude teammate\n".into(),
            },
            Act::Bash {
                command: "git add cw.txt && git commit -qm 'cw work'".into(),
                description: "commit the work".into(),
            },
            Act::Text("committed".into()),
        ],
    ));
    let out = rig.ctl_ok(&[
        "/spawn cw --host box --agent claude --worktree --mode acceptEdits CW-IDLE wait here",
    ]);
    assert!(out.contains("Spawned cw"), "{out}");
    // Either the client starts its first turn, or it stops at its folder-trust dialog (a
    // client that trusts only the folders under a trusted one): then the lead shows it waiting
    // on that prompt, never working, says what to do, and the person answers in its pane.
    let on_prompt = || {
        let status = rig.status_of("cw");
        status["status"] == "waiting"
            && status["detail"]
                .as_str()
                .is_some_and(|d| d.contains("on its client's prompt"))
    };
    wait_for(
        &format!("[{label}] cw's first idle, or cw shown on its client's prompt"),
        Duration::from_secs(90),
        || rig.idles("cw") >= 1 || on_prompt(),
        || {
            format!(
                "{}\n{}\npane:\n{}",
                rig.status_of("cw"),
                rig.explain(),
                rig.pane("cw")
            )
        },
    );
    if rig.idles("cw") == 0 {
        eprintln!("[{label}] the worktree stopped at the client's trust dialog");
        let notes: Vec<String> = rig
            .events()
            .iter()
            .filter(|e| e["kind"] == "note")
            .filter_map(|e| e["text"].as_str().map(str::to_string))
            .collect();
        assert!(
            notes
                .iter()
                .any(|t| t.contains("cw waits on Claude Code's own prompt in its pane")),
            "[{label}] {notes:?}"
        );
        let chosen = |pane: &str| {
            pane.lines()
                .any(|l| l.contains('❯') && l.contains("Yes, I trust this folder"))
        };
        for _ in 0..3 {
            if chosen(&rig.pane("cw")) {
                break;
            }
            let before = rig.pane("cw");
            rig.host_tmux("send-keys -t =cw: Down");
            wait_for(
                "the pane to move its choice",
                Duration::from_secs(10),
                || rig.pane("cw") != before,
                || rig.pane("cw"),
            );
        }
        assert!(chosen(&rig.pane("cw")), "{}", rig.pane("cw"));
        rig.host_tmux("send-keys -t =cw: Enter");
        wait_for(
            &format!("[{label}] cw's first idle after the prompt"),
            Duration::from_secs(90),
            || rig.idles("cw") >= 1,
            || format!("{}\npane:\n{}", rig.explain(), rig.pane("cw")),
        );
    } else {
        eprintln!("[{label}] the worktree was trusted: no dialog");
    }
    rig.ctl_ok(&["/msg @cw CW-WORK now"]);
    let id = rig.asked(&format!("[{label}] cw's commit"), "cw", "Bash");
    rig.ctl_ok(&["approve", &id.to_string()]);
    wait_for(
        "cw's commit on its branch on the host",
        Duration::from_secs(60),
        || git(&tree, &["log", "-1", "--format=%s"]) == "cw work",
        || rig.explain(),
    );
    let review: serde_json::Value =
        serde_json::from_str(&rig.ctl_ok(&["review", "cw", "--json"])).unwrap();
    assert_eq!(review["ok"], true, "{review}");
    assert_eq!(review["branch"], "teamlead/crew/cw", "{review}");
    let said = rig.ctl_ok(&["merge", "cw", "--squash"]);
    assert!(said.contains("teamlead/crew/cw"), "{said}");
    assert_eq!(
        git(rig.lead_dir.path(), &["show", "HEAD:cw.txt"]),
        "from the claude teammate"
    );
    rig.quit();
}
