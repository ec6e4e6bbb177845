//! `teamlead teammate --engine llm` as a real process: with nothing configured it stops with
//! one clear line; with a config file (provider, base URL, model alias, the name of the key's
//! variable) it answers a message from the lead through a local Anthropic-speaking server,
//! shuts down on request, and the key is in none of its files, logs or pane output. Two such
//! processes on one key back off together when the service answers 429.

use crate::cli_common;
use crate::llm_common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cli_common::TestHome;
use llm_common::{Reply, ScriptServer, anthropic};
use teamlead::protocol::frames::{Frame, ShutdownRequest};
use teamlead::protocol::time::now_iso;
use teamlead::protocol::{InboxEntry, LEAD_NAME};
use teamlead::store::{Home, inbox};

const TEAM: &str = "llm-team";
const KEY: &str = "sk-ant-api03-PANE-SECRET-9931";

/// Kills the child on drop.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The teammate command with no model variables inherited and a private config directory.
fn teammate_cmd(t: &TestHome, config_dir: &std::path::Path) -> Command {
    teammate_cmd_named(t, config_dir, "pane")
}

/// The same for the teammate `name`.
fn teammate_cmd_named(t: &TestHome, config_dir: &std::path::Path, name: &str) -> Command {
    let mut cmd = t.std_cmd();
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "TEAMLEAD_MODEL",
        "TEAMLEAD_PROVIDER",
        "TEAMLEAD_CONFIG",
        "ITERM_SESSION_ID",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("XDG_CONFIG_HOME", config_dir).args([
        "teammate",
        "--agent-id",
        &format!("{name}@{TEAM}"),
        "--agent-name",
        name,
        "--team-name",
        TEAM,
        "--permission-mode",
        "default",
        "--engine",
        "llm",
    ]);
    cmd
}

#[test]
fn nothing_configured_is_one_line() {
    let t = TestHome::empty();
    t.write_team(TEAM, &["pane"]);
    let config_dir = t.root.path().join("config");
    let out = teammate_cmd(&t, &config_dir)
        .current_dir(t.root.path())
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("error: no model configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) or OPENAI_BASE_URL/OPENAI_API_KEY"),
        "{stderr}"
    );
}

