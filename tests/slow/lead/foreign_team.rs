//! Teams of other leads are read-only: a team that looks like a live Claude Code lead's (its
//! `leadProcess.pid` runs, a teammate process carries `--parent-session-id <leadSessionId>`,
//! its lead's pane is open on the user's tmux server) is reported running by `inspect` (text
//! and `--json`), and `clean`, `clean --dry-run` and `clean --orphans` leave every byte of the
//! home as it was, inside tmux and outside. Once those processes and panes are gone it is
//! reported dead, and still never removed; a teamlead team is removed only once its lead is
//! provably dead (its lock free and no other lead holding its session). Real binary, private
//! tmux server, temporary homes; every process and server is gone at the end.

use crate::foreign_common;
use teamlead_test_support::tmux;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use foreign_common::{Holder, claude_team, now_ms, tree, write_team_dir};
use tmux::TestTmux;

/// The home, the log directory, the lead's working directory and an empty tmux socket
/// directory (so `clean --orphans` never sees this machine's other tmux servers).
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    fn new() -> Root {
        let dir = tempfile::tempdir().unwrap();
        for d in ["home", "logs", "work", "tmux"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        Root { dir }
    }
    fn path(&self, name: &str) -> PathBuf {
        // Canonical, as /proc/<pid>/cwd and tmux report it.
        self.dir.path().join(name).canonicalize().unwrap()
    }
    fn home(&self) -> PathBuf {
        self.path("home")
    }

    /// Runs the binary; `tmux` is `(TMUX, TMUX_PANE)` to run it inside tmux.
    fn run(&self, args: &[&str], tmux: Option<(&str, &str)>) -> Output {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_teamlead"));
        cmd.arg("--home")
            .arg(self.home())
            .args(args)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("TEAMLEAD_HOME")
            .env("NO_COLOR", "1")
            .env("TEAMLEAD_LOG_DIR", self.path("logs"))
            .env("TMUX_TMPDIR", self.path("tmux"));
        match tmux {
            Some((tmux, pane)) => cmd.env("TMUX", tmux).env("TMUX_PANE", pane),
            None => cmd.env_remove("TMUX").env_remove("TMUX_PANE"),
        };
        let out = cmd.output().expect("run teamlead");
        assert!(
            out.status.success(),
            "teamlead {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn stdout(&self, args: &[&str], tmux: Option<(&str, &str)>) -> String {
        String::from_utf8(self.run(args, tmux).stdout).unwrap()
    }

    fn json(&self, args: &[&str], tmux: Option<(&str, &str)>) -> serde_json::Value {
        serde_json::from_str(&self.stdout(args, tmux)).unwrap()
    }
}

/// A pane of the test server running `cat` in `cwd`.
fn pane_in(tmux: &TestTmux, cwd: &Path) -> String {
    tmux.run(&[
        "split-window",
        "-d",
        "-t",
        "main",
        "-c",
        &cwd.to_string_lossy(),
        "-P",
        "-F",
        "#{pane_id}",
        "--",
        "cat",
    ])
    .expect("a pane")
}

/// `TMUX` for a client of the test server.
fn tmux_env(tmux: &TestTmux) -> String {
    let pid = tmux.run(&["display-message", "-p", "#{pid}"]).unwrap();
    format!("{},{pid},0", tmux.socket_path().display())
}

fn team_row<'a>(home_doc: &'a serde_json::Value, team: &str) -> &'a serde_json::Value {
    home_doc["teams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == team)
        .unwrap_or_else(|| panic!("{team} in {home_doc}"))
}

/// inspect says the lead of `team` is running, in text and JSON, and names the evidence.
fn assert_running(root: &Root, team: &str, tmux: Option<(&str, &str)>, evidence: &str) {
    let doc = root.json(&["inspect", team, "--json"], tmux);
    assert_eq!(doc["lead_alive"], true, "{doc:#}");
    assert_eq!(doc["lead_status"], "alive", "{doc:#}");
    let all = doc["lead_evidence"].to_string();
    assert!(all.contains(evidence), "evidence {evidence:?} in {all}");
    let home_doc = root.json(&["inspect", "--json"], tmux);
    assert_eq!(
        team_row(&home_doc, team)["lead_alive"],
        true,
        "{home_doc:#}"
    );
    let text = root.stdout(&["inspect", team], tmux);
    assert!(
        text.contains(&format!("lead team-lead@{team}: running")),
        "{text}"
    );
}

/// clean in every form changes nothing in the home and removes nothing.
fn assert_clean_changes_nothing(root: &Root, tmux: Option<(&str, &str)>) {
    let before = tree(&root.home());
    for args in [
        &["clean", "--dry-run"][..],
        &["clean", "--orphans", "--dry-run"],
        &["clean"],
        &["clean", "--orphans"],
    ] {
        let out = root.stdout(args, tmux);
        assert!(
            out.lines()
                .all(|l| !l.starts_with("removed") && !l.starts_with("would remove")),
            "{args:?}: {out}"
        );
        assert!(out.contains("left alone: team cc-live"), "{args:?}: {out}");
        assert!(tree(&root.home()) == before, "{args:?} changed the home");
    }
}

