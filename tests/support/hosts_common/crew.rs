//! A lead server of the team `crew` driven as a person or a script would (`teamlead ctl`), for
//! the tests of teammates on test hosts: waits with a deadline, `ctl` and its JSON (a
//! teammate's status row, the story's messages to the lead), the host user's processes, and
//! `teamlead serve` that is killed when dropped.

use std::collections::BTreeMap;
use std::process::{Child, Stdio};
use std::time::Duration;

use super::{TestHost, TestLead};

/// The team every host test leads.
pub const TEAM: &str = "crew";

/// The tests' one poll with a deadline.
#[allow(unused_imports)]
pub use teamlead_test_support::wait::wait_until as wait_for;

/// `teamlead ctl crew ARGS` as the lead's user; its output.
pub fn ctl(lead: &TestLead, args: &[&str]) -> std::process::Output {
    let mut full = vec!["ctl", TEAM];
    full.extend_from_slice(args);
    lead.cmd()
        .args(&full)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap()
}

/// [`ctl`], which must succeed; its standard output.
pub fn ctl_ok(lead: &TestLead, args: &[&str]) -> String {
    let out = ctl(lead, args);
    assert!(
        out.status.success(),
        "ctl {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The teammate's row of `ctl status --json` (`None` when it is not in the team).
pub fn row(lead: &TestLead, name: &str) -> Option<serde_json::Value> {
    let out = ctl(lead, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v["teammates"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)
        .cloned()
}

/// The story so far (`ctl --json events`), one JSON event per line.
pub fn story(lead: &TestLead) -> String {
    String::from_utf8_lossy(&ctl(lead, &["--json", "events"]).stdout).into_owned()
}

/// How many messages to the lead in the story carry `needle`.
pub fn told(lead: &TestLead, needle: &str) -> usize {
    story(lead)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| {
            e["kind"] == "message"
                && e["to"] == "team-lead"
                && e["text"].as_str().is_some_and(|t| t.contains(needle))
        })
        .count()
}

/// The command lines of the host user's processes.
pub fn host_processes(host: &TestHost) -> Vec<String> {
    host.user_processes()
        .into_iter()
        .filter_map(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).ok())
        .map(|raw| String::from_utf8_lossy(&raw).replace('\0', " "))
        .collect()
}

/// `teamlead serve --team crew --backend in-process`, killed when dropped.
pub struct Serve(pub Child);

impl Serve {
    /// Started in `work` with `grace_ms` as its `TEAMLEAD_LEAD_GRACE_MS` (`None`: none set,
    /// the defaults a user gets); waits until it answers.
    pub fn start(lead: &TestLead, work: &std::path::Path, grace_ms: Option<u64>) -> Serve {
        Serve::start_with_env(lead, work, grace_ms, &[])
    }

    /// [`Serve::start`] with `env` more in the server's environment (a model's address and
    /// key).
    pub fn start_with_env(
        lead: &TestLead,
        work: &std::path::Path,
        grace_ms: Option<u64>,
        env: &[(&str, &str)],
    ) -> Serve {
        let mut cmd = lead.std_cmd();
        cmd.envs(env.iter().copied());
        cmd.args(["serve", "--team", TEAM, "--backend", "in-process"])
            .current_dir(work)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        match grace_ms {
            Some(ms) => cmd.env("TEAMLEAD_LEAD_GRACE_MS", ms.to_string()),
            None => cmd.env_remove("TEAMLEAD_LEAD_GRACE_MS"),
        };
        let serve = Serve(cmd.spawn().unwrap());
        wait_for(
            "the lead server answers",
            Duration::from_secs(30),
            || ctl(lead, &["status"]).status.success(),
            || "no answer from ctl status".to_string(),
        );
        serve
    }

    /// SIGKILL, waited for.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// `/quit`, and the server's exit waited for.
    pub fn quit(mut self, lead: &TestLead) {
        ctl_ok(lead, &["/quit"]);
        wait_for(
            "the lead server exits",
            Duration::from_secs(30),
            || self.0.try_wait().ok().flatten().is_some(),
            String::new,
        );
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            self.kill();
        }
    }
}

/// `chown -R uid` of everything under `path` (links themselves, never followed).
pub fn chown_tree(path: &std::path::Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), None).unwrap();
    if path.is_dir() && !path.is_symlink() {
        for entry in std::fs::read_dir(path).unwrap() {
            chown_tree(&entry.unwrap().path(), uid);
        }
    }
}

/// The lead's task list: id → (status, owner, blocked by).
pub fn lead_tasks(lead: &TestLead) -> BTreeMap<String, (String, String, Vec<String>)> {
    let out = ctl(lead, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    v["tasks"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    (
                        t["id"].as_str().unwrap_or("").to_string(),
                        (
                            t["status"].as_str().unwrap_or("").to_string(),
                            t["owner"].as_str().unwrap_or("").to_string(),
                            t["blocked_by"]
                                .as_array()
                                .map(|b| {
                                    b.iter()
                                        .filter_map(|x| x.as_str().map(str::to_string))
                                        .collect()
                                })
                                .unwrap_or_default(),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}
