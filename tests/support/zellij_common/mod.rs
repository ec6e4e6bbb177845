//! A private zellij for the tests that run the real one: a socket directory, HOME, config
//! (no first-run tips or release notes) and temporary directory of its own, given to zellij and
//! the lead as environment (never to the test process); what a user would ask zellij about
//! (sessions, panes, screens, clients, servers); every session and server in it removed on drop.

#![allow(dead_code)]

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::panes_common::{Workspace, processes, sigkill};
use teamlead::backend::terminals::zellij::{ListedPane, parse_panes};

/// How long one call of the zellij CLI may take.
const CALL_LIMIT: Duration = Duration::from_secs(10);

/// A private socket directory, home, config and temporary directory for zellij: the lead gets
/// them in its environment, this test's own calls too; every session and server in it is
/// removed on drop.
pub struct PrivateZellij {
    pub dir: tempfile::TempDir,
}

impl PrivateZellij {
    pub fn new() -> PrivateZellij {
        let installed = Command::new("zellij")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(
            installed,
            "zellij is not installed: .ci/run installs it (cargo install --locked zellij)"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sock")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let config = dir.path().join("config");
        std::fs::create_dir_all(&config).unwrap();
        // No first-run tips or release notes over the panes of an attached client.
        std::fs::write(
            config.join("config.kdl"),
            "show_startup_tips false\nshow_release_notes false\n",
        )
        .unwrap();
        PrivateZellij { dir }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The variables that keep zellij (and the lead) in this directory.
    pub fn env(&self) -> Vec<(String, String)> {
        let p = |name: &str| self.path(name).to_string_lossy().into_owned();
        vec![
            ("ZELLIJ_SOCKET_DIR".into(), p("sock")),
            ("ZELLIJ_CONFIG_DIR".into(), p("config")),
            ("HOME".into(), p("")),
            ("XDG_CONFIG_HOME".into(), p("xdg-config")),
            ("XDG_CACHE_HOME".into(), p("cache")),
            ("XDG_DATA_HOME".into(), p("data")),
            // Zellij's log directory goes under the temporary directory.
            ("TMPDIR".into(), p("tmp")),
        ]
    }

    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.envs(self.env())
            .env_remove("ZELLIJ")
            .env_remove("ZELLIJ_SESSION_NAME")
            .env_remove("ZELLIJ_PANE_ID");
        cmd
    }

    /// Runs `zellij ARGS`; a call that has not ended within [`CALL_LIMIT`] is killed and
    /// reads as a failure (the CLI has been seen spinning for ever on a session whose server
    /// was gone).
    pub fn zellij(&self, args: &[&str]) -> Output {
        let mut child = self
            .command("zellij")
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run zellij");
        // Read both pipes as the CLI writes, so a long answer never blocks it.
        let drain = |pipe: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                if let Some(mut pipe) = pipe {
                    let _ = pipe.read_to_end(&mut bytes);
                }
                bytes
            })
        };
        let stdout = drain(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let stderr = drain(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let deadline = Instant::now() + CALL_LIMIT;
        let status = loop {
            if let Some(status) = child.try_wait().expect("wait for zellij") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                break child.wait().expect("wait for zellij");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        Output {
            status,
            stdout: stdout.join().unwrap_or_default(),
            stderr: stderr.join().unwrap_or_default(),
        }
    }

    /// Every session zellij knows here (running, or kept to be resurrected).
    pub fn sessions(&self) -> Vec<String> {
        String::from_utf8_lossy(
            &self
                .zellij(&["list-sessions", "--short", "--no-formatting"])
                .stdout,
        )
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
    }

    /// The panes of a running session (`None` when it does not answer). Asked up to three
    /// times: the CLI now and then exits 0 having printed nothing.
    pub fn panes(&self, session: &str) -> Option<Vec<ListedPane>> {
        (0..3).find_map(|_| {
            let out = self.zellij(&["--session", session, "action", "list-panes", "--json"]);
            out.status.success().then_some(())?;
            parse_panes(&String::from_utf8_lossy(&out.stdout))
        })
    }

    /// The terminal panes of a session as (id, title), in the order zellij lists them.
    pub fn terminals(&self, session: &str) -> Vec<(String, String)> {
        self.panes(session)
            .unwrap_or_default()
            .into_iter()
            .filter(|p| !p.is_plugin)
            .map(|p| (p.pane_id(), p.title))
            .collect()
    }

    pub fn pane(&self, session: &str, id: &str) -> Option<ListedPane> {
        self.panes(session)?.into_iter().find(|p| p.pane_id() == id)
    }

    /// Are the floating panes of a tab shown?
    pub fn floating_visible(&self, session: &str, tab: u32) -> Option<bool> {
        let out = self.zellij(&[
            "--session",
            session,
            "action",
            "list-tabs",
            "--json",
            "--state",
        ]);
        let tabs: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).ok()?;
        tabs.iter()
            .find(|t| t["tab_id"].as_u64() == Some(u64::from(tab)))
            .and_then(|t| t["are_floating_panes_visible"].as_bool())
    }

    /// What `zellij ARGS` printed, asked up to three times while it prints nothing: the CLI
    /// now and then exits 0 having printed nothing, which must not read as a blank pane or a
    /// session without clients.
    fn answer(&self, args: &[&str]) -> String {
        let mut text = String::new();
        for _ in 0..3 {
            text = String::from_utf8_lossy(&self.zellij(args).stdout).into_owned();
            if !text.trim().is_empty() {
                break;
            }
        }
        text
    }

    /// What a pane shows.
    pub fn screen(&self, session: &str, pane: &str) -> String {
        self.answer(&[
            "--session",
            session,
            "action",
            "dump-screen",
            "--pane-id",
            pane,
        ])
    }

    /// How many clients are attached to a session.
    pub fn clients(&self, session: &str) -> usize {
        self.answer(&["--session", session, "action", "list-clients"])
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .count()
    }

    /// The pane each attached client has its focus on (`list-clients`), in client order.
    /// Focus is per client: `is_focused` of `list-panes` is true for a pane any client (or a
    /// past CLI call) focused, so it cannot say where a person's keys go.
    pub fn client_panes(&self, session: &str) -> Vec<String> {
        self.answer(&["--session", session, "action", "list-clients"])
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().nth(1).map(str::to_string))
            .collect()
    }

    /// The zellij server processes of this socket directory.
    pub fn servers(&self) -> Vec<(u32, String)> {
        let sock = self.path("sock").to_string_lossy().into_owned();
        processes(|args| {
            args.iter().any(|a| a == "--server") && args.iter().any(|a| a.contains(&sock))
        })
    }

    /// `teamlead --home H clean --orphans` outside any multiplexer, with this zellij.
    pub fn clean_orphans(&self, ws: &Workspace) -> Output {
        self.command(env!("CARGO_BIN_EXE_teamlead"))
            .arg("--home")
            .arg(ws.home())
            .args(["clean", "--orphans"])
            .current_dir(ws.work())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .env_remove("TMUX")
            .env_remove("TMUX_PANE")
            .output()
            .expect("run teamlead clean --orphans")
    }
}

impl Drop for PrivateZellij {
    fn drop(&mut self) {
        for session in self.sessions() {
            self.zellij(&["kill-session", &session]);
            self.zellij(&["delete-session", "--force", &session]);
        }
        for (pid, _) in self.servers() {
            sigkill(pid);
        }
    }
}