fn contains_key(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if std::fs::read(&path).is_ok_and(|b| String::from_utf8_lossy(&b).contains(KEY))
            {
                return Some(path);
            }
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pane_teammate_answers_through_the_configured_service_and_shuts_down() {
    let server = ScriptServer::start(vec![Reply::Sse(anthropic::text("Hi from a pane."))]).await;
    let t = TestHome::empty();
    t.write_team(TEAM, &["pane"]);
    let home = Home::new(t.home());
    let config_dir = t.root.path().join("config");
    std::fs::create_dir_all(config_dir.join("teamlead")).unwrap();
    std::fs::write(
        config_dir.join("teamlead/config.json"),
        serde_json::json!({"llm": {
            "provider": "anthropic",
            "base_url": server.base_url(),
            "model": "opus",
            "api_key_env": "MY_TEST_KEY",
            "retry": {"max_attempts": 2, "base_delay_ms": 10}
        }})
        .to_string(),
    )
    .unwrap();
    let work = t.root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    inbox::append(&home, TEAM, "pane", &InboxEntry::new(LEAD_NAME, "Say hi.")).unwrap();
    let pane_output = t.root.path().join("pane.out");
    let child = teammate_cmd(&t, &config_dir)
        .env("MY_TEST_KEY", KEY)
        .current_dir(&work)
        .stdout(Stdio::from(std::fs::File::create(&pane_output).unwrap()))
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut guard = Guard(child);

    let deadline = Instant::now() + Duration::from_secs(20);
    let idle = loop {
        let found = inbox::read(&home, TEAM, LEAD_NAME)
            .map(|r| r.entries)
            .unwrap_or_default()
            .iter()
            .find_map(|e| match e.parse_frame() {
                Some(Frame::IdleNotification(n)) => Some(n),
                _ => None,
            });
        if let Some(n) = found {
            break n;
        }
        assert!(Instant::now() < deadline, "no idle notification");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(idle.from, "pane");
    assert_eq!(idle.result.as_deref(), Some("Hi from a pane."));
    let got = server.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body["model"], "claude-opus-4-1");
    assert_eq!(got[0].header("x-api-key"), Some(KEY));
    assert!(
        got[0].body["messages"][0]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Say hi.")
    );

    let shutdown = Frame::ShutdownRequest(ShutdownRequest {
        request_id: "shutdown-1@pane".to_string(),
        from: LEAD_NAME.into(),
        reason: None,
        timestamp: now_iso(),
    });
    inbox::append(
        &home,
        TEAM,
        "pane",
        &InboxEntry::frame(LEAD_NAME, &shutdown),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = guard.0.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the teammate did not exit");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success());
    let pane = std::fs::read_to_string(&pane_output).unwrap();
    assert!(pane.contains("claude-opus-4-1"), "{pane}");
    for dir in [t.home(), t.logs(), t.root.path().join("work")] {
        assert_eq!(contains_key(&dir), None, "the key leaked");
    }
    assert!(!pane.contains(KEY));
}

/// The idle notifications in the lead's inbox.
fn idle_notifications(home: &Home) -> Vec<teamlead::protocol::frames::IdleNotification> {
    inbox::read(home, TEAM, LEAD_NAME)
        .map(|r| r.entries)
        .unwrap_or_default()
        .iter()
        .filter_map(|e| match e.parse_frame() {
            Some(Frame::IdleNotification(n)) => Some(n),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pane_teammates_on_one_key_wait_out_a_429_together_then_both_answer() {
    let server = ScriptServer::start(vec![
        Reply::Status {
            status: 429,
            headers: vec![("retry-after".to_string(), "2".to_string())],
            body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your rate limit"}}"#.to_string(),
        },
        Reply::Sse(anthropic::text("Done.")),
        Reply::Sse(anthropic::text("Done.")),
    ])
    .await;
    let t = TestHome::empty();
    t.write_team(TEAM, &["alpha", "beta"]);
    let home = Home::new(t.home());
    let config_dir = t.root.path().join("config");
    std::fs::create_dir_all(config_dir.join("teamlead")).unwrap();
    std::fs::write(
        config_dir.join("teamlead/config.json"),
        serde_json::json!({"llm": {
            "provider": "anthropic",
            "base_url": server.base_url(),
            "model": "sonnet",
            "api_key_env": "MY_TEST_KEY",
            "retry": {"max_attempts": 3, "base_delay_ms": 10}
        }})
        .to_string(),
    )
    .unwrap();
    let work = t.root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let start = |name: &str| {
        let child = teammate_cmd_named(&t, &config_dir, name)
            .env("MY_TEST_KEY", KEY)
            .current_dir(&work)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        Guard(child)
    };

    inbox::append(&home, TEAM, "alpha", &InboxEntry::new(LEAD_NAME, "Go.")).unwrap();
    let _alpha = start("alpha");
    // alpha was told to wait: the pause is in the team's files.
    let teamlead_dir = home.teamlead_dir(TEAM).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let pause_file = loop {
        let found = std::fs::read_dir(&teamlead_dir).ok().and_then(|entries| {
            entries.flatten().map(|e| e.path()).find(|p| {
                p.to_string_lossy().ends_with(".json") && p.to_string_lossy().contains("ratelimit-")
            })
        });
        if let Some(path) = found {
            break path;
        }
        assert!(Instant::now() < deadline, "no rate-limit pause was shared");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let limited = server.requests()[0].at;
    // beta, another process, gets work during the pause.
    inbox::append(&home, TEAM, "beta", &InboxEntry::new(LEAD_NAME, "Go too.")).unwrap();
    let _beta = start("beta");

    let deadline = Instant::now() + Duration::from_secs(20);
    let idles = loop {
        let idles = idle_notifications(&home);
        if idles.len() == 2 {
            break idles;
        }
        assert!(
            Instant::now() < deadline,
            "both teammates did not answer: {idles:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    for idle in &idles {
        assert_eq!(idle.result.as_deref(), Some("Done."), "{idle:?}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "one 429, then one request each");
    for (i, r) in requests.iter().enumerate().skip(1) {
        let after = r.at.duration_since(limited);
        assert!(
            after >= Duration::from_secs(2),
            "request {i} came {after:?} after the 429, before its retry-after of 2 s"
        );
    }
    let shared = std::fs::read_to_string(&pause_file).unwrap();
    assert!(!shared.contains(KEY), "{shared}");
}