#[test]
fn a_live_claude_code_team_is_running_and_never_touched_then_dead_and_still_kept() {
    let root = Root::new();
    let work = root.path("work");
    let tmux = TestTmux::start();
    let lead_pane = pane_in(&tmux, &work);
    let worker_pane = pane_in(&tmux, &work);
    let session = uuid::Uuid::new_v4().to_string();
    let mut lead = Holder::start(&work, &["claude-lead"]);
    let mut teammate = Holder::start(
        &work,
        &[
            "--agent-id",
            "worker@cc-live",
            "--parent-session-id",
            &session,
        ],
    );
    let claim = serde_json::json!({"pid": lead.pid(), "claimedAt": now_ms()});
    let config = claude_team(
        "cc-live",
        &session,
        &work,
        &lead_pane,
        &worker_pane,
        Some(claim),
    );
    write_team_dir(&root.home(), "cc-live", &config);
    // A second Claude Code team whose only sign of life is its lead's pane.
    let pane_session = uuid::Uuid::new_v4().to_string();
    let pane_only = claude_team("cc-pane", &pane_session, &work, &lead_pane, "%99", None);
    write_team_dir(&root.home(), "cc-pane", &pane_only);

    let inside_env = tmux_env(&tmux);
    let inside = Some((inside_env.as_str(), lead_pane.as_str()));
    for tmux_side in [None, inside] {
        assert_running(
            &root,
            "cc-live",
            tmux_side,
            &format!("leadProcess pid {}", lead.pid()),
        );
        assert_running(&root, "cc-live", tmux_side, "--parent-session-id");
        assert_clean_changes_nothing(&root, tmux_side);
    }
    assert_running(
        &root,
        "cc-live",
        inside,
        &format!("tmux pane {lead_pane} is open"),
    );
    assert_running(
        &root,
        "cc-pane",
        inside,
        &format!("tmux pane {lead_pane} is open"),
    );
    let doc = root.json(&["inspect", "cc-pane", "--json"], None);
    assert_eq!(
        doc["lead_status"], "unknown",
        "outside tmux its pane is not seen: {doc:#}"
    );
    assert_eq!(doc["lead_alive"], false);

    // The lead, its teammate and its pane go away: dead, and still left alone.
    lead.stop();
    teammate.stop();
    tmux.run(&["kill-pane", "-t", &lead_pane]).unwrap();
    for tmux_side in [None, inside] {
        let doc = root.json(&["inspect", "cc-live", "--json"], tmux_side);
        assert_eq!(doc["lead_alive"], false, "{doc:#}");
        assert_eq!(doc["lead_status"], "dead", "{doc:#}");
        assert!(
            doc["lead_evidence"].to_string().contains("is not running"),
            "{doc:#}"
        );
        let doc = root.json(&["inspect", "cc-pane", "--json"], tmux_side);
        assert_eq!(
            doc["lead_status"], "unknown",
            "no leadProcess: never provably dead"
        );
        let text = root.stdout(&["inspect", "cc-live"], tmux_side);
        assert!(
            text.contains("lead team-lead@cc-live: not running"),
            "{text}"
        );
        assert_clean_changes_nothing(&root, tmux_side);
    }
    drop(tmux);
}

#[test]
fn a_teamlead_team_is_removed_only_once_its_lead_is_provably_dead() {
    let root = Root::new();
    let work = root.path("work");
    let home = teamlead::store::Home::new(root.home());
    let file = teamlead::protocol::TeamFile::new("tl-own", None, &work.to_string_lossy());
    teamlead::store::create_team(&home, &file).unwrap();
    let session = file.lead_session_id.clone();
    let liveness = teamlead::store::LeadLiveness::acquire(&home, "tl-own").unwrap();
    // A Claude Code team next to it, whose lead is gone: it stays whatever happens.
    let gone = serde_json::json!({"pid": 999_999_999u64, "claimedAt": now_ms()});
    let cc = claude_team(
        "cc-gone",
        &uuid::Uuid::new_v4().to_string(),
        &work,
        "leader",
        "%1",
        Some(gone),
    );
    write_team_dir(&root.home(), "cc-gone", &cc);
    let cc_dir = root.home().join("teams/cc-gone");
    let cc_before = tree(&cc_dir);

    // The lead holds its lock: running, kept.
    let doc = root.json(&["inspect", "tl-own", "--json"], None);
    assert_eq!(doc["lead_status"], "alive", "{doc:#}");
    let out = root.stdout(&["clean", "--orphans"], None);
    assert!(
        out.contains("left alone: team tl-own: its lead is running"),
        "{out}"
    );
    assert!(
        out.contains("left alone: team cc-gone: not a teamlead team"),
        "{out}"
    );

    // The lock is free but another process holds the lead session (another lead took the team
    // over): still running, still kept.
    drop(liveness);
    let mut other_lead = Holder::start(&work, &["--session-id", &session]);
    let doc = root.json(&["inspect", "tl-own", "--json"], None);
    assert_eq!(doc["lead_status"], "alive", "{doc:#}");
    assert!(
        doc["lead_evidence"]
            .to_string()
            .contains(&format!("pid {}", other_lead.pid()))
    );
    let out = root.stdout(&["clean"], None);
    assert!(out.contains("nothing to clean"), "{out}");
    assert!(root.home().join("teams/tl-own/config.json").exists());

    // Nothing holds it any more; a leftover teammate of that lead does not make it alive.
    other_lead.stop();
    let _teammate = Holder::start(&work, &["--parent-session-id", &session]);
    let doc = root.json(&["inspect", "tl-own", "--json"], None);
    assert_eq!(doc["lead_status"], "dead", "{doc:#}");
    let before = tree(&root.home());
    let out = root.stdout(&["clean", "--dry-run"], None);
    assert!(out.contains("would remove: team tl-own"), "{out}");
    assert!(tree(&root.home()) == before, "--dry-run changed nothing");
    let out = root.stdout(&["clean"], None);
    assert!(out.contains("removed: team tl-own"), "{out}");
    assert!(!root.home().join("teams/tl-own").exists());
    assert!(!root.home().join("tasks/tl-own").exists());
    let doc = root.json(&["inspect", "cc-gone", "--json"], None);
    assert_eq!(doc["lead_status"], "dead", "{doc:#}");
    assert!(
        tree(&cc_dir) == cc_before,
        "the Claude Code team is untouched"
    );
}
